"""Hidden-stock advisor: rank the legal moves by estimated win probability.

At a real table the stock is face down. ``rank_moves(state, rng, budget_seconds)``
samples orders of the unseen cards (one seeded ``random.Random``), fills them
in, and asks the exact solver, per sample, which legal moves still win. Each
move gets its share of winning samples with a 95% Wilson interval, and a flag
``throws_win`` when it loses in every sample where the position was winnable
(with a fully known stock this is exact: the move turns a won game into a lost
one). Every sample answers for every move (common random numbers), so moves are
compared on the same orders. A sample whose search hits its state cap counts as
a loss; when the floor of ``min_samples`` would run past ``limit_seconds`` at the
full cap, later samples get a smaller cap that fits (the floor is kept, the time
is bounded; see ``_sample_cap``). A position with one legal move needs one search
per sample, not two.

This is "perfect information" sampling: each sample's solver sees the whole
order, so the estimates are an upper bound on what a player who learns the
stock card by card can reach; ``tools/advisor_stats`` (``stats --advisor``)
measures the real rate by playing whole games without seeing the stock.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Any, Optional

from companion.moves import Move
from companion.rules import Rules

#: Cap on the states of one sampled solve; a sample that hits it counts as a loss (and is reported).
SAMPLE_STATES = 10_000
#: The same cap when nothing is hidden (one exact answer per move).
EXACT_STATES = 2_000_000
#: Time the sample floor may take: when ``min_samples`` at the full cap would run past it,
#: each further sample gets a smaller cap (never under ``MIN_SAMPLE_STATES``) that fits.
LIMIT_SECONDS = 0.22
MIN_SAMPLE_STATES = 2_000


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


@dataclass(frozen=True)
class MoveEstimate:
    move: Move
    wins: int
    samples: int
    throws_win: bool = False  # loses in every sample where the position could be won
    proven: bool = False      # the figure holds for every order of the hidden cards

    @property
    def win_probability(self) -> float:
        return self.wins / self.samples if self.samples else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        if self.proven:
            return (self.win_probability, self.win_probability)
        return wilson(self.wins, self.samples)

    def __str__(self) -> str:
        lo, hi = self.interval
        flag = "  ! throws the win away" if self.throws_win else ""
        return f"{str(self.move):9} {100 * self.win_probability:5.1f}%  [{100 * lo:4.1f}-{100 * hi:5.1f}]{flag}"


@dataclass(frozen=True)
class Ranking:
    moves: tuple[MoveEstimate, ...]   # best first
    samples: int                      # stock orders sampled (1 when nothing is hidden)
    winnable: int                     # samples in which some move wins
    unknown: int                      # move verdicts that hit the state cap (counted as losses)
    hidden: int                       # unknown cards in the position
    seconds: float
    note: str = ""

    @property
    def best(self) -> Optional[MoveEstimate]:
        return self.moves[0] if self.moves else None

    @property
    def win_probability(self) -> float:
        return self.winnable / self.samples if self.samples else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.winnable, self.samples)


def _order_key(est: MoveEstimate) -> tuple:
    kind = {"remove": 0, "draw": 1, "recycle": 2}.get(est.move.kind, 3)
    return (-est.wins, est.throws_win, kind, str(est.move))


def rank_moves(state: Any, rng: Optional[random.Random] = None, budget_seconds: float = 0.2,
               min_samples: int = 200, max_samples: int = 2000, rules: Optional[Rules] = None,
               sample_states: int = SAMPLE_STATES, limit_seconds: Optional[float] = LIMIT_SECONDS) -> Ranking:
    """Rank ``state.legal_moves()`` (an engine GameState) by sampled win probability.

    Samples until ``budget_seconds`` is spent and at least ``min_samples`` are taken
    (the floor wins over the budget only when there is something hidden), at most
    ``max_samples``. ``limit_seconds`` (None: no limit) bounds the floor's time by
    lowering the per-sample state cap from the measured search rate (see ``_sample_cap``).
    """
    from companion.solver.engine_bridge import position_from_engine, unknown_count
    from companion.solver.position import fast_family
    start = time.perf_counter()
    rng = rng or random.Random(0)
    rules = rules or state.rules
    moves = list(state.legal_moves())
    hidden = unknown_count(state)
    if not moves:
        return Ranking((), 0, 0, 0, hidden, time.perf_counter() - start)
    if not fast_family(rules):
        return _rank_generic(state, moves, rng, budget_seconds, min_samples, hidden, start)
    unseen = sorted(state.unseen(), key=lambda c: c.index)
    stuck = False
    wins = {m: 0 for m in moves}
    samples = winnable = unknown = states = 0
    limit = max_samples if hidden else 1
    floor = min(min_samples, limit) if hidden else 1
    while samples < limit:
        elapsed = time.perf_counter() - start
        if samples >= floor and elapsed > budget_seconds:
            break
        fill = unseen[:]
        rng.shuffle(fill)
        pos = position_from_engine(rules, state, fill)
        cap = EXACT_STATES if not hidden else _sample_cap(
            sample_states, states, elapsed, limit_seconds, floor - samples)
        verdicts, used = _verdicts(pos, moves, cap)
        states += used
        samples += 1
        unknown += verdicts.count(None)
        if not any(verdicts):
            if samples == 1 and hidden and None not in verdicts and _layout_stuck(pos, sample_states):
                stuck = True
                break  # the layout alone cannot be cleared: no order of the stock helps
            continue
        winnable += 1
        for m, ok in zip(moves, verdicts):
            if ok:
                wins[m] += 1
    proven = stuck or not hidden
    ests = [MoveEstimate(m, wins[m], samples, winnable > 0 and wins[m] == 0, proven) for m in moves]
    ests.sort(key=_order_key)
    note = "even with every hidden card at hand the goal cannot be reached" if stuck else (
        "" if hidden else "nothing is hidden: exact")
    return Ranking(tuple(ests), samples, winnable, unknown, hidden, time.perf_counter() - start, note)


def _sample_cap(sample_states: int, states: int, elapsed: float, limit_seconds: Optional[float],
                left: int) -> int:
    """State cap of the next sample: the full cap unless the ``left`` samples still owed to
    the floor, at the rate searched so far, would run past ``limit_seconds``."""
    if limit_seconds is None or left <= 0 or states < 50_000 or elapsed <= 0:
        return sample_states  # nothing owed, or too little measured to judge the rate
    rate = states / elapsed
    fit = int(rate * max(0.0, limit_seconds - elapsed) / left)
    return max(min(sample_states, MIN_SAMPLE_STATES), min(sample_states, fit))


def _verdicts(pos: Any, moves: list[Move], max_states: int) -> tuple[list[Optional[bool]], int]:
    """Whether each move wins from a fully known position (None: state cap reached), and the
    states searched. ``moves`` are all the legal moves of ``pos``: a single one shares the
    position's own verdict, so it needs no second search.

    The C core searches all moves over shared tables (a position lost after one move
    is not searched again after another); the Python fallback solves them one by one."""
    from companion.solver import _c_core, solve_first
    from companion.solver.position import K_DRAW, K_RECYCLE, K_REMOVE, compile_position
    if _c_core is not None and hasattr(_c_core, "verdicts"):
        spec = compile_position(pos)
        result, raw, used, _, _ = _c_core.solve(*spec.args(), 10.0, int(max_states), 0)
        root = None if result not in (0, 1) else bool(result)
        if root is not True or len(moves) == 1:  # the root's verdict is then every move's
            return [root] * len(moves), used
        slot = {c: i for i, c in enumerate(spec.slots) if c is not None}
        raws = []
        for m in moves:
            if m.kind == "draw":
                raws.append((K_DRAW, -1, -1))
            elif m.kind == "recycle":
                raws.append((K_RECYCLE, -1, -1))
            else:
                a = slot[m.cards[0]]
                raws.append((K_REMOVE, a, slot[m.cards[1]] if len(m.cards) > 1 else -1))
        res, more = _c_core.verdicts(*spec.args(), 10.0, max_states * len(moves), raws)
        return [None if r < 0 else bool(r) for r in res], used + more
    out: list[Optional[bool]] = []
    for m in moves:
        after = pos.apply(m)
        out.append(True if after.is_won() else solve_first(after, max_states)[0])
    return out, 0


def _layout_stuck(pos: Any, max_states: int) -> bool:
    """True when even with every stock card at hand the goal cannot be reached. That
    relaxation depends on the set of hidden cards, not their order: one sample decides."""
    from companion.solver import relaxation
    return relaxation(pos, max_states) is False


def _rank_generic(state: Any, moves: list[Move], rng: random.Random, budget_seconds: float,
                  min_samples: int, hidden: int, start: float) -> Ranking:
    """Rules outside the slot search (3 waste piles, cells): the engine search, within the budget
    (far fewer samples; a solve that runs out of its share counts as unknown, not as a win)."""
    from companion.game.knowledge import fill_unknown
    from companion.solver.generic import solve_generic
    wins = {m: 0 for m in moves}
    samples = winnable = unknown = 0
    per_solve = max(0.01, budget_seconds / (4 * len(moves)))
    while samples == 0 or (hidden and samples < min_samples
                           and time.perf_counter() - start < budget_seconds):
        filled = fill_unknown(state, rng) if hidden else state
        samples += 1
        any_win = False
        for m in moves:
            sol = solve_generic(filled.rules, filled.apply(m), budget_seconds=per_solve, max_states=20_000)
            if sol.solvable:
                wins[m] += 1
                any_win = True
            elif sol.solvable is None:
                unknown += 1
        winnable += any_win
    ests = sorted((MoveEstimate(m, wins[m], samples, winnable > 0 and wins[m] == 0) for m in moves),
                  key=_order_key)
    note = f"{unknown} sampled solves ran out of time" if unknown else ""
    return Ranking(tuple(ests), samples, winnable, unknown, hidden, time.perf_counter() - start, note)


#: Names the app's adapter looks for.
advise = rank_moves
