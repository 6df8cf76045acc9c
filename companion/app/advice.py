"""Advice for the position on the table (Qt-free): the app's one adapter to ``companion.solver``.

``compute_advice(state)`` returns an ``Advice``: the next move in words, the
exact verdict ("wins in N moves") when the whole deal is known, otherwise the
hidden-stock advisor's win probability, and warnings (lost position, a win
thrown away by the last move). Without a solver it falls back to a plain rule
of thumb and says so. It runs in a worker thread (``workers.AdviceWorker``).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Optional

from companion.cards import Card
from companion.moves import DRAW, RECYCLE, REMOVE, TO_CELL, Move

DEFAULT_BUDGET_S = 0.4


@dataclass(frozen=True)
class Advice:
    move: Optional[Move]
    words: str
    #: Estimated chance to win with the best move (0..1); None when unknown.
    win_probability: Optional[float] = None
    interval: Optional[tuple[float, float]] = None
    #: Exact: moves to a win from here (None when not exact or not winnable).
    wins_in: Optional[int] = None
    #: Exact verdict: True/False when the whole deal is known and the solver decided; else None.
    winnable: Optional[bool] = None
    warning: str = ""
    plan: tuple[Move, ...] = ()
    source: str = ""
    seconds: float = 0.0

    @property
    def cards(self) -> tuple[Card, ...]:
        return self.move.cards if self.move is not None else ()

    def odds_text(self) -> str:
        if self.winnable is True and self.wins_in is not None:
            return f"Wins in {self.wins_in} moves"
        if self.winnable is False:
            return "No win is possible from here"
        if self.win_probability is not None:
            text = f"Estimated win chance {self.win_probability:.0%}"
            if self.interval is not None and round(self.interval[0], 2) != round(self.interval[1], 2):
                text += f" ({self.interval[0]:.0%}–{self.interval[1]:.0%})"
            return text
        return "Win chance not estimated"


def describe_move(move: Move, rules: Any = None) -> str:
    """A move in words a person at the table understands."""
    if move.kind == DRAW:
        n = getattr(rules, "draw", 1)
        return "Turn the next card from the stock" if n == 1 else f"Turn the next {n} cards from the stock"
    if move.kind == RECYCLE:
        return "Turn the waste over to make a new stock"
    if move.kind == TO_CELL:
        return f"Put the {move.cards[0].name} into a free cell"
    if move.kind == REMOVE and len(move.cards) == 1:
        return f"Remove the {move.cards[0].name}"
    a, b = move.cards
    return f"Remove the {a.name} with the {b.name}"


def _solver():
    try:
        import companion.solver as solver
    except ImportError:
        return None
    return solver if callable(getattr(solver, "solve", None)) else None


def _stock_known(state: Any) -> bool:
    return all(c is not None for c in state.stock) and not state.unseen()


def compute_advice(state: Any, *, budget_seconds: float = DEFAULT_BUDGET_S, seed: int = 0,
                   previous: Optional[Advice] = None, last_move: Optional[Move] = None) -> Advice:
    started = time.perf_counter()
    advice = _advise(state, budget_seconds, seed)
    warning = advice.warning
    if previous is not None and previous.winnable is True and advice.winnable is False and last_move is not None:
        warning = f"The last move ({last_move}) threw a win away: undo it (Ctrl+Z)."
    elif previous is not None and last_move is not None and previous.win_probability and \
            advice.win_probability == 0.0 and previous.win_probability > 0:
        warning = f"The last move ({last_move}) left no way to win: undo it (Ctrl+Z)."
    from dataclasses import replace

    return replace(advice, warning=warning, seconds=time.perf_counter() - started)


def _advise(state: Any, budget_seconds: float, seed: int) -> Advice:
    result = state.result
    if result == "won":
        return Advice(None, "Won! Every card needed is gone.", 1.0, winnable=True, wins_in=0, source="engine")
    if result == "lost":
        return Advice(None, "No move is left: the game is lost.", 0.0, winnable=False,
                      warning="This game is lost (no legal move).", source="engine")
    solver = _solver()
    if solver is not None and _stock_known(state):
        exact = _exact(solver, state, budget_seconds)
        if exact is not None:
            return exact
    if solver is not None:
        sampled = _sampled(solver, state, budget_seconds, seed)
        if sampled is not None:
            return sampled
    return _rule_of_thumb(state)


def _exact(solver: Any, state: Any, budget_seconds: float) -> Optional[Advice]:
    solution = solver.solve(state.rules, state, budget_seconds=max(budget_seconds, 1.0))
    if solution.solvable is True and solution.moves:
        moves = tuple(Move.parse(m) if isinstance(m, str) else m for m in solution.moves)
        return Advice(moves[0], describe_move(moves[0], state.rules), 1.0, wins_in=len(moves), winnable=True,
                      plan=moves, source="exact solver")
    if solution.solvable is False:
        reason = _loss_reason(solver, state)
        best = _rule_of_thumb(state)
        return Advice(best.move, best.words, 0.0, winnable=False,
                      warning="This position cannot be won" + (f": {reason}" if reason else "."),
                      source="exact solver")
    return None


def _loss_reason(solver: Any, state: Any) -> str:
    try:
        from companion.solver import reasons
    except ImportError:
        return ""
    for name in ("loss_reason", "explain"):
        fn = getattr(reasons, name, None)
        if callable(fn):
            try:
                out = fn(state.rules, state)
            except TypeError:
                out = fn(state)
            if isinstance(out, (list, tuple)):
                out = "; ".join(str(x) for x in out)
            return str(out or "")
    return ""


def _sampled(solver: Any, state: Any, budget_seconds: float, seed: int) -> Optional[Advice]:
    try:
        from companion.solver import advisor
    except ImportError:
        return None
    fn = next((getattr(advisor, n) for n in ("rank_moves", "advise", "rank") if callable(getattr(advisor, n, None))),
              None)
    if fn is None:
        return None
    ranked = fn(state, rng=random.Random(seed), budget_seconds=budget_seconds)
    items = list(getattr(ranked, "moves", ranked) or [])
    if not items:
        return None
    best = items[0]
    move = getattr(best, "move", None)
    move = Move.parse(move) if isinstance(move, str) else move
    p = getattr(best, "win_probability", getattr(best, "probability", None))
    ci = getattr(best, "interval", getattr(best, "ci", None))
    warnings = []
    note = getattr(ranked, "note", "")
    if p is not None and p == 0:
        warnings.append("No sampled stock order wins from here" + (f" ({note})" if note else "") + ".")
    throwers = [str(getattr(item, "move", "")) for item in items[1:] if getattr(item, "throws_win", False)]
    if throwers and p:
        warnings.append(f"Avoid {', '.join(throwers[:3])}: it throws the win away.")
    samples = getattr(ranked, "samples", None)
    source = "hidden-stock advisor" + (f", {samples} stock orders" if samples else "")
    return Advice(move, describe_move(move, state.rules) if move else "No move", p,
                  tuple(ci) if ci is not None else None, warning=" ".join(warnings), source=source)


def rule_of_thumb_advice(state: Any, **_: Any) -> Advice:
    """The fallback alone (no solver): same signature as ``compute_advice``; tests use it."""
    return _advise_plain(state)


def _advise_plain(state: Any) -> Advice:
    if state.result != "playing":
        return Advice(
            None, "Won!" if state.result == "won" else "No move is left: the game is lost.",
            1.0 if state.result == "won" else 0.0, source="engine")
    return _rule_of_thumb(state)


def _rule_of_thumb(state: Any) -> Advice:
    """Kings first, then pairs using pyramid cards, then any pair, then the stock."""
    moves = state.legal_moves()
    pyramid = {c for c in state.pyramid if c is not None}

    def rank(move: Move) -> tuple[int, int]:
        if move.kind == REMOVE:
            in_pyr = sum(c in pyramid for c in move.cards)
            return (0 if len(move.cards) == 1 else 1, -in_pyr)
        if move.kind == TO_CELL:
            return (3, 0)
        return (2, 0 if move.kind == DRAW else 1)

    if not moves:
        return Advice(None, "No legal move.", 0.0, source="rule of thumb")
    best = min(moves, key=rank)
    return Advice(best, describe_move(best, state.rules), source="rule of thumb (no solver yet)")
