"""Scores under the five systems, recomputed independently from the move history."""

from __future__ import annotations

import random

import pytest

from companion.game import Deal, Game, GameState, scoring
from companion.rules import PRESETS, Rules

ROW_BONUS = [25, 50, 75, 100, 150, 250, 500]  # bottom row first


def random_game(rules: Rules, seed: int, prefer_removals: bool = True) -> Game:
    rng = random.Random(seed)
    game = Game(rules, Deal.random(rules, rng))
    while game.state.result == "playing" and len(game.moves) < 400:
        legal = game.state.legal_moves()
        removals = [m for m in legal if m.is_removal]
        game.play(rng.choice(removals if removals and prefer_removals else legal))
    return game


def won_game(rules: Rules) -> Game:
    for seed in range(400):
        game = random_game(rules, seed)
        if game.state.result == "won":
            return game
    raise AssertionError("no seeded game cleared the pyramid")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", ["relaxed", "classic", "ancient-egypt", "small", "spanish"])
def test_scores_from_history(name, seed):
    rules = PRESETS[name]
    game = random_game(rules, seed)
    state = game.state
    removal_moves = sum(1 for m in game.moves if m.is_removal)
    removed_cards = sum(len(m.cards) for m in game.moves if m.is_removal)
    left = rules.deck - removed_cards
    assert scoring.score(game, "cards") == left
    assert scoring.score(game, "one") == removed_cards
    # row bonuses: a row counts once all of its slots are empty (rows listed from the bottom)
    rows = [list(range(r * (r + 1) // 2, (r + 1) * (r + 2) // 2)) for r in range(rules.rows)][::-1]
    bonus = ROW_BONUS[:rules.rows - 1] + ROW_BONUS[-1:]
    cleared_rows = sum(b for b, row in zip(bonus, rows) if all(state.pyramid[s] is None for s in row))
    assert scoring.score(game, "msc") == 5 * removal_moves + cleared_rows
    cleared_at = next((s.pass_number for s in game.history if s.pyramid_cleared()), None)
    expected_par = -left if cleared_at is None else [50, 35, 20][min(cleared_at, 3) - 1] - left
    assert scoring.score(game, "par") == expected_par
    points = 500 * removal_moves + (10_000 if cleared_at else 0) + (15_000 if left == 0 else 0)
    assert scoring.score(game, "points") == points
    assert scoring.score(game) == scoring.score(game, rules.scoring) == scoring.score(state)


def test_par_counts_the_pass_of_clearing():
    game = won_game(Rules.preset("par").__class__(**{**Rules.preset("par").to_dict(),
                                                      "win": "pyramid", "name": "par-relaxed"}))
    state = game.state
    assert state.pyramid_cleared() and state.cleared_pass >= 1
    base = [50, 35, 20][min(state.cleared_pass, 3) - 1]
    assert scoring.score(game, "par") == base - state.cards_left()


def test_msc_full_clear_bonus():
    game = won_game(Rules.preset("msc"))
    removal_moves = sum(1 for m in game.moves if m.is_removal)
    assert scoring.score(game, "msc") == 5 * removal_moves + sum(ROW_BONUS)


def test_unknown_system_is_rejected():
    state = GameState.initial(Rules.preset("relaxed"), Deal.random(Rules.preset("relaxed"), random.Random(1)))
    with pytest.raises(ValueError, match="'golf'"):
        scoring.score(state, "golf")
    assert scoring.score(state) == 52
