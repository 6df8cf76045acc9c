"""Latency of the play-along loop in the real window: table change -> move recorded -> advice shown.

    QT_QPA_PLATFORM=offscreen python -m companion.app.bench [--rules relaxed] [--moves 20] [--known-stock]

The demo source plays moves on its table; a move counts from the moment the
demo puts it on the table (the next frame shows it, as a stable layout would)
until the window has recorded it, and until the advice for the new position is
on screen. ``--known-stock`` starts the game with the whole deal known, so the
exact solver gives the advice; otherwise the stock is hidden as at a real table.
Prints median / p90 / max in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="relaxed")
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--step", type=float, default=1.0, help="seconds between demo moves")
    parser.add_argument("--known-stock", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from companion.app.demo import DemoSource
    from companion.app.window import MainWindow
    from companion.rules import Rules

    app = QApplication.instance() or QApplication(sys.argv[:1])
    tmp = Path(tempfile.mkdtemp(prefix="pc-bench-"))
    rules = Rules.parse(args.rules)
    window = MainWindow(rules=rules, manual=True, settings=QSettings(str(tmp / "s.ini"), QSettings.Format.IniFormat),
                        data_dir=tmp / "data", ask_resume=lambda p: False)
    window.show()
    steps: list[float] = []

    class TimedDemo(DemoSource):
        def _step(self) -> None:
            super()._step()
            steps.append(time.perf_counter())

    source = TimedDemo(rules, step_s=args.step)
    window.set_manual(False, start_source=False)
    window.start_source("demo", opener=lambda: source)

    def spin(until, seconds: float) -> bool:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            if until():
                return True
            time.sleep(0.001)
        return False

    spin(lambda: window.live.image is not None, 10)
    if args.known_stock:
        window.start_from_text(" ".join(map(str, source.deal)))
        source.start_game()
    else:
        for place in list(window.corrections.places()):
            reading = window.corrections.reading(place)
            if reading.score < 0.6:
                window.corrections.set(place, reading.alternatives[1][0])
        window.confirm()
    recorded_ms: list[float] = []
    advice_ms: list[float] = []
    seen = 0
    while len(recorded_ms) < args.moves:
        if not spin(lambda: len(steps) > seen, args.step * 3 + 5):
            print("the demo stopped playing (game over)", file=sys.stderr)
            break
        t0 = steps[seen]
        seen += 1
        if not spin(lambda: len(window.session.moves()) >= seen, 5):
            print(f"move {seen} was not recorded", file=sys.stderr)
            break
        recorded_ms.append((time.perf_counter() - t0) * 1000)
        state = window.session.state
        spin(lambda: window.advice is not None and window.session.state is state, 5)
        advice_ms.append((time.perf_counter() - t0) * 1000)
    window.close()

    def line(name: str, values: list[float]) -> str:
        if not values:
            return f"{name}: no data"
        ordered = sorted(values)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        return (f"{name}: median {statistics.median(values):.0f} ms, p90 {p90:.0f} ms, max {max(values):.0f} ms "
                f"over {len(values)} moves")

    source_name = window.advice.source if window.advice is not None else "-"
    print(f"rules {rules.name}, stock {'known' if args.known_stock else 'hidden'}, advice by {source_name}")
    print(line("table change -> move recorded", recorded_ms))
    print(line("table change -> advice shown ", advice_ms))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
