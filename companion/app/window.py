"""The main window: live image, board, and the set-up / advice / game panels.

Two phases: *set-up* (recognised or typed deal, corrections, Confirm) and
*play* (moves clicked on the board or, later, followed from the camera).
All game logic is in the Qt-free modules; this class wires widgets, workers,
settings and shortcuts together.
"""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

from pathlib import Path
from typing import Callable, Optional

from PySide6.QtCore import QSettings, QStandardPaths, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QComboBox, QFileDialog, QLabel, QMainWindow, QMessageBox, QSplitter, QToolBar,
                               QVBoxLayout, QWidget, QScrollArea)

from companion.errors import CompanionError
from companion.moves import Move
from companion.rules import PRESETS, Rules
from companion.app.advice import Advice, compute_advice
from companion.app.board import BoardView
from companion.app.capture import Frame, SourceSpec, make_recognizer, open_source
from companion.app.correction import CorrectionSession
from companion.app.flow import GameFlow
from companion.app.liveview import LiveView
from companion.app.overrides import OverrideFlow
from companion.app.panels import AdvicePanel, GamePanel, MismatchPanel, SetupPanel
from companion.app.picker import CardPicker
from companion.app.picture import BoardPicture
from companion.app.session import CrashGuard, PlaySession
from companion.app.workers import AdviceWorker, CaptureWorker

SOURCES = (("Camera 0 or demo", "auto"), ("Demo", "demo"), ("Camera 0", "camera:0"), ("Camera 1", "camera:1"),
           ("Video file…", "?video"), ("Image…", "?image"), ("Image folder…", "?folder"))


def default_data_dir() -> Path:
    return Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation))


