"""The person overrides play-along: accept the table, keep the recorded game, or type the moves."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

from companion.cards import Card
from companion.layout import SlotReading
from companion.moves import Move
from companion.rules import Rules

pytest.importorskip("companion.playalong")

from test_app_follow import deal_text, table  # noqa: E402  (the scripted camera of the follow test)


@pytest.fixture
def following(window_factory, qtbot):
    """A window following a game from scripted stable layouts; ``show(layout)`` feeds one."""
    from companion.app.capture import Frame
    from companion.game import Deal, GameState

    window = window_factory(rules=Rules.preset("classic"))
    rules = window.rules
    window.start_from_text(deal_text(rules))
    qtbot.wait(1)  # the window's start-up (manual: no source opened) is over
    window.manual = False  # from here a (scripted) camera follows the table
    assert window.capture is None
    truth = GameState.initial(rules, Deal.parse(deal_text(rules), rules))
    image = np.zeros((60, 80, 3), np.uint8)
    count = [0]

    def show(layout) -> None:
        count[0] += 1
        window.on_frame(Frame(image, count[0], layout))

    show(table(truth, 0))
    return window, truth, show


def press(window, qtbot, keys: str) -> None:
    from PySide6.QtGui import QKeySequence

    from conftest import activate

    activate(window)
    combo = QKeySequence(keys)[0]
    qtbot.keyClick(window, combo.key(), combo.keyboardModifiers())


def test_accept_the_table_records_what_explains_it(following, qtbot):
    window, truth, show = following
    for _ in range(10):  # ten draws at once: more than play-along explains by itself
        truth = truth.apply(Move.draw())
    show(table(truth, 100))
    assert window.session.moves() == []
    assert window.mismatch_panel.isVisible()
    assert window.mismatch_panel.text.text().startswith("Not legal")
    press(window, qtbot, "Ctrl+T")
    assert window.session.moves() == [Move.draw()] * 10
    assert window.session.state.waste == truth.waste
    assert not window.mismatch_panel.isVisible()
    assert window.game_panel.history.count() == 10


def test_accept_an_impossible_table_keeps_the_game_and_says_why(following, qtbot):
    window, truth, show = following
    gone = (Card.parse("2D"), Card.parse("3D"))  # 2 + 3 is not 13
    show(table(truth, 5, remove=gone))
    assert window.mismatch_panel.isVisible()
    window.accept_table()
    assert window.session.moves() == []
    assert window.mismatch_panel.isVisible()
    assert "no legal sequence" in window.advice_panel.warning_label.text()


def test_keep_the_recorded_game_corrects_a_misread_slot(following, qtbot):
    window, truth, show = following
    from companion.app.places import Place

    seen = table(truth, 10)
    wrong = next(c for c in window.rules.deck_cards() if c not in truth.pyramid)
    misread = seen.with_slot(2, 1, SlotReading(wrong, 0.9, ((wrong, 0.9),)))
    show(misread)
    assert window.mismatch_panel.isVisible()
    assert str(wrong) in window.mismatch_panel.text.text()
    press(window, qtbot, "Ctrl+K")
    assert not window.mismatch_panel.isVisible()
    assert window.session.corrections == {Place.slot(2, 1): truth.pyramid[4]}
    show(misread)  # the same misread again: corrected, no new complaint
    assert not window.mismatch_panel.isVisible() and window.session.moves() == []
    truth = truth.apply(Move.parse("KC"))  # and play goes on
    show(table(truth, 20).with_slot(2, 1, SlotReading(wrong, 0.9, ((wrong, 0.9),))))
    assert [str(m) for m in window.session.moves()] == ["KC"]


def test_enter_the_moves_played(following, qtbot):
    window, truth, show = following
    answers = iter(["KC draw", "QQ+", "7S+6H"])
    window._ask_text = lambda title, label: next(answers)
    press(window, qtbot, "Ctrl+E")
    assert [str(m) for m in window.session.moves()] == ["KC", "draw"]
    window.ask_moves()  # not a move: nothing recorded, the reason shown
    assert len(window.session.moves()) == 2 and "QQ+" in window.advice_panel.warning_label.text()
    window.ask_moves()  # 7S+6H: 6H is still covered? then it is refused with the engine's reason
    moves = [str(m) for m in window.session.moves()]
    assert moves in (["KC", "draw"], ["KC", "draw", "7S+6H"])
    # the camera then sees the table as recorded: nothing more happens
    for m in window.session.moves():
        truth = truth.apply(m)
    show(table(truth, 50))
    assert [str(m) for m in window.session.moves()] == moves and not window.mismatch_panel.isVisible()


def test_fix_a_card_of_the_confirmed_deal_replays_the_game(window_factory, qtbot):
    from companion.app.capture import Frame
    from companion.app.places import Place
    from companion.game import Deal, GameState

    window = window_factory(rules=Rules.preset("classic"))
    rules = window.rules
    true_text = deal_text(rules)
    cards = true_text.split()
    slot = 24  # r7s4 holds 2D; the person confirmed a misread there (a card of the stock)
    wrong = cards[30]
    confirmed = cards[:]
    confirmed[slot], confirmed[30] = wrong, cards[slot]
    window.start_from_text(" ".join(confirmed[:28]) + " " + " ".join(["??"] * 24))
    qtbot.wait(1)
    window.manual = False
    truth = GameState.initial(rules, Deal.parse(true_text, rules))
    image = np.zeros((60, 80, 3), np.uint8)
    window.on_frame(Frame(image, 0, table(truth, 0)))  # the camera reads 2D where the game has another
    assert window.mismatch_panel.isVisible() and "2D" in window.mismatch_panel.text.text()
    truth = truth.apply(Move.parse("KC"))
    window.on_frame(Frame(image, 1, table(truth, 1)))
    assert [str(m) for m in window.session.moves()] == ["KC"]
    assert window.mismatch_panel.isVisible() and "2D" in window.mismatch_panel.text.text()
    # Ctrl+F, click the slot, pick the card really there
    press(window, qtbot, "Ctrl+F")
    window.on_place_clicked(Place.parse("r7s4"))
    assert window.picker is not None and window.picker.place == Place.parse("r7s4")
    window.picker.choose(Card.parse("2D"))
    assert window.session.state.pyramid[slot] is Card.parse("2D")
    assert [str(m) for m in window.session.moves()] == ["KC"] and not window.mismatch_panel.isVisible()
    truth = truth.apply(Move.parse("7S+6H"))
    window.on_frame(Frame(image, 2, table(truth, 2)))
    assert [str(m) for m in window.session.moves()] == ["KC", "7S+6H"]
    # a fix that would make a recorded move illegal is refused, the game unchanged
    assert not window.fix_card(Place.parse("r7s1"), Card.parse("QC"))
    assert "illegal" in window.advice_panel.warning_label.text()
    assert window.session.state.pyramid[21] is None and len(window.session.moves()) == 2


def test_a_slot_read_both_ways_in_turn_shows_its_check_each_time(following, qtbot):
    # Play-along says a check once; the panel still shows it whenever the camera reads the slot
    # otherwise again, and hides it while the camera reads it right.
    window, truth, show = following
    seen = table(truth, 10)
    wrong = next(c for c in window.rules.deck_cards() if c not in truth.pyramid)
    misread = seen.with_slot(2, 1, SlotReading(wrong, 0.6, ((wrong, 0.6),)))
    for frame in range(10, 16):
        show(misread if frame % 2 == 0 else table(truth, frame))
        assert window.mismatch_panel.isVisible() == (frame % 2 == 0)
        if frame % 2 == 0:
            assert str(wrong) in window.mismatch_panel.text.text()
    assert [e.kind for e in window.session._follower.events].count("check") == 1
