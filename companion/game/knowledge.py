"""Naming unknown cards (``??``) once they are seen: the reveal family of ``GameState``.

A reveal changes what is known about the deal, never the position: the new
state has the same ``key()``, with a new ``Known`` built from the deal with the
card filled in.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Optional

from companion.cards import Card
from companion.errors import IllegalMoveError
from companion.game.context import Known

if TYPE_CHECKING:
    from companion.game.state import GameState


def _check_unseen(state: "GameState", card: Card | str) -> Card:
    if isinstance(card, str):
        card = Card.parse(card)
    if card not in state._k.unseen:
        where = "is not in this deck" if card not in state._ctx.deck_set else "is already known"
        raise IllegalMoveError(f"reveal {card}: {card} {where}")
    return card


def _with_card(state: "GameState", index: int, card: Card) -> "GameState":
    deal = state._k.deal.with_card(index, card)
    return state._with_known(Known.from_deal(state._ctx, deal))


def reveal_next(state: "GameState", card: Card | str, slot: Optional[int] = None) -> "GameState":
    """The next card about to be seen (see ``GameState.reveal``)."""
    card = _check_unseen(state, card)
    k = state._k
    if slot is not None:
        if not 0 <= slot < len(k.pyramid) or k.pyramid[slot] is not None:
            raise IllegalMoveError(f"reveal {card}: pyramid slot {slot} holds no unknown card")
        return _with_card(state, slot, card)
    sc = k.stock
    pos = next((p for p in state._stock[:state._ctx.draw_count] if sc[p] is None), None)
    if pos is None:
        pos = next((pile[-1] for pile in state._waste if pile and sc[pile[-1]] is None), None)
    if pos is None:
        raise IllegalMoveError(f"reveal {card}: no unknown card is about to be seen")
    return _with_card(state, state._ctx.stock_offset + pos, card)


def reveal_stock(state: "GameState", card: Card | str, depth: int = 0) -> "GameState":
    if not 0 <= depth < len(state._stock):
        raise IllegalMoveError(f"reveal {card}: the stock has no card at depth {depth}")
    return _reveal_position(state, card, state._stock[depth], f"stock card at depth {depth}")


def reveal_waste(state: "GameState", card: Card | str, pile: int = 0, depth: int = 0) -> "GameState":
    waste = state._waste
    if not 0 <= pile < len(waste) or not 0 <= depth < len(waste[pile]):
        raise IllegalMoveError(f"reveal {card}: waste pile {pile} has no card at depth {depth}")
    return _reveal_position(state, card, waste[pile][-1 - depth], f"waste pile {pile} card at depth {depth}")


def _reveal_position(state: "GameState", card: Card | str, pos: int, place: str) -> "GameState":
    card = _check_unseen(state, card)
    known = state._k.stock[pos]
    if known is not None:
        raise IllegalMoveError(f"reveal {card}: the {place} is already known ({known})")
    return _with_card(state, state._ctx.stock_offset + pos, card)


def fill_unknown(state: "GameState", rng: random.Random) -> "GameState":
    """The same position with every unknown card named by a random draw of the unseen ones."""
    deal = state._k.deal
    holes = [i for i, c in enumerate(deal.cards) if c is None]
    if not holes:
        return state
    cards = sorted(state._k.unseen, key=lambda c: c.index)
    rng.shuffle(cards)
    filled = list(deal.cards)
    for i, card in zip(holes, cards):
        filled[i] = card
    return state._with_known(Known.from_deal(state._ctx, type(deal)(deal.rules, filled)))