class MainWindow(QMainWindow, GameFlow, OverrideFlow):
    def __init__(self, *, rules: Optional[Rules] = None, source: Optional[str] = None, manual: Optional[bool] = None,
                 settings: Optional[QSettings] = None, data_dir: Optional[Path] = None,
                 advice_budget: float = 0.4, ask_resume: Optional[Callable[[Path], bool]] = None,
                 advisor: Callable[..., Advice] = compute_advice,
                 ask_text: Optional[Callable[[str, str], Optional[str]]] = None) -> None:
        super().__init__()
        self.settings = settings if settings is not None else QSettings("PyramidCompanion", "Pyramid Companion")
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.rules = rules or Rules.parse(str(self.settings.value("rules", "classic")))
        self.manual = bool(manual) if manual is not None else self.settings.value("manual", False, type=bool)
        self.source_text = source if source is not None else str(self.settings.value("source", "auto"))
        self.hints = self.settings.value("hints", True, type=bool)
        self.advice_budget = advice_budget
        self._ask_resume = ask_resume
        self._advisor = advisor
        self._ask_text = ask_text
        #: Frames per second the capture worker reads (a camera's frame numbers count these).
        self.capture_fps = 15.0
        self._last_layout = None  # the last layout the camera reported (a new game starts from it)
        self.last_frame: Optional[Frame] = None
        self.corrections = CorrectionSession(self.rules)
        self.session: Optional[PlaySession] = None
        self.capture: Optional[CaptureWorker] = None
        self.advice: Optional[Advice] = None
        self._advice_id = 0
        self._advice_workers: list[AdviceWorker] = []
        self._stopping: list[CaptureWorker] = []
        self.picker: Optional[CardPicker] = None
        self._last_move: Optional[Move] = None
        self._picture = BoardPicture()
        self.guard = CrashGuard(self.data_dir)
        self.guard.start()

        self.setWindowTitle("Pyramid Companion")
        self._build()
        self._build_actions()
        self.resize(1500, 900)
        geometry = self.settings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        splitter = self.settings.value("splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)
        self.set_manual(self.manual, start_source=False)
        self._refresh_setup()
        QTimer.singleShot(0, self._after_show)

    # --- construction ---------------------------------------------------------------
    def _build(self) -> None:
        self.live = LiveView()
        self.board = BoardView()
        self.setup_panel = SetupPanel()
        self.advice_panel = AdvicePanel()
        self.game_panel = GamePanel()
        self.mismatch_panel = MismatchPanel()
        self.game_panel.clear()
        self.advice_panel.hints_box.setChecked(self.hints)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(4, 4, 4, 4)
        for panel in (self.setup_panel, self.mismatch_panel, self.advice_panel, self.game_panel):
            side_layout.addWidget(panel)
        scroll = QScrollArea()
        scroll.setWidget(side)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # panels wrap instead
        scroll.setMinimumWidth(380)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.live)
        self.splitter.addWidget(self.board)
        self.splitter.addWidget(scroll)
        self.splitter.setStretchFactor(0, 5)
        self.splitter.setStretchFactor(1, 4)
        self.splitter.setStretchFactor(2, 0)
        self.splitter.setSizes([740, 380, 380])  # the live image first: it is read from a chair
        self.setCentralWidget(self.splitter)
        self.status = self.statusBar()
        self.source_status = QLabel("")
        self.status.addPermanentWidget(self.source_status)

        self.board.placeClicked.connect(self.on_place_clicked)
        self.live.placeClicked.connect(self.on_place_clicked)
        self.setup_panel.confirmRequested.connect(self.confirm)
        self.setup_panel.undoRequested.connect(self.undo)
        self.setup_panel.dealEntered.connect(self.start_from_text)
        self.setup_panel.randomDealRequested.connect(self.start_random)
        self.advice_panel.hintsToggled.connect(self.set_hints)
        self.advice_panel.planRequested.connect(self.advice_panel.toggle_plan)
        self.game_panel.drawRequested.connect(self.draw)
        self.game_panel.recycleRequested.connect(lambda: self.play(Move.recycle()))
        self.game_panel.undoRequested.connect(self.undo)
        self.game_panel.redoRequested.connect(self.redo)
        self.mismatch_panel.acceptRequested.connect(self.accept_table)
        self.mismatch_panel.keepRequested.connect(self.keep_recorded)
        self.mismatch_panel.enterMovesRequested.connect(self.ask_moves)
        self.mismatch_panel.fixRequested.connect(self.start_fixing)

    def _build_actions(self) -> None:
        bar = QToolBar("Main")
        bar.setObjectName("mainToolbar")
        bar.setMovable(False)
        self.addToolBar(bar)
        bar.addWidget(QLabel(" Source: "))
        self.source_combo = QComboBox()
        for label, data in SOURCES:
            self.source_combo.addItem(label, data)
        self.source_combo.activated.connect(self._source_chosen)
        bar.addWidget(self.source_combo)
        bar.addWidget(QLabel("  Rules: "))
        self.rules_combo = QComboBox()
        for name in PRESETS:
            self.rules_combo.addItem(name)
        if self.rules.name not in PRESETS:
            self.rules_combo.addItem(self.rules.name)
        self.rules_combo.setCurrentText(self.rules.name)
        self.rules_combo.activated.connect(lambda _: self.set_rules(Rules.parse(self.rules_combo.currentText())))
        bar.addWidget(self.rules_combo)
        bar.addSeparator()

        def action(text: str, keys, slot, checkable: bool = False) -> QAction:
            act = QAction(text, self)
            shortcuts = [QKeySequence(k) for k in (keys if isinstance(keys, (list, tuple)) else [keys])]
            act.setShortcuts(shortcuts)
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.setCheckable(checkable)
            act.setToolTip(f"{text} ({', '.join(s.toString() for s in shortcuts)})")
            act.triggered.connect(slot)
            self.addAction(act)
            return act

        self.act_manual = action("Manual", "Ctrl+M", lambda checked: self.set_manual(checked), checkable=True)
        self.act_manual.setChecked(self.manual)
        bar.addAction(self.act_manual)
        self.act_new = action("New game", "Ctrl+N", self.new_game)
        bar.addAction(self.act_new)
        self.act_open = action("Open…", "Ctrl+O", self.open_game)
        bar.addAction(self.act_open)
        self.act_save = action("Save as…", "Ctrl+S", self.save_game)
        bar.addAction(self.act_save)
        self.act_reconnect = action("Restart source", "F5", self.restart_source)
        bar.addAction(self.act_reconnect)
        action("Undo", ["Ctrl+Z", "Backspace"], self.undo)
        action("Redo", ["Ctrl+Shift+Z", "Ctrl+Y"], self.redo)
        action("Draw", ["D", "Space"], self.draw)
        action("Recycle", "R", lambda: self.play(Move.recycle()))
        action("Hints", "H", lambda: self.advice_panel.hints_box.toggle())
        action("Plan", "P", self.advice_panel.toggle_plan)
        action("Play hint", "Ctrl+H", self.play_hint)
        action("Confirm", ["Ctrl+Return", "Ctrl+Enter"], self.confirm)
        action("The table is right: record it", "Ctrl+T", self.accept_table)
        action("The recorded game is right", "Ctrl+K", self.keep_recorded)
        action("Enter the moves played", "Ctrl+E", self.ask_moves)
        action("Fix a card of the deal (then click it)", "Ctrl+F", self.start_fixing)
        action("Clear selection", "Escape", self._clear_selection)
        self.act_zoom = action("Zoom onto the cards", "Z", self.set_zoom, checkable=True)
        self.act_zoom.setChecked(self.settings.value("zoom", True, type=bool))
        self.live.set_zoom(self.act_zoom.isChecked())
        self.act_overlay = action("Boxes and labels on the image", "O", self.set_overlay, checkable=True)
        self.act_overlay.setChecked(self.settings.value("overlay", True, type=bool))
        self.live.show_overlay = self.act_overlay.isChecked()
        self.act_learn = action("Keep the corners of confirmed deals (to learn your deck)", "Ctrl+L",
                                self.set_learn, checkable=True)
        self.act_learn.setChecked(self.settings.value("learn_deck", True, type=bool))
        action("Full screen", "F11", lambda: self.showNormal() if self.isFullScreen() else self.showFullScreen())
        action("Quit", "Ctrl+Q", self.close)
        action("Keyboard shortcuts", "F1", self.show_shortcuts)

    def show_shortcuts(self) -> None:
        rows = "".join(f"<tr><td><b>{a.shortcut().toString()}</b></td><td>{a.text()}</td></tr>"
                       for a in self.actions() if not a.shortcut().isEmpty())
        QMessageBox.information(self, "Keyboard shortcuts",
                                "<table cellspacing=6>" + rows + "<tr><td><b>click</b></td><td>a card: pick it "
                                "(a king alone is removed; a second card pairs)</td></tr></table>")

    def _after_show(self) -> None:
        if self.guard.crashed_game is not None and self.offer_resume(self.guard.crashed_game):
            # a camera or a file follows the resumed game again; the demo's table is another game
            if not self.manual and self.capture is None and SourceSpec.parse(self.source_text).kind not in ("demo",
                                                                                                          "auto"):
                self.start_source(self.source_text)
            return
        if not self.manual and self.capture is None:
            self.start_source(self.source_text)

    # --- resume ---------------------------------------------------------------------
    def offer_resume(self, path: Path) -> bool:
        ask = self._ask_resume or (lambda p: QMessageBox.question(
            self, "Resume the last game?",
            "Pyramid Companion did not close properly last time. Resume the game it was following?")
            == QMessageBox.StandardButton.Yes)
        if not ask(path):
            return False
        try:
            self._start_session(PlaySession.load(path, self.data_dir))
        except (CompanionError, OSError, KeyError) as exc:
            self.status.showMessage(f"Could not resume: {exc}", 8000)
            return False
        self.status.showMessage("Resumed the last game", 5000)
        return True

    # --- sources --------------------------------------------------------------------
    def _source_chosen(self, index: int) -> None:
        data = self.source_combo.itemData(index)
        if data.startswith("?"):
            kind = data[1:]
            if kind == "folder":
                path = QFileDialog.getExistingDirectory(self, "Folder of frames")
            else:
                filt = "Images (*.png *.jpg *.jpeg *.bmp)" if kind == "image" else "Videos (*.mp4 *.avi *.mkv *.mov)"
                path, _ = QFileDialog.getOpenFileName(self, f"Open {kind}", "", filt)
            if not path:
                return
            data = path
        self.set_manual(False, start_source=False)
        self.start_source(data)

    def start_source(self, text: str, opener=None, recognizer=None) -> None:
        """Start capturing from ``text`` (``demo``, ``camera:0``, a path); ``opener`` (the source) and
        ``recognizer`` (frame -> recognised frame) replace the real ones in tests."""
        self.stop_source()
        spec = SourceSpec.parse(text)
        self.source_text = str(spec)
        self.settings.setValue("source", self.source_text)
        rules = self.rules
        if recognizer is None and spec.kind != "demo":
            recognizer = make_recognizer(rules, fps=self.capture_fps)
        worker = CaptureWorker(opener or (lambda: open_source(spec, rules)), recognizer=recognizer,
                               fps=self.capture_fps)
        # (frames that already carry a layout, like the demo's, skip the recognizer)
        worker.frameReady.connect(self.on_frame)
        self.recognition_text = ""
        worker.sourceOpened.connect(lambda name: self._source_state(f"Source: {name}", ""))
        worker.recognitionInfo.connect(self.on_recognition_info)
        worker.sourceLost.connect(self.on_source_lost)
        worker.sourceRestored.connect(self.on_source_restored)
        worker.sourceEnded.connect(lambda: self._source_state("Source ended (last frame kept)", ""))
        worker.sourceFailed.connect(self.on_source_failed)
        self.capture = worker
        self._tell_deal()  # a game under way goes on with the new source
        index = self.source_combo.findData(str(spec))
        if index < 0:
            self.source_combo.addItem(spec.describe(), str(spec))
            index = self.source_combo.count() - 1
        self.source_combo.setCurrentIndex(index)
        self._source_state(f"Opening {spec.describe()}…", "Opening the source…")
        worker.start()

    def stop_source(self) -> None:
        self.recognition_text = ""
        if self.capture is not None:
            worker, self.capture = self.capture, None
            worker.frameReady.disconnect(self.on_frame)
            if worker.stop():
                worker.deleteLater()
            else:
                # A driver call is still blocking (a vanished camera can take seconds): keep the
                # thread object alive until it returns; it exits at its next interruption check.
                self._stopping.append(worker)
                worker.finished.connect(lambda w=worker: self._stopping.remove(w) if w in self._stopping else None)

    def restart_source(self) -> None:
        """F5: reopen the current source (after plugging a camera back in, for example)."""
        if not self.manual:
            self.start_source(self.source_text)

    def _source_state(self, status: str, overlay: str) -> None:
        self._source_line = status
        rec = getattr(self, "recognition_text", "")
        short = rec.split(" - ")[0]
        self.source_status.setText(f"{status} · {short}" if rec else status)
        self.source_status.setToolTip(rec)
        self.live.set_message(overlay)

    def on_frame(self, frame: Frame) -> None:
        self.last_frame = frame
        self.live.show_frame(frame)
        if frame.layout is not None:
            self._last_layout = frame.layout
        if self.session is None and frame.layout is not None:
            self.corrections.update_recognition(frame.layout)
            self._refresh_setup()
        elif self.session is not None:
            if frame.layout is not None and not self.manual:
                self._follow(frame.layout)
            elif not self.manual:  # a lone card held too long is reported (tick records no move)
                self._show_events(self.session.tick(frame.index, frame.sightings), len(self.session.moves()))
            self._refresh_live_play()

    def _follow(self, layout) -> None:
        """The camera saw a stable table: let play-along record moves or say what is wrong."""
        assert self.session is not None
        before = len(self.session.moves())
        source = self.capture.source if self.capture is not None else None
        self.session.fps = float(getattr(source, "fps", 0.0) or self.capture_fps)
        try:
            events = self.session.follow(layout)
        except CompanionError as exc:
            self._show_illegal(str(exc))
            return
        self._show_events(events, before, layout_seen=True)

    def _show_events(self, events: list, before: int, layout_seen: bool = False) -> None:
        """Say ``events``; after a stable layout (``layout_seen``) the mismatch panel follows
        play-along's state even with no event (a check said before shows while the camera
        reads the slot otherwise, and hides once it reads it right)."""
        if not events and not layout_seen:
            return
        for event in events:
            if event.kind == "move":
                self.status.showMessage(f"Recorded {event.text}", 5000)
            elif event.kind == "illegal":  # (the mismatch panel says it and offers the overrides)
                self.status.showMessage(f"Not legal: {event.text}. The game keeps the last legal position.",
                                        10000)
            else:
                self.status.showMessage(event.text[:1].upper() + event.text[1:], 10000)
        if len(self.session.moves()) != before:
            self._last_move = self.session.moves()[-1] if self.session.moves() else None
            self._refresh_play()
        self.mismatch_panel.show_mismatch(self.session.mismatch)

    def on_recognition_info(self, text: str) -> None:
        """How the frames are recognised (the model, the fake detector, nothing): always in view."""
        self.recognition_text = text
        self._source_state(self._source_line, self.live.message)
        if "fake" in text or "model" in text and "ONNX" not in text:
            self.status.showMessage(f"Recognition: {text.split(' - ')[0]}", 15000)
        if "manual mode" in text:  # a camera without a model: say what to do instead
            self.live.set_message("No recognition model installed: type the deal in manual mode (Ctrl+M)")

    def on_source_lost(self, reason: str) -> None:
        kept = "the game is kept" if self.session is not None else "corrections are kept"
        self._source_state("Camera lost", f"Camera lost — {kept}. Reconnect it; retrying…")
        self.status.showMessage(f"{reason}; {kept}", 8000)

    def on_source_restored(self) -> None:
        self._source_state("Camera back", "")
        self.status.showMessage("Camera reconnected: following resumes", 5000)

    def on_source_failed(self, reason: str) -> None:
        self._source_state("No source", f"Cannot open the source: {reason}")
        self.status.showMessage(f"Cannot open the source: {reason}", 10000)

    # --- mode, rules, hints ---------------------------------------------------------
    def set_manual(self, manual: bool, start_source: bool = True) -> None:
        self.manual = manual
        self.settings.setValue("manual", manual)
        self.act_manual.setChecked(manual)
        self.live.setVisible(not manual)
        if manual:
            self.stop_source()
            self._source_state("Manual mode (no camera)", "")
        elif start_source and self.capture is None:
            self.start_source(self.source_text)
        self.setup_panel.hint.setText(
            "Type or paste the deal below, or click a slot to set its card." if manual else
            "Click a card on the board or on the image to correct it.")

    def set_rules(self, rules: Rules) -> None:
        if self.session is not None:
            self.status.showMessage(f"{rules.name} applies to the next game (Ctrl+N)", 6000)
        self.rules = rules
        self.settings.setValue("rules", rules.name)
        if self.session is None:
            self.corrections = CorrectionSession(rules, self.corrections.base)
            self._refresh_setup()
            if self.capture is not None and not self.manual:
                self.start_source(self.source_text)  # recognition (and the demo's table) follow the rules

    def set_zoom(self, on: bool) -> None:
        self.settings.setValue("zoom", bool(on))
        self.live.set_zoom(bool(on))

    def set_learn(self, on: bool) -> None:
        self.settings.setValue("learn_deck", bool(on))
        self.status.showMessage("Corners of confirmed deals are kept to learn your deck" if on
                                else "Corners of confirmed deals are no longer kept", 5000)

    def set_overlay(self, on: bool) -> None:
        self.settings.setValue("overlay", bool(on))
        self.live.show_overlay = bool(on)
        self.live.update()

    def set_hints(self, on: bool) -> None:
        self.hints = on
        self.settings.setValue("hints", on)
        if self.session is None:
            return
        if on:
            self.request_advice()
        else:
            self._advice_id += 1
            self.advice = None
            self.advice_panel.show_off()
            self._show_highlights()

    # --- files ----------------------------------------------------------------------
    def save_game(self) -> None:
        if self.session is None:
            self.status.showMessage("No game to save yet", 4000)
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save game", "pyramid-game.json", "Game (*.json)")
        if path:
            self.session.game.save(path)
            self.status.showMessage(f"Saved {path}", 5000)

    def open_game(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open game", "", "Game (*.json)")
        if not path:
            return
        try:
            self._start_session(PlaySession.load(Path(path), self.data_dir))
        except (CompanionError, OSError, KeyError) as exc:
            QMessageBox.warning(self, "Cannot open the game", str(exc))

    # --- shutdown -------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop every worker (interruption + wait, never terminate) and mark a clean exit."""
        self.stop_source()
        for worker in list(self._advice_workers) + list(self._stopping):
            worker.stop(30000)
        self._advice_workers.clear()
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("splitter", self.splitter.saveState())
        self.settings.sync()
        self.guard.finish()

    def closeEvent(self, event) -> None:  # noqa: N802
        self.shutdown()
        super().closeEvent(event)
