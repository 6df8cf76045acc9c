"""Evaluate the recognition model on a generated split and on the real photos.

    python tools/evaluate.py --data data/synth_v1 --split val --out out/eval/v1 [--models models] [--card]

Rendered split (held-out decks): a card counts as *visible* when one of its index corners is
labelled; *found* when a detection overlaps one of its labelled corners (IoU >= 0.3); *named
right* when the best-scoring detection on its corners names it. *False cards* of an image: card
names reported that are not visible in it. Writes into ``--out``: ``per_image.csv`` (one row per
image with its conditions), ``per_class.csv`` (corner precision/recall), ``confusions.csv``,
``pr_curve.png``, ``confusion_matrix.png``, ``summary.json``; prints the headline figures, all
images and the hard conditions separately, and by the size of a card's biggest labelled corner
(``by_corner_px``). ``--card`` writes them into models/MODEL_CARD.md. Each image is read as
``pyramid-companion detect`` reads it: a weak reading is compared with the image turned by quarter
turns (``quarter_turn.detect_any_way``; ``per_image.csv`` column ``turn_deg``, summary
``read_turned``); ``--upright`` reads each image once, as it is.

Real photos (``--real``, default ../shared/datasets/real-photos-ranks/test): whole-card boxes with
rank-only labels; a card is found when a detection's centre lies in its box, and its rank is read
from the best-scoring such detection (``right_by_rank``; ``misreads``: the commonest wrong readings).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.cards import CARD_CODES, RANKS  # noqa: E402

REAL_DEFAULT = REPO.parent / "shared" / "datasets" / "real-photos-ranks" / "test"
REAL_RANKS = {"ace": "A", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
              "eight": "8", "nine": "9", "ten": "T", "jack": "J", "queen": "Q", "king": "K"}
MATCH_IOU = 0.3


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)))
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = lambda z: (z[:, 2] - z[:, 0]) * (z[:, 3] - z[:, 1])  # noqa: E731
    return inter / np.maximum(area(a)[:, None] + area(b)[None, :] - inter, 1e-9)


def write_rows(path: Path, rows: list[dict]) -> None:
    """``rows`` as a CSV file at ``path`` (its folder made): one column per key any row has, in the
    order they first appear."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, list(dict.fromkeys(k for r in rows for k in r)))
        writer.writeheader()
        writer.writerows(rows)


#: Buckets of a card's index corner size (shorter side, px of the frame) in the summary.
SIZE_BUCKETS = ("<12 px", "12-18 px", "18-30 px", ">=30 px")


def size_bucket(px: float) -> str:
    return SIZE_BUCKETS[int(np.searchsorted([12, 18, 30], px, side="right"))]


def match(gt_boxes: np.ndarray, det_boxes: np.ndarray, det_scores: np.ndarray) -> np.ndarray:
    """Greedy one-to-one matching by score; returns for each detection its GT index or -1."""
    iou = iou_matrix(det_boxes, gt_boxes)
    owner = np.full(len(det_boxes), -1)
    taken = set()
    for d in np.argsort(-det_scores):
        if iou.shape[1] == 0:
            break
        for g in np.argsort(-iou[d]):
            if iou[d, g] < MATCH_IOU:
                break
            if g not in taken:
                owner[d] = g
                taken.add(g)
                break
    return owner


