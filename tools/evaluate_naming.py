"""How well the shipped classifiers name pyramid cards, given where their first index lies.

    python tools/evaluate_naming.py --data data/synth_v2 [--split val] [--csv out/naming.csv]

For every pyramid card of a rendered split whose top-left index is in view, the index box from the
truth is named three ways, at the layout's angle (the median of the cards' own turns), as a still
names its placed cards: by the index classifiers alone (``classify``: the ensemble, unsure corners
from three crops), by the face classifier alone (``name_faces``) and by the two pooled
(``face_read.fused_names`` with the model's ``face_weight``). The detector plays no part: this
separates naming from finding. Prints the share named right for court cards (J, Q, K) and the
others, by the index's size, the commonest wrong readings and the decks named worst; ``--csv``
writes one row per image (its deck and the counts). ``--face-scales 1.0 0.9 0.9,1.0`` names the
faces again from crops of other sizes (``recognition.json``'s ``face_crop_scales``: the size a face net
names best is measured here, not assumed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from companion.cards import CARD_CODES  # noqa: E402
from companion.vision.face_read import fused_names  # noqa: E402
from tools.evaluate import write_rows  # noqa: E402

WAYS = ("index", "face", "pooled")
COURT = np.array([c[0] in "JQK" for c in CARD_CODES])
SIZES = ((0, 15), (15, 22), (22, 30), (30, 10_000))


def first_indices(truth: dict) -> tuple[np.ndarray, list[int], float]:
    """Boxes of the pyramid's visible top-left indices, their cards' class ids, and the layout's
    angle (degrees, as ``orientation.layout_angle``: the median of each card's own turn)."""
    boxes, ids, angles = [], [], []
    for row in truth["pyramid"]:
        for slot in row:
            if not slot.get("card"):
                continue
            for c in slot.get("corners", []):
                if c["which"] == "tl" and c.get("visible") and c.get("in_frame", True):
                    down = np.asarray(slot["quad"][3], float) - np.asarray(slot["quad"][0], float)
                    boxes.append(c["box"])
                    ids.append(CARD_CODES.index(slot["card"]))
                    angles.append(float(np.degrees(np.arctan2(-down[0], down[1]))))
    angle = float(np.median(angles)) if angles else 0.0
    return np.asarray(boxes, np.float32).reshape(-1, 4), ids, angle


def scale_set(text: str) -> tuple[float, ...]:
    """``--face-scales``' "0.9,1.0": one set of face crop sizes."""
    try:
        scales = tuple(float(v) for v in text.split(","))
    except ValueError:
        scales = ()
    if not scales or min(scales) <= 0:
        raise argparse.ArgumentTypeError(f"not positive sizes: {text!r}")
    return scales


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="dataset root (its SPLIT/truth and SPLIT/images)")
    ap.add_argument("--split", default="val")
    ap.add_argument("--models", type=Path, default=None, help="model folder (default models/)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--csv", type=Path, default=None, help="write one row per image")
    ap.add_argument("--face-scales", nargs="+", type=scale_set, default=[], metavar="S[,S...]",
                    help="also name the faces from crops of these sizes (each a comma-separated set, its "
                         "readings averaged: recognition.json's face_crop_scales) and print each set's figures")
    args = ap.parse_args(argv)
    import cv2

    from companion.vision.detector import OnnxCardDetector
    det = OnnxCardDetector(args.models) if args.models else OnnxCardDetector()
    scale_sets: list[tuple[float, ...]] = args.face_scales
    as_shipped = det.settings
    # each set's (face alone, pooled) names, image after image
    by_scales: dict[tuple[float, ...], list[np.ndarray]] = {s: [] for s in scale_sets}
    files = sorted((args.data / args.split / "truth").glob("*.json"))[: args.limit or None]
    y: list[int] = []
    sizes: list[float] = []
    decks: list[str] = []
    named: dict[str, list[int]] = {w: [] for w in WAYS}
    rows = []
    for f in files:
        truth = json.loads(f.read_text())
        image = cv2.imread(str(args.data / args.split / "images" / truth.get("image", truth["name"] + ".jpg")))
        boxes, ids, angle = first_indices(truth)
        if image is None or not len(ids):
            continue
        index = det.classify(image, boxes, angle=angle)
        face = det.name_faces(image, boxes, angle)
        guesses = {"index": index.argmax(1), "face": face.argmax(1),
                   "pooled": fused_names(index, face, det.face_weight).argmax(1)}
        for w in WAYS:
            named[w] += guesses[w].tolist()
        for scales in scale_sets:
            det.settings = replace(as_shipped, face_crop_scales=scales)
            other = det.name_faces(image, boxes, angle)
            det.settings = as_shipped
            by_scales[scales].append(np.stack([other.argmax(1), fused_names(index, other, det.face_weight).argmax(1)], 1))
        y += ids
        sizes += np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]).tolist()
        deck = str(truth.get("deck", "?"))
        decks += [deck] * len(ids)
        court = COURT[ids]
        right = guesses["pooled"] == np.asarray(ids)
        rows.append({"image": truth["name"], "deck": deck, "cards": len(ids), "courts": int(court.sum()),
                     **{f"right_{w}": int((guesses[w] == np.asarray(ids)).sum()) for w in WAYS},
                     "courts_right_pooled": int(right[court].sum())})
    if not y:
        print(f"no pyramid cards in view under {args.data / args.split / 'truth'}", file=sys.stderr)
        return 1
    truth_ids, size = np.asarray(y), np.asarray(sizes)
    court = COURT[truth_ids]
    print(f"{args.data / args.split}: {len(rows)} images, {len(y)} first indices in view, {int(court.sum())} courts")
    print(f"{'named by':<10}{'all':>9}{'courts':>9}{'others':>9}")
    for w in WAYS:
        ok = np.asarray(named[w]) == truth_ids
        print(f"{w:<10}{100 * ok.mean():>8.2f}%{100 * ok[court].mean():>8.2f}%{100 * ok[~court].mean():>8.2f}%")
    if scale_sets:
        print(f"face crops of other sizes (shipped: {', '.join(map(str, as_shipped.face_crop_scales))}): "
              "face alone, pooled (all / courts)")
    for scales, names in by_scales.items():
        face_ok, pooled_ok = (np.vstack(names) == truth_ids[:, None]).T
        print(f"  {','.join(map(str, scales)):<14} face {100 * face_ok.mean():6.2f}% / {100 * face_ok[court].mean():6.2f}%"
              f"   pooled {100 * pooled_ok.mean():6.2f}% / {100 * pooled_ok[court].mean():6.2f}%")
    ok = np.asarray(named["pooled"]) == truth_ids
    print("pooled, by the index's longer side:")
    for lo, hi in SIZES:
        m = (size >= lo) & (size < hi)
        if m.any():
            label = f"{lo}-{hi} px" if hi < 10_000 else f">= {lo} px"
            print(f"  {label:<11} {int(m.sum()):>5} cards {100 * ok[m].mean():6.2f}%, courts "
                  f"{100 * ok[m & court].mean() if (m & court).any() else float('nan'):6.2f}%")
    suit_too = {False: " (suit too)", True: ""}
    wrong = Counter(f"{CARD_CODES[a][0]}->{CARD_CODES[b][0]}{suit_too[CARD_CODES[a][1] == CARD_CODES[b][1]]}"
                    for a, b, k in zip(truth_ids, named["pooled"], ok) if not k)
    print("commonest wrong readings (pooled, rank -> rank):",
          ", ".join(f"{k} {v}" for k, v in wrong.most_common(8)))
    per_deck: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for d, c, k in zip(decks, court, ok):
        per_deck[d][0 if c else 2] += 1
        per_deck[d][1 if c else 3] += int(not k)
    print("decks with the most courts misnamed (pooled): courts wrong/seen, others wrong/seen")
    for d, (cn, cw, pn, pw) in sorted(per_deck.items(), key=lambda kv: -kv[1][1])[:6]:
        print(f"  {d:<40} {cw:>4}/{cn:<5} {pw:>4}/{pn}")
    if args.csv is not None:
        write_rows(args.csv, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
