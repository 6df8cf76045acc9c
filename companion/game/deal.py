"""A deal: the order the cards were dealt in, possibly with unknown cards.

Text form: the card codes separated by spaces -- the pyramid row by row from
the 1-card row, left to right, then the reserve row (variants with one), then
the stock in draw order (first drawn first). ``??`` marks a card not known
yet: allowed in the stock and in face-down pyramid rows. A text holding only
the pyramid (and reserve) leaves the whole stock unknown.
"""

from __future__ import annotations

import random
from typing import Optional, Sequence

from companion.cards import Card, format_cards
from companion.errors import InvalidCardError, InvalidDealError
from companion.rules import Rules

UNKNOWN = "??"


def face_down_slots(rules: Rules) -> frozenset[int]:
    """Pyramid slots dealt face down: the ``face_down_rows`` rows most covered."""
    k = rules.face_down_rows
    if not k:
        return frozenset()
    rows = range(rules.rows - k, rules.rows) if rules.inverted else range(k)
    return frozenset(r * (r + 1) // 2 + c for r in rows for c in range(r + 1))


class Deal:
    """Immutable deal for a rules shape (rows, reserve size, deck)."""

    __slots__ = ("rules", "cards", "pyramid", "reserve", "stock", "_hash")

    def __init__(self, rules: Rules, cards: Sequence[Optional[Card]]) -> None:
        cards = tuple(cards)
        _check(rules, cards)
        p, r = rules.pyramid_size, rules.reserve
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "pyramid", cards[:p])
        object.__setattr__(self, "reserve", cards[p:p + r])
        object.__setattr__(self, "stock", cards[p + r:])
        object.__setattr__(self, "_hash", hash((rules.rows, rules.deck, rules.reserve, cards)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Deal is immutable")

    # --- constructors ---------------------------------------------------------------
    @classmethod
    def parse(cls, text: str, rules: Rules) -> "Deal":
        """Read a deal; errors name the offending card or count."""
        if not isinstance(text, str):
            raise InvalidDealError(f"deal must be a string of card codes, got {text!r}")
        tokens = text.replace(",", " ").split()
        layout = rules.pyramid_size + rules.reserve
        if len(tokens) == layout and rules.stock_size:
            tokens += [UNKNOWN] * rules.stock_size  # pyramid alone: stock not seen yet
        if len(tokens) != rules.deck:
            raise InvalidDealError(
                f"expected {rules.deck} cards, got {len(tokens)}"
                + (f" (or {layout} for the layout alone)" if rules.stock_size else "")
                + f" for rules {rules.name!r}")
        cards: list[Optional[Card]] = []
        for i, token in enumerate(tokens):
            if token in (UNKNOWN, "?"):
                cards.append(None)
                continue
            try:
                cards.append(Card.parse(token))
            except InvalidCardError as exc:
                raise InvalidDealError(f"card {i + 1} of the deal ({_place(rules, i)}): {exc}") from None
        return cls(rules, cards)

    @classmethod
    def random(cls, rules: Rules, rng: random.Random | None = None) -> "Deal":
        cards = list(rules.deck_cards())
        (rng or random.Random()).shuffle(cards)
        return cls(rules, cards)

    @classmethod
    def from_cards(cls, rules: Rules, pyramid: Sequence[Optional[Card]],
                   reserve: Sequence[Optional[Card]] = (),
                   stock: Sequence[Optional[Card]] | None = None) -> "Deal":
        """Build from parts; ``stock=None`` leaves the whole stock unknown."""
        stock = [None] * rules.stock_size if stock is None else list(stock)
        return cls(rules, [*pyramid, *reserve, *stock])

    @classmethod
    def build(cls, rules: Rules, pyramid: str = "", reserve: str = "", stock: str = "",
              fill: bool = True) -> "Deal":
        """A deal from partial parts, for tests and examples.

        Each part is card codes; ``*`` stands for "some card not named elsewhere". The parts
        may be short: missing places are ``*`` too. With ``fill`` every ``*`` takes the next
        unused card of the deck (in ``Card.index`` order), else it stays unknown (``??``).
        """
        sizes = (rules.pyramid_size, rules.reserve, rules.stock_size)
        parts: list[list[str]] = []
        for name, text, n in zip(("pyramid", "reserve", "stock"), (pyramid, reserve, stock), sizes):
            tokens = text.replace(",", " ").split()
            if len(tokens) > n:
                raise InvalidDealError(f"{name}: {len(tokens)} cards given, room for {n}")
            parts.append(tokens + ["*"] * (n - len(tokens)))
        flat = [t for part in parts for t in part]
        named = [Card.parse(t) for t in flat if t not in ("*", UNKNOWN)]
        spare = iter(c for c in rules.deck_cards() if c not in set(named))
        cards: list[Optional[Card]] = []
        for t in flat:
            if t == "*":
                cards.append(next(spare) if fill else None)
            else:
                cards.append(None if t == UNKNOWN else Card.parse(t))
        return cls(rules, cards)

    # --- queries --------------------------------------------------------------------
    @property
    def is_complete(self) -> bool:
        return None not in self.cards

    def known(self) -> frozenset[Card]:
        return frozenset(c for c in self.cards if c is not None)

    def unknown_cards(self) -> frozenset[Card]:
        """Cards of the rules' deck that the deal does not place."""
        return frozenset(self.rules.deck_cards()) - self.known()

    def with_stock_card(self, position: int, card: Card) -> "Deal":
        """The same deal with stock position ``position`` (0-based) now known."""
        cards = list(self.cards)
        i = self.rules.pyramid_size + self.rules.reserve + position
        cards[i] = card
        return Deal(self.rules, cards)

    def with_card(self, index: int, card: Card) -> "Deal":
        cards = list(self.cards)
        cards[index] = card
        return Deal(self.rules, cards)

    def __str__(self) -> str:
        return format_cards(self.cards)

    def __repr__(self) -> str:
        return f"Deal.parse({str(self)!r}, Rules.parse({self.rules.name!r}))"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Deal) and self.cards == other.cards and (
            self.rules.rows, self.rules.deck, self.rules.reserve) == (
            other.rules.rows, other.rules.deck, other.rules.reserve)

    def __hash__(self) -> int:
        return self._hash

    def __len__(self) -> int:
        return len(self.cards)


def _place(rules: Rules, i: int) -> str:
    p, r = rules.pyramid_size, rules.reserve
    if i < p:
        row = int(((8 * i + 1) ** 0.5 - 1) / 2)
        return f"pyramid row {row + 1}, card {i - row * (row + 1) // 2 + 1}"
    if i < p + r:
        return f"reserve card {i - p + 1}"
    return f"stock card {i - p - r + 1}"


def _check(rules: Rules, cards: tuple[Optional[Card], ...]) -> None:
    if len(cards) != rules.deck:
        raise InvalidDealError(f"expected {rules.deck} cards, got {len(cards)} for rules {rules.name!r}")
    deck = set(rules.deck_cards())
    seen: dict[Card, int] = {}
    hidden = face_down_slots(rules)
    p = rules.pyramid_size
    for i, card in enumerate(cards):
        if card is None:
            if i < p and i not in hidden:
                raise InvalidDealError(
                    f"card {i + 1} of the deal ({_place(rules, i)}) is '??' but that card lies face up")
            if p <= i < p + rules.reserve:
                raise InvalidDealError(
                    f"card {i + 1} of the deal ({_place(rules, i)}) is '??' but the reserve lies face up")
            continue
        if not isinstance(card, Card):
            raise InvalidDealError(f"card {i + 1} of the deal is not a card: {card!r}")
        if card not in deck:
            raise InvalidDealError(
                f"{card} (card {i + 1} of the deal) is not in the {rules.deck}-card deck of "
                f"rules {rules.name!r}" + (" (the Spanish deck has no queens)" if rules.deck == 48 else ""))
        if card in seen:
            raise InvalidDealError(
                f"duplicate card {card}: cards {seen[card] + 1} and {i + 1} of the deal")
        seen[card] = i
