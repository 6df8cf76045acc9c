"""Follow rendered games end to end and print how many were recovered exactly.

    python tools/evaluate_follow.py data/games/eval            # every game folder in it
    python tools/evaluate_follow.py data/games/eval --deal known --json out/follow_eval.json

Prints: games with every move recovered in order, games with any phantom move, illegal removals
reported / total, ms per frame of following (fuser + follower) and of recognition (detector +
pipeline). The real ONNX detector from ``models/`` runs on the video when both exist (``--detector
onnx``), else the fake detector fed by each frame's truth labels; the output says which.
``--deal layout`` (default) starts from the first stable layout like ``follow`` without ``--deal``;
``--deal known`` gives the whole deal, stock order included (``follow --deal "52 codes"``).
``--record DIR`` keeps each game's stable layouts (``tools/games/replay.py``); ``--replay DIR`` runs
them through the current follower in seconds, with the recognition figures of the recording
(following time: the follower alone). ``--record-frames DIR`` / ``--replay-frames DIR`` do the same
with every frame's reading, for the fuser and follower (a fusion change measured in seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from tools.evaluate_layout import FRAME_BUDGET_MS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("games", help="folder of rendered games (tools/render_games.py) or one game folder")
    p.add_argument("--deal", choices=["layout", "known", "checked"], default="layout",
                   help="start from the first stable layout, from the whole deal (known), or as the app does: "
                        "the first stable layout with the slots it flags checked by the person (checked)")
    p.add_argument("--detector", choices=["auto", "onnx", "fake"], default="auto")
    p.add_argument("--start", type=int, default=0, help="skip the first N games")
    p.add_argument("--limit", type=int, default=0, help="only N games")
    p.add_argument("--json", help="write per-game scores here")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per game")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--record", type=Path, help="keep each game's stable layouts here (DIR/<game>.pkl)")
    how.add_argument("--replay", type=Path, help="replay the layouts kept here (--record) through the current "
                                                 "follower instead of reading the videos")
    how.add_argument("--record-frames", type=Path, help="keep every frame's reading here (DIR/<game>.pkl, "
                                                        "about 10 MB a game)")
    how.add_argument("--replay-frames", type=Path, help="replay the frames' readings kept here (--record-frames) "
                                                        "through the current fuser and follower")
    args = p.parse_args(argv)
    from tools.games.follow import follow_game, score
    from tools.games.replay import load_frames, load_recording, replay, replay_frames, save_frames, save_recording
    root = Path(args.games)
    folders = [root] if (root / "truth.json").exists() else sorted(d for d in root.iterdir()
                                                                   if (d / "truth.json").exists())
    folders = folders[args.start:]
    if args.limit:
        folders = folders[:args.limit]
    if not folders:
        print(f"error: no rendered games in {str(root)!r}", file=sys.stderr)
        return 2
    detector = None
    if args.detector in ("auto", "onnx") and not (args.replay or args.replay_frames):
        try:
            from companion.vision.detector import load_detector
            detector = load_detector()
        except Exception as exc:  # no model shipped: say so, use the fake
            if args.detector == "onnx":
                print(f"error: no ONNX detector: {exc}", file=sys.stderr)
                return 2
            detector = None
    rows = []
    for folder in folders:
        truth = json.loads((folder / "truth.json").read_text())
        if args.replay or args.replay_frames:
            path = (args.replay or args.replay_frames) / f"{folder.name}.pkl"
            try:
                record = load_recording(path) if args.replay else load_frames(path)
            except (OSError, ValueError) as exc:
                print(f"error: no recording of {folder.name}: {exc}", file=sys.stderr)
                return 2
            if record["deal"] != args.deal:
                print(f"error: {str(path)!r} was recorded with --deal {record['deal']}, not {args.deal}",
                      file=sys.stderr)
                return 2
            from companion.rules import Rules
            run = replay(record, Rules.parse(truth["rules"])) if args.replay else replay_frames(record, folder)
        else:
            det = detector if detector is not None and truth.get("video") else None
            calls: list | None = [] if args.record else None
            kept: list | None = [] if args.record_frames else None
            run = follow_game(folder, detector=det, known_deal=args.deal == "known",
                              checked_deal=args.deal == "checked", log=calls, keep_readings=kept)
            if args.record:
                save_recording(args.record / f"{folder.name}.pkl", calls, run, args.deal)
            if args.record_frames:
                save_frames(args.record_frames / f"{folder.name}.pkl", kept, run, args.deal)
        s = score(truth, run)
        s["detector"] = run.detector
        rows.append(s)
        if args.verbose:
            print(f"{folder.name}: {s['recorded']}/{s['moves']} moves ({s['matched']} right, in order), "
                  f"all in order {s['all_in_order']}, "
                  f"first wrong move {s['first_wrong']} ({s['pyramid_left']} pyramid cards left), "
                  f"phantom {s['phantom']} {s['phantom_moves']}, illegal {s['illegal_reported']}/{s['illegal']}, "
                  f"spurious illegal {s['spurious_illegal']}, checks {s['checks']}", flush=True)
    n = len(rows)
    frames = sum(r["frames"] for r in rows)
    follow_ms = sum(r["follow_ms"] * r["frames"] for r in rows) / max(1, frames)
    rec_ms = sum(r["recognise_ms"] * r["frames"] for r in rows) / max(1, frames)
    print(f"detector: {rows[0]['detector']}; deal: {args.deal}; {n} games, {frames} frames")
    print(f"every move recovered in order: {sum(r['all_in_order'] for r in rows)}/{n}; moves recorded right, "
          f"in order: {sum(r['matched'] for r in rows)}/{sum(r['moves'] for r in rows)} "
          f"(recorded at all: {sum(r['recorded'] for r in rows)})")
    print(f"games with a phantom move: {sum(r['phantom'] > 0 for r in rows)}/{n} "
          f"({sum(r['phantom'] for r in rows)} phantom moves, {sum(r.get('phantom_draws', 0) for r in rows)} "
          "of them draws)")
    print(f"illegal removals reported while off the table: {sum(r['illegal_reported'] for r in rows)}/"
          f"{sum(r['illegal'] for r in rows)} (at all, by the time they were put back: "
          f"{sum(r.get('illegal_reported_any', 0) for r in rows)})"
          f"; spurious illegal events: {sum(r['spurious_illegal'] for r in rows)}; check events: "
          f"{sum(r['checks'] for r in rows)}")
    read = [r for r in rows if r["deal_wrong"] is not None]
    if read:
        print(f"deal as first accepted: exact {sum(r['deal_wrong'] == 0 for r in read)}/{n}; right once the slots the "
              f"app flags are checked: {sum(r['deal_silent'] == 0 for r in read)}/{n} "
              f"({sum(r['deal_flagged'] for r in read) / len(read):.1f} slots flagged per deal, "
              f"{sum(r['deal_silent'] for r in read)} wrong slots not flagged)")
    print(f"following (fuser + follower): {follow_ms:.2f} ms/frame; recognition (detector + pipeline): "
          f"{rec_ms:.2f} ms/frame")
    # (the per-frame floor is the camera's path: frames read from video by the model, not the fake)
    each = np.array([t for r in rows if not r["detector"].startswith("fake")
                     for t in r.get("recognise_frame_ms", [])])
    if len(each):
        print(f"recognition per frame: median {np.median(each):.1f} ms, p90 {np.percentile(each, 90):.1f}, "
              f"p99 {np.percentile(each, 99):.1f}, max {each.max():.1f}; over {FRAME_BUDGET_MS:.0f} ms: "
              f"{int((each > FRAME_BUDGET_MS).sum())} of {len(each)} frames")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
