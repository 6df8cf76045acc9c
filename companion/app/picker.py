"""The compact 52-card picker: top alternatives first, a 4x13 grid, or type the code.

Signals: ``cardChosen(Card)``, ``cleared()``, ``swapRequested(Place)`` (swap this slot with the
place that already holds the chosen card), ``reverted()`` (back to what the camera reads).
Decisions (the deck rule) stay in ``CorrectionSession``; the picker only asks and shows.
"""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

from typing import Callable, Optional, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (QDialog, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout,
                               QWidget)

from companion.cards import Card
from companion.errors import InvalidCardError
from companion.app.cardpaint import card_label
from companion.app.places import Place


def _card_button(card: Card, text: str, size: int) -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(f"pick_{card.code}")
    font = QFont()
    font.setPixelSize(size)
    font.setBold(True)
    button.setFont(font)
    color = "#c62828" if card.suit in "DH" else "#212121"
    button.setStyleSheet(f"QPushButton {{ color: {color}; background: white; padding: 4px; }}"
                         "QPushButton:disabled { color: #bdbdbd; background: #eeeeee; }")
    button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    return button


class CardPicker(QDialog):
    cardChosen = Signal(object)     # Card
    cleared = Signal()
    reverted = Signal()
    swapRequested = Signal(object)  # Place holding the chosen card

    def __init__(self, place: Place, deck: Sequence[Card], *, current: Optional[Card] = None,
                 alternatives: Sequence[tuple[Card, float]] = (),
                 where: Callable[[Card], Optional[Place]] = lambda card: None,
                 title: str = "", allow_clear: bool = True, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.place = place
        self._where = where
        self._pending_swap: Optional[Place] = None
        self.setWindowTitle(f"Card at {place.describe()}")
        self.setModal(True)
        layout = QVBoxLayout(self)
        now = "nothing read" if current is None else f"now {card_label(current)}"
        heading = QLabel(title or f"<b>{place.describe().capitalize()}</b> — {now}. Pick the card you see:")
        heading.setWordWrap(True)
        layout.addWidget(heading)

        if alternatives:
            alt_row = QHBoxLayout()
            alt_row.addWidget(QLabel("Best guesses:"))
            for k, (card, score) in enumerate(alternatives[:3], 1):
                b = _card_button(card, f"{card_label(card)}  {score:.0%}" if score >= 0.005 else
                                 f"{card_label(card)}  <1%", 22)
                b.setObjectName(f"alt_{card.code}")
                b.setToolTip(f"Alt+{k}")
                b.clicked.connect(lambda _=False, c=card: self.choose(c))
                QShortcut(QKeySequence(f"Alt+{k}"), self, activated=lambda c=card: self.choose(c))
                alt_row.addWidget(b)
            alt_row.addStretch(1)
            layout.addLayout(alt_row)

        grid = QGridLayout()
        grid.setSpacing(3)
        self.buttons: dict[Card, QPushButton] = {}
        suits = sorted({c.suit for c in deck}, key="CDHS".index)
        for row, suit in enumerate(suits):
            for col, card in enumerate(c for c in deck if c.suit == suit):
                b = _card_button(card, card_label(card), 17)
                b.setMinimumWidth(44)
                other = where(card)
                if other is not None and other != place:
                    b.setToolTip(f"{card} is already at {other}: choosing it offers a swap")
                    b.setStyleSheet(b.styleSheet() + "QPushButton { background: #ffe0b2; }")
                if card is current:
                    b.setToolTip("what it reads now")
                    b.setStyleSheet(b.styleSheet() + "QPushButton { border: 3px solid #2962ff; }")
                b.clicked.connect(lambda _=False, c=card: self.choose(c))
                grid.addWidget(b, row, col)
                self.buttons[card] = b
        layout.addLayout(grid)
        if any(where(c) not in (None, place) for c in deck):
            legend = QLabel("<span style='background:#ffe0b2'>&nbsp;orange&nbsp;</span>: already on the table "
                            "(each card once; choosing one offers a swap) · <span style='color:#2962ff'>"
                            "<b>blue</b></span>: what it reads now")
            legend.setStyleSheet("color: #616161;")
            layout.addWidget(legend)

        typed = QHBoxLayout()
        self.code_edit = QLineEdit()
        self.code_edit.setPlaceholderText("or type: QH, 10d, q♥ … then Enter")
        self.code_edit.returnPressed.connect(self._typed)
        typed.addWidget(self.code_edit, 1)
        self.clear_button = QPushButton("Clear slot")
        self.clear_button.clicked.connect(self._clear)
        typed.addWidget(self.clear_button)
        self.revert_button = QPushButton("Use camera")
        self.revert_button.setToolTip("Drop the correction: the camera's reading counts again")
        self.revert_button.clicked.connect(self._revert)
        typed.addWidget(self.revert_button)
        layout.addLayout(typed)
        self.clear_button.setVisible(allow_clear)
        self.revert_button.setVisible(allow_clear)

        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b71c1c; font-weight: bold;")
        layout.addWidget(self.message)
        bottom = QHBoxLayout()
        self.swap_button = QPushButton("Swap")
        self.swap_button.setVisible(False)
        self.swap_button.clicked.connect(self._swap)
        bottom.addWidget(self.swap_button)
        bottom.addStretch(1)
        cancel = QPushButton("Cancel")
        cancel.clicked.connect(self.reject)
        bottom.addWidget(cancel)
        layout.addLayout(bottom)
        for button in self.findChildren(QPushButton):
            # Enter in the code field must pick the typed card, not press a "default" button.
            button.setAutoDefault(False)
            button.setDefault(False)
        QShortcut(QKeySequence(Qt.Key.Key_Delete), self, activated=self._clear)
        self.code_edit.setFocus()

    def choose(self, card: Card) -> None:
        """Pick a card; one already placed elsewhere is explained and offered as a swap."""
        other = self._where(card)
        if other is not None and other != self.place:
            self._pending_swap = other
            self.message.setText(f"{card} is already at {other} ({other.describe()}). Each card is in the deck "
                                 f"once: swap the two slots, or correct {other} first.")
            self.swap_button.setText(f"Swap with {other}")
            self.swap_button.setVisible(True)
            return
        self.cardChosen.emit(card)
        self.accept()

    def _typed(self) -> None:
        try:
            card = Card.parse(self.code_edit.text())
        except InvalidCardError as exc:
            self.message.setText(str(exc))
            return
        if card not in self.buttons:
            self.message.setText(f"{card} is not in this deck")
            return
        self.choose(card)

    def _clear(self) -> None:
        self.cleared.emit()
        self.accept()

    def _revert(self) -> None:
        self.reverted.emit()
        self.accept()

    def _swap(self) -> None:
        if self._pending_swap is not None:
            self.swapRequested.emit(self._pending_swap)
            self.accept()