def evaluate_split(detector, data: Path, split: str, out: Path, limit: int | None, min_score: float) -> dict:
    import cv2

    from tools.train import read_labels, split_images

    images = split_images(data, split)[:limit]
    if not images:
        raise SystemExit(f"no images under {data / split / 'images'}")
    rows, corner_records = [], []  # corner_records: (score, correct, true_cls or -1, pred_cls)
    gt_corners_per_class = Counter()
    confusions = Counter()
    by_size: dict[str, Counter] = {b: Counter() for b in SIZE_BUCKETS}
    times = []
    for path in images:
        image = cv2.imread(str(path))
        h, w = image.shape[:2]
        classes, boxes = read_labels(data / split / "labels" / (path.stem + ".txt"), w, h)
        truth_path = data / split / "truth" / (path.stem + ".json")
        conditions = json.loads(truth_path.read_text()).get("conditions", {}) if truth_path.exists() else {}
        t0 = time.perf_counter()
        det = detector.detect(image)
        times.append(time.perf_counter() - t0)
        det = det[det.confidence >= min_score]
        turn = getattr(detector, "last_turn", None) or 0
        owner = match(boxes, det.xyxy, det.confidence)
        gt_corners_per_class.update(int(c) for c in classes)
        best_for_card: dict[int, tuple[float, int]] = {}
        for d in range(len(det)):
            pred, score = int(det.class_id[d]), float(det.confidence[d])
            true = int(classes[owner[d]]) if owner[d] >= 0 else -1
            corner_records.append((score, pred == true, true, pred))
            if true >= 0:
                if pred != true:
                    confusions[(CARD_CODES[true], CARD_CODES[pred])] += 1
                if true not in best_for_card or score > best_for_card[true][0]:
                    best_for_card[true] = (score, pred)
        visible = set(int(c) for c in classes)
        named = {c for c, (_, pred) in best_for_card.items() if pred == c}
        # Each card by the shorter side (px) of its biggest labelled corner: where the misreads are.
        side: dict[int, float] = {}
        for c, box in zip(classes, boxes):
            side[int(c)] = max(side.get(int(c), 0.0), float(min(box[2] - box[0], box[3] - box[1])))
        for c, px in side.items():
            bucket = size_bucket(px)
            by_size[bucket]["cards"] += 1
            by_size[bucket]["found"] += c in best_for_card
            by_size[bucket]["named_right"] += c in named
        reported = set(int(c) for c in det.class_id)
        row = {"image": path.name, "visible": len(visible), "found": len(best_for_card),
               "named_right": len(named), "false_cards": len(reported - visible),
               "corners": len(classes), "detections": len(det), "ms": round(1000 * times[-1], 1),
               "turn_deg": turn}
        row.update({k: v for k, v in conditions.items() if isinstance(v, (int, float, str, bool))})
        rows.append(row)

    out.mkdir(parents=True, exist_ok=True)
    write_rows(out / "per_image.csv", rows)
    per_class = []
    for c, code in enumerate(CARD_CODES):
        tp = sum(1 for s, ok, t, p in corner_records if ok and p == c)
        npred = sum(1 for s, ok, t, p in corner_records if p == c)
        ngt = gt_corners_per_class[c]
        per_class.append({"card": code, "corners": ngt, "predicted": npred, "correct": tp,
                          "precision": round(tp / npred, 4) if npred else "",
                          "recall": round(tp / ngt, 4) if ngt else ""})
    write_rows(out / "per_class.csv", per_class)
    with (out / "confusions.csv").open("w", newline="") as f:
        f.write("true,predicted,count\n")
        for (t, p), n in confusions.most_common():
            f.write(f"{t},{p},{n}\n")
    plots(out, corner_records, sum(gt_corners_per_class.values()))

    def headline(subset: list[dict]) -> dict:
        vis = sum(r["visible"] for r in subset)
        return {"images": len(subset), "visible_cards": vis,
                "named_right": round(sum(r["named_right"] for r in subset) / max(vis, 1), 4),
                "found": round(sum(r["found"] for r in subset) / max(vis, 1), 4),
                "false_cards_per_image": round(sum(r["false_cards"] for r in subset) / max(len(subset), 1), 3)}

    summary = {"data": str(data), "split": split, "min_score": min_score, "all": headline(rows),
               "hard": headline([r for r in rows if r.get("hard") is True])}
    for name, test in [("tilt>=35", lambda r: float(r.get("tilt_deg", 0)) >= 35),
                       ("dim", lambda r: r.get("light") == "dim"), ("glare", lambda r: r.get("glare") is True),
                       ("blur", lambda r: r.get("blur", "none") not in ("none", "")),
                       ("hands", lambda r: int(r.get("hands", 0) or 0) > 0)]:
        subset = [r for r in rows if test(r)]
        if subset:
            summary[name] = headline(subset)
    summary["by_corner_px"] = {b: {"cards": n["cards"], "named_right": round(n["named_right"] / max(n["cards"], 1), 4),
                                   "found": round(n["found"] / max(n["cards"], 1), 4)}
                               for b, n in by_size.items()}
    summary["ms_per_image_median"] = round(1000 * float(np.median(times)), 1)
    summary["ms_per_image_p90"] = round(1000 * float(np.percentile(times, 90)), 1)
    if getattr(detector, "last_turn", None) is not None:
        summary["read_turned"] = sum(1 for r in rows if r["turn_deg"])
    summary["top_confusions"] = [f"{t}->{p} x{n}" for (t, p), n in confusions.most_common(10)]
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def plots(out: Path, records: list, n_gt: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rec = sorted(records, key=lambda r: -r[0])
    correct = np.array([r[1] for r in rec], float)
    tp = np.cumsum(correct)
    precision = tp / np.arange(1, len(rec) + 1) if len(rec) else np.zeros(0)
    recall = tp / max(n_gt, 1)
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot(recall, precision)
    ax.set_xlabel("recall (corners named right)")
    ax.set_ylabel("precision")
    ax.set_title("corner detections, by score")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "pr_curve.png", dpi=100)
    plt.close(fig)
    m = np.zeros((53, 53))  # last row/column: background (missed / spurious)
    for _, _, t, p in records:
        m[t if t >= 0 else 52, p] += 1
    fig, ax = plt.subplots(figsize=(9, 8))
    ax.imshow(np.log1p(m), cmap="Blues")
    labels = list(CARD_CODES) + ["bg"]
    ax.set_xticks(range(53), labels, fontsize=5, rotation=90)
    ax.set_yticks(range(53), labels, fontsize=5)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title("corner confusion matrix (log counts)")
    fig.tight_layout()
    fig.savefig(out / "confusion_matrix.png", dpi=100)
    plt.close(fig)


