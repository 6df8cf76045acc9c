"""The solver's own position model agrees with the rules engine, move for move."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from companion.errors import IllegalMoveError
from companion.game import Deal, GameState
from companion.moves import Move
from companion.rules import PRESETS, Rules
from companion.solver import solve
from companion.solver.engine_bridge import position_from_engine
from companion.solver.position import fast_family

FAST = sorted(name for name, r in PRESETS.items() if fast_family(r))
SLOW = sorted(name for name, r in PRESETS.items() if not fast_family(r))


def candidates(pos) -> list[Move]:
    rules = pos.rules
    cards = [c for c in pos.table if c is not None] + list(pos.waste[-3:]) + [c for c in pos.stock[:3] if c]
    out = [Move.draw(), Move.recycle()] + [Move.remove(c) for c in cards if rules.is_king(c)]
    out += [Move.remove(a, b) for a, b in combinations(cards, 2) if rules.pairs(a, b)]
    return out


def legal_in_position(pos, move) -> bool:
    try:
        pos.apply(move)
        return True
    except IllegalMoveError:
        return False


@pytest.mark.parametrize("preset", FAST)
def test_position_model_matches_engine(preset):
    rules = Rules.preset(preset)
    rng = random.Random(preset)
    for game in range(3):
        state = GameState.initial(rules, Deal.random(rules, rng))
        for _ in range(120):
            if state.is_won():  # the engine ends the game there
                break
            pos = position_from_engine(rules, state)
            engine_legal = set(state.legal_moves())
            for m in candidates(pos):
                assert (m in engine_legal) == legal_in_position(pos, m), (preset, str(m), str(pos))
            if not engine_legal:
                break
            m = rng.choice(sorted(engine_legal, key=str))
            state = state.apply(m)
            assert position_from_engine(rules, state) == pos.apply(m)
            assert state.is_won() == pos.apply(m).is_won()


@pytest.mark.parametrize("preset", FAST)
def test_engine_replays_solver_wins(preset):
    rules = Rules.preset(preset)
    for i in range(4):
        state = GameState.initial(rules, Deal.random(rules, random.Random(i)))
        sol = solve(rules, state, budget_seconds=20)
        assert sol.solvable is not None
        if sol.solvable:
            for m in sol.moves:
                state = state.apply(m)
            assert state.is_won()


@pytest.mark.parametrize("preset", SLOW)
def test_generic_search_wins_replay(preset):
    rules = Rules.preset(preset)
    for i in range(3):
        state = GameState.initial(rules, Deal.random(rules, random.Random(i)))
        sol = solve(rules, state, budget_seconds=3)
        if sol.solvable:
            s = state
            for m in sol.moves:
                s = s.apply(m)
            assert s.is_won()
