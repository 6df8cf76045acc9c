"""Detections: one small dataclass of numpy arrays (after supervision's ``Detections``).

Boxes are ``[x1, y1, x2, y2]`` in pixels of the input image; ``class_id`` indexes
``companion.cards.CARD_CODES`` (the deck gives the class names). Adapters from
model outputs live at the edge (the detector modules), not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from companion.cards import CARD_CODES, Card


@dataclass(frozen=True)
class Detections:
    xyxy: np.ndarray          # (N, 4) float32
    class_id: np.ndarray      # (N,) int64, index into CARD_CODES
    confidence: np.ndarray    # (N,) float32
    #: (N, K) runner-up class ids and scores (best first), or None when the model gives none.
    alt_class_id: np.ndarray | None = None
    alt_confidence: np.ndarray | None = None
    #: (N,) how likely each corner's index stood upright in the crop it was named from (NaN: not
    #: said), or None when the classifier does not tell (one trained with ``--cls-turn`` does).
    upright: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.class_id)
        if (self.xyxy.shape != (n, 4) or self.confidence.shape != (n,)
                or (self.upright is not None and self.upright.shape != (n,))):
            raise ValueError(
                f"inconsistent detections: boxes {self.xyxy.shape}, classes {self.class_id.shape}, "
                f"scores {self.confidence.shape}"
                + ("" if self.upright is None else f", upright {self.upright.shape}"))

    @classmethod
    def empty(cls) -> "Detections":
        return cls(np.zeros((0, 4), np.float32), np.zeros((0,), np.int64), np.zeros((0,), np.float32))

    def __len__(self) -> int:
        return len(self.class_id)

    def __getitem__(self, index) -> "Detections":
        """Index with a mask, slice or index array; keeps the arrays 2-D/1-D."""
        if isinstance(index, (int, np.integer)):
            index = [int(index)]
        return Detections(
            self.xyxy[index], self.class_id[index], self.confidence[index],
            None if self.alt_class_id is None else self.alt_class_id[index],
            None if self.alt_confidence is None else self.alt_confidence[index],
            None if self.upright is None else self.upright[index],
        )

    @property
    def centers(self) -> np.ndarray:
        return np.stack([(self.xyxy[:, 0] + self.xyxy[:, 2]) / 2, (self.xyxy[:, 1] + self.xyxy[:, 3]) / 2], 1)

    def cards(self) -> list[Card]:
        return [Card.parse(CARD_CODES[int(i)]) for i in self.class_id]

    def __iter__(self) -> Iterator[tuple[Card, np.ndarray, float]]:
        for i in range(len(self)):
            yield Card.parse(CARD_CODES[int(self.class_id[i])]), self.xyxy[i], float(self.confidence[i])

    def to_json(self) -> list[dict]:
        """The ``detect --json`` form: ``[{"card": "QH", "box": [x1, y1, x2, y2], "score": 0.97}]``."""
        return [{"card": str(card), "box": [round(float(v), 1) for v in box], "score": round(score, 4)}
                for card, box, score in self]
