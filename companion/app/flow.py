"""The game flow of the main window: corrections and Confirm, moves, play-along events, advice.

A mixin of ``MainWindow`` (kept apart so each module stays readable); it uses the
window's widgets, sessions and workers, and holds no state of its own. The person's
overrides of play-along are the next mixin, ``overrides.OverrideFlow``.
"""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional

from PySide6.QtCore import QTimer

from companion.cards import Card
from companion.errors import CompanionError
from companion.moves import Move
from companion.rules import Rules
from companion.app.advice import Advice
from companion.app.correction import CorrectionSession, SlotFlags
from companion.app.picker import CardPicker
from companion.app.picture import picture_from_corrections, picture_from_state
from companion.app.places import STOCK, Place
from companion.app.session import PlaySession
from companion.app.workers import AdviceWorker
from companion.vision.deck_samples import save_frame, save_samples

#: Folder (in the app's data folder) where the corners of confirmed deals are kept.
DECK_SAMPLES = "deck-samples"


def move_banner(move: Move) -> str:
    """The advised move for the live image, in card glyphs: ``Next: Q♥ + A♠``."""
    from companion.app.cardpaint import card_label

    if move.kind in ("draw", "recycle"):
        return f"Next: {move.kind}"
    text = " + ".join(card_label(c) for c in move.cards)
    return f"Next: {text}" + (" to a cell" if move.kind == "cell" else "")


