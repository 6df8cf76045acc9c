"""The side panels: set-up (corrections, deal entry), advice, and the game (moves, history, score).

Each panel shows what it is given and reports what the person asks for with signals.
"""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

from typing import Optional, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QCheckBox, QGroupBox, QHBoxLayout, QLabel, QListWidget, QPlainTextEdit,
                               QPushButton, QVBoxLayout, QWidget)

from companion.app.advice import Advice, describe_move


def _big(label: QLabel, px: int, bold: bool = True) -> QLabel:
    font = QFont()
    font.setPixelSize(px)
    font.setBold(bold)
    label.setFont(font)
    label.setWordWrap(True)
    return label


class SetupPanel(QGroupBox):
    confirmRequested = Signal()
    undoRequested = Signal()
    dealEntered = Signal(str)
    randomDealRequested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__("1 · Set up the deal", parent)
        layout = QVBoxLayout(self)
        self.hint = QLabel("Click a card on the board or on the image to correct it.")
        self.hint.setWordWrap(True)
        layout.addWidget(self.hint)
        self.problems = QLabel("")
        self.problems.setWordWrap(True)
        self.problems.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.problems)
        row = QHBoxLayout()
        self.undo_button = QPushButton("Undo correction")
        self.undo_button.setToolTip("Ctrl+Z")
        self.undo_button.clicked.connect(self.undoRequested)
        row.addWidget(self.undo_button)
        self.confirm_button = QPushButton("Confirm and start  ⏎")
        self.confirm_button.setToolTip("Ctrl+Enter: the cards are right, start following the game")
        self.confirm_button.setStyleSheet("QPushButton { font-weight: bold; padding: 6px; }")
        self.confirm_button.clicked.connect(self.confirmRequested)
        row.addWidget(self.confirm_button, 1)
        layout.addLayout(row)
        layout.addWidget(QLabel("Or enter the deal (pyramid row by row, then the stock or ??):"))
        self.deal_edit = QPlainTextEdit()
        self.deal_edit.setPlaceholderText("e.g. QH 5C 8D … (28 pyramid cards; paste is fine)")
        self.deal_edit.setMaximumHeight(70)
        layout.addWidget(self.deal_edit)
        row2 = QHBoxLayout()
        self.start_text_button = QPushButton("Start this deal")
        self.start_text_button.clicked.connect(lambda: self.dealEntered.emit(self.deal_edit.toPlainText()))
        row2.addWidget(self.start_text_button)
        self.random_button = QPushButton("Random deal")
        self.random_button.clicked.connect(self.randomDealRequested)
        row2.addWidget(self.random_button)
        layout.addLayout(row2)

    def set_problems(self, problems: Sequence[str], blocking: int, can_undo: bool) -> None:
        if not problems:
            self.problems.setText("<span style='color:#2e7d32'><b>All cards read. Confirm to start.</b></span>")
        else:
            shown = "<br>".join(problems[:6]) + ("<br>…" if len(problems) > 6 else "")
            color = "#b71c1c" if blocking else "#e65100"
            self.problems.setText(f"<span style='color:{color}'>{shown}</span>")
        self.confirm_button.setEnabled(blocking == 0)
        self.undo_button.setEnabled(can_undo)

    def show_error(self, text: str) -> None:
        self.problems.setText(f"<span style='color:#b71c1c'><b>{text}</b></span>")


class AdvicePanel(QGroupBox):
    hintsToggled = Signal(bool)
    planRequested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__("2 · Advice", parent)
        layout = QVBoxLayout(self)
        self.move_label = _big(QLabel("—"), 22)
        self.move_label.setObjectName("adviceMove")
        layout.addWidget(self.move_label)
        self.odds_label = _big(QLabel(""), 16, bold=False)
        layout.addWidget(self.odds_label)
        self.warning_label = _big(QLabel(""), 16)
        self.warning_label.setStyleSheet("color: #b71c1c;")
        layout.addWidget(self.warning_label)
        row = QHBoxLayout()
        self.hints_box = QCheckBox("Hints (H)")
        self.hints_box.setChecked(True)
        self.hints_box.toggled.connect(self.hintsToggled)
        row.addWidget(self.hints_box)
        self.plan_button = QPushButton("Show plan (P)")
        self.plan_button.clicked.connect(self.planRequested)
        row.addWidget(self.plan_button)
        layout.addLayout(row)
        self.plan_list = QListWidget()
        self.plan_list.setWordWrap(True)
        self.plan_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.plan_list.setVisible(False)
        self.plan_list.setMaximumHeight(160)
        layout.addWidget(self.plan_list)
        self.source_label = QLabel("")
        self.source_label.setStyleSheet("color: #757575;")
        layout.addWidget(self.source_label)

    def show_waiting(self, text: str = "Thinking…") -> None:
        self.move_label.setText(text)
        self.odds_label.setText("")
        self.warning_label.setText("")

    def show_off(self) -> None:
        self.move_label.setText("Hints are off")
        self.odds_label.setText("Press H to turn them on.")
        self.warning_label.setText("")
        self.plan_list.setVisible(False)

    def show_advice(self, advice: Advice, rules=None) -> None:
        self.move_label.setText(advice.words)
        self.odds_label.setText(advice.odds_text())
        self.warning_label.setText(advice.warning)
        self.source_label.setText(f"{advice.source} · {advice.seconds * 1000:.0f} ms" if advice.source else "")
        self.plan_list.clear()
        for k, move in enumerate(advice.plan, 1):
            self.plan_list.addItem(f"{k}. {move} — {describe_move(move, rules).lower()}")
        self.plan_button.setEnabled(bool(advice.plan))
        if not advice.plan:
            self.plan_list.setVisible(False)

    def toggle_plan(self) -> None:
        self.plan_list.setVisible(not self.plan_list.isVisible() and self.plan_list.count() > 0)


