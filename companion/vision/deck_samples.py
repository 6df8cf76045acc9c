"""Corners of the person's own deck, named by the person: samples to fine-tune the classifier on.

When the person confirms a deal they have checked every card on the table, so each index
corner the camera read in that frame is a labelled picture of *their* deck, misreads they
corrected included. ``save_samples`` keeps a small square around each such corner (twice the
corner's longer side, so training can crop it again with jitter) and one JSON line per corner in
``samples.jsonl``; ``load_samples`` reads them back for ``tools/learn_deck.py``.

Why: the model is trained on rendered decks and names an unseen deck worse (val decks: 80-97%
of corners named right from one crop); a few confirmed deals of the deck in front of the camera
teach it that deck's index font and suit shapes (figures in ``models/MODEL_CARD.md``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional, TypeVar

import cv2
import numpy as np

from companion.cards import Card
from companion.errors import CompanionError

INDEX_FILE = "samples.jsonl"
#: The whole frames of the confirmations, with the confirmed pyramid: a learned model is checked
#: on a held-out deal as the pipeline reads it, not only corner by corner.
FRAMES_FILE = "frames.jsonl"
FRAMES_DIR = "frames"
#: Side of the saved square around a corner, in corner box lengths (training crops at ~1.1-1.7).
CONTEXT = 2.0
#: Saved squares larger than this (pixels) are scaled down: a corner needs no more to be read.
MAX_SIDE = 192
#: Corner boxes smaller than this (pixels, shorter side) are not kept: too few pixels to teach.
MIN_SIDE = 6.0


T = TypeVar("T")


class SampleError(CompanionError):
    """A samples folder or line that cannot be read."""


@dataclass(frozen=True)
class CornerSample:
    """One saved corner: its picture (``path``), the corner's box in that picture, and its card."""

    path: Path
    box: tuple[float, float, float, float]
    card: Card
    where: str = ""
    #: When the deal it comes from was confirmed (one stamp per confirmation, shared with its frame).
    saved: str = ""

    def image(self) -> np.ndarray:
        return _read_picture(self.path, "sample picture")


@dataclass(frozen=True)
class ConfirmedFrame:
    """A frame the person confirmed a deal on, the rules it was played by, and its pyramid."""

    path: Path
    rules: str
    pyramid: tuple[tuple[Optional[Card], ...], ...]
    stamp: str

    def image(self) -> np.ndarray:
        return _read_picture(self.path, "frame")


def _read_picture(path: Path, what: str) -> np.ndarray:
    img = cv2.imread(str(path))
    if img is None:
        raise SampleError(f"unreadable {what} {str(path)!r}")
    return img


def _stamp(now: Optional[float]) -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(now if now is not None else time.time()))


def _context(image: np.ndarray, box: np.ndarray) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """A square of ``CONTEXT`` x the box's longer side around ``box``, and the box inside it."""
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1) * CONTEXT
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    out = int(round(min(side, MAX_SIDE)))
    s = out / side
    m = np.array([[s, 0, out / 2 - s * cx], [0, s, out / 2 - s * cy]], np.float64)
    interp = cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR
    crop = cv2.warpAffine(image, m, (out, out), flags=interp, borderMode=cv2.BORDER_REPLICATE)
    inner = (out / 2 - s * (cx - x1), out / 2 - s * (cy - y1), out / 2 + s * (x2 - cx), out / 2 + s * (y2 - cy))
    return crop, tuple(round(v, 2) for v in inner)  # type: ignore[return-value]


def save_samples(folder: str | Path, image: np.ndarray, corners: Iterable[tuple[str, Card, Iterable[float]]],
                 source: str = "", now: Optional[float] = None) -> int:
    """Save the corners ``(where, card, box)`` of ``image`` (BGR) as samples in ``folder``.

    Returns how many were saved; boxes too small or lying outside the picture are skipped.
    """
    if image is None or getattr(image, "ndim", 0) != 3:
        raise SampleError("no picture to take corners from")
    folder = Path(folder)
    stamp = _stamp(now)
    h, w = image.shape[:2]
    lines = []
    for k, (where, card, box) in enumerate(corners):
        b = np.asarray(list(box), np.float64)
        if b.shape != (4,) or not np.isfinite(b).all():
            continue
        if min(b[2] - b[0], b[3] - b[1]) < MIN_SIDE or b[2] <= 0 or b[3] <= 0 or b[0] >= w or b[1] >= h:
            continue
        crop, inner = _context(image, b)
        name = f"{stamp}_{k:02d}_{card}.png"
        folder.mkdir(parents=True, exist_ok=True)
        if not cv2.imwrite(str(folder / name), crop):
            raise SampleError(f"could not write a sample picture in {str(folder)!r}")
        lines.append(json.dumps({"file": name, "card": str(card), "box": list(inner), "where": where,
                                 "source": source, "saved": stamp}))
    if lines:
        with (folder / INDEX_FILE).open("a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return len(lines)


def save_frame(folder: str | Path, image: np.ndarray, rules: str,
               pyramid: Iterable[Iterable[Optional[Card]]], now: Optional[float] = None) -> Path:
    """Keep the frame a deal was confirmed on (JPEG) with that deal's pyramid (``None``: empty)."""
    if image is None or getattr(image, "ndim", 0) != 3:
        raise SampleError("no picture to keep")
    folder = Path(folder)
    stamp = _stamp(now)
    (folder / FRAMES_DIR).mkdir(parents=True, exist_ok=True)
    path = folder / FRAMES_DIR / f"{stamp}.jpg"
    if not cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 92]):
        raise SampleError(f"could not write a frame in {str(folder)!r}")
    rows = [[None if c is None else str(c) for c in row] for row in pyramid]
    with (folder / FRAMES_FILE).open("a", encoding="utf-8") as f:
        f.write(json.dumps({"file": f"{FRAMES_DIR}/{path.name}", "rules": rules, "pyramid": rows,
                            "saved": stamp}) + "\n")
    return path


def _read_index(index: Path, what: str, make: Callable[[dict], T]) -> list[T]:
    """One ``make(line's JSON)`` per line of ``index``; a bad line raises, quoting it."""
    out = []
    for n, line in enumerate(index.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(make(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            raise SampleError(f"{index}:{n}: not a {what} line ({exc}): {line[:80]!r}") from None
    return out


def load_frames(folder: str | Path) -> list[ConfirmedFrame]:
    """The confirmed frames kept in ``folder`` (none: an empty list)."""
    folder = Path(folder)
    index = folder / FRAMES_FILE
    if not index.is_file():
        return []

    def make(d: dict) -> ConfirmedFrame:
        rows = tuple(tuple(None if c is None else Card.parse(str(c)) for c in row) for row in d["pyramid"])
        return ConfirmedFrame(folder / str(d["file"]), str(d["rules"]), rows, str(d["saved"]))

    return _read_index(index, "frame", make)


def load_samples(folder: str | Path) -> list[CornerSample]:
    """The samples saved in ``folder`` (their pictures are read when used)."""
    folder = Path(folder)
    index = folder / INDEX_FILE
    if not index.is_file():
        raise SampleError(f"no samples in {str(folder)!r} (no {INDEX_FILE}): confirm a deal in the app first")

    def make(d: dict) -> CornerSample:
        box = tuple(float(v) for v in d["box"])
        if len(box) != 4:
            raise ValueError("box needs 4 numbers")
        return CornerSample(folder / str(d["file"]), box, Card.parse(str(d["card"])),  # type: ignore[arg-type]
                            str(d.get("where", "")), str(d.get("saved", "")))

    return _read_index(index, "sample", make)
