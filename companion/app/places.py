"""Places on the table: where a card lies, with a short text form.

``Place.parse("r3s2")`` is row 3 (1-based from the apex), slot 2 (1-based from
the left); ``"waste"``/``"waste2"`` a waste pile, ``"stock"``, ``"cell1"``,
``"reserve3"``. ``str(place)`` prints the same form; ``repr`` evaluates back.
Internally rows and indices are 0-based like ``TableLayout.pyramid[r][i]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from companion.errors import CompanionError

PYRAMID, WASTE, STOCK, CELL, RESERVE = "pyramid", "waste", "stock", "cell", "reserve"
_KINDS = (PYRAMID, WASTE, STOCK, CELL, RESERVE)
_PATTERN = re.compile(r"^(?:r(\d+)s(\d+)|(waste|cell|reserve)(\d*)|(stock))$")


class InvalidPlaceError(CompanionError):
    """A place text that cannot be read, e.g. ``'r0s1'``."""


@dataclass(frozen=True, order=True)
class Place:
    kind: str
    row: int = 0     # pyramid row (0 = apex); unused otherwise
    index: int = 0   # slot in the row, or pile/cell/reserve number (0-based)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise InvalidPlaceError(f"unknown place kind {self.kind!r}")
        if self.row < 0 or self.index < 0 or (self.kind == PYRAMID and self.index > self.row):
            raise InvalidPlaceError(f"no such place: {self.kind} row {self.row} index {self.index}")

    @classmethod
    def slot(cls, row: int, index: int) -> "Place":
        return cls(PYRAMID, row, index)

    @classmethod
    def parse(cls, text: str) -> "Place":
        m = _PATTERN.match(text.strip().lower())
        if not m:
            raise InvalidPlaceError(f"not a place: {text!r} (e.g. 'r3s2', 'waste', 'cell1')")
        if m.group(1):
            row, slot = int(m.group(1)), int(m.group(2))
            if row < 1 or not 1 <= slot <= row:
                raise InvalidPlaceError(f"not a place: {text!r} (row 1.., slot 1..row)")
            return cls(PYRAMID, row - 1, slot - 1)
        if m.group(5):
            return cls(STOCK)
        number = int(m.group(4)) if m.group(4) else 1
        if number < 1:
            raise InvalidPlaceError(f"not a place: {text!r} (numbers start at 1)")
        return cls(m.group(3), 0, number - 1)

    @property
    def is_slot(self) -> bool:
        return self.kind == PYRAMID

    def __str__(self) -> str:
        if self.kind == PYRAMID:
            return f"r{self.row + 1}s{self.index + 1}"
        if self.kind == STOCK:
            return "stock"
        if self.kind == WASTE and self.index == 0:
            return "waste"
        return f"{self.kind}{self.index + 1}"

    def describe(self) -> str:
        """Words for a person: ``row 3, slot 2``."""
        if self.kind == PYRAMID:
            return f"row {self.row + 1}, slot {self.index + 1}"
        if self.kind in (STOCK,) or (self.kind == WASTE and self.index == 0):
            return "the " + self.kind
        return f"{self.kind} {self.index + 1}"

    def __repr__(self) -> str:
        return f"Place.parse({str(self)!r})"


def flat_index(place: Place) -> int:
    """Row-major slot number from the apex (the engine's ``state.pyramid`` order)."""
    return place.row * (place.row + 1) // 2 + place.index


def slot_of(flat: int) -> Place:
    row = 0
    while (row + 1) * (row + 2) // 2 <= flat:
        row += 1
    return Place.slot(row, flat - row * (row + 1) // 2)