class GamePanel(QGroupBox):
    drawRequested = Signal()
    recycleRequested = Signal()
    undoRequested = Signal()
    redoRequested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__("3 · Game", parent)
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.draw_button = QPushButton("Draw (D)")
        self.draw_button.clicked.connect(self.drawRequested)
        self.recycle_button = QPushButton("Recycle (R)")
        self.recycle_button.clicked.connect(self.recycleRequested)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Ctrl+Z")
        self.undo_button.clicked.connect(self.undoRequested)
        self.redo_button = QPushButton("Redo")
        self.redo_button.setToolTip("Ctrl+Shift+Z")
        self.redo_button.clicked.connect(self.redoRequested)
        for b in (self.draw_button, self.recycle_button, self.undo_button, self.redo_button):
            row.addWidget(b)
        layout.addLayout(row)
        self.score_label = _big(QLabel(""), 16)
        layout.addWidget(self.score_label)
        self.info_label = QLabel("")
        self.info_label.setWordWrap(True)
        layout.addWidget(self.info_label)
        layout.addWidget(QLabel("Moves:"))
        self.history = QListWidget()
        self.history.setObjectName("history")
        layout.addWidget(self.history, 1)

    def update_game(self, session) -> None:
        state = session.state
        legal = state.legal_moves()
        from companion.moves import Move

        self.draw_button.setEnabled(Move.draw() in legal)
        self.recycle_button.setEnabled(Move.recycle() in legal)
        self.undo_button.setEnabled(session.game.can_undo)
        self.redo_button.setEnabled(session.game.can_redo)
        self.score_label.setText(f"Score: {session.score_text()}")
        passes = state.rules.passes
        pass_text = f"pass {state.pass_number}" + (f" of {passes}" if passes else "")
        result = {"won": "WON", "lost": "lost (no move left)"}.get(state.result, "playing")
        self.info_label.setText(f"{state.rules.name} · stock {len(state.stock)} · {pass_text} · {result}")
        self.history.clear()
        for k, move in enumerate(session.moves(), 1):
            self.history.addItem(f"{k}. {move}")
        self.history.scrollToBottom()

    def clear(self) -> None:
        self.history.clear()
        self.score_label.setText("")
        self.info_label.setText("No game yet: confirm a deal.")
        for b in (self.draw_button, self.recycle_button, self.undo_button, self.redo_button):
            b.setEnabled(False)


class MismatchPanel(QGroupBox):
    """Shown while the table disagrees with the recorded game: say why, and let the person decide."""

    acceptRequested = Signal()
    keepRequested = Signal()
    enterMovesRequested = Signal()
    fixRequested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__("The table and the game disagree", parent)
        self.setObjectName("mismatch")
        self.setStyleSheet("QGroupBox#mismatch { background: #fff3e0; border: 2px solid #ef6c00; "
                           "border-radius: 4px; margin-top: 1.4em; font-weight: bold; } "
                           "QGroupBox#mismatch::title { subcontrol-origin: margin; left: 8px; color: #e65100; }")
        layout = QVBoxLayout(self)
        self.text = _big(QLabel(""), 15)
        self.text.setStyleSheet("color: #b71c1c;")
        layout.addWidget(self.text)
        ask = QLabel("Fix the table (put the cards back), or tell the app who is right:")
        ask.setWordWrap(True)
        layout.addWidget(ask)
        self.accept_button = QPushButton("The table is right: record it (Ctrl+T)")
        self.accept_button.setToolTip("Record the moves that best explain the table as the camera sees it")
        self.accept_button.clicked.connect(self.acceptRequested)
        self.keep_button = QPushButton("The recorded game is right (Ctrl+K)")
        self.keep_button.setToolTip("Keep the game; misread cards are corrected to the recorded ones")
        self.keep_button.clicked.connect(self.keepRequested)
        self.moves_button = QPushButton("Enter the moves played… (Ctrl+E)")
        self.moves_button.setToolTip("Type the moves, e.g. 'QH+AS draw KD'")
        self.moves_button.clicked.connect(self.enterMovesRequested)
        self.fix_button = QPushButton("Fix a card of the deal… (Ctrl+F)")
        self.fix_button.setToolTip("Then click the card: the game is replayed on the fixed deal")
        for b in (self.accept_button, self.keep_button, self.moves_button, self.fix_button):
            b.setStyleSheet("QPushButton { padding: 5px; text-align: left; }")
            layout.addWidget(b)
        self.fix_button.clicked.connect(self.fixRequested)
        self.setVisible(False)

    def show_mismatch(self, text: Optional[str]) -> None:
        """Show what is wrong (the first two reasons; all of them in the tooltip), or hide."""
        text = text[:1].upper() + text[1:] if text else ""
        parts = text.split("; ")
        short = "; ".join(parts[:2]) + (f"; … and {len(parts) - 2} more" if len(parts) > 2 else "")
        self.text.setText(short)
        self.text.setToolTip(text if short != text else "")
        self.setVisible(bool(text))
