"""Why a deal cannot be won, in words a person can read.

``explain(rules, game)`` returns a list of sentences, most telling first:

* static blockers: "2C covers all four jacks" (the card lies on every partner
  it has left, so it can never be freed with one), "JH lies under all four
  twos" (every partner must go before it is free);
* the stock: "even with every stock card at hand the pyramid cannot be
  cleared" (the layout itself is stuck);
* the pass limit: "the pass limit (3 passes) runs out with JH, 4C still in
  the pyramid" when unlimited passes would win;
* otherwise the search's summary: how far the best line got and what stayed.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from companion.cards import RANK_NAMES, Card
from companion.rules import WIN_ALL, Rules

_PLURAL = {1: "aces", 2: "twos", 3: "threes", 4: "fours", 5: "fives", 6: "sixes", 7: "sevens",
           8: "eights", 9: "nines", 10: "tens", 11: "jacks", 12: "queens", 13: "kings"}


def _names(cards: list[Card]) -> str:
    codes = [str(c) for c in sorted(cards)]
    return codes[0] if len(codes) == 1 else ", ".join(codes[:-1]) + " and " + codes[-1]


def _partners_text(rules: Rules, card: Card, partners: list[Card]) -> str:
    ranks = {p.rank for p in partners}
    if len(ranks) == 1:
        rank = ranks.pop()
        total = sum(1 for c in rules.deck_cards() if c.rank == rank and c is not card)
        if len(partners) == total:
            return f"all {['', 'one', 'two', 'three', 'four'][total]} {_PLURAL[rank]}" if total > 1 \
                else f"the {RANK_NAMES[rank]}"
        return f"{_names(partners)}, the last {_PLURAL[rank]} left"
    return f"{_names(partners)}, its last partners"


def static_blockers(rules: Rules, pos: Any) -> list[str]:
    """Pyramid cards none of whose remaining partners can ever meet them."""
    from companion.solver.position import lies_on, never_meets
    table = list(pos.table)
    npyr = rules.pyramid_size
    gone = {c for c in rules.deck_cards()} - {c for c in table if c is not None} - {
        c for c in pos.talon if c is not None}
    on = lies_on(rules)
    out = []
    needed = range(len(table)) if rules.win == WIN_ALL else range(npyr)
    for i in needed:
        card = table[i]
        if card is None or rules.is_king(card):
            continue
        partners = [p for p in rules.deck_cards() if p is not card and rules.pairs(card, p) and p not in gone]
        if not partners:
            out.append(f"{card} has no partner left to pair with")
            continue
        slot_of = {c: j for j, c in enumerate(table) if c is not None}
        blocked = never_meets(rules, i)
        if all(p in slot_of and slot_of[p] in blocked for p in partners):
            over = [p for p in partners if slot_of[p] in on[i]]
            under = [p for p in partners if p not in over]
            if not over:
                out.append(f"{card} covers {_partners_text(rules, card, under)}")
            elif not under:
                out.append(f"{card} lies under {_partners_text(rules, card, over)}")
            else:
                out.append(f"{card} lies under {_names(over)} and covers {_names(under)}, "
                           f"all its partners left")
    return out


def explain(rules: Rules | str, game: Any, solution: Any = None, budget_seconds: float = 5.0) -> list[str]:
    """Readable reasons why ``game`` (a deal, Position or engine state) cannot be won; [] if it can."""
    from companion.solver import solve, to_position
    from companion.solver.position import fast_family
    if isinstance(rules, str):
        rules = Rules.parse(rules)
    if not fast_family(rules):
        sol = solution or solve(rules, game, budget_seconds=budget_seconds)
        if sol.solvable is not False:
            return []
        return [f"no sequence of moves wins (searched {sol.states:,} positions)"]
    pos = to_position(rules, game)
    reasons = static_blockers(rules, pos)
    if reasons:
        return reasons
    sol = solution or solve(rules, pos, budget_seconds=budget_seconds)
    if sol.solvable is not False:
        return []
    goal = "the cards cannot all be removed" if rules.win == WIN_ALL else "the pyramid cannot be cleared"
    # the layout alone: every stock card at hand (the relaxation the search starts with)
    left = list(sol.best_left)
    needed = [c for i, c in enumerate(pos.table) if c is not None and (
        i < rules.pyramid_size or rules.win == WIN_ALL)]
    if rules.win == WIN_ALL:
        needed += [c for c in pos.talon if c is not None]
    if len(left) >= len(needed):
        return [f"even with every stock card at hand, {goal}: the cards of the "
                f"layout block each other"]
    shown = _names(left[:6]) + (f" and {len(left) - 6} more" if len(left) > 6 else "")
    if rules.passes is not None:
        unlimited = dataclasses.replace(rules, passes=None, name=rules.name + ",passes=unlimited")
        free = solve(unlimited, dataclasses.replace(pos, rules=unlimited, recycles=0),
                     budget_seconds=budget_seconds)
        if free.solvable:
            return [f"the pass limit ({rules.passes} pass{'es' if rules.passes > 1 else ''}) runs out "
                    f"with {shown} still in play"]
    return [f"no line wins: the best of {sol.states:,} positions searched still leaves {shown}"]


def loss_reason(rules: Rules | str, game: Any) -> Optional[str]:
    """The most telling reason as one sentence, or None when the game can be won."""
    reasons = explain(rules, game)
    return reasons[0] if reasons else None
