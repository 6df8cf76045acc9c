"""Scores of a game under the five systems; any system works for any game.

=========  =====================================================================
``cards``  cards left (lower is better)
``one``    one point per removed card
``par``    Solitaire Till Dawn: 50 / 35 / 20 minus cards left when the pyramid
           was cleared in pass 1 / 2 / 3 or later; minus cards left otherwise
``msc``    Microsoft Solitaire Collection: 5 per removal (a pair or a king), and a
           bonus per cleared row 25, 50, 75, 100, 150, 250, 500 from the row first
           exposed to the most covered one (for 6 rows the 25..250 part is cut)
``points`` Ancient Egypt: 500 per removal, 10,000 once the pyramid is cleared,
           15,000 once every card is removed
=========  =====================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

from companion.rules import SCORINGS

if TYPE_CHECKING:
    from companion.game.record import Game
    from companion.game.state import GameState

SYSTEMS = SCORINGS
PAR_BASE = (50, 35, 20)
MSC_ROW_BONUS = (25, 50, 75, 100, 150, 250, 500)
LOWER_IS_BETTER = frozenset({"cards"})


def removals(state: "GameState") -> int:
    """Number of removal moves so far: each king alone, every other card in a pair."""
    ctx = state._ctx
    kings = others = 0
    for card in state.removed:
        if ctx.value[card.index] == ctx.pair_sum:
            kings += 1
        else:
            others += 1
    return kings + others // 2


def msc_row_bonuses(state: "GameState") -> int:
    geo = state._ctx.geo
    order = geo.exposure_order_rows()
    bonus = MSC_ROW_BONUS[:geo.rows - 1] + MSC_ROW_BONUS[-1:]
    empty = state.empty_mask
    return sum(b for b, row in zip(bonus, order) if geo.row_masks[row] & ~empty == 0)


def score(game: Union["Game", "GameState"], system: Optional[str] = None) -> int:
    """Score of a game (or a single state) under ``system`` (default: the rules' own)."""
    state = getattr(game, "state", game)
    system = state.rules.scoring if system is None else system
    if system not in SYSTEMS:
        raise ValueError(f"unknown scoring system {system!r} (one of {', '.join(SYSTEMS)})")
    left = state.cards_left()
    if system == "cards":
        return left
    if system == "one":
        return state._ctx.deck_size - left
    if system == "par":
        p = state.cleared_pass
        if not p:
            return -left
        return PAR_BASE[min(p, len(PAR_BASE)) - 1] - left
    if system == "msc":
        return 5 * removals(state) + msc_row_bonuses(state)
    # points
    total = 500 * removals(state)
    if state.cleared_pass:
        total += 10_000
    if left == 0:
        total += 15_000
    return total


def describe(system: str) -> str:
    return {
        "cards": "cards left (lower is better)",
        "one": "one point per removed card",
        "par": "par: 50/35/20 minus cards left by the pass the pyramid was cleared in",
        "msc": "Microsoft: 5 per removal plus row bonuses",
        "points": "Ancient Egypt points: 500 per removal, 10,000 pyramid, 15,000 all cards",
    }[system]
