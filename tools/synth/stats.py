"""Summary of a generated dataset: scenes, labels, class balance, decks, conditions.

    python -m tools.synth.stats data/synth_v1 [--split train|val] [--json] [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from companion.cards import CARD_CODES


def _bin(value: float, edges: list[float]) -> str:
    for lo, hi in zip(edges, edges[1:]):
        if lo <= value < hi:
            return f"{lo:g}-{hi:g}"
    return f">={edges[-1]:g}"


def summarize(root: Path, split: str) -> dict:
    truths = sorted((root / split / "truth").glob("*.json"))
    classes: Counter = Counter()
    decks: Counter = Counter()
    cond: dict[str, Counter] = {k: Counter() for k in
                                ("light", "blur", "hands", "partial", "hard", "tilt", "card_px", "size", "variant")}
    n_labels = 0
    for f in truths:
        t = json.loads(f.read_text())
        c = t["conditions"]
        decks[t["deck"].split("-")[0] if t["deck"].startswith("proc/") else t["deck"]] += 1
        for lab in t["labels"]:
            classes[lab["card"]] += 1
        n_labels += len(t["labels"])
        cond["light"][c["light"]] += 1
        cond["blur"][c["blur"]] += 1
        cond["hands"][str(c["hands"])] += 1
        cond["partial"][str(c["partial"])] += 1
        cond["hard"][str(c["hard"])] += 1
        cond["tilt"][_bin(c["tilt_deg"], [0, 15, 30, 40, 50])] += 1
        cond["card_px"][_bin(c["card_width_px"], [0, 40, 60, 90, 130, 180, 250])] += 1
        cond["size"][f"{t['width']}x{t['height']}"] += 1
        cond["variant"][c.get("variant", "none")] += 1
    crops = sum(1 for _ in (root / "cls" / split).rglob("*.jpg")) if (root / "cls" / split).exists() else 0
    return {
        "split": split, "scenes": len(truths), "labels": n_labels,
        "labels_per_scene": round(n_labels / max(1, len(truths)), 1),
        "class_min": min((classes[c] for c in CARD_CODES), default=0),
        "class_max": max((classes[c] for c in CARD_CODES), default=0),
        "crops": crops, "decks": dict(decks.most_common()),
        "conditions": {k: dict(sorted(v.items())) for k, v in cond.items()},
    }


def check(root: Path, split: str) -> list[str]:
    """Problems in a split: label lines that disagree with the truth, boxes out of the image, classes
    out of range, a card labelled more than twice, images without truth."""
    problems = []
    for img in sorted((root / split / "images").glob("*.jpg")):
        name = img.stem
        tp, lp = root / split / "truth" / f"{name}.json", root / split / "labels" / f"{name}.txt"
        if not tp.exists() or not lp.exists():
            problems.append(f"{name}: missing truth or labels")
            continue
        t = json.loads(tp.read_text())
        w, h = t["width"], t["height"]
        lines = [ln.split() for ln in lp.read_text().splitlines() if ln.strip()]
        if len(lines) != len(t["labels"]):
            problems.append(f"{name}: {len(lines)} label lines, {len(t['labels'])} in truth")
            continue
        per_card: Counter = Counter()
        for parts, lab in zip(lines, t["labels"]):
            cls, cx, cy, bw, bh = int(parts[0]), *map(float, parts[1:])
            per_card[cls] += 1
            if not 0 <= cls < 52 or CARD_CODES[cls] != lab["card"]:
                problems.append(f"{name}: class {cls} vs card {lab['card']}")
            if cx - bw / 2 < -1e-6 or cy - bh / 2 < -1e-6 or cx + bw / 2 > 1 + 1e-6 or cy + bh / 2 > 1 + 1e-6 \
                    or bw <= 0 or bh <= 0:
                problems.append(f"{name}: box out of the image: {parts}")
            x1, y1, x2, y2 = lab["box"]
            if abs((x1 + x2) / 2 / w - cx) > 1e-4 or abs((x2 - x1) / w - bw) > 1e-4:
                problems.append(f"{name}: label line and truth box differ for {lab['card']}")
        many = [CARD_CODES[c] for c, n in per_card.items() if n > 2]
        if many:
            problems.append(f"{name}: more than two boxes for {many}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--split", choices=["train", "val"], action="append")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check", action="store_true", help="also verify every label file against its truth")
    args = ap.parse_args(argv)
    if not args.root.is_dir():
        print(f"error: no dataset folder {str(args.root)!r}", file=sys.stderr)
        return 2
    splits = args.split or ["train", "val"]
    if args.check:
        bad = [p for s in splits for p in check(args.root, s)]
        for p in bad[:50]:
            print("PROBLEM", p)
        print(f"check: {len(bad)} problems")
        if bad:
            return 1
    out = [summarize(args.root, s) for s in splits]
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    for s in out:
        print(f"[{s['split']}] {s['scenes']} scenes, {s['labels']} corner labels ({s['labels_per_scene']}/scene), "
              f"per class {s['class_min']}..{s['class_max']}, {s['crops']} crops")
        print(f"  decks: {s['decks']}")
        for k, v in s["conditions"].items():
            print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
