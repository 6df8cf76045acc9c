"""Exact solver, loss reasons and hidden-stock advisor.

``solve(rules, deal_or_state, budget_seconds=10, optimal=False)`` returns a
``Solution``: ``solvable`` True/False, or None when the budget ran out first;
``moves`` a winning move list (shortest possible when ``optimal`` is True);
``states`` searched and ``seconds`` spent.

Single-waste rules without cells (every preset but ``ancient-egypt`` and
``apophis``) run on a compiled slot search: the C extension ``_fastsolve``
when it is built, else its pure-Python twin ``core``. The other rules run a
generic search over the engine's ``GameState`` (``generic``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from companion.cards import Card
from companion.moves import Move
from companion.rules import Rules
from companion.solver.position import Position, compile_position, fast_family

try:  # the optional C core (setup.py builds it; `pip install -e .`)
    from companion.solver import _fastsolve as _c_core
except ImportError:  # pragma: no cover - depends on the build
    _c_core = None

#: Default cap on searched states: the C tables stay under about 0.5 GB (the hash set of
#: the depth-first search holds 9 bytes a slot at most half full; A* about 40 bytes a node).
#: The hardest deals measured need about 2.5 million.
MAX_STATES = 12_000_000


@dataclass(frozen=True)
class Solution:
    solvable: Optional[bool]
    moves: Optional[tuple[Move, ...]]
    states: int
    seconds: float
    optimal: bool = False          # True when ``moves`` is proven shortest
    note: str = ""                 # why the verdict is unknown, or which search ran
    #: Cards still in place in the furthest position the search reached (loss reasons).
    best_left: tuple[Card, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "solvable": self.solvable,
            "moves": None if self.moves is None else [str(m) for m in self.moves],
            "states": self.states,
            "seconds": round(self.seconds, 6),
        }

    @property
    def steps(self) -> Optional[int]:
        return None if self.moves is None else len(self.moves)


def backend_name() -> str:
    return "c" if _c_core is not None else "python"


def to_position(rules: Rules, game: Any) -> Position:
    """A solver position from deal text, a card list, a Position or an engine Deal/GameState."""
    if isinstance(game, Position):
        return game
    if isinstance(game, str) or (isinstance(game, Sequence) and all(isinstance(c, Card) for c in game)):
        return Position.from_deal(rules, game)  # type: ignore[arg-type]
    from companion.solver.engine_bridge import position_from_engine
    return position_from_engine(rules, game)


def solve(rules: Rules | str, game: Any, budget_seconds: float = 10.0, optimal: bool = False,
          max_states: int = MAX_STATES, backend: Optional[str] = None) -> Solution:
    """Decide a fully known deal or position. ``backend``: None (best), "c", "python", "generic"."""
    if isinstance(rules, str):
        rules = Rules.parse(rules)
    start = time.perf_counter()
    if backend == "generic" or not fast_family(rules):
        from companion.solver.generic import solve_generic
        return solve_generic(rules, game, budget_seconds, optimal, max_states)
    pos = to_position(rules, game)
    spec = compile_position(pos)
    core = _c_core if backend in (None, "c") else None
    if backend == "c" and core is None:
        raise RuntimeError("the C solver core is not built (pip install -e .)")
    if core is None:
        from companion.solver import core as core  # type: ignore[no-redef]
    # any win first (depth-first, fast); the shortest (A*) only for a deal that has one
    result, raw, states, aborted, best = core.solve(*spec.args(), float(budget_seconds), int(max_states), 0)
    note = ""
    if optimal and result == 1:
        left = max(0.0, budget_seconds - (time.perf_counter() - start))
        r2, raw2, states2, _, _ = core.solve(*spec.args(), left, int(max_states), 1)
        states += states2
        if r2 == 1:
            raw = raw2
        else:  # keep the depth-first win, and say it is not proven shortest
            optimal = False
            note = "shortest not proven within the budget: a win that may be longer"
    seconds = time.perf_counter() - start
    if result == 1:
        return Solution(True, tuple(spec.move(*m) for m in raw), states, seconds, optimal, note)
    if result == 0:
        left = tuple(c for i, c in enumerate(spec.slots)
                     if c is not None and (spec.goal >> i) & 1 and not (best >> i) & 1)
        return Solution(False, None, states, seconds, optimal, best_left=left)
    why = {1: f"time budget of {budget_seconds:g} s ran out", 2: f"state limit of {max_states} reached",
           3: "out of memory"}.get(aborted, "search stopped")
    return Solution(None, None, states, seconds, optimal, why)


def solve_first(pos: Position, max_states: int = MAX_STATES, budget_seconds: float = 10.0
                ) -> tuple[Optional[bool], Optional[Move]]:
    """Verdict and first winning move of a known single-waste position, without building the
    whole move list (the advisor calls this thousands of times)."""
    spec = compile_position(pos)
    core = _c_core
    if core is None:
        from companion.solver import core as core  # type: ignore[no-redef]
    result, raw, _, _, _ = core.solve(*spec.args(), float(budget_seconds), int(max_states), 0)
    if result == 1:
        return True, spec.move(*raw[0]) if raw else None
    return (False if result == 0 else None), None


def relaxation(pos: Position, max_states: int = MAX_STATES) -> Optional[bool]:
    """Can the goal be reached with every stock card always at hand (each used once)?
    False proves the position lost whatever the stock order; None: state cap reached."""
    spec = compile_position(pos)
    core = _c_core
    if core is None:
        from companion.solver import core as core  # type: ignore[no-redef]
    r = core.relax(*spec.args(), 10.0, int(max_states))
    return None if r < 0 else bool(r)


def replay(rules: Rules, game: Any, moves: Sequence[Move]) -> Position:
    """Play ``moves`` on the solver's own position model (the engine has its own replay)."""
    pos = to_position(rules, game)
    for move in moves:
        pos = pos.apply(move)
    return pos


__all__ = ["Solution", "solve", "replay", "Position", "backend_name", "to_position"]
