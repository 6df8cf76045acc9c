"""Render whole Pyramid games as a webcam sees them (held-out decks), with their truth.

    python tools/render_games.py --count 100 --seed 1000 --out data/games/eval --video none
    python tools/render_games.py --count 2 --seed 7 --out datasets/games --max-moves 8 --hold 10 \
        --size 640x360 --compact --video mp4      # the committed samples

Game ``i`` is ``OUT/g<seed+i>`` and depends only on its seed; finished games are skipped, so an
interrupted run resumes. Folder format: ``tools/games/render.py``. ``--video none`` writes the
truth and per-frame labels only (enough for ``tools/evaluate_follow.py`` with the fake detector).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output folder (one sub-folder per game)")
    p.add_argument("--rules", default="classic", help="rules preset (a classic-shaped table: draw 1, one waste)")
    p.add_argument("--video", default="mp4", choices=["mp4", "avi", "jpg", "none"])
    p.add_argument("--fps", type=float, default=10.0)
    p.add_argument("--hold", type=int, default=12, help="still frames after each step (>= the fuser quorum)")
    p.add_argument("--max-moves", type=int, default=None, help="stop each game after this many moves")
    p.add_argument("--size", default="960x540", help="frame size WxH")
    p.add_argument("--compact", action="store_true", help="small video files (samples to commit)")
    p.add_argument("--illegal", type=int, default=3, help="at most this many illegal removals per game")
    args = p.parse_args(argv)
    import cv2
    cv2.setNumThreads(1)
    from tools.games.render import render_game
    out = Path(args.out)
    try:
        size = tuple(int(v) for v in args.size.lower().split("x"))
        assert len(size) == 2 and min(size) >= 160
    except (ValueError, AssertionError):
        print(f"error: --size must be WIDTHxHEIGHT, e.g. 960x540, got {args.size!r}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for i in range(args.count):
        seed = args.seed + i
        folder = out / f"g{seed:05d}"
        if (folder / "truth.json").exists():
            continue
        t0 = time.perf_counter()
        try:
            truth = render_game(folder, seed, args.rules, video=args.video, fps=args.fps, hold=args.hold,
                                max_moves=args.max_moves, max_illegal=args.illegal,
                                compact=args.compact, size=size)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"{folder}: {len(truth['moves'])} moves, {len(truth['illegal'])} illegal, {truth['frames']} frames, "
              f"{truth['deck']}, {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
