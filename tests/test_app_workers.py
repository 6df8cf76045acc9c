"""Worker threads: camera loss keeps the game and reconnects; closing stops every worker cleanly."""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

from companion.moves import Move
from companion.rules import Rules
from companion.app.fakes import ScriptedSource




def frames(n: int = 3) -> list[np.ndarray]:
    return [np.full((120, 160, 3), 40 * k, np.uint8) for k in range(n)]


def test_camera_loss_keeps_the_game_and_reconnect_resumes(window_factory, qtbot):
    from companion.game import Deal

    window = window_factory(rules=Rules.preset("classic"))
    import random

    window.start_from_text(str(Deal.random(window.rules, random.Random(5))))
    window.play(Move.draw())
    moves = window.session.moves()
    source = ScriptedSource(frames(), lost_after=5)
    window.set_manual(False, start_source=False)
    window.start_source("camera:0", opener=lambda: source)
    # Wait on what the window shows: a signal emitted before waitSignal connects would be missed.
    qtbot.waitUntil(lambda: "Camera lost" in window.live.message, timeout=5000)
    worker = window.capture
    assert "Camera lost" in window.live.message and "game is kept" in window.live.message
    assert window.session.moves() == moves              # nothing recorded is lost
    window.play(Move.draw())                            # and the game goes on by hand meanwhile
    shown = worker.frames
    with qtbot.waitSignal(worker.sourceRestored, timeout=5000):
        source.restore()
    qtbot.waitUntil(lambda: worker.frames > shown + 2, timeout=5000)
    assert window.live.message == "" and source.reopens >= 1
    assert len(window.session.moves()) == len(moves) + 1


def test_close_stops_workers_without_terminate(window_factory, qtbot):
    from PySide6.QtCore import QThread

    from companion.app.advice import Advice

    calls = []

    def slow_advisor(state, **_):
        calls.append(1)
        time.sleep(0.8)  # still running when the window closes
        return Advice(None, "slow")

    window = window_factory(rules=Rules.preset("classic"), advisor=slow_advisor)
    first = ScriptedSource(frames())
    window.set_manual(False, start_source=False)
    window.start_source("camera:0", opener=lambda: first)
    old = window.capture
    qtbot.waitUntil(lambda: old.frames >= 1, timeout=5000)
    source = ScriptedSource(frames())
    window.start_source("camera:1", opener=lambda: source)  # switching stops the old worker first
    assert old.isFinished() and first.closed
    worker = window.capture
    qtbot.waitUntil(lambda: worker.frames >= 3, timeout=5000)
    from companion.game import Deal
    import random

    window.start_from_text(str(Deal.random(window.rules, random.Random(1))))
    qtbot.waitUntil(lambda: bool(calls), timeout=5000)
    advice_workers = list(window._advice_workers)
    assert advice_workers and all(w.isRunning() for w in advice_workers)
    started = time.monotonic()
    window.close()
    elapsed = time.monotonic() - started
    assert worker.isFinished() and source.closed
    assert all(w.isFinished() for w in advice_workers)
    assert elapsed < 3.0  # waits for the advice in flight (0.8 s), never kills it
    assert not window.guard.lock.exists()
    assert QThread.currentThread() is window.thread()


def test_source_failure_and_end_are_reported(window_factory, qtbot, tmp_path):
    window = window_factory()
    window.set_manual(False, start_source=False)
    window.start_source(str(tmp_path / "missing.mp4"))
    qtbot.waitUntil(lambda: "Cannot open" in window.live.message, timeout=5000)
    assert "missing.mp4" in window.live.message
    ended = ScriptedSource(frames(2), end=True)
    window.start_source("camera:0", opener=lambda: ended)
    qtbot.waitUntil(lambda: "ended" in window.source_status.text(), timeout=5000)
    qtbot.waitUntil(window.capture.isFinished, timeout=5000)
    assert window.live.image is not None and ended.closed


def test_cli_app_parser_and_bad_rules():
    from companion.cli import build_parser, main

    args = build_parser().parse_args(["app", "--manual", "--rules", "relaxed", "--source", "demo"])
    assert args.manual and args.rules == "relaxed" and callable(args.run)
    assert main(["app", "--rules", "nonsense"]) == 2     # exits before any window opens
    assert main(["--rules", "nonsense"]) == 2            # the app is the default command, options too
    args = build_parser().parse_args(["app", "--models", "m"])
    assert args.models == "m"


def test_cli_app_refuses_a_model_folder_that_is_not_one(tmp_path, capsys, monkeypatch):
    from companion.cli import main
    from companion.vision.model_files import ENV_VAR

    monkeypatch.delenv(ENV_VAR, raising=False)
    assert main(["app", "--models", str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err and ENV_VAR not in __import__("os").environ
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "corner_detector.onnx").write_bytes(b"x")
    assert main(["app", "--models", str(tmp_path / "half")]) == 2
    assert "card_classifier.onnx" in capsys.readouterr().err
