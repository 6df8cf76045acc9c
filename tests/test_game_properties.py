"""Property tests (hypothesis) of the engine along random legal playouts, every preset."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.errors import IllegalMoveError
from companion.game import Deal, Game, GameState
from companion.moves import Move
from companion.rules import PRESETS, Rules

PRESET_NAMES = sorted(PRESETS)
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def playout(rules: Rules, seed: int, steps: int):
    """States and moves of a random legal playout (removals preferred half of the time)."""
    rng = random.Random(seed)
    state = GameState.initial(rules, Deal.random(rules, rng))
    states, moves = [state], []
    for _ in range(steps):
        legal = state.legal_moves()
        if not legal:
            break
        removals = [m for m in legal if m.is_removal]
        move = rng.choice(removals if removals and rng.random() < 0.5 else legal)
        state = state.apply(move)
        states.append(state)
        moves.append(move)
    return states, moves


def all_cards(state: GameState) -> list:
    cards = [c for c in state.pyramid if c is not None]
    cards += list(state.stock) + [c for pile in state.waste for c in pile]
    cards += [c for c in state.cells if c is not None] + [c for c in state.reserve if c is not None]
    return cards + sorted(state.removed)


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 120))
def test_cards_are_conserved(name, seed, steps):
    rules = PRESETS[name]
    states, _ = playout(rules, seed, steps)
    deck = sorted(rules.deck_cards())
    for state in states:
        cards = all_cards(state)
        assert sorted(cards) == deck                       # every card exactly once
        assert state.cards_left() == rules.deck - len(state.removed)
        assert state.unseen() == frozenset()


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 80))
def test_generator_and_validator_agree(name, seed, steps):
    """A move is in ``legal_moves`` exactly when ``apply`` accepts it (brute force over candidates)."""
    rules = PRESETS[name]
    states, _ = playout(rules, seed, steps)
    state = states[-1]
    legal = set(state.legal_moves())
    assert len(legal) == len(state.legal_moves())        # no duplicates
    on_table = [c for c in all_cards(state) if c not in state.removed]
    candidates = {Move.draw(), Move.recycle()}
    candidates |= {Move.remove(c) for c in on_table} | {Move.to_cell(c) for c in on_table}
    candidates |= {Move.remove(a, b) for i, a in enumerate(on_table) for b in on_table[i + 1:]
                   if rules.pairs(a, b)}
    for move in candidates:
        try:
            state.apply(move)
            accepted = True
        except IllegalMoveError as exc:
            accepted = False
            assert str(exc) and state.why_illegal(move) == str(exc)
        assert accepted == (move in legal), (str(move), state.why_illegal(move))
    assert legal <= candidates


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 80))
def test_keys_identify_positions(name, seed, steps):
    rules = PRESETS[name]
    states, moves = playout(rules, seed, steps)
    # replaying the moves from scratch gives equal states and keys
    state = GameState.initial(rules, states[0].deal)
    for move, expected in zip(moves, states[1:]):
        state = state.apply(str(move))
        assert state == expected and state.key() == expected.key() and hash(state) == hash(expected)
    keys = {s.key() for s in states}
    # a draw-free game never repeats a position; with draws/recycles it may (unlimited passes)
    if all(m.kind != "recycle" for m in moves):
        assert len(keys) == len(states)


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 80), back=st.integers(0, 80))
def test_undo_redo_restore_exact_states(name, seed, steps, back):
    rules = PRESETS[name]
    states, moves = playout(rules, seed, steps)
    game = Game(rules, states[0].deal)
    for move in moves:
        game.play(move)
    assert game.history == tuple(states) and game.moves == tuple(moves)
    back = min(back, len(moves))
    for _ in range(back):
        game.undo()
    assert game.state == states[len(moves) - back]
    assert game.state.key() == states[len(moves) - back].key()
    for _ in range(back):
        game.redo()
    assert game.state == states[-1] and not game.can_redo


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 80))
def test_json_round_trip_replays_to_the_same_state(name, seed, steps):
    rules = PRESETS[name]
    states, moves = playout(rules, seed, steps)
    game = Game(rules, states[0].deal)
    for move in moves:
        game.play(move)
    data = json.loads(json.dumps(game.to_json()))
    again = Game.from_json(data)
    assert again.state == game.state and again.moves == game.moves
    assert again.state.key() == game.state.key() and again.rules == rules


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 60))
def test_illegal_moves_leave_the_game_unchanged(seed, steps):
    rules = PRESETS["relaxed"]
    states, moves = playout(rules, seed, steps)
    game = Game(rules, states[0].deal)
    for move in moves:
        game.play(move)
    before = (game.state, game.moves)
    rng = random.Random(seed)
    deck = list(rules.deck_cards())
    for _ in range(20):
        a, b = rng.sample(deck, 2)
        move = Move.remove(a, b)
        if move in game.state.legal_moves():
            continue
        with pytest.raises(IllegalMoveError) as info:
            game.play(move)
        text = str(info.value)
        assert str(a) in text or str(b) in text or "game is already won" in text
        assert (game.state, game.moves) == before


# --- an independent, naive reading of the rules (no bitmasks, no engine internals) -------------

def naive_covers(rules: Rules, slot: int) -> list[int]:
    row = 0
    while (row + 1) * (row + 2) // 2 <= slot:
        row += 1
    col = slot - row * (row + 1) // 2
    if not rules.inverted:
        if row + 1 >= rules.rows:
            return []
        return [(row + 1) * (row + 2) // 2 + col, (row + 1) * (row + 2) // 2 + col + 1]
    if row == 0:
        return []
    above = (row - 1) * row // 2
    return [above + c for c in (col - 1, col) if 0 <= c <= row - 1]


def naive_moves(state: GameState) -> set[Move]:
    rules = state.rules
    if state.is_won():
        return set()
    pyramid = state.pyramid
    avail: list[tuple] = []          # (card, from_pyramid)
    for s, card in enumerate(pyramid):
        free = all(pyramid[c] is None and state.slot_empty(c) for c in naive_covers(rules, s))
        if card is not None and free:
            avail.append((card, True))
    if rules.stock_playable and state.stock and state.stock[0] is not None:
        avail.append((state.stock[0], False))
    avail += [(pile[-1], False) for pile in state.waste if pile and pile[-1] is not None]
    avail += [(c, False) for c in state.cells if c is not None]
    n = rules.reserve_piles or rules.reserve
    for p in range(n):
        pile = [c for c in state.reserve[p::n] if c is not None] if n else []
        if pile:
            avail.append((pile[-1], False))
    moves: set[Move] = set()
    for i, (a, pa) in enumerate(avail):
        if rules.is_king(a):
            moves.add(Move.remove(a))
        for b, pb in avail[i + 1:]:
            if rules.pairs(a, b) and (pa or pb or rules.stock_waste_pairs):
                moves.add(Move.remove(a, b))
    if rules.tuts_tomb:
        for s, card in enumerate(pyramid):
            if card is None or not state.visible(s):     # face-down cards cannot pair
                continue
            on_top = [c for c in naive_covers(rules, s) if not state.slot_empty(c)]
            top = pyramid[on_top[0]] if len(on_top) == 1 else None
            if top is not None and (top, True) in avail and rules.pairs(card, top):
                moves.add(Move.remove(card, top))
    if None in state.cells:
        moves |= {Move.to_cell(c) for c, _ in avail if c not in state.cells}
    if state.stock:
        moves.add(Move.draw())
    elif any(state.waste) and (state.recycles_left is None or state.recycles_left > 0):
        moves.add(Move.recycle())
    return moves


@pytest.mark.parametrize("name", PRESET_NAMES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 120))
def test_engine_agrees_with_a_naive_reading_of_the_rules(name, seed, steps):
    rules = PRESETS[name]
    states, moves = playout(rules, seed, steps)
    stock_order = list(states[0].stock)
    for state, move, after in zip(states, moves + [None], states[1:] + [None]):
        assert set(state.legal_moves()) == naive_moves(state)
        if move is None:
            break
        if move.kind == "draw":
            taken = state.stock[:rules.draw]
            assert after.stock == state.stock[len(taken):]
            if rules.waste_piles == 1:
                assert after.waste == (state.waste[0] + taken,)
            else:
                assert after.waste == tuple(pile + taken[i:i + 1] for i, pile in enumerate(state.waste))
        elif move.kind == "recycle":
            back = {c for pile in state.waste for c in pile}
            assert list(after.stock) == [c for c in stock_order if c in back]
            assert after.pass_number == state.pass_number + 1
        elif move.kind == "remove":
            assert after.removed == state.removed | set(move.cards)
            assert after.cells == state.cells or set(move.cards) & set(state.cells)


@st.composite
def any_rules(draw: st.DrawFn) -> Rules:
    """Arbitrary combinations of every rule axis, not only the presets."""
    rows = draw(st.sampled_from([6, 7]))
    deck = draw(st.sampled_from([52, 48]))
    waste_piles = draw(st.sampled_from([1, 3]))
    reserve = draw(st.sampled_from([0, 0, 3, 7, deck - rows * (rows + 1) // 2]))
    return Rules(
        name="any", rows=rows, deck=deck,
        draw=3 if waste_piles == 3 else draw(st.sampled_from([1, 3])),
        passes=draw(st.sampled_from([None, 1, 2, 3])),
        stock_playable=draw(st.booleans()), stock_waste_pairs=draw(st.booleans()),
        waste_piles=waste_piles, tuts_tomb=draw(st.booleans()),
        win=draw(st.sampled_from(["pyramid", "all"])), free_cells=draw(st.integers(0, 2)),
        reserve=reserve, reserve_piles=draw(st.sampled_from([0, 1, 2])) if reserve else 0,
        inverted=draw(st.booleans()), face_down_rows=draw(st.integers(0, rows - 1)),
        stock_known=draw(st.booleans()),
        scoring=draw(st.sampled_from(["cards", "one", "par", "msc", "points"])),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=any_rules(), seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 150))
def test_any_rule_combination(rules, seed, steps):
    states, moves = playout(rules, seed, steps)
    deck = sorted(rules.deck_cards())
    game = Game(rules, states[0].deal)
    for state, move in zip(states, moves + [None]):
        assert sorted(all_cards(state)) == deck
        assert set(state.legal_moves()) == naive_moves(state)
        if move is not None:
            game.play(move)
    assert game.state == states[-1]
    assert Game.from_json(json.loads(json.dumps(game.to_json()))).state == states[-1]
