"""The person overrides play-along (a mixin of ``MainWindow``, like ``GameFlow``).

When the table and the recorded game disagree the person decides: the table is right
(record what explains it), the recorded game is right (correct the camera), type the
moves played, or fix a card of the confirmed deal (the game is replayed on it). The
decisions live in ``PlaySession``; this wires them to the panel, shortcuts and dialogs.
"""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

from typing import Any, Optional

from companion.cards import Card
from companion.errors import CompanionError
from companion.app.picker import CardPicker
from companion.app.places import Place, flat_index
from companion.app.session import PlaySession


class OverrideFlow:
    """Overrides and deal fixes for ``MainWindow``."""

    # Provided by MainWindow / GameFlow:
    session: Optional[PlaySession]
    rules: Any
    picker: Optional[CardPicker]
    _ask_text: Any
    _tell_deal: Any

    # --- play: fix a card of the confirmed deal ---------------------------------------
    _fixing = False

    def start_fixing(self) -> None:
        """Ctrl+F: the next click names a card of the deal that was confirmed wrong."""
        if self.session is None:
            return
        self._fixing = True
        self.status.showMessage("Click the card to fix (on the board or the image); Esc cancels", 10000)

    def open_fix_picker(self, place: Place) -> CardPicker:
        assert self.session is not None
        now = self.session.game.deal.cards[flat_index(place)]
        picker = CardPicker(place, self.rules.deck_cards(), current=now, allow_clear=False, parent=self,
                            title=f"<b>Fix {place.describe()}</b>: the game has "
                                  f"{'an unknown card' if now is None else now}. Which card is really there?")
        picker.cardChosen.connect(lambda card: self.fix_card(place, card))
        picker.finished.connect(lambda _: self._picker_closed(picker))
        self.picker = picker
        picker.open()
        return picker

    def fix_card(self, place: Place, card: Card) -> bool:
        if self.session is None:
            return False
        try:
            self.session.fix_card(place, card)
        except CompanionError as exc:
            self._show_illegal(str(exc))
            return False
        self.status.showMessage(f"{place}: the deal now has {card}; every move replayed", 6000)
        self._tell_deal()
        self.mismatch_panel.show_mismatch(None)
        self._last_move = None
        self._refresh_play()
        return True

    # --- the person overrides play-along ------------------------------------------------
    def accept_table(self) -> None:
        """Ctrl+T: the table is right; record the moves that best explain it."""
        if self.session is None or not self.session.following:
            self.status.showMessage("Nothing to accept: the camera is not following a game", 5000)
            return
        before = len(self.session.moves())
        try:
            self.session.accept_table()
        except CompanionError as exc:
            self._show_illegal(f"{exc}. Enter the moves played (Ctrl+E), or put the cards back.")
            self.mismatch_panel.show_mismatch(str(exc))
            return
        added = self.session.moves()[before:]
        self.status.showMessage("Recorded from the table: " + (" ".join(map(str, added)) or "no move"), 8000)
        self._after_override()

    def keep_recorded(self) -> None:
        """Ctrl+K: the recorded game is right; misread slots are corrected to it."""
        if self.session is None:
            return
        fixed = self.session.insist_recorded()
        self.status.showMessage("Kept the recorded game" + (
            f"; corrected the camera at {', '.join(map(str, fixed))}" if fixed else
            "; put the cards on the table back as recorded"), 8000)
        self._after_override()

    def ask_moves(self) -> None:
        """Ctrl+E: type the moves played (while the camera missed them, or to fix the record)."""
        if self.session is None:
            return
        ask = self._ask_text or self._ask_text_dialog
        text = ask("Enter the moves played", "Moves, in order (e.g. QH+AS draw KD):")
        if text:
            self.enter_moves(text)

    def _ask_text_dialog(self, title: str, label: str) -> Optional[str]:
        from PySide6.QtWidgets import QInputDialog

        text, ok = QInputDialog.getText(self, title, label)
        return text if ok else None

    def enter_moves(self, text: str) -> bool:
        if self.session is None:
            return False
        try:
            moves = self.session.enter_moves(text)
        except CompanionError as exc:
            self._show_illegal(str(exc))
            return False
        self._last_move = moves[-1]
        self.status.showMessage("Recorded " + " ".join(map(str, moves)), 6000)
        self._after_override()
        return True

    def _after_override(self) -> None:
        assert self.session is not None
        self.mismatch_panel.show_mismatch(self.session.mismatch)
        self.advice_panel.warning_label.setText("")
        self._refresh_play()
