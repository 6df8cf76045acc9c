"""Per-rules precomputation shared by every state of a game (and its caches).

``Context`` holds what depends on the rules only (geometry, pair values, the
interned ``Move`` objects); ``Known`` holds what is known about one deal
(card -> place lookups) and is replaced only when a card is revealed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterator, Optional

from companion.cards import DECK, Card
from companion.errors import InvalidDealError
from companion.game.deal import Deal, face_down_slots
from companion.game.geometry import geometry
from companion.moves import Move
from companion.rules import Rules


class Context:
    """Everything a state needs that depends on the rules alone."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.geo = geometry(rules.rows, rules.inverted)
        self.pair_sum = rules.pair_sum
        self.value: tuple[int, ...] = tuple(rules.value(c) for c in DECK)
        self.deck_cards = rules.deck_cards()
        self.deck_set = frozenset(self.deck_cards)
        self.deck_size = len(self.deck_cards)
        self.deck_mask = sum(1 << c.index for c in self.deck_cards)
        self.free_pairs = rules.stock_waste_pairs
        self.tuts_tomb = rules.tuts_tomb
        self.free_cells = rules.free_cells
        self.stock_playable = rules.stock_playable
        self.waste_piles = rules.waste_piles
        self.draw_count = rules.draw
        self.recycles = rules.recycles
        self.win = rules.win
        self.face_down = face_down_slots(rules)
        self.stock_offset = rules.pyramid_size + rules.reserve
        # reserve card i is playable when the cards dealt onto it (same pile) are gone
        piles = rules.reserve_piles
        self.reserve_above: tuple[int, ...] = tuple(
            sum(1 << j for j in range(i + piles, rules.reserve, piles)) if piles else 0
            for i in range(rules.reserve))
        self.king_move: tuple[Optional[Move], ...] = tuple(
            Move.remove(c) if self.value[c.index] == self.pair_sum else None for c in DECK)
        self.cell_move: tuple[Move, ...] = tuple(Move.to_cell(c) for c in DECK)
        self.draw_move = Move.draw()
        self.recycle_move = Move.recycle()
        # pair_moves[a][b]: the interned Move removing cards a and b (by index), when they pair
        self.pair_moves: list[list[Optional[Move]]] = [[None] * 52 for _ in range(52)]
        for a in DECK:
            for b in DECK:
                if a is not b and self.value[a.index] + self.value[b.index] == self.pair_sum:
                    move = self.pair_moves[b.index][a.index] or Move.remove(a, b)
                    self.pair_moves[a.index][b.index] = move

    def pairs_idx(self, i: int, j: int) -> bool:
        return self.value[i] + self.value[j] == self.pair_sum

    def pair_move(self, a: Card, b: Card) -> Move:
        move = self.pair_moves[a.index][b.index]
        return move if move is not None else Move.remove(a, b)

    def tuts_candidates(self, exposed: int) -> Iterator[int]:
        m = exposed
        while m:
            low = m & -m
            yield low.bit_length() - 1
            m ^= low

    def cards_of_mask(self, mask: int) -> frozenset[Card]:
        return frozenset(DECK[i] for i in range(52) if (mask >> i) & 1)


@lru_cache(maxsize=64)
def context_for(rules: Rules) -> Context:
    return Context(rules)


class Known:
    """What is known about one deal: its cards and card -> place lookups."""

    __slots__ = ("deal", "pyramid", "reserve", "stock", "slot_of", "res_of", "pos_of", "unseen")

    def __init__(self, deal: Deal) -> None:
        self.deal = deal
        self.pyramid = deal.pyramid
        self.reserve = deal.reserve
        self.stock = deal.stock
        self.slot_of = {c: i for i, c in enumerate(deal.pyramid) if c is not None}
        self.res_of = {c: i for i, c in enumerate(deal.reserve) if c is not None}
        self.pos_of = {c: i for i, c in enumerate(deal.stock) if c is not None}
        self.unseen = deal.unknown_cards()

    @classmethod
    def from_deal(cls, ctx: Context, deal: Deal) -> "Known":
        rules = ctx.rules
        d = deal.rules
        if (d.rows, d.deck, d.reserve) != (rules.rows, rules.deck, rules.reserve):
            raise InvalidDealError(
                f"deal for rules {d.name!r} ({d.rows} rows, {d.deck} cards, reserve {d.reserve}) "
                f"does not fit rules {rules.name!r} ({rules.rows} rows, {rules.deck} cards, "
                f"reserve {rules.reserve})")
        if not deal.is_complete:
            hidden = ctx.face_down
            for i, c in enumerate(deal.pyramid):
                if c is None and i not in hidden:
                    raise InvalidDealError(
                        f"pyramid slot {i} is unknown ('??') but lies face up under rules {rules.name!r}")
        return cls(deal)
