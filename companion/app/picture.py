"""What the board view draws, as a Qt-free value built from a correction session or a game state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from companion.cards import Card
from companion.rules import Rules
from companion.app.correction import CorrectionSession, SlotFlags
from companion.app.places import CELL, RESERVE, STOCK, WASTE, Place, slot_of


@dataclass(frozen=True)
class BoardPicture:
    rows: int = 7
    inverted: bool = False
    #: Card per pyramid place; ``None`` = empty/removed; missing key = unknown ("??").
    slots: dict[Place, Optional[Card]] = field(default_factory=dict)
    face_down: frozenset[Place] = frozenset()
    flags: dict[Place, SlotFlags] = field(default_factory=dict)
    waste: tuple[tuple[Card, ...], ...] = ((),)
    #: Cards left in the stock; ``None`` = a face-down pile of unknown size (camera view).
    stock_count: Optional[int] = None
    stock_present: bool = True
    stock_top: Optional[Card] = None     # shown face up (stock_playable / stock_known)
    cells: tuple[Optional[Card], ...] = ()
    reserve: tuple[Optional[Card], ...] = ()
    #: Cards a move can take now; ``None`` = not playing (setup), nothing is dimmed.
    available: Optional[frozenset[Card]] = None
    caption: str = ""

    def card_places(self) -> dict[Card, Place]:
        """Where each visible card is drawn (for highlighting advice by card)."""
        out: dict[Card, Place] = {}
        for place, card in self.slots.items():
            if card is not None and place not in self.face_down:
                out[card] = place
        for k, pile in enumerate(self.waste):
            if pile:
                out[pile[-1]] = Place(WASTE, 0, k)
        if self.stock_top is not None:
            out[self.stock_top] = Place(STOCK)
        for k, card in enumerate(self.cells):
            if card is not None:
                out[card] = Place(CELL, 0, k)
        for k, card in enumerate(self.reserve):
            if card is not None:
                out[card] = Place(RESERVE, 0, k)
        return out


def picture_from_corrections(session: CorrectionSession) -> BoardPicture:
    layout = session.base
    slots = {p: session.card_at(p) for p in session.places()}
    flags = {p: session.flags(p) for p in session.places()}
    rules = session.rules
    return BoardPicture(rows=rules.rows, inverted=rules.inverted, slots=slots, flags=flags,
                        waste=layout.waste or ((),), stock_count=None, stock_present=layout.stock_present,
                        cells=tuple(layout.cells) or (None,) * rules.free_cells,
                        reserve=tuple(layout.reserve) or (None,) * rules.reserve,
                        caption="Check the cards, then Confirm")


def picture_from_state(state: Any) -> BoardPicture:
    """Draw an engine ``GameState`` (``companion.game``)."""
    rules: Rules = state.rules
    slots: dict[Place, Optional[Card]] = {}
    face_down = set()
    visible = getattr(state, "visible", None)
    for flat, card in enumerate(state.pyramid):
        place = slot_of(flat)
        slots[place] = card
        if card is not None and visible is not None and not visible(flat):
            face_down.add(place)
    stock = tuple(state.stock)
    top = stock[0] if stock and (rules.stock_playable or rules.stock_known) else None
    return BoardPicture(rows=rules.rows, inverted=rules.inverted, slots=slots, face_down=frozenset(face_down),
                        waste=tuple(tuple(p) for p in state.waste) or ((),), stock_count=len(stock),
                        stock_present=bool(stock), stock_top=top,
                        cells=tuple(getattr(state, "cells", ()) or ()),
                        reserve=tuple(getattr(state, "reserve", ()) or ()),
                        available=frozenset(state.available()))
