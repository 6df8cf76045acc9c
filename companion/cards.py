"""Cards and decks: small value types with parse/print round trips.

``Card.parse("QH")``, ``Card.parse("10d")`` and ``Card.parse("q♥")`` all read a
card; ``str(card)`` always prints the two-character form (``"QH"``, ``"TD"``).
Cards are interned: there is exactly one object per card, so ``is`` works and
hashing is cheap in the solver.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence

from companion.errors import InvalidCardError, InvalidDealError

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S"}
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
RANK_NAMES = {
    1: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", 10: "ten", 11: "jack", 12: "queen", 13: "king",
}


class Card:
    """One playing card: ``rank`` 1..13 (ace..king) and ``suit`` one of ``CDHS``.

    ``Card.index`` (0..51, suit-major) is the class index used by the
    recognition model and the bit position used by the solver.
    """

    __slots__ = ("rank", "suit", "index", "_code")
    rank: int
    suit: str
    index: int
    _code: str

    _interned: dict[tuple[int, str], "Card"] = {}

    def __new__(cls, rank: int, suit: str) -> "Card":
        key = (rank, suit)
        card = cls._interned.get(key)
        if card is not None:
            return card
        if not isinstance(rank, int) or not 1 <= rank <= 13:
            raise InvalidCardError(f"rank must be 1..13, got {rank!r}")
        if suit not in SUITS or len(suit) != 1:
            raise InvalidCardError(f"suit must be one of C, D, H, S, got {suit!r}")
        card = object.__new__(cls)
        object.__setattr__(card, "rank", rank)
        object.__setattr__(card, "suit", suit)
        object.__setattr__(card, "index", SUITS.index(suit) * 13 + rank - 1)
        object.__setattr__(card, "_code", RANKS[rank - 1] + suit)
        cls._interned[key] = card
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self):  # pickling keeps interning (worker processes)
        return (Card, (self.rank, self.suit))

    @classmethod
    def parse(cls, text: str) -> "Card":
        """Read a card code: ``QH``, ``10D``, ``td``, ``Q♥``, ``1S`` (ace)."""
        if not isinstance(text, str):
            raise InvalidCardError(f"card code must be a string, got {text!r}")
        code = text.strip()
        if len(code) < 2:
            raise InvalidCardError(f"not a card: {text!r} (expected rank+suit, e.g. 'QH')")
        suit_char = SUIT_SYMBOLS.get(code[-1], code[-1].upper())
        rank_text = code[:-1].upper()
        if suit_char not in SUITS:
            raise InvalidCardError(f"not a card: {text!r} (unknown suit {code[-1]!r}; use C, D, H, S)")
        if rank_text in ("10", "T"):
            rank = 10
        elif rank_text == "1":
            rank = 1
        elif len(rank_text) == 1 and rank_text in RANKS:
            rank = RANKS.index(rank_text) + 1
        else:
            raise InvalidCardError(f"not a card: {text!r} (unknown rank {code[:-1]!r}; use A 2-9 T/10 J Q K)")
        return cls(rank, suit_char)

    @classmethod
    def from_index(cls, index: int) -> "Card":
        if not 0 <= index < 52:
            raise InvalidCardError(f"card index must be 0..51, got {index!r}")
        return cls(index % 13 + 1, SUITS[index // 13])

    @property
    def code(self) -> str:
        return self._code

    @property
    def name(self) -> str:
        return f"{RANK_NAMES[self.rank]} of {SUIT_NAMES[self.suit]}"

    def __str__(self) -> str:
        return self._code

    def __repr__(self) -> str:
        return f"Card.parse({self._code!r})"

    def __hash__(self) -> int:
        return self.index

    def __eq__(self, other: object) -> bool:
        return self is other

    def __lt__(self, other: "Card") -> bool:
        return (self.rank, self.suit) < (other.rank, other.suit)


#: The 52 cards in class-index order (clubs A..K, diamonds, hearts, spades).
DECK: tuple[Card, ...] = tuple(Card.from_index(i) for i in range(52))
#: Class names of the recognition model, derived from the deck.
CARD_CODES: tuple[str, ...] = tuple(c.code for c in DECK)


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Read whitespace- or comma-separated card codes; errors name the position."""
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    cards = []
    for i, token in enumerate(tokens):
        try:
            cards.append(Card.parse(token))
        except InvalidCardError as exc:
            raise InvalidDealError(f"card {i + 1} of the deal: {exc}") from None
    return cards


def format_cards(cards: Iterable[Card | None]) -> str:
    return " ".join("??" if c is None else str(c) for c in cards)


def check_unique(cards: Sequence[Card]) -> None:
    seen: dict[Card, int] = {}
    for i, card in enumerate(cards):
        if card in seen:
            raise InvalidDealError(
                f"duplicate card {card}: positions {seen[card] + 1} and {i + 1} of the deal")
        seen[card] = i


def iter_deck(ranks: Iterable[int] = range(1, 14)) -> Iterator[Card]:
    ranks = tuple(ranks)
    for suit in SUITS:
        for rank in ranks:
            yield Card(rank, suit)
