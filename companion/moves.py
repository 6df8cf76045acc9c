"""Moves and their notation.

=================  ==============================================================
``draw``           turn the stock (1 or 3 cards, per the rules)
``recycle``        turn the waste back over into the stock
``KD``             remove a lone king (value equal to the pair sum)
``QH+AS``          remove a pair (either order; printed highest rank first)
``QH>cell``        put an available card into a free cell
=================  ==============================================================

Cards are unique in a deal, so a move names cards, never places.
"""

from __future__ import annotations

from typing import Optional

from companion.cards import Card
from companion.errors import InvalidCardError, InvalidMoveError

DRAW = "draw"
RECYCLE = "recycle"
REMOVE = "remove"
TO_CELL = "cell"


class Move:
    """An immutable, hashable move: ``Move.parse("QH+AS") == Move.pair(AS, QH)``."""

    __slots__ = ("kind", "cards", "_text")
    kind: str
    cards: tuple[Card, ...]

    def __init__(self, kind: str, cards: tuple[Card, ...] = ()) -> None:
        if kind not in (DRAW, RECYCLE, REMOVE, TO_CELL):
            raise InvalidMoveError(f"unknown move kind {kind!r}")
        if kind == REMOVE:
            if len(cards) not in (1, 2) or (len(cards) == 2 and cards[0] is cards[1]):
                raise InvalidMoveError(f"a removal takes one or two different cards, got {cards!r}")
            cards = tuple(sorted(cards, key=lambda c: (-c.rank, c.suit)))
        elif kind == TO_CELL and len(cards) != 1:
            raise InvalidMoveError(f"a cell move takes one card, got {cards!r}")
        elif kind in (DRAW, RECYCLE) and cards:
            raise InvalidMoveError(f"{kind} takes no cards")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "cards", cards)
        if kind == REMOVE:
            text = "+".join(c.code for c in cards)
        elif kind == TO_CELL:
            text = f"{cards[0]}>cell"
        else:
            text = kind
        object.__setattr__(self, "_text", text)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Move is immutable")

    # --- constructors ---------------------------------------------------------------
    @classmethod
    def draw(cls) -> "Move":
        return _DRAW

    @classmethod
    def recycle(cls) -> "Move":
        return _RECYCLE

    @classmethod
    def remove(cls, *cards: Card) -> "Move":
        return cls(REMOVE, tuple(cards))

    @classmethod
    def to_cell(cls, card: Card) -> "Move":
        return cls(TO_CELL, (card,))

    @classmethod
    def parse(cls, text: str) -> "Move":
        """Read ``draw``, ``recycle``, ``KD``, ``QH+AS``, ``10h + 3c``, ``QH>cell``."""
        if not isinstance(text, str):
            raise InvalidMoveError(f"move must be a string, got {text!r}")
        raw = text.strip()
        low = raw.lower()
        if low in (DRAW, "d"):
            return _DRAW
        if low in (RECYCLE, "r"):
            return _RECYCLE
        try:
            if ">" in raw:
                card_text, _, target = raw.partition(">")
                if target.strip().lower() != "cell":
                    raise InvalidMoveError(f"not a move: {text!r} (only 'CARD>cell' moves to a cell)")
                return cls.to_cell(Card.parse(card_text))
            parts = [p for p in raw.split("+")]
            if len(parts) > 2 or any(not p.strip() for p in parts):
                raise InvalidMoveError(f"not a move: {text!r}")
            return cls.remove(*(Card.parse(p) for p in parts))
        except InvalidCardError as exc:
            raise InvalidMoveError(f"not a move: {text!r} ({exc})") from None

    # --- queries --------------------------------------------------------------------
    @property
    def is_removal(self) -> bool:
        return self.kind == REMOVE

    @property
    def is_pair(self) -> bool:
        return self.kind == REMOVE and len(self.cards) == 2

    def card(self) -> Optional[Card]:
        return self.cards[0] if self.cards else None

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Move.parse({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Move) and self._text == other._text

    def __hash__(self) -> int:
        return hash(self._text)


_DRAW = Move(DRAW)
_RECYCLE = Move(RECYCLE)
