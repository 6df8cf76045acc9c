"""Follow rendered games (``tools/synth`` game folders) through the real layout pipeline and fusion.

``python -m companion.playalong.rendered datasets/games data/games/eval``

Each game folder holds ``truth.json`` (rules, deal, the move list, the illegal
removals shown and their frames) and ``labels.jsonl`` (per frame, the index
corners a perfect detector would report: ``[class, x1, y1, x2, y2]``). The
corners go through ``LayoutPipeline.read`` and ``LayoutFuser`` as the
detector's output would, and the stable layouts through ``Follower``. Printed:
games with every move recovered in order, games with a phantom move, illegal
removals reported / shown, and the follower's cost per frame. This measures
the play-along logic on the pipeline's real geometry (hands, tilt, pauses),
not the recognition model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from companion.game import Deal
from companion.playalong.follower import Follower
from companion.rules import Rules


def _detections(labels: list) -> Any:
    from companion.vision.detections import Detections
    if not labels:
        return Detections.empty()
    arr = np.asarray(labels, dtype=np.float32)
    return Detections(arr[:, 1:5].copy(), arr[:, 0].astype(np.int64), np.full(len(arr), 0.99, np.float32))


def follow_game(folder: Path, *, known_deal: bool = False, stable: int | None = None) -> dict[str, Any]:
    from companion.vision.fusion import DEFAULT_K, LayoutFuser
    from companion.vision.pipeline import LayoutPipeline

    truth = json.loads((folder / "truth.json").read_text())
    rules = Rules.parse(truth["rules"])
    deal = Deal.parse(truth["deal"], rules)
    pipe = LayoutPipeline(None, rules)
    fps = float(truth.get("fps", 30.0))
    k = stable or max(3, round(DEFAULT_K * fps / 30.0))
    fuser = LayoutFuser(k)
    follower = Follower(rules, deal, fps=fps) if known_deal else None
    spent: list[float] = []
    illegal_frames: list[int] = []
    with (folder / "labels.jsonl").open() as f:
        for line in f:
            row = json.loads(line)
            accepted = fuser.update(pipe.read(_detections(row["labels"]), frame=row["f"]), row["f"])
            t = time.perf_counter()
            if accepted is not None:
                if follower is None:
                    follower = Follower(rules, Deal.from_cards(rules, deal.pyramid, deal.reserve), fps=fps)
                events = follower.feed(accepted)
                illegal_frames += [e.frame for e in events if e.kind == "illegal"]
            spent.append(time.perf_counter() - t)
    if follower is not None:
        follower.finish()
    want = [m["move"] for m in truth["moves"]]
    got = [str(m) for m in follower.moves] if follower else []
    shown = truth.get("illegal", [])
    reported = sum(any(ill["frames"][0] <= fr <= ill["frames"][1] for fr in illegal_frames) for ill in shown)
    return {"name": folder.name, "exact": got == want, "phantom": bool(Counter(got) - Counter(want)),
            "illegal_shown": len(shown), "illegal_reported": reported,
            "false_illegal": sum(not any(i["frames"][0] <= fr <= i["frames"][1] for i in shown)
                                 for fr in illegal_frames),
            "spent": spent, "want": want, "got": got,
            "events": [e.to_json() for e in follower.events] if follower else []}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="+", help="folders of game folders (or game folders)")
    ap.add_argument("--known-deal", action="store_true", help="start from the full deal instead of the first view")
    ap.add_argument("--stable", type=int, default=None, help="fusion window (default: 30 frames at 30 fps, scaled)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    folders = []
    for root in map(Path, args.roots):
        folders += [root] if (root / "truth.json").exists() else sorted(p.parent for p in root.glob("*/truth.json"))
    rows = []
    for folder in folders:
        r = follow_game(folder, known_deal=args.known_deal, stable=args.stable)
        rows.append(r)
        if args.verbose or not r["exact"] or r["phantom"] or r["illegal_reported"] < r["illegal_shown"]:
            print(f"{r['name']}: exact={r['exact']} phantom={r['phantom']} "
                  f"illegal {r['illegal_reported']}/{r['illegal_shown']} false {r['false_illegal']}")
            if not r["exact"]:
                print("  truth   ", " ".join(r["want"]))
                print("  followed", " ".join(r["got"]))
                for e in r["events"]:
                    if e["kind"] != "move":
                        print("   ", e)
    spent = [t for r in rows for t in r["spent"]]
    print(f"games {len(rows)}: all moves in order {sum(r['exact'] for r in rows)}, "
          f"with a phantom move {sum(r['phantom'] for r in rows)}, illegal removals reported "
          f"{sum(r['illegal_reported'] for r in rows)}/{sum(r['illegal_shown'] for r in rows)}, "
          f"false illegal events {sum(r['false_illegal'] for r in rows)}; follower cost per frame: mean "
          f"{1000 * statistics.fmean(spent):.3f} ms, max {1000 * max(spent):.1f} ms over {len(spent)} frames")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
