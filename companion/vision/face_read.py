"""Naming a small card from its face, not only its index corner.

A card under ~50 px wide in the frame shows an index only a few pixels tall: a crop of the index
alone (``corner_crop``) names it barely better than a guess between ranks of the same suit. The
card's face around the index still shows the pips or the court figure. A *face crop* is a square
of about a card's width, anchored at the first index corner and turned so that the card stands
upright: the index, the suit pips and whatever the cards lying on it leave in view.

Training (``tools/train_face.py``) and reading use this same function, from the index box and the
card's turn only, so the crop needs no card outline.
"""

from __future__ import annotations

import numpy as np

from companion.vision.detections import Detections

#: The face crop's side, in longer sides of the index box (a card is ~2.7 of them wide).
FACE_SIDE = 3.0
#: The crop's centre from the index box's centre, in longer sides of the box, in the upright card's
#: axes (right, down): the index centre lies ~(0.29, 0.55) from the card's corner (rendered train
#: decks, median), the crop starts ~0.1 before the card's corner.
FACE_OFFSET = (1.11, 0.85)


def face_centre(box: np.ndarray, angle: float) -> tuple[np.ndarray, float]:
    """Centre of the face crop of index ``box`` on a card turned by ``angle`` (degrees, positive
    counter-clockwise, as ``layout_angle``), and the crop's side in pixels."""
    x1, y1, x2, y2 = (float(v) for v in box)
    s = max(x2 - x1, y2 - y1, 1.0)
    a = np.radians(angle)
    right = np.array([np.cos(a), np.sin(a)])  # the card's axes in the image (y down)
    down = np.array([-np.sin(a), np.cos(a)])
    centre = np.array([(x1 + x2) / 2, (y1 + y2) / 2]) + s * (FACE_OFFSET[0] * right + FACE_OFFSET[1] * down)
    return centre, FACE_SIDE * s


def face_crop(image_bgr: np.ndarray, box: np.ndarray, size: int = 64, angle: float = 0.0,
              scale: float = 1.0, shift: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """The upright face crop (BGR, ``size`` square) of the card whose first index is ``box``.
    ``scale`` and ``shift`` (in crop sides) jitter it for training. The crop is an index crop
    (``corner_crop``) grown to ``FACE_SIDE`` and moved onto the face."""
    from companion.vision.detector import corner_crop  # (the detector imports this module)

    centre, side = face_centre(box, angle)
    x1, y1, x2, y2 = (float(v) for v in box)
    side *= scale
    onto_face = (centre - np.array([(x1 + x2) / 2, (y1 + y2) / 2])) / side + np.asarray(shift, np.float64)
    return corner_crop(image_bgr, box, FACE_SIDE * scale, size, (float(onto_face[0]), float(onto_face[1])), angle)


#: The probability a class outside the index reading's best four is given before pooling, when
#: only those four are known (``Detections`` carries four; the detector's ``index_probs`` all 52).
OUTSIDE_TOP = 1e-3


def top_distribution(top_ids: np.ndarray, top_p: np.ndarray, classes: int) -> np.ndarray:
    """Class probabilities (N, classes) from the best classes ``top_ids`` (N, K) and their
    probabilities ``top_p``; every other class ``OUTSIDE_TOP``."""
    p = np.full((len(top_ids), classes), OUTSIDE_TOP, np.float64)
    np.put_along_axis(p, top_ids.astype(np.int64), np.maximum(top_p.astype(np.float64), OUTSIDE_TOP), 1)
    return p


def fused_names(index_probs: np.ndarray, face_probs: np.ndarray, weight: float = 1.0) -> np.ndarray:
    """Class probabilities (N, C) pooled from the index reading ``index_probs`` and the face reading
    ``face_probs`` (both N, C): the normalised product p_index x p_face ** weight (a log-linear pool
    of two views of one card; measured on rendered val first indices, see the model card)."""
    logs = (np.log(index_probs.astype(np.float64) + 1e-4)
            + weight * np.log(face_probs.astype(np.float64) + 1e-4))
    out = np.exp(logs - logs.max(1, keepdims=True))
    return out / out.sum(1, keepdims=True)


def named_with_faces(dets: Detections, rows: np.ndarray, face_probs: np.ndarray, weight: float = 1.0,
                     index_probs: np.ndarray | None = None, keep_at_least: float = 0.0) -> Detections:
    """``dets`` with the reads ``rows`` named again from their index reading (``index_probs``, or
    else the four names each read carries) pooled with their face reading (``fused_names``). A read's
    score stays its corner's share times its name's probability: the corner's share is its score
    over the index reading's best probability (without ``index_probs``, estimated as what the
    runner-ups leave, the rest being small). A read keeps at least its old score up to
    ``keep_at_least``: one the two views disagree on stays a read, shown for checking."""
    rows = np.asarray(rows, np.int64)
    if len(rows) == 0:
        return dets
    cls = dets.class_id.copy()
    conf = dets.confidence.copy()
    alt_c = None if dets.alt_class_id is None else dets.alt_class_id.copy()
    alt_p = None if dets.alt_confidence is None else dets.alt_confidence.copy()
    classes = face_probs.shape[1]
    if index_probs is not None:
        p1 = index_probs[np.arange(len(rows)), cls[rows]].astype(np.float64)
    elif alt_c is not None and alt_p is not None:
        runner = alt_p[rows].astype(np.float64)
        p1 = np.clip(1.0 - runner.sum(1), runner.max(1, initial=0.0), 1.0)
        index_probs = top_distribution(np.concatenate([cls[rows, None], alt_c[rows]], 1),
                                       np.concatenate([p1[:, None], runner], 1), classes)
    else:
        p1 = np.ones(len(rows))
        index_probs = top_distribution(cls[rows, None], p1[:, None], classes)
    fused = fused_names(index_probs, face_probs, weight)
    order = np.argsort(-fused, 1)
    corner = np.clip(conf[rows] / np.maximum(p1, 1e-6), 0.0, 1.0)
    cls[rows] = order[:, 0]
    conf[rows] = np.maximum(corner * fused[np.arange(len(rows)), order[:, 0]],
                            np.minimum(conf[rows], keep_at_least))
    if alt_c is not None and alt_p is not None:
        k = alt_c.shape[1]
        alt_c[rows] = order[:, 1:1 + k]
        alt_p[rows] = np.take_along_axis(fused, order[:, 1:1 + k], 1)
    return Detections(dets.xyxy, cls, conf.astype(np.float32), alt_c,
                      None if alt_p is None else alt_p.astype(np.float32), dets.upright)
