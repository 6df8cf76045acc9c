"""A second look at pyramid slots that must hold a card but showed no read.

The detector misses index corners (small, blurred or dim ones most of all), yet the lattice fit
says exactly where a missed corner lies, and a slot with a card lying on it cannot be empty.
``hidden_corner_boxes`` puts a corner box on each such slot, sized like the corners read
nearest to it; the classifier (``Classifier.classify``) names what lies there, and
``reread_detections`` turns its answers into detections, so the frame is read again with them.
A box small in the frame (``face_below_px``) is named from the card's face too, pooled with its index
reading as placed cards are (``SecondLooks._reread_probs``): most missed corners are tiny ones.

A re-read card is never surer than ``REREAD_WEIGHT`` (no corner was seen there; a hand over the
slot gives a confident-looking crop too): it always sits below the pipeline's ``LOW_SCORE`` and is
shown for checking. Cards already placed elsewhere in the frame are not offered (each card lies
once on the table).
"""

from __future__ import annotations

from typing import Iterable, Protocol

import numpy as np

from companion.cards import CARD_CODES, Card
from companion.vision.detections import Detections

#: Scale of a re-read card's score (its class probability): under the pipeline's LOW_SCORE.
REREAD_WEIGHT = 0.45
#: Class probability a re-read needs to count at all.
REREAD_MIN_PROB = 0.35
#: Corners read nearest to a hidden slot that size its box.
NEAREST = 3


class Classifier(Protocol):
    def classify(self, image_bgr: np.ndarray, boxes: np.ndarray) -> np.ndarray: ...


def hidden_corner_boxes(node_xy: np.ndarray, hidden_nodes: Iterable[int], dets: Detections,
                        image_size: tuple[int, int]) -> tuple[list[int], np.ndarray]:
    """Boxes ``[x1, y1, x2, y2]`` centred on the hidden nodes' image positions, each the median
    size of the ``NEAREST`` detected corners nearest to it (perspective changes sizes across
    the table). Nodes outside the picture or with no corner read to size them are left out;
    returns the nodes kept and their boxes."""
    w, h = image_size
    kept: list[int] = []
    boxes: list[list[float]] = []
    if len(dets) == 0:
        return kept, np.zeros((0, 4), np.float32)
    centers = dets.centers
    sizes = np.stack([dets.xyxy[:, 2] - dets.xyxy[:, 0], dets.xyxy[:, 3] - dets.xyxy[:, 1]], 1)
    for node in hidden_nodes:
        x, y = (float(v) for v in node_xy[node])
        if not (0 <= x < w and 0 <= y < h):
            continue
        near = np.argsort(np.hypot(centers[:, 0] - x, centers[:, 1] - y))[:NEAREST]
        bw, bh = (float(v) for v in np.median(sizes[near], axis=0))
        if bw < 2 or bh < 2:
            continue
        kept.append(int(node))
        boxes.append([x - bw / 2, y - bh / 2, x + bw / 2, y + bh / 2])
    return kept, np.asarray(boxes, np.float32).reshape(-1, 4)


def reread_detections(probs: np.ndarray, boxes: np.ndarray, taken: set[Card],
                      k: int = 4, min_prob: float = REREAD_MIN_PROB) -> Detections:
    """Detections from the classifier's probabilities ``(N, 52)`` on ``boxes``: the best card not
    in ``taken`` (and not taken by an earlier box of this call), scored ``REREAD_WEIGHT`` x its
    probability; boxes whose best free card is under ``min_prob`` are dropped."""
    blocked = np.zeros(probs.shape[1], bool)
    code_index = {c: i for i, c in enumerate(CARD_CODES)}
    for card in taken:
        i = code_index.get(str(card))
        if i is not None:
            blocked[i] = True
    keep_boxes, cls, conf, alt_c, alt_s = [], [], [], [], []
    for j in np.argsort(-probs.max(axis=1)):  # the surest box picks first
        p = np.where(blocked, 0.0, probs[j])
        order = np.argsort(-p)[:k]
        if p[order[0]] < min_prob:
            continue
        blocked[order[0]] = True
        keep_boxes.append(boxes[j])
        cls.append(order[0])
        conf.append(REREAD_WEIGHT * p[order[0]])
        alt_c.append(order[1:])
        alt_s.append(REREAD_WEIGHT * p[order[1:]])
    if not cls:
        return Detections.empty()
    return Detections(np.asarray(keep_boxes, np.float32), np.asarray(cls, np.int64),
                      np.asarray(conf, np.float32), np.asarray(alt_c, np.int64), np.asarray(alt_s, np.float32))


def scored_at_least(dets: Detections, min_score: float) -> Detections:
    """``dets`` scored at least ``min_score``: re-reads taken however unsure count as reads (and,
    under the pipeline's ``LOW_SCORE``, are shown for checking)."""
    return Detections(dets.xyxy, dets.class_id, np.maximum(dets.confidence, min_score).astype(np.float32),
                      dets.alt_class_id, dets.alt_confidence, dets.upright)


def concat(a: Detections, b: Detections) -> Detections:
    """``a`` then ``b``; runner-ups kept only when both carry them with the same width; which way
    the indices stood kept when either tells (NaN for the other's)."""
    if len(b) == 0:
        return a
    if len(a) == 0:
        return b
    alts = (a.alt_class_id is not None and b.alt_class_id is not None
            and a.alt_class_id.shape[1] == b.alt_class_id.shape[1])
    return Detections(
        np.concatenate([a.xyxy, b.xyxy]).astype(np.float32), np.concatenate([a.class_id, b.class_id]),
        np.concatenate([a.confidence, b.confidence]).astype(np.float32),
        np.concatenate([a.alt_class_id, b.alt_class_id]) if alts else None,
        np.concatenate([a.alt_confidence, b.alt_confidence]).astype(np.float32) if alts else None,
        None if a.upright is None and b.upright is None else np.concatenate([_upright(a), _upright(b)]))


def _upright(dets: Detections) -> np.ndarray:
    """``dets.upright``, NaN (not said) where the classifier did not tell."""
    return dets.upright if dets.upright is not None else np.full(len(dets), np.nan, np.float32)
