"""Render the README screenshots of the real main window (run under Xvfb).

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tools/screenshots.py [--out docs/screenshots]

Scenes: the bundled demo video recognised (the ONNX model when one is installed, else the
fake detector), every card boxed and labelled; the card picker; the game followed with the
advice highlighted on the image; the table disagreeing with the game (the override
buttons); manual play with the plan. Settings and autosaves go to a temporary folder, so
the person's own settings are never touched.
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
    window = MainWindow(rules=Rules.preset("classic"), source="demo", manual=False, settings=settings,
                        data_dir=tmp / "data", ask_resume=lambda path: False)
    window.resize(width, height)
    window.show()
    shots = []

    def shot(name: str, widget=None) -> None:
        app.processEvents()
        path = out / f"{name}.png"
        (widget or window).grab().save(str(path))
        shots.append(path)

    from companion.app.capture import Frame
    from companion.app.demo import DemoSource, VideoDemoSource, bundled_video
    from companion.layout import SlotReading

    folder = bundled_video(window.rules)
    if folder is not None:  # what a newcomer sees: the bundled video, recognised (model or fake)
        source = VideoDemoSource(window.rules, folder, speed=3.0)
        if source.detector is None:  # (the fake detector and the video's labels, when no model)
            print(f"note: {source.recognition}", file=sys.stderr)
    else:
        source = DemoSource(window.rules, step_s=0.6, video=False)
    window.start_source("demo", opener=lambda: source)
    _wait(app, lambda: window.live.image is not None and window.live.boxes, 30)
    _wait(app, lambda: False, 0.8)
    shot("1-recognition")

    flagged = [p for p, f in window.board.picture.flags.items() if f.needs_check]
    target = flagged[0] if flagged else Place.parse("r4s2")
    picker = window.open_picker(target)
    _wait(app, lambda: picker.isVisible(), 3)
    _wait(app, lambda: False, 0.3)
    shot("2-picker", picker)
    picker.reject()
    truth = getattr(source, "deal", None)
    if isinstance(source, VideoDemoSource) and truth is not None:
        # the person corrects every misread card in the picker (here: to the video's truth)
        for place, card in zip(window.corrections.places(), truth):
            if window.corrections.card_at(place) is card:
                continue
            other = window.corrections.where(card, besides=place)
            if other is not None:
                window.corrections.swap(place, other)
            if window.corrections.card_at(place) is not card:
                window.corrections.set(place, card)
    else:
        for place in flagged:  # the drawn demo: the true card is the runner-up
            alternatives = window.corrections.reading(place).alternatives
            if len(alternatives) > 1:
                window.corrections.set(place, alternatives[1][0])
    window._refresh_setup()

    window.confirm()  # the demo's "hands" start playing; the window follows
    if window.session is None:
        print(f"cannot confirm the deal: {window.corrections.blocking_problems()[:3]}", file=sys.stderr)
        window.close()
        return 1
    _wait(app, lambda: len(window.session.moves()) >= 3, 60)
    _wait(app, lambda: window.advice is not None, 15)
    # a calm frame: no hand over the cards, every label as the game has it
    def calm() -> bool:
        live, state = window.live, window.session.state
        placed = {p for p, c in window.board.picture.slots.items() if c is not None}
        return (placed <= set(live.boxes) and not any(live.disagrees(p) for p in live.boxes)
                and window.advice is not None and window.advice.move is not None
                and window.advice.move.kind == "remove" and window.session.state is state)

    _wait(app, calm, 20)
    window.stop_source()
    window.live.set_message("")
    _wait(app, lambda: False, 0.3)
    shot("3-play-along")

    # The table disagrees with the game: the camera misreads one card (10♦ read as 8♦, say).
    state = window.session.state
    last = window.session.last_layout
    image = window.last_frame.image if window.last_frame is not None else None
    target = next((p for p, c in sorted(window.live.frame_cards.items()) if p.is_slot and p.row >= 4
                   and c in state.pyramid and c.rank >= 3), None)
    if last is not None and image is not None and target is not None:
        real = window.live.frame_cards[target]
        wrong = next(c for c in window.rules.deck_cards()
                     if c.suit == real.suit and abs(c.rank - real.rank) == 2 and c not in state.pyramid)
        layout = last.with_slot(target.row, target.index, SlotReading(wrong, 0.62, ((wrong, 0.62), (real, 0.3))))
        cards = dict(window.live.frame_cards)
        cards[target] = wrong
        scores = dict(window.live.frame_scores)
        scores[target] = 0.62
        frame = Frame(image, 10_000, layout, dict(window.live.boxes), cards=cards, scores=scores)
        window.on_frame(frame)
        _wait(app, lambda: False, 0.3)
        shot("5-table-disagrees")

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
