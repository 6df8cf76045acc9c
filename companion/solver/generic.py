"""Generic exact search over the engine's ``GameState``: any rules (3 waste piles, free cells...).

Slower than the slot search (every state is an engine object) but rule-for-rule
the engine itself. Depth-first with a transposition set for "any win";
breadth-first for the shortest win (every step costs one).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Optional

from companion.moves import DRAW, RECYCLE, REMOVE, Move
from companion.rules import Rules


def _order(move: Move) -> int:
    if move.kind == REMOVE:
        return 0 if len(move.cards) == 1 else 1
    if move.kind == DRAW:
        return 2
    if move.kind == RECYCLE:
        return 3
    return 4  # cells last: they only help when nothing else does


def solve_generic(rules: Rules, game: Any, budget_seconds: float = 10.0, optimal: bool = False,
                  max_states: int = 5_000_000):
    from companion.solver import Solution
    from companion.solver.engine_bridge import engine_state, unknown_count
    start = time.perf_counter()
    if not hasattr(game, "legal_moves"):
        if not isinstance(game, str) and not hasattr(game, "stock"):
            from companion.cards import format_cards
            game = format_cards(game)
    state = engine_state(rules, game)
    if unknown_count(state):
        from companion.errors import InvalidDealError
        raise InvalidDealError("the deal holds unknown cards (??): the solver needs the whole deal")
    deadline = start + budget_seconds
    if _layout_stuck(state):
        return Solution(False, None, 1, time.perf_counter() - start, optimal,
                        "even with every stock card at hand the goal cannot be reached")
    search = _bfs if optimal else _dfs
    result, moves, states = search(state, deadline, max_states)
    seconds = time.perf_counter() - start
    if result is None:
        return Solution(None, None, states, seconds, optimal, "budget ran out (generic search)")
    return Solution(result, tuple(moves) if moves is not None else None, states, seconds, optimal,
                    "generic search")


def _layout_stuck(state: Any) -> bool:
    """The slot core's relaxation (every stock and waste card at hand, each once) also bounds
    rules with three waste piles; not with free cells, which free cards without pairing them."""
    import dataclasses

    from companion.solver import relaxation
    from companion.solver.position import Position
    rules = state.rules
    if rules.free_cells or (rules.reserve and not rules.stock_waste_pairs):
        return False
    one = dataclasses.replace(rules, waste_piles=1, name=rules.name + " (relaxation)")
    empty = state.empty_mask
    table = tuple(None if (empty >> i) & 1 else c for i, c in enumerate(state.pyramid)) + tuple(state.reserve)
    talon = tuple(c for pile in state.waste for c in pile) + tuple(state.stock)
    return relaxation(Position(one, table, (), talon, 0), max_states=200_000) is False


class _DeadCheck:
    """A needed pyramid card whose remaining partners all lie under it (none with free cells)."""

    def __init__(self, state: Any) -> None:
        from companion.solver.position import never_meets
        rules = state.rules
        self.active = rules.free_cells == 0
        pyramid = state.deal.pyramid
        self.items = []
        for i, card in enumerate(pyramid):
            if card is None or rules.is_king(card):
                continue
            blocked = {pyramid[j] for j in never_meets(rules, i) if j < len(pyramid)}
            free = [p for p in rules.deck_cards() if rules.pairs(card, p) and p is not card and p not in blocked]
            self.items.append((i, sum(1 << p.index for p in free)))

    def __call__(self, state: Any) -> bool:
        if not self.active:
            return False
        empty, gone = state.empty_mask, state.removed_mask
        for slot, free in self.items:
            if not (empty >> slot) & 1 and not free & ~gone:
                return True
        return False


def _dfs(state: Any, deadline: float, max_states: int) -> tuple[Optional[bool], Optional[list[Move]], int]:
    seen = {state.key()}
    dead = _DeadCheck(state)
    if dead(state):
        return False, None, 1
    stack: list[tuple[Any, list[Move], int]] = []
    if state.is_won():
        return True, [], 1
    stack.append((state, sorted(state.legal_moves(), key=_order), 0))
    states = 1
    while stack:
        st, moves, i = stack[-1]
        if i >= len(moves):
            stack.pop()
            continue
        stack[-1] = (st, moves, i + 1)
        nxt = st.apply(moves[i])
        if nxt.is_won():
            return True, [f[1][f[2] - 1] for f in stack], states
        k = nxt.key()
        if k in seen:
            continue
        seen.add(k)
        states += 1
        if dead(nxt):
            continue
        if states >= max_states or (states & 1023 == 0 and time.perf_counter() > deadline):
            return None, None, states
        stack.append((nxt, sorted(nxt.legal_moves(), key=_order), 0))
    return False, None, states


def _bfs(state: Any, deadline: float, max_states: int) -> tuple[Optional[bool], Optional[list[Move]], int]:
    parent: dict[Any, tuple[Any, Optional[Move]]] = {state.key(): (None, None)}
    queue = deque([state])
    states = 0
    while queue:
        st = queue.popleft()
        states += 1
        if st.is_won():
            path: list[Move] = []
            k = st.key()
            while parent[k][1] is not None:
                k, m = parent[k]
                path.append(m)  # type: ignore[arg-type]
            return True, path[::-1], states
        if states >= max_states or (states & 1023 == 0 and time.perf_counter() > deadline):
            return None, None, states
        for m in st.legal_moves():
            nxt = st.apply(m)
            k = nxt.key()
            if k not in parent:
                parent[k] = (st.key(), m)
                queue.append(nxt)
    return False, None, states
