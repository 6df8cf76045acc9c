"""Render the README screenshots of the real main window (run under Xvfb).

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tools/screenshots.py [--out docs/screenshots]

Scenes: the demo being recognised with two misread cards marked; the card picker
correcting one; a game in play with advice highlighted. Settings and autosaves go to
a temporary folder, so the person's own settings are never touched.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _wait(app, condition, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        if condition():
            return True
        time.sleep(0.02)
    return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/screenshots")
    parser.add_argument("--size", default="1500x900", help="window size WxH")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from companion.app.places import Place
    from companion.app.window import MainWindow
    from companion.rules import Rules

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    width, height = (int(v) for v in args.size.split("x"))
    app = QApplication.instance() or QApplication(sys.argv[:1])
    tmp = Path(tempfile.mkdtemp(prefix="pc-shots-"))
    settings = QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(rules=Rules.preset("relaxed"), source="demo", manual=False, settings=settings,
                        data_dir=tmp / "data", ask_resume=lambda path: False)
    window.resize(width, height)
    window.show()
    shots = []

    def shot(name: str, widget=None) -> None:
        app.processEvents()
        path = out / f"{name}.png"
        (widget or window).grab().save(str(path))
        shots.append(path)

    from companion.app.demo import DemoSource

    source = DemoSource(window.rules, step_s=0.6)
    window.start_source("demo", opener=lambda: source)
    _wait(app, lambda: window.live.image is not None)
    _wait(app, lambda: False, 0.5)
    shot("1-recognition")

    picker = window.open_picker(Place.parse("r4s2"))
    _wait(app, lambda: picker.isVisible(), 3)
    _wait(app, lambda: False, 0.3)
    shot("2-picker", picker)
    for place in (Place.parse("r4s2"), Place.parse("r6s5")):  # the true card is the runner-up
        window.corrections.set(place, window.corrections.reading(place).alternatives[1][0])
    picker.reject()
    window._refresh_setup()

    window.confirm()  # the demo's "hands" start playing; the window follows
    _wait(app, lambda: len(window.session.moves()) >= 5, 30)
    window.stop_source()
    window.live.set_message("")
    _wait(app, lambda: window.advice is not None, 15)
    _wait(app, lambda: False, 0.3)
    shot("3-play-along")

    window.set_manual(True)
    window.new_game()
    from companion.game import Deal

    deal = Deal.random(window.rules, random.Random(3))
    window.setup_panel.deal_edit.setPlainText(str(deal))
    window.start_from_text(str(deal))
    for _ in range(6):
        _wait(app, lambda: window.advice is not None, 15)
        if window.advice is None or window.advice.move is None:
            break
        window.play_hint()
    _wait(app, lambda: window.advice is not None, 15)
    window.advice_panel.toggle_plan()
    _wait(app, lambda: False, 0.3)
    shot("4-manual-play")
    window.close()
    for path in shots:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
