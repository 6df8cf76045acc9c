"""The observed table: what vision produces and play-along consumes.

A ``TableLayout`` says, slot by slot, which card the camera sees where, how sure
it is, and the runner-up readings for the correction UI. It belongs to the
rules core (no OpenCV, no numpy needed) so every layer can share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterator, Optional

from companion.cards import Card
from companion.errors import InvalidLayoutError

if TYPE_CHECKING:
    from companion.rules import Rules


#: A read whose runner-up scores at least this share of the card's own score is worth a check: a
#: sure-looking read with a near second (JH with QH behind it) is how most misreads look that a
#: score floor alone lets through. Rendered full deals of unseen decks (``tools/evaluate_layout.py``,
#: the app's checks): deals right once the flagged slots are checked 81.8% -> 87.4% (synth_v2) and
#: 86.3% -> 93.5% (synth_val64), for 1.0-1.3 more slots to check per deal (6.4 -> 7.6, 5.0 -> 6.1;
#: a tenth: 89.5% / 93.5% for 8.3 / 6.7).
RUNNER_UP_CLOSE = 0.2


def slot_name(row: int, index: int) -> str:
    """How a person is told about a slot: ``"row 3 card 2"`` (1-based, apex row first, from the left)."""
    return f"row {row + 1} card {index + 1}"


@lru_cache(maxsize=16)
def br_cover_of(rows: int, inverted: bool) -> tuple[int, ...]:
    """For each slot (row-major from the apex), the slot whose card covers its card's bottom-right
    corner, where the second index lies (-1: none). Taking that card bares the index, which a
    camera then reads on the emptied slot."""
    idx = {(r, i): n for n, (r, i) in enumerate((r, i) for r in range(rows) for i in range(r + 1))}
    return tuple(idx.get((r - 1, i), -1) if inverted else idx.get((r + 1, i + 1), -1) for (r, i) in idx)


@lru_cache(maxsize=16)
def up_left_of(rows: int, inverted: bool) -> tuple[int, ...]:
    """For each slot, the slot whose card's bottom-right corner its card covers (-1: none): the
    inverse of ``br_cover_of``."""
    out = [-1] * (rows * (rows + 1) // 2)
    for m, s in enumerate(br_cover_of(rows, inverted)):
        if s >= 0:
            out[s] = m
    return tuple(out)


@dataclass(frozen=True)
class SlotReading:
    """One place on the table: a card (or ``None`` when the place is empty)."""

    card: Optional[Card]
    score: float = 1.0
    #: Best readings first, ``(card, score)``; the first is normally ``card``.
    alternatives: tuple[tuple[Card, float], ...] = ()
    #: True when a person set this slot by hand: it overrides recognition.
    corrected: bool = False

    def close_runner_up(self, share: float = RUNNER_UP_CLOSE) -> Optional[tuple[Card, float]]:
        """The runner-up ``(card, score)`` when it scores at least ``share`` of this card's own
        score, else None (also for an empty place or a card the person set)."""
        if self.card is None or self.corrected:
            return None
        runner = next(((c, s) for c, s in self.alternatives if c is not self.card), None)
        if runner is None or runner[1] < share * max(self.score, 1e-9):
            return None
        return runner

    @classmethod
    def empty(cls, score: float = 1.0) -> "SlotReading":
        return cls(None, score)

    @classmethod
    def known(cls, card: Card, score: float = 1.0) -> "SlotReading":
        return cls(card, score, ((card, score),))

    def to_json(self) -> dict[str, Any]:
        return {
            "card": None if self.card is None else str(self.card),
            "score": round(float(self.score), 4),
            "alternatives": [[str(c), round(float(s), 4)] for c, s in self.alternatives],
            "corrected": self.corrected,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "SlotReading":
        card = data.get("card")
        return cls(
            None if card is None else Card.parse(card),
            float(data.get("score", 1.0)),
            tuple((Card.parse(c), float(s)) for c, s in data.get("alternatives", [])),
            bool(data.get("corrected", False)),
        )


#: ``TableLayout.extra`` key of the first layout a video settles on: its empty pyramid slots (deal
#: order) -> the card (code) read there most often before it: a move made before the view first
#: settled (the person played at once). ``FollowStart`` takes the deal from it.
EARLY_READS = "early_reads"


@dataclass(frozen=True)
class TableLayout:
    """A stable view of the table.

    ``pyramid[r][i]`` is row ``r`` (0 = apex row) slot ``i`` (left to right, as
    the deal lists them; for an inverted pyramid row 0 is still the 1-card row).
    ``waste`` holds one tuple per waste pile, bottom to top, of the cards that
    can be seen (usually only the top). ``stock_present`` tells whether a
    face-down stock pile is on the table.
    """

    pyramid: tuple[tuple[SlotReading, ...], ...]
    waste: tuple[tuple[Card, ...], ...] = ((),)
    cells: tuple[Optional[Card], ...] = ()
    reserve: tuple[Optional[Card], ...] = ()
    stock_present: bool = True
    #: Problems a person should look at (duplicates, low confidence, impossible cards).
    problems: tuple[str, ...] = ()
    #: Frame index (or other source position) this layout was accepted at.
    frame: int = -1
    #: More about the view (``stock_top``, ``skipped``, ``EARLY_READS`` ...), not compared.
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        for r, row in enumerate(self.pyramid):
            if len(row) != r + 1:
                raise InvalidLayoutError(f"pyramid row {r + 1} has {len(row)} slots, expected {r + 1}")

    @property
    def rows(self) -> int:
        return len(self.pyramid)

    def slots(self) -> Iterator[tuple[int, int, SlotReading]]:
        for r, row in enumerate(self.pyramid):
            for i, slot in enumerate(row):
                yield r, i, slot

    def pyramid_cards(self) -> list[list[Optional[Card]]]:
        return [[s.card for s in row] for row in self.pyramid]

    def waste_tops(self) -> tuple[Optional[Card], ...]:
        return tuple(pile[-1] if pile else None for pile in self.waste)

    def visible_cards(self) -> list[Card]:
        cards = [s.card for _, _, s in self.slots() if s.card is not None]
        cards += [c for pile in self.waste for c in pile]
        cards += [c for c in self.cells if c is not None]
        cards += [c for c in self.reserve if c is not None]
        return cards

    def with_slot(self, row: int, index: int, reading: SlotReading) -> "TableLayout":
        rows = [list(r) for r in self.pyramid]
        rows[row][index] = reading
        return replace(self, pyramid=tuple(tuple(r) for r in rows))

    @classmethod
    def from_cards(cls, pyramid: list[list[Optional[Card]]], waste: tuple[tuple[Card, ...], ...] = ((),),
                   **kwargs: Any) -> "TableLayout":
        rows = tuple(tuple(SlotReading.empty() if c is None else SlotReading.known(c) for c in row)
                     for row in pyramid)
        return cls(rows, waste, **kwargs)

    def check(self, rules: "Rules") -> tuple[str, ...]:
        """What cannot be a position of a game under ``rules``, as sentences a UI can show.

        Checks the pyramid's size, cards outside the rules' deck, a card seen
        twice, a card lying on an empty slot (the cards under a card cannot be
        removed before it), and the number of waste piles, cells and reserve
        places. An empty tuple means the layout is a possible position.
        """
        problems: list[str] = []
        if self.rows != rules.rows:
            problems.append(f"the pyramid has {self.rows} rows; the rules {rules.name!r} deal {rules.rows}")
        deck = set(rules.deck_cards())
        where: dict[Card, str] = {}
        places: list[tuple[str, Card]] = [(slot_name(r, i), s.card) for r, i, s in self.slots()
                                          if s.card is not None]
        for p, pile in enumerate(self.waste):
            label = "waste" if len(self.waste) == 1 else f"waste pile {p + 1}"
            places += [(label, c) for c in pile]
        places += [(f"cell {k + 1}", c) for k, c in enumerate(self.cells) if c is not None]
        places += [(f"reserve {k + 1}", c) for k, c in enumerate(self.reserve) if c is not None]
        for place, card in places:
            if card not in deck:
                problems.append(f"{place}: {card} is not in the {rules.deck}-card deck of {rules.name!r}")
            if card in where:
                problems.append(f"{card} is seen twice: {where[card]} and {place}")
            else:
                where[card] = place
        if self.rows == rules.rows:
            for r, i, s in self.slots():
                if s.card is None:
                    continue
                under = ([(r + 1, i), (r + 1, i + 1)] if rules.inverted else [(r - 1, i - 1), (r - 1, i)])
                for (ur, ui) in under:
                    if 0 <= ur < self.rows and 0 <= ui <= ur and self.pyramid[ur][ui].card is None:
                        problems.append(f"{slot_name(r, i)}: {s.card} lies on {slot_name(ur, ui)}, "
                                        "which is empty (a card there was not seen?)")
        if len(self.waste) > max(1, rules.waste_piles):
            problems.append(f"{len(self.waste)} waste piles; the rules have {rules.waste_piles}")
        if len([c for c in self.cells if c is not None]) > rules.free_cells:
            problems.append(f"cards in {len(self.cells)} cells; the rules have {rules.free_cells}")
        if len([c for c in self.reserve if c is not None]) > rules.reserve:
            problems.append(f"{len(self.reserve)} reserve cards; the rules have {rules.reserve}")
        return tuple(problems)

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "layout") -> "TableLayout":
        """The inverse of ``to_json`` (see ``layout_from_json``)."""
        return layout_from_json(data, where)

    def to_json(self) -> dict[str, Any]:
        def code(c: Optional[Card]) -> Optional[str]:
            return None if c is None else str(c)
        return {
            "pyramid": [[code(s.card) for s in row] for row in self.pyramid],
            "scores": [[round(float(s.score), 4) for s in row] for row in self.pyramid],
            "alternatives": [[[[str(c), round(float(p), 4)] for c, p in s.alternatives] for s in row]
                             for row in self.pyramid],
            "waste": [[str(c) for c in pile] for pile in self.waste],
            "cells": [code(c) for c in self.cells],
            "reserve": [code(c) for c in self.reserve],
            "stock_present": self.stock_present,
            "problems": list(self.problems),
            "frame": self.frame,
        }


def _card_or_none(value: Any, where: str) -> Optional[Card]:
    if value is None:
        return None
    try:
        return Card.parse(value)
    except ValueError as exc:
        raise InvalidLayoutError(f"{where}: {exc}") from None


def layout_from_json(data: dict[str, Any], where: str = "layout") -> TableLayout:
    """Read the ``TableLayout.to_json()`` form back (scores and alternatives optional)."""
    if not isinstance(data, dict) or not isinstance(data.get("pyramid"), list):
        raise InvalidLayoutError(f"{where}: expected an object with a 'pyramid' list of rows")
    scores = data.get("scores") or []
    alts = data.get("alternatives") or []
    rows = []
    for r, row in enumerate(data["pyramid"]):
        if not isinstance(row, list):
            raise InvalidLayoutError(f"{where}: pyramid row {r + 1} is not a list")
        out = []
        for i, code in enumerate(row):
            card = _card_or_none(code, f"{where}, row {r + 1} card {i + 1}")
            try:
                score = float(scores[r][i])
            except (IndexError, TypeError, ValueError):
                score = 1.0
            try:
                alt = tuple((Card.parse(c), float(p)) for c, p in alts[r][i])
            except (IndexError, TypeError, ValueError):
                alt = ((card, score),) if card is not None else ()
            out.append(SlotReading(card, score, alt))
        rows.append(tuple(out))
    waste_raw = data.get("waste", [[]])
    if waste_raw and not isinstance(waste_raw[0], list):
        waste_raw = [waste_raw]  # a flat list is one pile
    waste = tuple(tuple(_card_or_none(c, f"{where}, waste") for c in pile if c is not None) for pile in waste_raw) or ((),)
    extra: dict[str, Any] = {}
    if data.get("stock_top"):
        extra["stock_top"] = _card_or_none(data["stock_top"], f"{where}, stock top")
    if data.get("skipped"):  # frames the fuser skipped before this layout (a blocked view)
        try:
            extra["skipped"] = int(data["skipped"])
        except (TypeError, ValueError):
            raise InvalidLayoutError(f"{where}: 'skipped' must be a number of frames, "
                                     f"got {data['skipped']!r}") from None
    try:
        return TableLayout(
            tuple(rows), waste,  # type: ignore[arg-type]
            tuple(_card_or_none(c, f"{where}, cell") for c in data.get("cells", [])),
            tuple(_card_or_none(c, f"{where}, reserve") for c in data.get("reserve", [])),
            stock_present=bool(data.get("stock_present", True)),
            problems=tuple(data.get("problems", [])),
            frame=int(data.get("frame", -1)),
            extra=extra,
        )
    except InvalidLayoutError as exc:
        raise InvalidLayoutError(f"{where}: {exc}") from None


def layout_to_json(layout: TableLayout) -> dict[str, Any]:
    data = layout.to_json()
    top = layout.extra.get("stock_top") if layout.extra else None
    if top is not None:
        data["stock_top"] = str(top)
    if layout.extra and layout.extra.get("skipped"):
        data["skipped"] = int(layout.extra["skipped"])
    return data
