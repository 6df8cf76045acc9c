"""Reading a frame turned by quarter turns, and mapping the reading back to the frame.

The lattice search places a pyramid well up to about 45 degrees off upright; far beyond that its
priors (apex up, first indices above second ones) can settle on a wrong lattice altogether, and
the turn that the classifier's naming then tries (``orientation``) starts from that wrong fit. A
frame turned by a quarter turn (``numpy.rot90``: exact, no resampling) brings any layout within
45 degrees of upright in one of the turns; the reading that names the pyramid surest wins
(``SecondLooks.read_image``), and is mapped back to the frame's own pixels here.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional

import numpy as np

from companion.vision.detections import Detections

if TYPE_CHECKING:
    from companion.vision.pipeline import FrameReading

#: Quarter turns tried (``numpy.rot90``'s k: counter-clockwise), in order.
QUARTER_TURNS = (1, -1, 2)


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


def reading_back(reading: "FrameReading", k: int, size: tuple[int, int]) -> "FrameReading":
    """A reading of ``turn_image(frame, k)`` in pixels of the frame itself (``size``: the frame's
    width, height): boxes, the lattice fit and the layout's homography."""
    back = back_matrix(k, size)
    dets = reading.detections
    dets = Detections(map_boxes(dets.xyxy, back), dets.class_id, dets.confidence,
                      dets.alt_class_id, dets.alt_confidence)
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
        twice={s: _map_box(b, back) for s, b in reading.twice.items()})
