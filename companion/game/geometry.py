"""Pyramid geometry: slot numbering, which slots cover which, exposure tests.

Slots are numbered row-major from the 1-card row: row ``r`` (0-based) slot
``c`` (0..r, left to right) is slot ``r*(r+1)//2 + c``. The numbering is the
same for the inverted pyramid; only the covering relation flips:

* normal: slot (r, c) is covered by (r+1, c) and (r+1, c+1) -- the two cards
  of the next wider row overlapping it; the widest row starts exposed.
* inverted: slot (r, c) is covered by (r-1, c-1) and (r-1, c) where they
  exist -- the narrower row overlaps the wider one; the lone card of row 0
  starts exposed, and the two end cards of each row are covered by one card.

Exposure is tested against an ``empty`` bitmask of slots (bit ``s`` set when
slot ``s`` no longer holds a card), so ``exposed`` is one AND.
"""

from __future__ import annotations

from functools import lru_cache


def slot(row: int, col: int) -> int:
    """Slot index of row ``row`` (0 = the 1-card row), column ``col``."""
    if row < 0 or not 0 <= col <= row:
        raise ValueError(f"no slot at row {row}, column {col}")
    return row * (row + 1) // 2 + col


def row_col(index: int) -> tuple[int, int]:
    """``(row, col)`` of a slot index; inverse of :func:`slot`."""
    if index < 0:
        raise ValueError(f"no slot {index}")
    row = int(((8 * index + 1) ** 0.5 - 1) / 2)
    while row * (row + 1) // 2 > index:
        row -= 1
    while (row + 1) * (row + 2) // 2 <= index:
        row += 1
    return row, index - row * (row + 1) // 2


def size(rows: int) -> int:
    """Number of slots of a pyramid with ``rows`` rows."""
    return rows * (rows + 1) // 2


class Geometry:
    """Precomputed covering masks for one (rows, inverted) shape."""

    __slots__ = ("rows", "inverted", "size", "full", "cover_masks", "covered_masks", "row_masks",
                 "_covers", "_covered")

    def __init__(self, rows: int, inverted: bool = False) -> None:
        self.rows = rows
        self.inverted = inverted
        self.size = size(rows)
        self.full = (1 << self.size) - 1
        covers: list[tuple[int, ...]] = []
        for s in range(self.size):
            r, c = row_col(s)
            if not inverted:
                cs = (slot(r + 1, c), slot(r + 1, c + 1)) if r + 1 < rows else ()
            else:
                cs = tuple(slot(r - 1, cc) for cc in (c - 1, c) if r > 0 and 0 <= cc <= r - 1)
            covers.append(cs)
        self._covers = tuple(covers)
        covered: list[list[int]] = [[] for _ in range(self.size)]
        for s, cs in enumerate(covers):
            for c in cs:
                covered[c].append(s)
        self._covered = tuple(tuple(x) for x in covered)
        #: cover_masks[s]: bitmask of the slots lying on top of slot s
        self.cover_masks = tuple(sum(1 << c for c in cs) for cs in covers)
        #: covered_masks[s]: bitmask of the slots that slot s lies on
        self.covered_masks = tuple(sum(1 << c for c in cs) for cs in self._covered)
        self.row_masks = tuple(sum(1 << slot(r, c) for c in range(r + 1)) for r in range(rows))

    def covers(self, index: int) -> tuple[int, ...]:
        """Slots covering ``index`` (the two below it, or above it when inverted)."""
        return self._covers[index]

    def covered_by(self, index: int) -> tuple[int, ...]:
        """Slots that ``index`` covers (inverse of :meth:`covers`)."""
        return self._covered[index]

    def exposed(self, index: int, empty_mask: int) -> bool:
        """True when every slot covering ``index`` is empty."""
        return self.cover_masks[index] & ~empty_mask == 0

    def exposed_mask(self, empty_mask: int) -> int:
        """Bitmask of occupied slots that no card covers."""
        out = 0
        for s, m in enumerate(self.cover_masks):
            if not (empty_mask >> s) & 1 and m & ~empty_mask == 0:
                out |= 1 << s
        return out

    def exposure_order_rows(self) -> tuple[int, ...]:
        """Rows ordered from the one exposed at the start to the most covered one."""
        return tuple(range(self.rows)) if self.inverted else tuple(range(self.rows - 1, -1, -1))

    def __repr__(self) -> str:
        return f"Geometry({self.rows!r}, inverted={self.inverted!r})"


@lru_cache(maxsize=None)
def geometry(rows: int = 7, inverted: bool = False) -> Geometry:
    """The shared :class:`Geometry` of a shape."""
    return Geometry(rows, inverted)


def covers(index: int, rows: int = 7, inverted: bool = False) -> tuple[int, ...]:
    """Slots covering slot ``index``: the two below it (or above it when inverted)."""
    return geometry(rows, inverted).covers(index)


def exposed(index: int, removed_mask: int, rows: int = 7, inverted: bool = False) -> bool:
    """True when no card lies on slot ``index``, given the bitmask of emptied slots."""
    return geometry(rows, inverted).exposed(index, removed_mask)
