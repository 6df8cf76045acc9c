"""The built-in demo: misreads to correct, then a game the window follows move by move; the Qt bug guard."""

from __future__ import annotations

import os
import subprocess
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from companion.rules import Rules


@pytest.fixture
def window(window_factory):
    return window_factory(rules=Rules.preset("classic"))


@pytest.mark.parametrize("preset", ["classic", "relaxed"])  # relaxed: the stock's top card is face up
def test_demo_misreads_corrected_then_followed(window_factory, qtbot, preset):
    pytest.importorskip("cv2")
    pytest.importorskip("companion.playalong")
    from companion.app.demo import MISREADS, DemoSource
    from companion.app.places import Place

    window = window_factory(rules=Rules.preset(preset))
    source = DemoSource(window.rules, step_s=0.15, video=False)
    window.set_manual(False, start_source=False)
    window.start_source("demo", opener=lambda: source)
    qtbot.waitUntil(lambda: window.live.image is not None, timeout=5000)
    flagged = {p for p, f in window.board.picture.flags.items() if f.low}
    assert flagged == {Place.slot(r, i) for r, i in MISREADS}
    for place in flagged:  # the true card is the recognizer's runner-up
        truth = window.corrections.reading(place).alternatives[1][0]
        window.corrections.set(place, truth)
    window.confirm()
    assert window.session is not None
    qtbot.waitUntil(lambda: len(source.played) >= 8, timeout=15000)
    window.stop_source()
    played = list(source.played)
    qtbot.waitUntil(lambda: len(window.session.moves()) >= len(played) - 1, timeout=3000)
    recorded = window.session.moves()
    assert recorded == played[: len(recorded)] and len(recorded) >= len(played) - 1
    assert "check" not in (window.session.mismatch or "").lower()


def test_bundled_video_demo_opens_for_matching_rules_only(monkeypatch, tmp_path):
    pytest.importorskip("cv2")
    monkeypatch.setenv("PYRAMID_COMPANION_MODELS", str(tmp_path / "none"))  # the fake detector: exact labels
    from companion.app.demo import DemoSource, VideoDemoSource, bundled_video

    if bundled_video(Rules.preset("classic")) is None:
        pytest.skip("no bundled demo video")
    source = DemoSource(Rules.preset("classic"))
    try:
        assert isinstance(source, VideoDemoSource)
        frame = source.read()
        assert frame.image is not None and frame.image.ndim == 3
        deal = source.deal[:28]
        assert [s.card for _, _, s in frame.layout.slots()] == deal  # the dealt table, as recognised
        assert source.read().index == 1 and not source.played  # nothing happens before Confirm
    finally:
        source.close()
    # a table the video does not show (three waste piles, cells): the drawn demo
    assert not isinstance(DemoSource(Rules.preset("ancient-egypt")), VideoDemoSource)


def test_video_demo_followed_in_the_window(window, qtbot):
    pytest.importorskip("cv2")
    pytest.importorskip("companion.playalong")
    from companion.app.demo import VideoDemoSource, bundled_video

    folder = bundled_video(window.rules)
    if folder is None:
        pytest.skip("no bundled demo video")
    source = VideoDemoSource(window.rules, folder, speed=8.0, detector=None)  # the fake: exact labels
    window.set_manual(False, start_source=False)
    window.start_source("demo", opener=lambda: source)
    qtbot.waitUntil(lambda: window.live.image is not None, timeout=5000)
    # the whole deal given (stock order too), as `follow --deal` does: the stock is known
    window.start_from_text(" ".join(map(str, source.deal)))
    source.start_game()
    assert window.session is not None
    total = len(source.truth["moves"])
    qtbot.waitUntil(lambda: len(source.played) == total, timeout=30000)
    qtbot.waitUntil(lambda: len(window.session.moves()) >= total, timeout=5000)
    window.stop_source()
    assert [str(m) for m in window.session.moves()] == [m["move"] for m in source.truth["moves"]]


def test_none_refcount_guard_keeps_qt_alive():
    """Many void Qt calls must not abort the interpreter (PySide6 6.12 on Python 3.11, see qtfix)."""
    code = ("import companion.app.qtfix\nfrom PySide6.QtCore import QRectF\nr = QRectF()\n"
            "for _ in range(300000): r.setWidth(1.0)\nprint('alive')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.returncode == 0 and "alive" in out.stdout, out.stderr[-500:]
