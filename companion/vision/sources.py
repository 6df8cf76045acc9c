"""Frame sources behind one interface: a webcam, a video file, a folder of images, one image.

Every source iterates ``(frame_number, image_bgr)`` and can be closed (also as a
context manager). Problems become ``FrameSourceError`` (a ``CompanionError``,
so the command line prints it as one line) naming the camera or file:
a file that cannot be read, a folder without images, a camera that cannot be
opened or stops delivering frames (unplugged).

``open_source("0")`` opens camera 0; a folder opens an ``ImageFolderSource``
(images in name order); a file with an image suffix a single-image source;
any other file a ``VideoFileSource``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Optional, Protocol

import numpy as np

from companion.errors import CompanionError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


class FrameSourceError(CompanionError):
    """A camera or file that cannot deliver frames."""


class FrameSource(Protocol):
    name: str
    fps: float

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]: ...

    def close(self) -> None: ...


class _Base:
    name = "source"
    fps = 30.0

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_image(path: str | Path) -> np.ndarray:
    """Read one image as BGR or raise ``FrameSourceError`` naming the file."""
    import cv2
    p = Path(path)
    if not p.is_file():
        raise FrameSourceError(f"no such image file: {str(path)!r}")
    data = np.fromfile(str(p), np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise FrameSourceError(f"cannot read image {str(path)!r} (not an image, or damaged)")
    return image


class ImageSource(_Base):
    """A single image as a one-frame source."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = str(path)
        self._image = read_image(path)

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        yield 0, self._image


class ImageFolderSource(_Base):
    """The images of a folder in name order; an unreadable one raises unless ``skip_unreadable``."""

    def __init__(self, folder: str | Path, fps: float = 30.0, skip_unreadable: bool = False) -> None:
        self.folder = Path(folder)
        self.name = str(folder)
        self.fps = fps
        self.skip_unreadable = skip_unreadable
        if not self.folder.is_dir():
            raise FrameSourceError(f"no such folder: {str(folder)!r}")
        self.files = sorted(p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.files:
            raise FrameSourceError(f"no images ({', '.join(IMAGE_SUFFIXES)}) in folder {str(folder)!r}")
        self.skipped: list[Path] = []

    def __len__(self) -> int:
        return len(self.files)

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        for i, p in enumerate(self.files):
            try:
                yield i, read_image(p)
            except FrameSourceError:
                if not self.skip_unreadable:
                    raise
                self.skipped.append(p)


class VideoFileSource(_Base):
    """A video file read with OpenCV."""

    def __init__(self, path: str | Path) -> None:
        import cv2
        self.path = Path(path)
        self.name = str(path)
        if not self.path.is_file():
            raise FrameSourceError(f"no such video file: {str(path)!r}")
        self._cap = cv2.VideoCapture(str(self.path))
        if not self._cap.isOpened():
            raise FrameSourceError(f"cannot open video {str(path)!r} (unknown format or damaged)")
        fps = self._cap.get(cv2.CAP_PROP_FPS)
        self.fps = float(fps) if fps and fps > 0 else 30.0
        ok, first = self._cap.read()
        if not ok or first is None:
            self._cap.release()
            raise FrameSourceError(f"video {str(path)!r} has no readable frames")
        self._first: Optional[np.ndarray] = first

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        i = 0
        if self._first is not None:
            frame, self._first = self._first, None
            yield i, frame
            i += 1
        while True:
            ok, frame = self._cap.read()
            if not ok or frame is None:
                return
            yield i, frame
            i += 1

    def close(self) -> None:
        self._cap.release()


class CameraSource(_Base):
    """A webcam by index. Stops with ``FrameSourceError`` when the camera vanishes."""

    def __init__(self, index: int, width: int = 1280, height: int = 720, capture=None,
                 max_failures: int = 30) -> None:
        import cv2
        self.index = index
        self.name = f"camera {index}"
        self._cap = capture if capture is not None else cv2.VideoCapture(index)
        if not self._cap.isOpened():
            raise FrameSourceError(f"cannot open camera {index} (not connected, or used by another program)")
        if capture is None:
            self._cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
            self._cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        fps = self._cap.get(cv2.CAP_PROP_FPS)
        self.fps = float(fps) if fps and fps > 0 else 30.0
        self.max_failures = max_failures

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        i, failures = 0, 0
        while True:
            ok, frame = self._cap.read()
            if not ok or frame is None:
                failures += 1  # a webcam may drop a few frames; many in a row means it is gone
                if failures >= self.max_failures:
                    raise FrameSourceError(f"camera {self.index} stopped delivering frames "
                                           f"(unplugged?) after {i} frames")
                continue
            failures = 0
            yield i, frame
            i += 1

    def close(self) -> None:
        self._cap.release()


def open_source(spec: str | int | Path) -> _Base:
    """Open a camera index (``0``), an image folder, an image file or a video file."""
    if isinstance(spec, int) or (isinstance(spec, str) and spec.strip().isdigit()):
        return CameraSource(int(spec))
    p = Path(spec)
    if p.is_dir():
        return ImageFolderSource(p)
    if not p.exists():
        raise FrameSourceError(f"no such file or folder: {str(spec)!r}")
    if p.suffix.lower() in IMAGE_SUFFIXES:
        return ImageSource(p)
    return VideoFileSource(p)
