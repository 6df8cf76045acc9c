"""A solver position for the single-waste family of rules, and its compiled form.

``Position`` is the solver's own small view of a game: the table slots (the
pyramid row by row from the apex, then the reserve), the waste (bottom to top),
the stock (top first, ``None`` = a card not seen yet) and the recycles used.
``Spec`` is the same position compiled into "slots" for the search cores
(``_fastsolve`` in C and ``core`` in Python): table slots ``0..nt-1`` then the
talon, i.e. the waste bottom..top followed by the stock top..bottom, with a
pointer to the stock top. Drawing moves the pointer, recycling resets it, and
removing a talon card keeps the order of the rest, so one pointer is enough.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Optional, Sequence

from companion.cards import Card, format_cards, parse_cards, check_unique
from companion.errors import IllegalMoveError, InvalidDealError
from companion.moves import Move
from companion.rules import WIN_ALL, Rules

F_STOCK_PLAYABLE, F_SW_PAIRS, F_TUTS, F_TALON_KINGS = 1, 2, 4, 8
K_DRAW, K_RECYCLE, K_REMOVE = 0, 1, 2


def fast_family(rules: Rules) -> bool:
    """Rules the slot search handles: one waste pile, no free cells, and reserve cards
    (if any) that pair with the stock and waste (the slot search treats them as table cards;
    its Tut's Tomb pairs would also reach into stacked reserve piles, which the engine's don't)."""
    piles = getattr(rules, "reserve_piles", 0)
    return rules.waste_piles == 1 and rules.free_cells == 0 and (
        rules.reserve == 0 or rules.stock_waste_pairs) and not (rules.tuts_tomb and piles)


def table_covers(rules: Rules) -> tuple[tuple[int, ...], ...]:
    return covers(rules.rows, rules.inverted, rules.reserve, getattr(rules, "reserve_piles", 0))


@lru_cache(maxsize=None)
def covers(rows: int, inverted: bool, reserve: int, piles: int = 0) -> tuple[tuple[int, ...], ...]:
    """For each table slot, the slots lying directly on it (to be removed first).

    Reserve card ``i`` lies on pile ``i % piles`` (dealt row by row), under card ``i + piles``."""
    out: list[tuple[int, ...]] = []
    for r in range(rows):
        for c in range(r + 1):
            if not inverted:
                below = [(r + 1, c), (r + 1, c + 1)] if r + 1 < rows else []
            else:  # apex nearest the player: row r is covered by the narrower row r-1
                below = [(r - 1, x) for x in (c - 1, c) if r >= 1 and 0 <= x <= r - 1]
            out.append(tuple(rr * (rr + 1) // 2 + cc for rr, cc in below))
    base = len(out)
    for i in range(reserve):
        out.append((base + i + piles,) if piles and i + piles < reserve else ())
    return tuple(out)


@dataclass(frozen=True)
class Position:
    rules: Rules
    table: tuple[Optional[Card], ...]
    waste: tuple[Card, ...] = ()
    stock: tuple[Optional[Card], ...] = ()
    recycles: int = 0

    # --- construction ---------------------------------------------------------------
    @classmethod
    def from_deal(cls, rules: Rules, cards: Sequence[Card] | str) -> "Position":
        """A fresh deal: the pyramid from the apex, the reserve, then the stock (first drawn first)."""
        if isinstance(cards, str):
            cards = parse_cards(cards)
        cards = list(cards)
        if len(cards) != rules.deck:
            raise InvalidDealError(
                f"a {rules.name} deal has {rules.deck} cards, got {len(cards)}")
        check_unique(cards)
        allowed = set(rules.deck_cards())
        for i, card in enumerate(cards):
            if card not in allowed:
                raise InvalidDealError(f"card {i + 1} of the deal: {card} is not in the {rules.deck}-card deck")
        nt = rules.pyramid_size + rules.reserve
        return cls(rules, tuple(cards[:nt]), (), tuple(cards[nt:]), 0)

    @property
    def talon(self) -> tuple[Optional[Card], ...]:
        return self.waste + self.stock

    def known(self) -> bool:
        return all(c is not None for c in self.stock)

    def __str__(self) -> str:
        return (f"table {format_cards(self.table)} | waste {format_cards(self.waste)} | "
                f"stock {format_cards(self.stock)} | recycles {self.recycles}")

    # --- rules (Python reference of the slot semantics) -----------------------------
    def available(self) -> list[Card]:
        cov = table_covers(self.rules)
        out = [c for i, c in enumerate(self.table)
               if c is not None and all(self.table[j] is None for j in cov[i])]
        if self.waste:
            out.append(self.waste[-1])
        if self.stock and self.rules.stock_playable and self.stock[0] is not None:
            out.append(self.stock[0])
        return out

    def is_won(self) -> bool:
        if any(c is not None for c in self.table[: self.rules.pyramid_size]):
            return False
        if self.rules.win == WIN_ALL:
            return not self.waste and not self.stock and all(c is None for c in self.table)
        return True

    def apply(self, move: Move) -> "Position":
        """Play a move (checked against the rules); used to replay and by the advisor."""
        rules = self.rules
        if move.kind == "draw":
            if not self.stock:
                raise IllegalMoveError(f"cannot draw: the stock is empty ({self})")
            n = min(rules.draw, len(self.stock))
            return replace(self, waste=self.waste + tuple(self.stock[:n]), stock=self.stock[n:])
        if move.kind == "recycle":
            if self.stock or not self.waste:
                raise IllegalMoveError("cannot recycle: the stock is not empty or the waste is empty")
            if rules.recycles is not None and self.recycles >= rules.recycles:
                raise IllegalMoveError(f"cannot recycle: all {rules.passes} passes are used")
            return replace(self, waste=(), stock=self.waste, recycles=self.recycles + 1)
        if move.kind != "remove":
            raise IllegalMoveError(f"{move} is not a move of {rules.name}")
        cards = move.cards
        if len(cards) == 1:
            if not rules.is_king(cards[0]):
                raise IllegalMoveError(f"{move}: only a card worth {rules.pair_sum} goes alone")
        elif not rules.pairs(*cards):
            raise IllegalMoveError(f"{move}: the values do not add up to {rules.pair_sum}")
        avail = self.available()
        places = []
        cov = table_covers(rules)
        for card in cards:
            if card in avail:
                places.append("table" if card in self.table else "talon")
                continue
            if len(cards) == 2 and rules.tuts_tomb and card in self.table:
                other = cards[1] if card is cards[0] else cards[0]
                i = self.table.index(card)
                left = [self.table[j] for j in cov[i] if self.table[j] is not None]
                if left == [other] and other in avail and other in self.table:
                    places.append("table")
                    continue
            raise IllegalMoveError(f"{move}: {card} is not available")
        if places == ["talon", "talon"] and not rules.stock_waste_pairs:
            raise IllegalMoveError(f"{move}: two cards from outside the pyramid may not pair")
        gone = set(cards)
        return replace(
            self,
            table=tuple(None if c in gone else c for c in self.table),
            waste=tuple(c for c in self.waste if c not in gone),
            stock=tuple(c for c in self.stock if c not in gone),
        )


@dataclass
class Spec:
    """A fully known position compiled for the search cores."""

    table_vals: bytes
    covers: tuple[int, ...]
    talon_vals: bytes
    goal: int
    removed: int
    ptr: int
    rec: int
    maxrec: int
    draw: int
    flags: int
    pair_sum: int
    slots: tuple[Optional[Card], ...]  # slot -> card, to read moves back

    def args(self) -> tuple:
        return (self.table_vals, self.covers, self.talon_vals, self.goal, self.removed, self.ptr,
                self.rec, self.maxrec, self.draw, self.flags, self.pair_sum)

    def move(self, kind: int, a: int, b: int) -> Move:
        if kind == K_DRAW:
            return Move.draw()
        if kind == K_RECYCLE:
            return Move.recycle()
        return _removal(self.slots[a], self.slots[b] if b >= 0 else None)  # type: ignore[arg-type]


@lru_cache(maxsize=4096)
def _removal(a: Card, b: Optional[Card]) -> Move:
    return Move.remove(a) if b is None else Move.remove(a, b)


@lru_cache(maxsize=64)
def _rules_consts(rules: Rules) -> tuple:
    cov = table_covers(rules)
    masks = tuple(sum(1 << j for j in c) for c in cov)
    values = [0] * 52
    for c in rules.deck_cards():
        values[c.index] = rules.value(c)
    flags = ((F_STOCK_PLAYABLE if rules.stock_playable else 0)
             | (F_SW_PAIRS if rules.stock_waste_pairs else 0)
             | (F_TUTS if rules.tuts_tomb else 0)
             | (F_TALON_KINGS if rules.draw == 1 else 0))
    maxrec = -1 if rules.recycles is None else rules.recycles
    return masks, values, flags, maxrec


def compile_position(pos: Position) -> Spec:
    rules = pos.rules
    if not fast_family(rules):
        raise ValueError(f"{rules.name}: not a single-waste rule set")
    masks, values, flags, maxrec = _rules_consts(rules)
    nt = len(pos.table)
    if nt != len(masks):
        raise InvalidDealError(f"{rules.name} has {len(masks)} table slots, got {len(pos.table)}")
    talon = pos.waste + pos.stock
    if None in talon:
        raise ValueError("the stock has unknown cards; fill them in first")
    removed = 0
    for i, c in enumerate(pos.table):
        if c is None:
            removed |= 1 << i
    table_vals = bytes([1 if c is None else values[c.index] for c in pos.table])
    full = (1 << (nt + len(talon))) - 1
    goal = full if rules.win == WIN_ALL else (1 << rules.pyramid_size) - 1
    rec = 0 if maxrec < 0 else pos.recycles
    return Spec(table_vals, masks, bytes([values[c.index] for c in talon]), goal, removed,  # type: ignore[union-attr]
                len(pos.waste), rec, maxrec, rules.draw, flags, rules.pair_sum,
                pos.table + talon)


@lru_cache(maxsize=None)
def _cones(cov: tuple[tuple[int, ...], ...]) -> tuple[tuple[frozenset[int], ...], tuple[frozenset[int], ...]]:
    n = len(cov)
    on = [set(c) for c in cov]
    changed = True
    while changed:
        changed = False
        for i in range(n):
            extra = set().union(*(on[j] for j in list(on[i]))) - on[i] if on[i] else set()
            if extra:
                on[i] |= extra
                changed = True
    under = [{j for j in range(n) if i in on[j]} for i in range(n)]
    return tuple(frozenset(x) for x in on), tuple(frozenset(x) for x in under)


def lies_on(rules: Rules) -> tuple[frozenset[int], ...]:
    """For each table slot, every slot that must be cleared before it is free."""
    return _cones(table_covers(rules))[0]


def lies_under(rules: Rules) -> tuple[frozenset[int], ...]:
    """For each table slot, every slot it (transitively) lies on."""
    return _cones(table_covers(rules))[1]


def never_meets(rules: Rules, slot: int) -> frozenset[int]:
    """Table slots whose card can never be paired with the card of ``slot``."""
    cov = table_covers(rules)
    on, under = lies_on(rules)[slot], lies_under(rules)[slot]
    if rules.tuts_tomb:  # the quirk pairs a card with the one it alone covers
        on = on - set(cov[slot])
        under = under - {j for j in range(len(cov)) if slot in cov[j]}
    return on | under
