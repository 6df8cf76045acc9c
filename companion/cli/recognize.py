"""``pyramid-companion recognize IMAGE_OR_VIDEO [--rules PRESET] [--json]``: read the table.

Prints every pyramid slot's card and score, the waste, cells and reserve, and the
problems a person should check. For a video or a folder of frames the frames
are fused (a layout counts once it is stable, see ``companion.vision.fusion``)
and the last accepted layout is printed. With ``--json``:
``{"pyramid": [[code or null, ...] per row], "waste": [...], "problems": [...],
"scores": [[...]], ...}``. An unreadable file, or no pyramid found, exits with
status 2 and a one-line message.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("recognize", help="read the pyramid, waste and cells from an image or video",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="image file, video file, folder of frames, or camera index")
    p.add_argument("--rules", default="classic", help="rules preset (default: classic)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--models", default=None, help="folder with the ONNX model (default: models/)")
    p.add_argument("--max-frames", type=int, default=0, help="stop a video after this many frames")
    p.add_argument("--stable", type=int, default=None,
                   help="frames in the voting window of a video (default: one second of it)")
    # Debug: detections from a scene truth file (tools/synth) instead of the model.
    p.add_argument("--fake-truth", default=None, help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def _detector(args: argparse.Namespace):
    from companion.errors import CompanionError
    if args.fake_truth:
        from companion.vision.fake import FakeDetector, Noise, load_truth
        return FakeDetector(load_truth(args.fake_truth), Noise.none())
    try:
        from companion.vision.detector import OnnxCardDetector
    except ImportError as exc:
        raise CompanionError(f"no recognition model available ({exc})") from None
    try:
        return OnnxCardDetector(args.models) if args.models else OnnxCardDetector()
    except CompanionError:
        raise
    except (OSError, RuntimeError, ValueError) as exc:
        raise CompanionError(f"cannot load the recognition model: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from companion.errors import CompanionError
    from companion.rules import Rules
    from companion.vision.fusion import LayoutFuser
    from companion.vision.pipeline import LayoutPipeline, read_to_json
    from companion.vision.sources import ImageSource, open_source

    rules = Rules.parse(args.rules)
    source = open_source(args.source)  # errors before loading the model: a bad path is said at once
    detector = _detector(args)
    # A single picture is a still (its rules: ``LayoutPipeline.follows``); frames are followed.
    pipe = LayoutPipeline(detector, rules, track=not isinstance(source, ImageSource))
    with source:
        if isinstance(source, ImageSource):
            _, image = next(iter(source))
            reading = pipe.process(image, frame=0)
            frames = 1
        else:
            fps = getattr(source, "fps", 30.0)
            fuser = (LayoutFuser(args.stable, rules=rules, pipeline=pipe) if args.stable
                     else LayoutFuser.for_fps(fps, rules=rules, pipeline=pipe))
            reading, frames, last_ok = None, 0, None
            for i, image in source:
                r = pipe.process(image, frame=i)
                frames += 1
                if r.layout is not None:
                    last_ok = r
                fuser.update(r, i)
                if args.max_frames and frames >= args.max_frames:
                    break
            if fuser.accepted is not None:
                from companion.vision.pipeline import FrameReading
                reading = FrameReading(fuser.accepted, last_ok.detections if last_ok else None,
                                       problems=fuser.accepted.problems)
            else:
                reading = last_ok
            if reading is None:
                raise CompanionError(f"no pyramid found in {frames} frames of {args.source!r}")
    if reading.layout is None:
        raise CompanionError(f"no pyramid found in {args.source!r}: {'; '.join(reading.problems)}")
    if args.json:
        print(json.dumps(read_to_json(reading)))
    else:
        _print_text(reading.layout, frames)
    return 0


def _print_text(layout, frames: int) -> None:
    w = sys.stdout.write
    w(f"pyramid ({layout.rows} rows; card score, runner-up):\n")
    for r, row in enumerate(layout.pyramid):
        cells = []
        for s in row:
            if s.card is None:
                cells.append("  --      ")
            else:
                alt = f" {s.alternatives[1][0]}" if len(s.alternatives) > 1 else ""
                cells.append(f"{str(s.card):>4} {s.score:.2f}{alt:<3}")
        w(f"  row {r + 1}: " + " ".join(cells) + "\n")
    for p, pile in enumerate(layout.waste):
        label = "waste" if len(layout.waste) == 1 else f"waste {p + 1}"
        w(f"{label}: {' '.join(map(str, pile)) or '(empty)'}" + (" (top last)" if len(pile) > 1 else "") + "\n")
    if layout.cells:
        w("cells: " + " ".join("--" if c is None else str(c) for c in layout.cells) + "\n")
    if layout.reserve:
        w("reserve: " + " ".join("--" if c is None else str(c) for c in layout.reserve) + "\n")
    known = layout.extra.get("stock_known", False)
    w(f"stock: {'present' if layout.stock_present else 'gone'}{'' if known else ' (assumed; not seen)'}\n")
    if frames > 1:
        w(f"frames read: {frames}\n")
    if layout.problems:
        w("check:\n")
        for p in layout.problems:
            w(f"  - {p}\n")
    else:
        w("check: nothing\n")
