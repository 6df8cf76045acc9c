"""Manual play in the window: clicks to moves, illegal pairs, undo/redo, draw, hints, autosave, resume."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from companion.cards import Card, parse_cards
from companion.moves import Move
from companion.rules import Rules

C = Card.parse
BOTTOM = "KC 6H 7S 2D 3D 4D 5D"






def deal_text(rules: Rules, with_stock: bool = True) -> str:
    """A deal whose bottom row holds a king and a pair (6H+7S); the stock starts with QS."""
    bottom = parse_cards(BOTTOM)
    first = [C("QS")]
    rest = [c for c in rules.deck_cards() if c not in bottom + first]
    cards = rest[:21] + bottom + (first + rest[21:] if with_stock else [])
    return " ".join(map(str, cards))


def click(qtbot, window, card: Card) -> None:
    from PySide6.QtCore import Qt

    place = window.board.picture.card_places()[card]
    qtbot.mouseClick(window.board, Qt.MouseButton.LeftButton, pos=window.board.place_rect(place).center().toPoint())


def test_manual_play_undo_redo_draw_and_autosave(window_factory, qtbot, tmp_path):
    from PySide6.QtCore import Qt

    from companion.game import Game

    window = window_factory(rules=Rules.preset("classic"))
    window.setup_panel.deal_edit.setPlainText(deal_text(window.rules))
    qtbot.mouseClick(window.setup_panel.start_text_button, Qt.MouseButton.LeftButton)
    assert window.session is not None and not window.setup_panel.isVisible()
    qtbot.waitUntil(lambda: window.advice is not None)
    assert window.advice.move in window.session.state.legal_moves()
    assert window.board.highlights  # the advised cards are highlighted

    click(qtbot, window, C("KC"))                       # a king alone
    click(qtbot, window, C("6H"))
    assert window.board.selected                         # first card of a pair is shown selected
    click(qtbot, window, C("7S"))                       # a pair
    assert [str(m) for m in window.session.moves()] == ["KC", "7S+6H"]
    state = window.session.state
    click(qtbot, window, C("2D"))
    click(qtbot, window, C("3D"))                       # 2 + 3 is not 13: refused, nothing changes
    assert window.session.state is state and len(window.session.moves()) == 2
    assert "13" in window.advice_panel.warning_label.text()

    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert [str(m) for m in window.session.moves()] == ["KC"]
    assert window.game_panel.history.count() == 1
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.game_panel.history.count() == 2
    qtbot.keyClick(window, Qt.Key.Key_D)
    assert window.session.moves()[-1] == Move.draw()
    assert window.session.state.waste[0][-1] == C("QS")
    assert "cards left" in window.game_panel.score_label.text()

    saved = Game.load(str(tmp_path / "data" / "autosave.json"))  # written after every move
    assert [str(m) for m in saved.moves] == ["KC", "7S+6H", "draw"]

    qtbot.keyClick(window, Qt.Key.Key_H)                # hints off: no advice, nothing highlighted
    assert not window.hints and window.advice is None and not window.board.highlights
    assert "off" in window.advice_panel.move_label.text()
    qtbot.keyClick(window, Qt.Key.Key_H)
    qtbot.waitUntil(lambda: window.advice is not None)


def test_draw_from_unknown_stock_asks_for_the_card(window_factory, qtbot):
    window = window_factory(rules=Rules.preset("classic"))
    window.start_from_text(deal_text(window.rules, with_stock=False))
    assert all(c is None for c in window.session.state.stock)
    window.draw()
    picker = window.picker
    assert picker is not None and C("KC") not in picker.buttons  # only unseen cards are offered
    picker.choose(C("QS"))
    qtbot.waitUntil(lambda: window.session.moves() == [Move.draw()])
    assert window.session.state.waste[0][-1] == C("QS")


def test_resume_after_crash_and_not_after_clean_exit(window_factory, qtbot, tmp_path):
    first = window_factory(rules=Rules.preset("classic"))
    first.start_from_text(deal_text(first.rules))
    first.play(Move.parse("KC"))
    first.play(Move.parse("7S+6H"))
    # No close: the lock file stays, as after a crash.
    asked = []
    second = window_factory(ask_resume=lambda path: asked.append(path) or True)
    qtbot.waitUntil(lambda: second.session is not None)
    assert asked and [str(m) for m in second.session.moves()] == ["KC", "7S+6H"]
    second.play(Move.draw())
    second.close()
    assert not second.guard.lock.exists()  # a clean exit removes the lock
    asked.clear()
    third = window_factory(ask_resume=lambda path: asked.append(path) or True)
    qtbot.wait(50)
    assert not asked and third.session is None
    third.close()
    # after a crash while a camera followed the game, resuming opens the camera again
    fourth = window_factory(rules=Rules.preset("classic"))
    fourth.start_from_text(deal_text(fourth.rules))
    fourth.play(Move.parse("KC"))  # no close: a crash
    fifth = window_factory(manual=False, source="camera:7", ask_resume=lambda path: True)
    qtbot.waitUntil(lambda: fifth.session is not None and fifth.capture is not None)
    assert [str(m) for m in fifth.session.moves()] == ["KC"] and fifth.source_text == "camera:7"
    fifth.stop_source()


def test_settings_are_remembered(window_factory, qtbot):
    first = window_factory(manual=None, rules=None, source="demo")
    first.stop_source()
    first.set_rules(Rules.preset("relaxed"))
    first.set_manual(True)
    first.advice_panel.hints_box.setChecked(False)
    first.act_zoom.trigger()  # Z: whole picture instead of the cards
    first.close()
    second = window_factory(manual=None, rules=None)
    assert second.rules.name == "relaxed" and second.manual and not second.hints
    assert second.rules_combo.currentText() == "relaxed"
    assert not second.act_zoom.isChecked() and not second.live.zoom and second.act_overlay.isChecked()
