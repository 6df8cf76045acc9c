"""Evaluate slot mapping: share of slots right and of whole deals right, per condition.

Scenes come from rendered data with truth (``--truth DIR``: a ``truth/`` folder of
``tools/synth``, images beside it in ``../images``) or are generated here
(``--fake N``: geometry only). Detections come from the ONNX model
(``--detector onnx``, needs the images) or from the fake detector fed with the
truth plus noise (``--detector fake``, the default: it measures the slot
mapping, not the model).

    python tools/evaluate_layout.py --fake 2000 --seed 1
    python tools/evaluate_layout.py --truth data/synth_v1/val/truth --detector fake
    python tools/evaluate_layout.py --truth data/synth_v1/val/truth --detector onnx

Prints one line per condition group: scenes, slots right, deals exactly right,
deals with at most one slot wrong, waste top right (three piles compared left to right as
the player sees them, the pipeline's order: ``piles_left_to_right``), deals with no error the slot
mapping is to blame for (the right card was read at the slot's corner), and
deals exactly right / at most one wrong counting only slots a camera could read
(a card hidden under a hand in that frame is left out: fusion over frames is
what handles hands), deals whose lattice fit lies where the cards lie (slots within
``LATTICE_OFF`` of a card pitch of the rendered first indices), and how many of those
are exactly right. ``--csv`` adds each scene's lattice error (``lattice_off``, pitches).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from companion.cards import CARD_CODES  # noqa: E402
from companion.rules import Rules  # noqa: E402
from companion.vision.fake import (Noise, detections_from_truth, hands_over_table, load_truth,  # noqa: E402
                                   synth_truth)
from companion.vision.fusion import DEFAULT_K, LayoutFuser  # noqa: E402
from companion.vision.pipeline import LayoutPipeline  # noqa: E402
from companion.vision.slots import pyramid_nodes  # noqa: E402
from tools.evaluate import write_rows  # noqa: E402

NOISE = {
    "none": Noise.none(),
    "realistic": Noise.realistic(),
    "hard": Noise(jitter=0.12, miss=0.03, misread=0.02, false_boxes=0.5),
}


def groups(cond: dict) -> list[str]:
    tilt = float(cond.get("tilt_deg", 0))
    out = ["all", f"tilt {int(min(tilt, 44.9) // 15) * 15}-{int(min(tilt, 44.9) // 15) * 15 + 15}"]
    out.append("partial" if cond.get("partial") else "full deal")
    out.append(f"light {cond.get('light', 'normal')}")
    if cond.get("hands"):
        out.append("hands")
    if cond.get("hard"):
        out.append("hard")
    return out


def flagged_slots(layout, rules: Rules) -> set[tuple[int, int]]:
    """The slots the app asks the person to check before a game starts, by its own rule
    (``CorrectionSession.flags``: read unsure or with a close runner-up, read twice or not in the
    deck, or no card read: a partly cleared pyramid's empty slots too)."""
    from companion.app.correction import CorrectionSession  # Qt-free: the app's own rule
    session = CorrectionSession(rules, layout)
    return {(place.row, place.index) for place in session.places() if session.flags(place).needs_check}


def mapping_errors(truth: dict, dets, want: list, got: list) -> int:
    """Wrong slots the slot mapping is to blame for: the right card was read at that slot's corner
    (or the card put there was read right, elsewhere), as opposed to misses and misreads."""
    n = 0
    true_cards = {l["card"] for l in truth["labels"]}
    for r, (ra, rb) in enumerate(zip(want, got)):
        for i, (a, b) in enumerate(zip(ra, rb)):
            if a == b:
                continue
            if a is None:
                n += b in true_cards
                continue
            boxes = [c["box"] for c in truth["pyramid"][r][i].get("corners", []) if c.get("visible")]
            if any(a in reads_near(dets, box) for box in boxes):
                n += 1
    return n


def reads_near(dets, box) -> list[str]:
    """Cards read by the detections centred on an index box (half a box of slack each way)."""
    x1, y1, x2, y2 = box
    mx, my = (x2 - x1) * 0.5, (y2 - y1) * 0.5
    c = dets.centers
    near = (c[:, 0] > x1 - mx) & (c[:, 0] < x2 + mx) & (c[:, 1] > y1 - my) & (c[:, 1] < y2 + my)
    return [CARD_CODES[int(dets.class_id[j])] for j in np.flatnonzero(near)]


#: Why a waste top came out wrong (``waste_why``), in the order the summary line prints them.
WASTE_WHY = ("no read on it", "misread", "read right, not taken", "not in view", "empty waste read as a card")


def piles_left_to_right(truth: dict) -> list[int]:
    """The truth's waste piles in the order the pipeline reports them: left to right as the player
    sees the table (``outside.outside_places``). The renderer lists them from the stock outward,
    and puts the stock on the right of the piles in about one scene in seven; the table's
    left-to-right is the cards' own top edge (their quads run top-left, top-right, ...)."""
    piles = truth.get("waste", [])
    quads = [np.asarray(q, float) for q in [p.get("quad") for p in piles] + [truth.get("stock", {}).get("quad")]
             if q is not None]
    stock = truth.get("stock", {}).get("quad")
    placed = [(k, np.asarray(p["quad"], float).mean(0)) for k, p in enumerate(piles) if p.get("quad") is not None]
    order = list(range(len(piles)))
    if not placed or (len(placed) < 2 and stock is None):
        return order
    right = np.mean([q[1] - q[0] for q in quads], axis=0)  # the table's "right", in pixels
    at = {k: float(c @ right) for k, c in placed}
    if stock is not None:
        from_left = float(np.asarray(stock, float).mean(0) @ right) < np.mean(list(at.values()))
    else:  # the piles themselves: pile 0 lies nearest the stock
        from_left = at[placed[0][0]] < at[placed[-1][0]]
    return order if from_left else order[::-1]


def waste_why(truth: dict, dets, got_tops: list) -> str:
    """"right", or why the first wrong waste pile's top is wrong: no detection on the top card's
    index corners, only other cards read there, read right there but not made the top (the
    waste's places come from the lattice fit), its indices all hidden, or a card on an empty pile."""
    order = piles_left_to_right(truth)
    want = [truth["waste"][k].get("top") for k in order]
    got = list(got_tops) + [None] * max(0, len(want) - len(got_tops))
    if [t for t in want if t] == [t for t in got if t]:
        return "right"
    for p, (a, b) in enumerate(zip(want, got)):
        if a == b:
            continue
        if a is None:
            return "empty waste read as a card"
        top = len(truth["waste"][order[p]]["cards"]) - 1
        boxes = [l["box"] for l in truth["labels"] if l["where"] == f"waste:{order[p]}:{top}"]
        if not boxes:
            return "not in view"
        near = [c for box in boxes for c in reads_near(dets, box)]
        return "no read on it" if not near else ("read right, not taken" if a in near else "misread")
    # every pile's place agrees where the truth has a top: a card read on an empty pile, or the
    # right tops in other piles
    more = len([t for t in got if t]) > len([t for t in want if t])
    return "empty waste read as a card" if more else "read right, not taken"


#: A fit whose slots lie this far (card pitches, median over the slots with a card) from where the
#: rendered cards lie has the lattice in the wrong place: rows or slots shifted, or a lattice through
#: other points (a nearly cleared pyramid's second indices and the waste).
LATTICE_OFF = 0.3
#: Issue #4's floor for the whole pipeline, per 1280x720 frame (ms).
FRAME_BUDGET_MS = 60.0


def lattice_error(truth: dict, fit, rows: int, inverted: bool) -> float:
    """Median distance, in card pitches, between the fit's slots and the truth's first-index corners of
    the cards in the pyramid (inf without a fit; 0 when no card is left to place)."""
    nodes_ri, _ = pyramid_nodes(rows, inverted)
    at = {}
    for k, (r, i) in enumerate(nodes_ri):
        slot = truth["pyramid"][int(r)][int(i)]
        for c in slot.get("corners", []) if slot.get("card") else []:
            if c["which"] == "tl":
                x1, y1, x2, y2 = c["box"]
                at[(int(r), int(i))] = (k, np.array([(x1 + x2) / 2, (y1 + y2) / 2]))
    if not at:
        return 0.0
    if fit is None:
        return float("inf")
    steps = [np.hypot(*(at[(r, i + 1)][1] - p)) for (r, i), (_, p) in at.items() if (r, i + 1) in at]
    sides = [max(l["box"][2] - l["box"][0], l["box"][3] - l["box"][1]) for l in truth["labels"]]
    # the pitch between neighbours of a row; with no two neighbours left, about three index corners
    pitch = float(np.median(steps)) if steps else 3.0 * float(np.median(sides))
    xy = fit.node_xy()
    return float(np.median([np.hypot(*(xy[k] - p)) for k, p in at.values()])) / max(pitch, 1e-6)


def fake_scenes(n: int, seed: int):
    rng = np.random.default_rng(seed)
    for k in range(n):
        partial = k % 2 == 1
        yield synth_truth(rng, removed=int(rng.integers(1, 20)) if partial else 0, name=f"fake_{k:06d}")


def truth_scenes(folder: Path, limit: int):
    files = sorted(folder.glob("*.json"))[: limit or None]
    for f in files:
        yield load_truth(f) | {"_path": str(f)}


def static_hands(frames: int, seed: int, k: int, rules: Rules, deals: int = 20, verbose: bool = False) -> int:
    """Static deals (full and partly cleared) with hands passing: any accepted change after the first
    layout is false; also checks that the first accepted layout is the deal."""
    rng = np.random.default_rng(seed)
    per = frames // deals
    false_changes, wrong_first, total, t_all = 0, 0, 0, []
    for d in range(deals):
        truth = synth_truth(rng, removed=int(rng.integers(1, 15)) if d % 2 else 0)
        noises = [Noise.realistic()] * 30 + hands_over_table(rng, truth, per - 30)
        pipe = LayoutPipeline(rules=rules)
        fuser = LayoutFuser(k, pipeline=pipe)
        accepted = []
        for f, noise in enumerate(noises):
            dets = detections_from_truth(truth, noise, rng)
            t0 = time.process_time()
            layout = fuser.update(pipe.read(dets, f), f)
            t_all.append(time.process_time() - t0)
            if layout is not None:
                accepted.append(layout.to_json()["pyramid"])
                if verbose and len(accepted) > 1:
                    was, now = accepted[-2], accepted[-1]
                    diff = [(r, i, a, b) for r, (ra, rb) in enumerate(zip(was, now))
                            for i, (a, b) in enumerate(zip(ra, rb)) if a != b]
                    print(f"  deal {d} frame {f}: false change (row, slot, was, now) {diff}, "
                          f"waste {layout.waste}")
        total += len(noises)
        false_changes += max(0, len(accepted) - 1)
        wrong_first += not accepted or accepted[0] != truth["pyramid_codes"]
    print(f"static deals with hands passing: {deals} deals, {total} frames, K={k}")
    print(f"  false layout changes: {false_changes}")
    print(f"  deals whose first accepted layout was wrong or missing: {wrong_first}")
    print(f"  CPU time per frame (read + fusion): median {1000 * np.median(t_all):.2f} ms, "
          f"p90 {1000 * np.percentile(t_all, 90):.2f} ms")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--truth", type=Path, help="truth/ folder of rendered scenes")
    ap.add_argument("--fake", type=int, default=0, help="generate this many scenes here instead")
    ap.add_argument("--detector", choices=("fake", "onnx"), default="fake")
    ap.add_argument("--noise", choices=sorted(NOISE), default="realistic")
    ap.add_argument("--det-conf", type=float, default=None,
                    help="onnx: sure-corner threshold (default: the model's recognition.json)")
    ap.add_argument("--multi-crop-below", type=float, default=None,
                    help="onnx: read corners named less sure than this again, 0 for never (default: the model's)")
    ap.add_argument("--faint-conf", type=float, default=None,
                    help="onnx: faint-corner threshold, 0 for none (default: the model's recognition.json)")
    ap.add_argument("--min-score", type=float, default=0.25, help="pipeline: ignore reads scored lower")
    ap.add_argument("--no-reread", action="store_true",
                    help="onnx: no second look at slots that must hold a card but show no read")
    ap.add_argument("--rules", default="classic")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--show-failures", type=int, default=0)
    ap.add_argument("--csv", type=Path, default=None,
                    help="write one row per scene: slots missed, false, misnamed, mapping errors, waste")
    ap.add_argument("--static-hands", type=int, default=0, metavar="FRAMES",
                    help="instead: count false layout changes over FRAMES frames of static deals with hands")
    ap.add_argument("--k", type=int, default=DEFAULT_K, help="fusion: frames a change must be stable")
    ap.add_argument("-v", "--verbose", action="store_true", help="static hands: print each false change")
    args = ap.parse_args(argv)
    if args.static_hands:
        return static_hands(args.static_hands, args.seed, args.k, Rules.parse(args.rules),
                            verbose=args.verbose)
    if not args.truth and not args.fake:
        ap.error("give --truth DIR or --fake N")
    rules = Rules.parse(args.rules)
    detector = None
    if args.detector == "onnx":
        import cv2
        from companion.vision.detector import OnnxCardDetector  # the model developer's
        detector = OnnxCardDetector(detector_conf=args.det_conf, faint_conf=args.faint_conf,
                                   multi_crop_below=args.multi_crop_below)
    rng = np.random.default_rng(args.seed + 1000)
    scenes = truth_scenes(args.truth, args.limit) if args.truth else fake_scenes(args.fake, args.seed)
    stats: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    failures = 0
    t_read = []
    t_whole = []  # detect + read: a still from pixels to a checked layout
    rows_csv: list[dict] = []
    wrong_waste: dict[str, int] = defaultdict(int)
    for truth in scenes:
        scene_rules = rules
        if truth.get("rows", rules.rows) != rules.rows or bool(truth.get("inverted")) != rules.inverted:
            scene_rules = dataclasses.replace(rules, rows=int(truth["rows"]), inverted=bool(truth.get("inverted")))
        piles = len(truth.get("waste", [])) or 1
        if piles != rules.waste_piles:
            scene_rules = dataclasses.replace(scene_rules, draw=3 if piles == 3 else scene_rules.draw,
                                              waste_piles=piles)
        pipe = LayoutPipeline(detector, rules=scene_rules, track=False, reread=not args.no_reread,
                              min_score=args.min_score)
        image = None
        if detector is not None:
            img_path = Path(truth["_path"]).parent.parent / "images" / truth.get("image", truth["name"] + ".jpg")
            image = cv2.imread(str(img_path))
            if image is None:
                print(f"cannot read {img_path}", file=sys.stderr)
                continue
            t_detect = time.perf_counter()
            dets = detector.detect(image)
            t_detect = time.perf_counter() - t_detect
        else:
            dets = detections_from_truth(truth, NOISE[args.noise], rng)
        t0 = time.perf_counter()
        if image is not None:
            reading = pipe.read_image(image, dets)
            dets = reading.detections
        else:
            reading = pipe.read(dets, -1, (int(truth.get("width", 1280)), int(truth.get("height", 720))))
        t_read.append(time.perf_counter() - t0)
        if image is not None:
            t_whole.append(t_detect + t_read[-1])
        want = truth["pyramid_codes"]
        got = None if reading.layout is None else [[None if s.card is None else str(s.card) for s in row]
                                                   for row in reading.layout.pyramid]
        if got is None and not any(c for row in want for c in row):
            got = [list(row) for row in want]  # no pyramid left, none found: right
        n_slots = sum(len(r) for r in want)
        wrong = n_slots if got is None else sum(a != b for ra, rb in zip(want, got) for a, b in zip(ra, rb))
        map_wrong = 0 if got is None else mapping_errors(truth, dets, want, got)
        off = lattice_error(truth, reading.fit, scene_rules.rows, scene_rules.inverted)
        # Slots a camera could read: empty, or a card with at least one index corner in view.
        seen = {tuple(map(int, l["where"].split(":")[1:])) for l in truth["labels"]
                if l["where"].startswith("pyramid")}
        vis_wrong = n_slots if got is None else sum(
            a != b for r, (ra, rb) in enumerate(zip(want, got)) for i, (a, b) in enumerate(zip(ra, rb))
            if a is None or (r, i) in seen)
        tops = [truth["waste"][k].get("top") for k in piles_left_to_right(truth)]
        got_tops = [] if reading.layout is None else [None if t is None else str(t)
                                                       for t in reading.layout.waste_tops()]
        waste_ok = [t for t in tops if t] == [t for t in got_tops if t]
        why = waste_why(truth, dets, got_tops)
        pairs = [] if got is None else [(a, b) for ra, rb in zip(want, got) for a, b in zip(ra, rb)]
        # What checking the flagged slots leaves wrong: a misread the app does not flag is silent.
        flagged = set() if reading.layout is None else flagged_slots(reading.layout, scene_rules)
        wrong_at = set() if got is None else {(r, i) for r, (ra, rb) in enumerate(zip(want, got))
                                              for i, (a, b) in enumerate(zip(ra, rb)) if a != b}
        silent = n_slots if got is None else len(wrong_at - flagged)
        rows_csv.append({
            "scene": truth["name"], "slots": n_slots, "wrong": wrong, "found_pyramid": got is not None,
            "missed": sum(a is not None and b is None for a, b in pairs),
            "false": sum(a is None and b is not None for a, b in pairs),
            "misnamed": sum(a is not None and b is not None and a != b for a, b in pairs),
            "mapping_errors": map_wrong, "flagged": len(flagged), "flagged_wrong": len(wrong_at & flagged),
            "silent_wrong": silent, "lattice_off": round(off, 3), "waste_top_right": waste_ok,
            "waste_why": why,
            "conditions": ";".join(sorted(groups(truth.get("conditions", {})))),
        })
        wrong_waste[why] += 1
        for g in groups(truth.get("conditions", {})):
            s = stats[g]
            s["scenes"] += 1
            s["slots"] += n_slots
            s["slots_right"] += n_slots - wrong
            s["exact"] += wrong == 0
            s["le1"] += wrong <= 1
            s["waste_ok"] += waste_ok
            s["map_exact"] += map_wrong == 0 and got is not None
            s["lattice_ok"] += off < LATTICE_OFF
            s["lattice_ok_exact"] += off < LATTICE_OFF and wrong == 0
            s["vis_exact"] += vis_wrong == 0
            s["vis_le1"] += vis_wrong <= 1
            s["flagged"] += len(flagged)
            s["wrong_slots"] += wrong
            s["silent"] += silent
            s["no_silent"] += silent == 0
        if map_wrong and failures < args.show_failures:
            failures += 1
            print(f"FAIL {truth['name']}: {wrong} wrong, {map_wrong} by mapping; {truth.get('conditions')}")
            print("  want", want)
            print("  got ", got)
            print("  problems", reading.problems)
    if args.csv is not None and rows_csv:
        write_rows(args.csv, rows_csv)
    print(f"detector={args.detector} noise={args.noise if args.detector == 'fake' else '-'} "
          f"rules={rules.name} source={'fake' if args.fake else args.truth}")
    print(f"{'group':<16}{'scenes':>7}{'slots right':>13}{'deals exact':>13}{'<=1 wrong':>11}{'waste top':>11}"
          f"{'no mapping error':>18}{'exact (seen)':>14}{'<=1 (seen)':>12}"
          f"{'lattice right':>15}{'exact of those':>16}")
    order = sorted(stats, key=lambda g: (g != "all", g))
    for g in order:
        s = stats[g]
        print(f"{g:<16}{int(s['scenes']):>7}{100 * s['slots_right'] / max(s['slots'], 1):>12.2f}%"
              f"{100 * s['exact'] / s['scenes']:>12.2f}%{100 * s['le1'] / s['scenes']:>10.2f}%"
              f"{100 * s['waste_ok'] / s['scenes']:>10.2f}%{100 * s['map_exact'] / s['scenes']:>17.2f}%"
              f"{100 * s['vis_exact'] / s['scenes']:>13.2f}%{100 * s['vis_le1'] / s['scenes']:>11.2f}%"
              f"{100 * s['lattice_ok'] / s['scenes']:>14.2f}%"
              f"{100 * s['lattice_ok_exact'] / max(s['lattice_ok'], 1):>15.2f}%")
    print("checked by the person (the app flags a slot read unsure or with a close runner-up, twice, or "
          "not at all; a partly cleared pyramid's empty slots too):")
    print(f"{'group':<16}{'slots flagged':>15}{'wrong flagged':>15}{'right once flagged checked':>28}")
    for g in order:
        s = stats[g]
        print(f"{g:<16}{s['flagged'] / s['scenes']:>10.2f} each{100 * (1 - s['silent'] / max(s['wrong_slots'], 1)):>14.2f}%"
              f"{100 * s['no_silent'] / s['scenes']:>27.2f}%")
    n_wrong = sum(v for k, v in wrong_waste.items() if k != "right")
    if n_wrong:
        print(f"waste top wrong in {n_wrong} scenes: "
              + ", ".join(f"{wrong_waste[k]} {k}" for k in WASTE_WHY if wrong_waste[k]))
    if t_read:
        print(f"slot mapping (read) time: median {1000 * np.median(t_read):.2f} ms, "
              f"p90 {1000 * np.percentile(t_read, 90):.2f} ms per frame (no tracking)")
    if t_whole:
        whole = 1000 * np.array(t_whole)
        print(f"whole still (detect + read) time: median {np.median(whole):.1f} ms, p90 "
              f"{np.percentile(whole, 90):.1f} ms, over {FRAME_BUDGET_MS:.0f} ms: {int((whole > FRAME_BUDGET_MS).sum())} "
              f"of {len(whole)} (no layout tracked: a video's first frames; tracked frames: evaluate_follow.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
