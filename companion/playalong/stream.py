"""Where stable layouts come from: a JSON-lines file, or frames through the vision pipeline.

``layouts_from(source, rules)`` is the one entry point the ``follow`` command
(and anything else replaying a session) uses: a ``.jsonl`` file of layouts
(one ``TableLayout.to_json()`` object per line, plus an optional
``"stock_top"``), or a video / folder of frames read by the recognition
pipeline and fused so that only stable changes come out.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from companion.errors import InvalidLayoutError
from companion.layout import TableLayout, layout_from_json, layout_to_json  # noqa: F401 (re-exported)


def read_layouts(path: str | Path) -> Iterator[TableLayout]:
    """Layouts from a JSON-lines file; a bad line raises InvalidLayoutError naming it."""
    p = Path(path)
    try:
        f = p.open(encoding="utf-8")
    except OSError as exc:
        raise InvalidLayoutError(f"cannot read layouts file {str(path)!r}: {exc.strerror or exc}") from None
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidLayoutError(f"{p.name} line {n}: not JSON ({exc.msg})") from None
            layout = layout_from_json(data, f"{p.name} line {n}")
            if layout.frame < 0:
                layout = TableLayout(layout.pyramid, layout.waste, layout.cells, layout.reserve,
                                     layout.stock_present, layout.problems, n - 1, layout.extra)
            yield layout


def write_layouts(path: str | Path, layouts: Iterable[TableLayout]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for layout in layouts:
            f.write(json.dumps(layout_to_json(layout)) + "\n")


def stable_layouts(source: str, rules: Any, *, detector: Any = None, stable: Optional[int] = None,
                   max_frames: int = 0, fps: Optional[float] = None,
                   on_frame: Optional[Callable[[int, dict], Any]] = None,
                   known: Optional[Sequence[Any]] = None) -> Iterator[TableLayout]:
    """Frames of a video / image folder -> recognition -> fusion -> each accepted layout.

    The fusion window is one second of frames at ``fps`` (default: the source's own rate, 30
    for a folder of frames), or ``stable`` frames. Each layout's ``extra`` carries ``"fps"`` and
    ``"skipped"`` (frames fusion could not use since the last change) for the Follower.
    ``on_frame(index, sightings)`` is called for every frame that brings no new layout, with the
    last frame each card was read (``Follower.tick``). ``known``: the pyramid's cards as the person
    gave the deal (``Deal.pyramid``): a card the camera misreads is still known where it lies."""
    from companion.vision.fusion import LayoutFuser
    from companion.vision.pipeline import LayoutPipeline
    from companion.vision.sources import open_source

    src = open_source(source)  # a bad path fails before the model loads
    rate = float(fps or getattr(src, "fps", 0) or 30.0)
    pipe = LayoutPipeline(detector if detector is not None else default_detector(), rules)
    pipe.know_deal(known)
    fuser = (LayoutFuser(stable, rules=rules, pipeline=pipe) if stable
             else LayoutFuser.for_fps(rate, rules=rules, pipeline=pipe))
    skipped = 0
    with src:
        for n, (i, image) in enumerate(src, 1):
            before = fuser.skipped
            accepted = fuser.update(pipe.process(image, frame=i), i)
            skipped += fuser.skipped - before
            if accepted is not None:
                # frames the fuser could not use since the last change (a hand over the table):
                # the Follower believes hidden draws only after such a gap
                yield replace(accepted, extra={**(accepted.extra or {}), "skipped": skipped, "fps": rate})
                skipped = 0
            elif on_frame is not None:
                on_frame(i, fuser.last_seen)
            if max_frames and n >= max_frames:
                break


def default_detector(models: Optional[str] = None) -> Any:
    from companion.errors import CompanionError
    try:
        from companion.vision.detector import FOLLOW_FACE_BELOW_PX, FOLLOW_MULTI_CROP, OnnxCardDetector
    except ImportError as exc:
        raise CompanionError(f"no recognition model available ({exc})") from None
    try:  # named from one index crop, as the follower was tuned on (see FOLLOW_MULTI_CROP)
        return OnnxCardDetector(models, multi_crop_below=FOLLOW_MULTI_CROP, face_below_px=FOLLOW_FACE_BELOW_PX)
    except CompanionError:
        raise
    except (OSError, RuntimeError, ValueError) as exc:
        raise CompanionError(f"cannot load the recognition model: {exc}") from None


def layouts_from(source: str, rules: Any, **kw: Any) -> Iterator[TableLayout]:
    """Stable layouts of ``source``: a ``.jsonl`` layouts file, or a video / folder of frames."""
    if str(source).endswith((".jsonl", ".ndjson")):
        return read_layouts(source)
    return stable_layouts(source, rules, **kw)
