"""``pyramid-companion follow SOURCE --rules PRESET [--deal "CODES..."] --json``: follow a played game.

SOURCE is a video file or a folder of frames (read in name order); the frames go
through recognition and fusion, and every stable change of the table is
explained as moves. ``--layouts FILE.jsonl`` replays stable layouts instead (one
``TableLayout.to_json()`` object per line). Without ``--deal`` the first stable
layout is the deal as recognised; with it, the pipeline reading the frames
knows each card's slot (a card the camera keeps misreading is still known).
With ``--json`` one object is printed: ``{"moves": [...], "events": [{"frame",
"kind", "text"}], "pyramid": [[code or null per slot] per row], "waste":
[codes], "result": "won"|"lost"|"playing"}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("follow", help="follow a game played on camera: moves, illegal moves, checks",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("source", nargs="?", help="video file or folder of frames (or a .jsonl layouts file)")
    p.add_argument("--rules", default="classic", help="rules preset (default: classic)")
    p.add_argument("--deal", default=None, help="the deal as known (pyramid row by row, then stock; ?? = unknown)")
    p.add_argument("--layouts", default=None, metavar="FILE.jsonl", help="replay stable layouts from a JSON-lines file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--models", default=None, help="folder with the ONNX model (default: models/)")
    p.add_argument("--stable", type=int, default=None,
                   help="frames in the fusion voting window (default: one second of frames)")
    p.add_argument("--fps", type=float, default=None,
                   help="frame rate of SOURCE (default: the video's own; 30 for a folder of frames)")
    p.add_argument("--max-frames", type=int, default=0, help="stop after this many frames")
    p.add_argument("--save", default=None, metavar="GAME.json", help="also save the game record")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from companion.errors import CompanionError
    from companion.game import Deal
    from companion.playalong.start import FollowStart
    from companion.playalong.stream import default_detector, layouts_from, read_layouts

    from companion.rules import Rules

    rules = Rules.parse(args.rules)
    deal = Deal.parse(args.deal, rules) if args.deal else None
    start: Optional[FollowStart] = None

    def tick(frame: int, sightings: dict) -> None:  # frames with no new layout: a lone card is judged in time
        if start is not None:
            start.tick(frame, sightings)

    if args.layouts:
        layouts = read_layouts(args.layouts)
    elif args.source:
        kw: dict[str, Any] = {"stable": args.stable, "max_frames": args.max_frames, "fps": args.fps}
        if not str(args.source).endswith((".jsonl", ".ndjson")):
            from pathlib import Path
            if not Path(args.source).exists():
                raise CompanionError(f"no such file or folder: {args.source!r}")
            kw["detector"] = default_detector(args.models)
            kw["on_frame"] = tick
            kw["known"] = deal.pyramid if deal is not None else None
            layouts = layouts_from(args.source, rules, **kw)
        else:
            layouts = layouts_from(args.source, rules)
    else:
        raise CompanionError("give a SOURCE (video file or folder of frames) or --layouts FILE.jsonl")
    # The follower starts on the first layout: frames per second from the source (a video's own
    # rate) so its time limits hold; without --deal the deal is that layout (see FollowStart).
    count = 0
    for layout in layouts:
        count += 1
        if start is None:
            fps = (layout.extra or {}).get("fps") or args.fps or 30.0
            start = FollowStart(rules, deal, fps=float(fps))
        start.feed(layout)
    if start is None and deal is not None:
        start = FollowStart(rules, deal, fps=args.fps or 30.0)
    if start is not None:
        start.finish()
    follower = start.follower if start is not None else None
    if follower is None:
        why = f" ({start.errors[-1]})" if start is not None and start.errors else ""
        raise CompanionError(f"no stable view of a pyramid in {args.layouts or args.source!r}{why}")
    if args.save:
        follower.game.save(args.save)
    out = follower.to_json()
    if args.json:
        print(json.dumps(out))
    else:
        w = sys.stdout.write
        for e in out["events"]:
            w(f"frame {e['frame']:>6}  {e['kind']:<7}  {e['text']}\n")
        w(f"{len(out['moves'])} moves from {count} stable layouts: {' '.join(out['moves'])}\n")
        w(f"result: {out['result']}\n")
    return 0