class AnyWay:
    """A detector that reads as ``pyramid-companion detect`` does (``quarter_turn.detect_any_way``)."""

    def __init__(self, detector) -> None:
        self.detector, self.last_turn = detector, 0

    def detect(self, image):
        from companion.vision.quarter_turn import detect_any_way

        dets, self.last_turn = detect_any_way(self.detector, image)
        return dets


def evaluate_real(detector, folder: Path, min_score: float) -> dict:
    import cv2

    cards = found = right = 0
    per_rank: dict[str, list[int]] = {}  # rank -> [cards, read right]
    misreads: Counter = Counter()  # "9->Q": what a rank was read as when wrong ("none": not found)
    for xml in sorted(folder.glob("*.xml")):
        root = ET.parse(xml).getroot()
        image = cv2.imread(str(folder / root.findtext("filename")))
        if image is None:
            continue
        det = detector.detect(image)
        det = det[det.confidence >= min_score]
        centers = det.centers
        for obj in root.iter("object"):
            rank = REAL_RANKS.get(obj.findtext("name", "").strip().lower())
            if rank is None:
                continue
            b = [float(obj.find("bndbox").findtext(k)) for k in ("xmin", "ymin", "xmax", "ymax")]
            cards += 1
            tally = per_rank.setdefault(rank, [0, 0])
            tally[0] += 1
            inside = ((centers[:, 0] >= b[0]) & (centers[:, 0] <= b[2]) & (centers[:, 1] >= b[1])
                      & (centers[:, 1] <= b[3])) if len(det) else np.zeros(0, bool)
            if inside.any():
                found += 1
                best = np.flatnonzero(inside)[np.argmax(det.confidence[inside])]
                read = CARD_CODES[int(det.class_id[best])][0]
                right += read == rank
                tally[1] += read == rank
                if read != rank:
                    misreads[f"{rank}->{read}"] += 1
            else:
                misreads[f"{rank}->none"] += 1
    return {"folder": str(folder), "cards": cards, "found": round(found / max(cards, 1), 4),
            "rank_right_of_found": round(right / max(found, 1), 4), "rank_right_of_all": round(right / max(cards, 1), 4),
            "right_by_rank": {r: f"{ok}/{n}" for r, (n, ok) in sorted(per_rank.items())},
            "misreads": [f"{k} x{v}" for k, v in misreads.most_common(8)]}


