"""Reading a frame turned by quarter turns, and mapping the reading back to the frame.

The lattice search places a pyramid well up to about 45 degrees off upright; far beyond that its
priors (apex up, first indices above second ones) can settle on a wrong lattice altogether, and
the turn that the classifier's naming then tries (``orientation``) starts from that wrong fit. A
frame turned by a quarter turn (``numpy.rot90``: exact, no resampling) brings any layout within
45 degrees of upright in one of the turns; the reading that names the pyramid surest wins
(``SecondLooks.read_image``), and is mapped back to the frame's own pixels here.

Without a layout (``pyramid-companion detect``, ``tools/evaluate.py``), ``detect_any_way`` does
the same with the detections alone: a weak upright reading is compared with the quarter-turned
ones, and the reading that names the most cards surest wins. (The detector finds few index corners
turned far from upright and the classifier names them poorly: val tables turned 60-135 degrees,
25-45% of their cards found.)
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from companion.vision.detections import Detections

if TYPE_CHECKING:
    from companion.vision.pipeline import FrameReading

#: Quarter turns tried (``numpy.rot90``'s k: counter-clockwise), in order.
QUARTER_TURNS = (1, -1, 2)
#: A reading of a turned frame must name this much surer than the reading it would replace: a
#: second detector pass alone changes the naming by ~10-30%.
SECOND_OPINION = 1.3
#: ``detect_any_way``: a read scoring this counts as sure (the ``detect`` command's default floor)...
SURE_READ = 0.25
#: ... and an upright reading with fewer sure reads, or sure reads named under this on average, is
#: weak: the turns are tried. (Rendered val: 101 of 300 frames tried, 1 of 3 when a frame is upright.)
WEAK_READS, WEAK_MEAN = 6, 0.5


def turn_image(image: np.ndarray, k: int) -> np.ndarray:
    return np.ascontiguousarray(np.rot90(image, k))


def turn_matrix(k: int, size: tuple[int, int]) -> np.ndarray:
    """3x3 map from pixels of a ``size`` (width, height) frame to pixels of ``turn_image(frame, k)``
    (pixel edges, so that boxes map onto boxes exactly)."""
    w, h = size
    k %= 4
    m = {0: [[1, 0, 0], [0, 1, 0]],
         1: [[0, 1, 0], [-1, 0, w]],       # counter-clockwise: (x, y) -> (y, w - x)
         2: [[-1, 0, w], [0, -1, h]],
         3: [[0, -1, h], [1, 0, 0]]}[k]    # clockwise: (x, y) -> (h - y, x)
    return np.array(m + [[0, 0, 1]], np.float64)


def back_matrix(k: int, size: tuple[int, int]) -> np.ndarray:
    """3x3 map from pixels of ``turn_image(frame, k)`` back to pixels of the ``size`` frame."""
    return np.linalg.inv(turn_matrix(k, size))


def map_boxes(boxes: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Axis-aligned boxes (N, 4) under a quarter-turn map ``m`` (still axis-aligned)."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    a = boxes[:, :2] @ m[:2, :2].T + m[:2, 2]
    b = boxes[:, 2:] @ m[:2, :2].T + m[:2, 2]
    return np.hstack([np.minimum(a, b), np.maximum(a, b)]).astype(np.float32)


def _map_box(box: tuple[float, ...], m: np.ndarray) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = (float(v) for v in map_boxes(np.array(box), m)[0])
    return (x1, y1, x2, y2)


def map_homography(h: Optional[np.ndarray], m: np.ndarray) -> Optional[np.ndarray]:
    return None if h is None else m @ np.asarray(h, np.float64)


def detections_back(dets: Detections, k: int, size: tuple[int, int]) -> Detections:
    """Detections of ``turn_image(frame, k)`` in pixels of the ``size`` (width, height) frame."""
    return Detections(map_boxes(dets.xyxy, back_matrix(k, size)), dets.class_id, dets.confidence,
                      dets.alt_class_id, dets.alt_confidence, dets.upright)


def read_aside(detector: Any) -> contextlib.AbstractContextManager:
    """``detector.aside()`` where it has one (a video's tracking left alone while a turned copy is
    read), else nothing."""
    aside = getattr(detector, "aside", None)
    return aside() if callable(aside) else contextlib.nullcontext()


def reading_back(reading: "FrameReading", k: int, size: tuple[int, int]) -> "FrameReading":
    """A reading of ``turn_image(frame, k)`` in pixels of the frame itself (``size``: the frame's
    width, height): boxes, the lattice fit and the layout's homography."""
    back = back_matrix(k, size)
    dets = detections_back(reading.detections, k, size)
    fit = reading.fit
    if fit is not None:
        fit = dataclasses.replace(fit, homography=map_homography(fit.homography, back))
    layout = reading.layout
    if layout is not None and "homography" in layout.extra:
        extra = dict(layout.extra)
        extra["homography"] = map_homography(np.array(extra["homography"]), back).tolist()  # type: ignore[union-attr]
        layout = dataclasses.replace(layout, extra=extra)
    return dataclasses.replace(
        reading, detections=dets, fit=fit, layout=layout,
        unsure={s: _map_box(b, back) for s, b in reading.unsure.items()},
        unsure_nearest={s: _map_box(b, back) for s, b in reading.unsure_nearest.items()},
        unsure_second={s: _map_box(b, back) for s, b in reading.unsure_second.items()},
        twice={s: _map_box(b, back) for s, b in reading.twice.items()})


