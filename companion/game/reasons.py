"""Why a move is illegal, in words a person at the table understands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from companion.cards import Card
from companion.moves import DRAW, RECYCLE, TO_CELL, Move

if TYPE_CHECKING:
    from companion.game.state import GameState


def where(state: "GameState", card: Card) -> str:
    """Where ``card`` is, or why it cannot be played (empty string when it is available)."""
    ctx, k = state._ctx, state._k
    if card not in ctx.deck_set:
        return f"{card} is not in the {ctx.deck_size}-card deck of these rules"
    if (state._gone >> card.index) & 1:
        return f"{card} was already removed"
    if card in state._cells:
        return ""
    s = k.slot_of.get(card)
    if s is not None:
        if (state._exp >> s) & 1:
            return ""
        covering = [c for c in ctx.geo.covers(s) if not (state._empty >> c) & 1]
        names = [str(k.pyramid[c]) if state.visible(c) or k.pyramid[c] is not None else "a face-down card"
                 for c in covering]
        return f"{card} is covered by {' and '.join(names)}"
    r = k.res_of.get(card)
    if r is not None:
        if (state._res >> r) & 1:
            return f"{card} was already removed"
        above = [k.reserve[j] for j in range(len(k.reserve))
                 if (ctx.reserve_above[r] >> j) & 1 and not (state._res >> j) & 1]
        if above:
            return f"{card} is in a reserve pile under {' and '.join(map(str, above))}"
        return ""
    p = k.pos_of.get(card)
    if p is None:
        return f"{card} has not been seen yet"
    if p in state._stock:
        depth = state._stock.index(p)
        if depth == 0:
            if ctx.stock_playable:
                return ""
            return f"{card} is on top of the stock, which does not play under these rules (draw it first)"
        return f"{card} is in the stock under {depth} card{'s' if depth > 1 else ''}"
    for pile in state._waste:
        if p in pile:
            depth = len(pile) - 1 - pile.index(p)
            if depth == 0:
                return ""
            return f"{card} is in the waste under {depth} card{'s' if depth > 1 else ''}"
    return f"{card} is not on the table"


def reason(state: "GameState", move: Move) -> str:
    """The reason ``move`` is illegal in ``state`` (assumes it is)."""
    ctx = state._ctx
    if state.is_won():
        return f"{move}: the game is already won"
    if move.kind == DRAW:
        if state._waste and any(state._waste) and state._can_recycle():
            return "draw: the stock is empty (recycle the waste first)"
        return "draw: the stock is empty"
    if move.kind == RECYCLE:
        if state._stock:
            n = len(state._stock)
            return f"recycle: the stock still holds {n} card{'s' if n > 1 else ''}"
        if not any(state._waste):
            return "recycle: the waste is empty"
        passes = ctx.rules.passes
        return f"recycle: no passes left (these rules allow {passes} pass{'es' if passes != 1 else ''})"
    cards = move.cards
    if move.kind == TO_CELL:
        card = cards[0]
        if not ctx.free_cells:
            return f"{move}: these rules have no free cells"
        if card in state._cells:
            return f"{move}: {card} is already in a cell"
        if len(state._cells) >= ctx.free_cells:
            return f"{move}: every free cell is full"
        return f"{move}: {where(state, card) or 'not possible'}"
    total = sum(ctx.value[c.index] for c in cards)
    if len(cards) == 1:
        card = cards[0]
        if total != ctx.pair_sum:
            return (f"{card}: only a card worth {ctx.pair_sum} is removed alone "
                    f"({card} is worth {total})")
        return f"{move}: {where(state, card) or 'not possible'}"
    a, b = cards
    if total != ctx.pair_sum:
        return (f"{a}+{b} do not make {ctx.pair_sum} "
                f"({ctx.value[a.index]} + {ctx.value[b.index]} = {total})")
    problems = [w for w in (where(state, a), where(state, b)) if w]
    if problems:
        if ctx.tuts_tomb and len(problems) == 1 and "covered by" in problems[0]:
            return f"{move}: {problems[0]} (a card pairs only with the one card that alone covers it)"
        return f"{move}: " + "; ".join(problems)
    if not ctx.free_pairs:
        return f"{move}: two cards from outside the pyramid never pair under these rules"
    return f"{move}: both cards are in the same waste pile"