def update_card(models: Path, summary: dict, real: dict | None, command: str) -> None:
    from tools.train import CARD_EVAL_BEGIN, CARD_EVAL_END

    card = models / "MODEL_CARD.md"
    text = card.read_text() if card.exists() else f"# Card recognition model\n\n{CARD_EVAL_BEGIN}\n{CARD_EVAL_END}\n"
    lines = [CARD_EVAL_BEGIN, f"Command: `{command}`", "", "| scenes | images | visible cards | named right | found | false cards / image |",
             "|---|---|---|---|---|---|"]
    for key in ("all", "hard", "tilt>=35", "dim", "glare", "blur", "hands"):
        if key in summary and summary[key]["images"]:
            s = summary[key]
            lines.append(f"| {key} | {s['images']} | {s['visible_cards']} | {100 * s['named_right']:.2f}% | "
                         f"{100 * s['found']:.2f}% | {s['false_cards_per_image']:.3f} |")
    lines.append("")
    if "read_turned" in summary:
        lines.append("Each image read as `pyramid-companion detect` reads it: a weak reading is compared with the "
                     f"image turned by quarter turns ({summary['read_turned']} of {summary['all']['images']} "
                     "read turned); `--upright` reads each image once, as it is.")
        lines.append("")
    lines.append(f"Median time per image (both stages, 1 thread, shared machine): {summary['ms_per_image_median']} ms"
                 + (f" (p90 {summary['ms_per_image_p90']} ms)" if "ms_per_image_p90" in summary else "") + ". "
                 f"Top confusions: {', '.join(summary['top_confusions'][:6]) or 'none'}.")
    if real:
        lines.append("")
        lines.append(f"Real photos ({real['cards']} cards, rank-only labels, `{Path(real['folder']).name}` of "
                     f"real-photos-ranks): found {100 * real['found']:.1f}%, rank right {100 * real['rank_right_of_found']:.1f}% "
                     f"of found ({100 * real['rank_right_of_all']:.1f}% of all).")
    lines.append(CARD_EVAL_END)
    if CARD_EVAL_BEGIN in text and CARD_EVAL_END in text:
        text = text[:text.index(CARD_EVAL_BEGIN)] + "\n".join(lines) + text[text.index(CARD_EVAL_END) + len(CARD_EVAL_END):]
    else:
        text += "\n" + "\n".join(lines) + "\n"
    card.write_text(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, help="dataset root (tools/make_dataset.py output)")
    p.add_argument("--split", default="val")
    p.add_argument("--models", type=Path, default=None, help="model folder (default models/)")
    p.add_argument("--out", type=Path, default=REPO / "out" / "eval")
    p.add_argument("--limit", type=int)
    p.add_argument("--min-score", type=float, default=0.25)
    p.add_argument("--real", type=Path, default=REAL_DEFAULT, help="real photo folder ('' to skip)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--det-conf", type=float, help="sure-corner threshold (default: the model's own)")
    p.add_argument("--faint-conf", type=float,
                   help="faint-corner threshold, 0 for none (default: the model's own)")
    p.add_argument("--multi-crop-below", type=float,
                   help="read corners named less sure than this again (0: never; default: the model's own)")
    p.add_argument("--no-zoom", action="store_true", help="one detector pass only (no enlarged second look)")
    p.add_argument("--upright", action="store_true",
                   help="read each image as it is (no quarter turns for a weak reading: see `detect --upright`)")
    p.add_argument("--card", action="store_true", help="write the figures into the model card")
    args = p.parse_args(argv)

    from companion.vision.detector import OnnxCardDetector
    from companion.vision.model_files import default_models_dir

    detector = OnnxCardDetector(args.models, threads=args.threads, detector_conf=args.det_conf,
                                faint_conf=args.faint_conf, multi_crop_below=args.multi_crop_below,
                                zoom=not args.no_zoom)
    if not args.upright:
        detector = AnyWay(detector)
    summary, real = {}, None
    if args.data:
        summary = evaluate_split(detector, args.data, args.split, args.out, args.limit, args.min_score)
        print(json.dumps({k: v for k, v in summary.items() if k not in ("data",)}, indent=1))
    if args.real and str(args.real) and args.real.is_dir():
        real = evaluate_real(detector, args.real, args.min_score)
        print("real photos:", json.dumps(real))
        if args.data:
            summary["real"] = real
            (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    if args.card and summary:
        update_card(args.models or default_models_dir(), summary, real,
                    "python tools/evaluate.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
