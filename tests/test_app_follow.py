"""Play-along in the window from a scripted stream of stable layouts: moves, an illegal removal, a recycle."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

from companion.cards import Card, parse_cards
from companion.layout import SlotReading, TableLayout
from companion.moves import Move
from companion.rules import Rules
from companion.app.correction import apply_overrides
from companion.app.places import Place

pytest.importorskip("companion.playalong")

C = Card.parse
BOTTOM = "KC 6H 7S 2D 3D 4D 5D"


def deal_text(rules: Rules) -> str:
    bottom = parse_cards(BOTTOM)
    rest = [c for c in rules.deck_cards() if c not in bottom]
    return " ".join(map(str, rest[:21] + bottom + rest[21:]))


def table(state, frame: int, remove: tuple[Card, ...] = ()) -> TableLayout:
    """What the camera would report for ``state`` (optionally with some cards taken away)."""
    flat = [None if c in remove else c for c in state.pyramid]
    rows, k = [], 0
    for r in range(state.rules.rows):
        rows.append(tuple(SlotReading.empty() if c is None else SlotReading.known(c) for c in flat[k:k + r + 1]))
        k += r + 1
    waste = state.waste[0]
    return TableLayout(tuple(rows), waste=((waste[-1],),) if waste else ((),),
                       stock_present=bool(state.stock), frame=frame)


@pytest.fixture
def window(window_factory):
    return window_factory(rules=Rules.preset("classic"))


def test_follow_moves_illegal_removal_and_recycle(window, qtbot):
    from companion.app.capture import Frame
    from companion.game import Deal, GameState

    rules = window.rules
    window.start_from_text(deal_text(rules))
    qtbot.wait(1)  # the window's start-up (manual: no source opened) is over
    window.manual = False  # a (scripted) camera is following the table
    assert window.capture is None
    truth = GameState.initial(rules, Deal.parse(deal_text(rules), rules))
    image = np.zeros((60, 80, 3), np.uint8)
    frame_no = 0

    def show(layout: TableLayout) -> None:
        nonlocal frame_no
        frame_no += 1
        window.on_frame(Frame(image, frame_no, layout))

    show(table(truth, 0))
    assert window.session.moves() == []
    truth = truth.apply(Move.parse("KC"))
    show(table(truth, 1))
    assert [str(m) for m in window.session.moves()] == ["KC"]
    # 2D and 3D taken away together: not 13. The game keeps its last legal state and says why.
    show(table(truth, 2, remove=(C("2D"), C("3D"))))
    assert [str(m) for m in window.session.moves()] == ["KC"]
    assert "Not legal" in window.mismatch_panel.text.text() and window.mismatch_panel.isVisible()
    show(table(truth, 3))                                 # put back: nothing recorded
    truth = truth.apply(Move.parse("7S+6H"))
    show(table(truth, 4))
    assert [str(m) for m in window.session.moves()] == ["KC", "7S+6H"]
    # Through the whole stock and back: every turned card is learned, the recycle is seen.
    while Move.draw() in truth.legal_moves():
        truth = truth.apply(Move.draw())
        show(table(truth, frame_no))
    truth = truth.apply(Move.recycle())
    show(table(truth, frame_no))
    moves = window.session.moves()
    assert moves[-1] == Move.recycle() and moves.count(Move.draw()) == rules.stock_size
    assert window.session.state.stock == truth.stock      # the stock is known now
    assert window.game_panel.history.count() == len(moves)


def test_corrections_hold_until_the_card_leaves():
    rules = Rules.preset("classic")
    cards = list(rules.deck_cards())
    layout = TableLayout.from_cards([[cards[r * (r + 1) // 2 + i] for i in range(r + 1)] for r in range(7)])
    place = Place.slot(3, 1)
    misread = layout.with_slot(3, 1, SlotReading(C("9S"), 0.4))
    fixed, kept = apply_overrides(misread, {place: cards[7]})
    assert fixed.pyramid[3][1].card is cards[7] and fixed.pyramid[3][1].corrected and kept == {place: cards[7]}
    gone = layout.with_slot(3, 1, SlotReading.empty())
    fixed, kept = apply_overrides(gone, kept)
    assert fixed.pyramid[3][1].card is None and kept == {}


def test_advice_words_plan_and_thrown_win_warning():
    import random

    from companion.app.advice import Advice, compute_advice, describe_move
    from companion.game import Deal, GameState

    rules = Rules.preset("relaxed")
    assert describe_move(Move.parse("QH+AS"), rules) == "Remove the queen of hearts with the ace of spades"
    assert describe_move(Move.draw(), Rules.preset("king-tut")) == "Turn the next 3 cards from the stock"
    solver = pytest.importorskip("companion.solver")
    if not callable(getattr(solver, "solve", None)):
        pytest.skip("solver API not there yet")
    outcomes = {}
    for seed in range(12):
        state = GameState.initial(rules, Deal.random(rules, random.Random(seed)))
        advice = compute_advice(state, previous=Advice(None, "", winnable=True), last_move=Move.draw())
        outcomes[advice.winnable] = (state, advice)
    assert True in outcomes, "no winnable deal among 12 relaxed deals"
    state, advice = outcomes[True]
    assert advice.move == advice.plan[0] and advice.wins_in == len(advice.plan)
    for move in advice.plan:  # the plan replays to a win
        state = state.apply(move)
    assert state.is_won()
    if False in outcomes:
        _, lost = outcomes[False]
        assert "threw a win away" in lost.warning
