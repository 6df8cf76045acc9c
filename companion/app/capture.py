"""Frame sources for the app (Qt-free): camera index, video file, image, image folder, demo.

This is the app's one adapter to ``companion.vision``: ``open_source`` and
``make_recognizer`` are the only places that know how frames are read and
recognised, so wiring the vision pipeline in is a change here only. A source's
``read()`` returns the next ``Frame``, ``None`` at the end of a file, and raises
``SourceLost`` when a camera stops delivering; ``reopen()`` tries to get it back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Protocol

from companion.layout import TableLayout
from companion.rules import Rules
from companion.app.places import Place

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")
DEMO = "demo"
AUTO = "auto"  # camera 0 when one opens, else the demo (the first run's default)


class SourceLost(RuntimeError):
    """The camera stopped delivering frames (unplugged, taken by another program)."""


@dataclass
class Frame:
    image: Any                      # numpy BGR array, H x W x 3
    index: int
    #: A recognised layout, when the source or the recognizer produced one.
    layout: Optional[TableLayout] = None
    #: Image boxes (x1, y1, x2, y2) of recognised cards (their index corners), by place, for the overlay.
    boxes: dict[Place, tuple[float, float, float, float]] = field(default_factory=dict)
    #: The card and score this frame reads at each boxed place (the overlay's labels).
    cards: dict[Place, Any] = field(default_factory=dict)
    scores: dict[Place, float] = field(default_factory=dict)
    #: Cards read at no place of the table: ``(card, box, score)``.
    loose: list[tuple[Any, tuple[float, float, float, float], float]] = field(default_factory=list)
    #: The last frame each card was read (the fuser's record): tells the follower whether a card
    #: that pairs with one lifted alone is out of sight, being picked up (``Follower.tick``).
    sightings: dict[Any, int] = field(default_factory=dict)


class FrameSource(Protocol):
    name: str

    def read(self) -> Optional[Frame]: ...
    def reopen(self) -> bool: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class SourceSpec:
    """What the person chose: ``camera`` (index), ``video``, ``image``, ``folder`` or ``demo``."""

    kind: str
    target: str = ""

    @classmethod
    def parse(cls, text: str) -> "SourceSpec":
        text = str(text).strip()
        if text.lower() in ("", DEMO):
            return cls(DEMO)
        if text.lower() == AUTO:
            return cls(AUTO)
        if text.lower().startswith("camera:"):
            text = text.split(":", 1)[1]
        if text.isdigit():
            return cls("camera", text)
        path = Path(text).expanduser()
        if path.is_dir():
            return cls("folder", str(path))
        if path.suffix.lower() in IMAGE_SUFFIXES:
            return cls("image", str(path))
        return cls("video", str(path))

    def __str__(self) -> str:
        if self.kind in (DEMO, AUTO):
            return self.kind
        return f"camera:{self.target}" if self.kind == "camera" else self.target

    def describe(self) -> str:
        if self.kind == DEMO:
            return "the bundled demo"
        if self.kind == AUTO:
            return "camera 0 (or the demo when there is none)"
        if self.kind == "camera":
            return f"camera {self.target}"
        return f"{self.kind} {Path(self.target).name}"


def _cv2():
    import cv2  # lazy: the window shows before OpenCV loads

    return cv2


class CameraSource:
    def __init__(self, index: int) -> None:
        self.name = f"camera {index}"
        self.index = index
        self._cap = None
        self._count = 0
        if not self.reopen():
            raise SourceLost(f"camera {index} cannot be opened")

    def reopen(self) -> bool:
        cv2 = _cv2()
        if self._cap is not None:
            self._cap.release()
        self._cap = cv2.VideoCapture(self.index)
        return bool(self._cap.isOpened())

    def read(self) -> Optional[Frame]:
        ok, image = self._cap.read() if self._cap is not None else (False, None)
        if not ok or image is None:
            raise SourceLost(f"camera {self.index} stopped delivering frames")
        self._count += 1
        return Frame(image, self._count - 1)

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class VideoSource:
    def __init__(self, path: str) -> None:
        self.name = Path(path).name
        self.path = path
        cv2 = _cv2()
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such video file: {path!r}")
        self._cap = cv2.VideoCapture(path)
        if not self._cap.isOpened():
            raise ValueError(f"cannot read video {path!r}")
        self._count = 0

    def reopen(self) -> bool:
        return True

    def read(self) -> Optional[Frame]:
        ok, image = self._cap.read()
        if not ok:
            return None
        self._count += 1
        return Frame(image, self._count - 1)

    def close(self) -> None:
        self._cap.release()


class ImagesSource:
    """One image (repeated, so the view stays live) or a folder of images in name order."""

    def __init__(self, paths: list[Path], repeat_last: bool) -> None:
        if not paths:
            raise FileNotFoundError("no images found")
        self.name = paths[0].name if len(paths) == 1 else paths[0].parent.name
        self._paths = paths
        self._repeat = repeat_last
        self._count = 0
        self._cache: Optional[Any] = None

    def reopen(self) -> bool:
        return True

    def read(self) -> Optional[Frame]:
        if self._count >= len(self._paths) and not self._repeat:
            return None
        path = self._paths[min(self._count, len(self._paths) - 1)]
        if self._cache is None or self._count < len(self._paths):
            image = _cv2().imread(str(path))
            if image is None:
                raise ValueError(f"cannot read image {str(path)!r}")
            self._cache = image
        self._count += 1
        return Frame(self._cache, self._count - 1)

    def close(self) -> None:
        self._cache = None


def open_source(spec: SourceSpec, rules: Rules) -> FrameSource:
    """Open what the person chose; raises ``SourceLost``/``OSError``/``ValueError`` with a clear message."""
    if spec.kind == AUTO:
        try:
            return CameraSource(0)
        except SourceLost:
            spec = SourceSpec(DEMO)
    if spec.kind == DEMO:
        from companion.app.demo import open_demo

        return open_demo(rules)
    if spec.kind == "camera":
        return CameraSource(int(spec.target))
    if spec.kind == "folder":
        paths = sorted(p for p in Path(spec.target).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        return ImagesSource(paths, repeat_last=True)
    if spec.kind == "image":
        if not Path(spec.target).exists():
            raise FileNotFoundError(f"no such image: {spec.target!r}")
        return ImagesSource([Path(spec.target)], repeat_last=True)
    return VideoSource(spec.target)


Recognizer = Callable[[Frame], Frame]


def make_recognizer(rules: Rules, fps: float = 15.0) -> Optional[Recognizer]:
    """The vision pipeline as ``frame -> frame with overlay (and layout when newly stable)``.

    Cheap: the model loads in the capture worker (``prepare()``); without one, frames pass
    through unrecognised and the recognizer's ``description`` says why.
    """
    from companion.app.recognition import LiveRecognizer

    return LiveRecognizer(rules, fps=fps)
