"""Whole games played by the hidden-stock advisor, and the per-deal jobs of ``stats``.

``play_hidden`` deals a known deck but shows the advisor only what a player at
the table sees: the pyramid (face-down rows stay hidden until uncovered), the
stock top when it lies face up, and every card once it has been drawn. The
advisor picks each move; the game is won or lost on the real deal.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Sequence

from companion.cards import Card
from companion.rules import Rules


@dataclass(frozen=True)
class PlayResult:
    won: bool
    moves: int
    decisions: int       # positions with more than one legal move
    seconds: float


def _sync(hidden: Any, true: Any) -> Any:
    """Name every card of ``hidden`` that a player can see in ``true``."""
    rules = hidden.rules
    if rules.stock_playable and hidden.stock and hidden.stock[0] is None:
        hidden = hidden.reveal_stock(true.stock[0], 0)
    for p, pile in enumerate(hidden.waste):
        for d in range(len(pile)):
            if pile[-1 - d] is None:
                hidden = hidden.reveal_waste(true.waste[p][-1 - d], p, d)
    exp, empty = hidden.exposed_mask, hidden.empty_mask
    for slot, card in enumerate(hidden.pyramid):
        if card is None and not (empty >> slot) & 1 and (exp >> slot) & 1:
            hidden = hidden.reveal(true.pyramid[slot], slot)
    return hidden


def play_hidden(rules: Rules, cards: Sequence[Card], rng: random.Random, budget_seconds: float = 0.05,
                min_samples: int = 50, max_moves: int = 600) -> PlayResult:
    from companion.game import Deal, GameState
    from companion.game.deal import face_down_slots
    from companion.solver.advisor import rank_moves
    start = time.perf_counter()
    deal = Deal(rules, list(cards))
    true = GameState.initial(rules, deal)
    n_layout = rules.pyramid_size + rules.reserve
    down = face_down_slots(rules)
    seen = [None if (i in down or (i >= n_layout and not rules.stock_known)) else c
            for i, c in enumerate(cards)]
    hidden = _sync(GameState.initial(rules, Deal(rules, seen)), true)
    moves = decisions = 0
    while moves < max_moves and not true.is_won():
        legal = hidden.legal_moves()
        if not legal:
            break
        if len(legal) == 1:
            move = legal[0]
        else:
            decisions += 1
            ranking = rank_moves(hidden, rng, budget_seconds=budget_seconds, min_samples=min_samples,
                                 max_samples=max(min_samples, 1))
            if ranking.moves and ranking.moves[0].wins == 0 and ranking.moves[0].proven:
                break  # proven lost whatever the hidden cards are
            move = ranking.moves[0].move
        true = true.apply(move)
        hidden = _sync(hidden.apply(move), true)
        moves += 1
        if true.result == "lost":
            break
    return PlayResult(true.is_won(), moves, decisions, time.perf_counter() - start)


def solve_job(job: tuple[str, int, int, float]) -> tuple[int, Any, float, int]:
    """One ``stats`` deal: (index, solvable, seconds, states)."""
    from companion.solver import solve
    from companion.solver.deals import random_deal
    rules_text, seed, i, budget = job
    rules = Rules.parse(rules_text)
    deal = random_deal(rules, random.Random(f"{seed}-{i}"))
    sol = solve(rules, deal, budget_seconds=budget)
    return i, sol.solvable, sol.seconds, sol.states


def advisor_job(job: tuple[str, int, int, float, int]) -> tuple[int, bool, float, int]:
    """One advisor game of ``stats --advisor``: (index, won, seconds, decisions)."""
    from companion.solver.deals import random_deal
    rules_text, seed, i, budget, samples = job
    rules = Rules.parse(rules_text)
    deal = random_deal(rules, random.Random(f"{seed}-{i}"))
    res = play_hidden(rules, deal, random.Random(f"advisor-{seed}-{i}"), budget, samples)
    return i, res.won, res.seconds, res.decisions