def named_cards_mass(dets: Detections, sure: float = SURE_READ) -> float:
    """How surely a reading names its cards: the sum over distinct cards of their best sure score."""
    best: dict[int, float] = {}
    for card, score in zip(dets.class_id.tolist(), dets.confidence.tolist()):
        if score >= sure:
            best[card] = max(best.get(card, 0.0), score)
    return float(sum(best.values()))


#: Index corners found upright are taller than wide (median height / width 1.3-2.0 on rendered val
#: tables within 30 degrees of upright or of upside down); at a quarter turn wider (0.55-0.9).
UPRIGHT_ASPECT, TURNED_ASPECT = 1.25, 0.9
#: Corners no taller than wide: the table lies far from upright (rendered val tables within 45 degrees
#: of upright or upside down: 9 of 543 frames; further round: 49 of 57).
NOT_UPRIGHT_ASPECT = 1.0


def corner_aspect(dets: Detections, sure: float = SURE_READ) -> Optional[float]:
    """The median height / width of the corners read surely; None with too few to say."""
    boxes = dets.xyxy[dets.confidence >= sure]
    if len(boxes) < WEAK_READS // 2:
        return None
    return float(np.median((boxes[:, 3] - boxes[:, 1]) / np.maximum(boxes[:, 2] - boxes[:, 0], 1e-6)))


def likely_turns(dets: Detections, sure: float = SURE_READ) -> tuple[int, ...]:
    """The quarter turns worth a look, by the shape of the corners found: tall ones (the table upright
    or upside down) only the half turn, wide ones (a quarter turn) only the quarter turns, others
    (near a diagonal, or too few corners to say) all three."""
    aspect = corner_aspect(dets, sure)
    if aspect is None:
        return QUARTER_TURNS
    if aspect >= UPRIGHT_ASPECT:
        return (2,)
    if aspect <= TURNED_ASPECT:
        return (1, -1)
    return QUARTER_TURNS


def corners_lie_turned(dets: Detections, sure: float = SURE_READ) -> bool:
    """The corners found are no taller than wide (``NOT_UPRIGHT_ASPECT``): the table lies well off
    upright, whatever lattice was found through them."""
    aspect = corner_aspect(dets, sure)
    return aspect is not None and aspect <= NOT_UPRIGHT_ASPECT


def weak_reading(dets: Detections, sure: float = SURE_READ) -> bool:
    scores = dets.confidence[dets.confidence >= sure]
    return len(scores) < WEAK_READS or float(scores.mean()) < WEAK_MEAN


def detect_any_way(detector: Any, image: np.ndarray) -> tuple[Detections, int]:
    """``detector.detect(image)``, or when that reading is weak (``weak_reading``) and the image
    turned by a quarter turn reads ``SECOND_OPINION`` times surer (``named_cards_mass``), that
    reading mapped back to the image's pixels. Returns the detections and the turn they were read
    at (degrees counter-clockwise; 0: as the image is).

    (Turns by 45 degrees, resampled, were tried too, for a table lying near a diagonal: rendered val
    +0.4-0.8 points named, but the real photos of loose cards lost 1-2 points of ranks read right.)"""
    dets = detector.detect(image)
    if not weak_reading(dets):
        return dets, 0
    best = (named_cards_mass(dets), dets, 0)
    for k in likely_turns(dets):
        with read_aside(detector):
            turned = detector.detect(turn_image(image, k))
        mass = named_cards_mass(turned)
        if mass > SECOND_OPINION * best[0] and mass > 0:
            best = (mass, turned, k)
    _, dets, k = best
    return (detections_back(dets, k, (image.shape[1], image.shape[0])) if k else dets), 90 * k