class GameFlow:
    """Set-up and play for ``MainWindow``."""

    # Provided by MainWindow:
    rules: Rules
    session: Optional[PlaySession]
    corrections: CorrectionSession
    advice: Optional[Advice]
    picker: Optional[CardPicker]
    _fixing: bool  # (OverrideFlow) the next click names a card of the deal to fix
    data_dir: Path
    hints: bool
    manual: bool
    capture: Any

    # --- set-up: corrections --------------------------------------------------------
    def on_place_clicked(self, place: Place) -> None:
        if self.session is None:
            if place.is_slot:
                self.open_picker(place)
            return
        if self._fixing:
            self._fixing = False
            if place.is_slot:
                self.open_fix_picker(place)
            return
        self._play_click(place)

    def open_picker(self, place: Place) -> CardPicker:
        reading = self.corrections.reading(place)
        picker = CardPicker(place, self.rules.deck_cards(), current=reading.card,
                            alternatives=reading.alternatives,
                            where=lambda card: self.corrections.where(card, besides=place), parent=self)
        picker.cardChosen.connect(lambda card: self._correct(lambda: self.corrections.set(place, card)))
        picker.cleared.connect(lambda: self._correct(lambda: self.corrections.clear(place)))
        picker.reverted.connect(lambda: self._correct(lambda: self.corrections.revert(place)))
        picker.swapRequested.connect(lambda other: self._correct(lambda: self.corrections.swap(place, other)))
        picker.finished.connect(lambda _: self._picker_closed(picker))
        self.board.set_selected([place])
        self.picker = picker
        picker.open()  # window-modal, non-blocking: frames keep arriving
        return picker

    def _picker_closed(self, picker: CardPicker) -> None:
        if self.picker is picker:
            self.picker = None
        self.board.set_selected([])
        picker.deleteLater()

    def _correct(self, change: Callable[[], None]) -> None:
        try:
            change()
        except CompanionError as exc:
            self.setup_panel.show_error(str(exc))
            self.status.showMessage(str(exc), 8000)
            return
        self._refresh_setup()

    def _refresh_setup(self) -> None:
        if self.session is not None:
            return
        c = self.corrections
        self._picture = picture_from_corrections(c)
        self.board.set_picture(self._picture)
        self.live.set_cards(dict(self._picture.slots))
        self.live.set_flags(dict(self._picture.flags))
        problems = c.problems()
        self.setup_panel.set_problems([text for _, text in problems], len(c.blocking_problems()), c.can_undo)
        self.setup_panel.setVisible(True)

    def confirm(self) -> None:
        if self.session is not None:
            return
        try:
            text = self.corrections.deal_text()
            session = PlaySession.new(self.rules, text, self.data_dir)
        except CompanionError as exc:
            self.setup_panel.show_error(str(exc))
            self.status.showMessage(str(exc), 8000)
            return
        session.corrections = dict(self.corrections.overrides)
        self._start_session(session)
        source = self.capture.source if self.capture is not None else None
        if hasattr(source, "start_game"):
            source.start_game()  # the demo starts playing on its table
        elif self.act_learn.isChecked():
            self._keep_deck_corners()

    def _keep_deck_corners(self) -> None:
        """The person checked every card of the deal: each corner the last frame read at a place is
        a picture of their deck named by them, corrections included (``tools/learn_deck.py``)."""
        frame = getattr(self, "last_frame", None)
        if frame is None or frame.image is None or not frame.boxes or self.manual:
            return
        corners = [(str(place), card, box) for place, box in frame.boxes.items()
                   if (card := self.corrections.card_at(place)) is not None]
        folder = self.data_dir / DECK_SAMPLES
        now = time.time()  # one stamp: the corners and the frame of one confirmation go together
        pyramid = [[self.corrections.card_at(Place.slot(r, i)) for i in range(r + 1)] for r in range(self.rules.rows)]
        try:
            n = save_samples(folder, frame.image, corners, source=self.source_text, now=now)
            if n:
                save_frame(folder, frame.image, self.rules.name, pyramid, now=now)
        except (ValueError, OSError) as exc:  # the game goes on; only the samples are lost
            self.status.showMessage(f"Could not keep the deal's corners for learning: {exc}", 8000)
            return
        if n:
            self.status.showMessage(f"Game started; {n} corners of your deck kept in {folder} "
                                    "(python tools/learn_deck.py --samples that folder)", 8000)

    def start_from_text(self, text: str) -> None:
        try:
            session = PlaySession.new(self.rules, text, self.data_dir)
        except CompanionError as exc:
            self.setup_panel.show_error(str(exc))
            self.status.showMessage(str(exc), 8000)
            return
        self._start_session(session)

    def start_random(self) -> None:
        from companion.game import Deal

        deal = Deal.random(self.rules, random.Random())
        self.setup_panel.deal_edit.setPlainText(str(deal))
        self.start_from_text(str(deal))

    # --- play -----------------------------------------------------------------------
    def _start_session(self, session: PlaySession) -> None:
        self.session = session
        self.rules = session.rules
        self.advice = None
        self._last_move = None
        self.setup_panel.setVisible(False)
        self.mismatch_panel.show_mismatch(None)
        self.status.showMessage(f"Game started ({self.rules.name}); autosaved to {self.data_dir}", 5000)
        self._tell_deal()
        self._refresh_play()

    def _tell_deal(self) -> None:
        """The camera's reading learns the deal the person checked (None between games): a card it
        keeps misreading is still known where it lies (``LayoutPipeline.know_deal``)."""
        tell = getattr(self.capture, "know_deal", None)
        if callable(tell):
            tell(None if self.session is None else self.session.game.deal.pyramid)

    def new_game(self) -> None:
        """Back to set-up with the current rules preset (the finished game stays in the autosave)."""
        self.session = None
        self._tell_deal()
        self._advice_id += 1
        self.advice = None
        self.rules = Rules.parse(self.rules_combo.currentText())
        last = getattr(self, "_last_layout", None)
        self.corrections = CorrectionSession(self.rules, last if last is not None else self.corrections.base)
        self.mismatch_panel.show_mismatch(None)
        self.game_panel.clear()
        self.advice_panel.show_waiting("—")
        self.board.set_highlights([])
        self.live.set_highlights([])
        self.live.set_banner("")
        self._refresh_setup()

    def _play_click(self, place: Place) -> None:
        assert self.session is not None
        if place.kind == STOCK:
            if Move.draw() in self.session.state.legal_moves():
                self.draw()
            elif Move.recycle() in self.session.state.legal_moves():
                self.play(Move.recycle())
            return
        card = self._picture.slots.get(place) if place.is_slot else self._card_at_side(place)
        if card is None:
            return
        try:
            move = self.session.click_card(card)
        except CompanionError as exc:
            self._show_illegal(str(exc))
            self._show_selection()
            return
        self._show_selection()
        if move is not None:
            self.play(move)

    def _card_at_side(self, place: Place) -> Optional[Card]:
        pic = self._picture
        for card, where in pic.card_places().items():
            if where == place:
                return card
        return None

    def _show_selection(self) -> None:
        sel = self.session.pairing.selected if self.session is not None else None
        places = self._picture.card_places()
        self.board.set_selected([places[sel]] if sel is not None and sel in places else [])

    def play(self, move: Move) -> bool:
        if self.session is None:
            return False
        try:
            self.session.play(move)
        except CompanionError as exc:
            self._show_illegal(str(exc))
            return False
        self._last_move = move
        self.status.showMessage(f"Played {move}", 3000)
        self._refresh_play()
        return True

    def draw(self) -> None:
        """Draw; when the stock card is not known yet, ask which card was turned first."""
        if self.session is None:
            return
        if self.session.needs_reveal():
            self._ask_stock_card()
            return
        self.play(Move.draw())

    def _ask_stock_card(self) -> None:
        assert self.session is not None
        unseen = sorted(self.session.state.unseen(), key=lambda c: c.index)
        picker = CardPicker(Place(STOCK), unseen, title="<b>Which card did you turn from the stock?</b>",
                            allow_clear=False, parent=self)
        picker.cardChosen.connect(self._revealed)
        picker.finished.connect(lambda _: self._picker_closed(picker))
        self.picker = picker
        picker.open()

    def _revealed(self, card: Card) -> None:
        if self.session is None:
            return
        try:
            self.session.reveal(card)
        except CompanionError as exc:
            self._show_illegal(str(exc))
            return
        if self.session.needs_reveal():  # draw 3: name the next one too
            QTimer.singleShot(0, self._ask_stock_card)
            return
        self.play(Move.draw())

    def undo(self) -> None:
        if self.session is None:
            if self.corrections.undo():
                self._refresh_setup()
            return
        if self.session.undo():
            self._last_move = None
            self.status.showMessage("Undone", 2000)
            self._refresh_play()

    def redo(self) -> None:
        if self.session is not None and self.session.redo():
            self._refresh_play()

    def play_hint(self) -> None:
        if self.advice is not None and self.advice.move is not None:
            if self.advice.move == Move.draw():
                self.draw()
            else:
                self.play(self.advice.move)

    def _clear_selection(self) -> None:
        self._fixing = False
        if self.session is not None:
            self.session.pairing.reset()
            self._show_selection()

    def _show_illegal(self, text: str) -> None:
        self.advice_panel.warning_label.setText(text)
        self.status.showMessage(text, 8000)

    def _refresh_play(self) -> None:
        assert self.session is not None
        state = self.session.state
        self._picture = picture_from_state(state)
        self.board.set_picture(self._picture)
        self._show_selection()
        self.game_panel.update_game(self.session)
        self._refresh_live_play()
        if self.hints:
            self.request_advice()
        else:
            self.advice_panel.show_off()
            self._show_highlights()

    def _refresh_live_play(self) -> None:
        cards = dict(self._picture.slots)
        cards.update({place: card for card, place in self._picture.card_places().items() if not place.is_slot})
        self.live.set_cards(cards)
        # set-up corrections still in force (the card has not left): the person's word, not the camera's
        held = self.session.corrections if self.session is not None else {}
        self.live.set_flags({place: SlotFlags(corrected=True) for place, card in held.items() if card is not None})
        # the board marks where the stable camera view reads another card than the game has (the
        # live image shows each frame's reads; a hand passing over the cards is no conflict)
        seen = self.session.last_layout if self.session is not None and not self.manual else None
        conflicts: dict[Place, SlotFlags] = {}
        for place, card in self._picture.slots.items():
            if seen is None or card is None or place in held or place.row >= seen.rows:
                continue
            read = seen.pyramid[place.row][place.index].card
            if read is not None and read is not card:
                conflicts[place] = SlotFlags(conflict=True)
        if conflicts != self._picture.flags:
            self._picture = replace(self._picture, flags=conflicts)
            self.board.set_picture(self._picture)

    # --- advice ---------------------------------------------------------------------
    def request_advice(self) -> None:
        if self.session is None:
            return
        self._advice_id += 1
        request = self._advice_id
        state, previous, last = self.session.state, self.advice, self._last_move
        budget, advisor = self.advice_budget, self._advisor
        self.advice = None
        self._show_highlights()
        self.advice_panel.show_waiting()
        worker = AdviceWorker(request, lambda: advisor(state, budget_seconds=budget, previous=previous,
                                                              last_move=last))
        worker.ready.connect(self._advice_ready)
        worker.failed.connect(lambda rid, text: rid == self._advice_id and self.advice_panel.show_waiting(
            f"Advice failed: {text}"))
        worker.finished.connect(lambda: self._advice_done(worker))
        self._advice_workers.append(worker)
        worker.start()

    def _advice_done(self, worker: AdviceWorker) -> None:
        if worker in self._advice_workers:
            self._advice_workers.remove(worker)
        worker.deleteLater()

    def _advice_ready(self, request: int, advice: Advice) -> None:
        if request != self._advice_id or self.session is None or not self.hints:
            return  # stale: the position changed meanwhile
        self.advice = advice
        self.advice_panel.show_advice(advice, self.rules)
        self._show_highlights()

    def _show_highlights(self) -> None:
        advice = self.advice if self.hints else None
        places: list[Place] = []
        if advice is not None and advice.move is not None:
            where = self._picture.card_places()
            places = [where[c] for c in advice.cards if c in where]
            if advice.move.kind in ("draw", "recycle"):
                places = [Place(STOCK)]
        self.board.set_highlights(places)
        self.live.set_highlights(places)
        self.live.set_banner(move_banner(advice.move) if advice is not None and advice.move is not None else "")
