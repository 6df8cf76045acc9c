"""Recognition in the app: the camera path (detector -> slots -> fusion -> overlay), the model fallback."""

from __future__ import annotations

import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest

from companion.cards import Card
from companion.rules import Rules

pytest.importorskip("cv2")
pytest.importorskip("companion.vision.pipeline")

from companion.app.demo import GAMES_DIR, DEMO_GAME  # noqa: E402

FOLDER = GAMES_DIR / DEMO_GAME


def dealt_table():
    """Detections of the demo video's first frame (its labels, no noise) and the deal."""
    from companion.vision.fake import Noise, detections_from_truth

    truth = json.loads((FOLDER / "truth.json").read_text())
    first = json.loads((FOLDER / "labels.jsonl").read_text().splitlines()[0])
    w, h = truth["size"]
    labels = {"labels": [{"cls": c, "box": b} for c, *b in first["labels"]], "width": w, "height": h}
    dets = detections_from_truth(labels, Noise.none(), np.random.default_rng(0))
    return dets, [Card.parse(c) for c in truth["deal"].split()], (h, w)


class FixedDetector:
    """Sees the same table in every frame (what a model reads from a still camera)."""

    def __init__(self, dets) -> None:
        self.dets = dets
        self.calls = 0

    def detect(self, image):
        self.calls += 1
        return self.dets


@pytest.fixture
def window(window_factory):
    if not (FOLDER / "labels.jsonl").is_file():
        pytest.skip("no bundled demo game")
    return window_factory(rules=Rules.preset("classic"))


def test_camera_frames_are_recognised_boxed_labelled_and_followed(window, qtbot):
    from companion.app.fakes import ScriptedSource
    from companion.app.places import Place
    from companion.app.recognition import LiveRecognizer

    dets, deal, (h, w) = dealt_table()
    detector = FixedDetector(dets)
    recognizer = LiveRecognizer(window.rules, fps=10, detector=detector, description="test detector")
    window.set_manual(False, start_source=False)
    window.start_source("camera:0", opener=lambda: ScriptedSource([np.zeros((h, w, 3), np.uint8)]),
                        recognizer=recognizer)
    places = [Place.slot(r, i) for r in range(7) for i in range(r + 1)]
    # the set-up shows the dealt table once it is stable (fusion), every card boxed and labelled
    qtbot.waitUntil(lambda: window.board.picture.slots.get(places[-1]) is not None, timeout=10000)
    assert [window.board.picture.slots[p] for p in places] == deal[:28]
    assert set(window.live.boxes) >= set(places)
    assert all(window.live.label_of(p) is c for p, c in zip(places, deal))
    window.live.grab()  # paint: every label touches its corner box; the bottom row's lie on their cards
    for place in places:
        box, label = window.live.place_rect(place), window.live.label_rect(place)
        assert label is not None and box.adjusted(-6, -6, 6, 6).intersects(label)
        if place.row == 6:
            assert label.top() > box.bottom()
    assert detector.calls >= 7 and "test detector" in window.source_status.text()
    # a click on a label corrects that card, as a click on the board does
    window.live.placeClicked.emit(window.live.place_at(window.live.label_rect(places[4]).center()))
    assert window.picker is not None and window.picker.place == places[4]
    window.picker.reject()
    # play: the advised move is highlighted on the image and named on it
    window.confirm()
    qtbot.waitUntil(lambda: window.advice is not None, timeout=10000)
    advice = window.advice
    assert window.live.banner.startswith("Next:")
    if advice.move is not None and advice.move.kind == "remove":
        where = {c: p for p, c in window.board.picture.slots.items() if c is not None}
        assert window.live.highlights == {where[c] for c in advice.move.cards if c in where}


def test_without_a_model_the_demo_says_it_uses_the_fake_detector(window, qtbot, monkeypatch, tmp_path):
    from companion.app.demo import VideoDemoSource, open_demo
    from companion.app.recognition import LiveRecognizer, shipped_detector

    monkeypatch.setenv("PYRAMID_COMPANION_MODELS", str(tmp_path / "no-model"))
    detector, words = shipped_detector()
    assert detector is None and words.startswith("no model in") and "no-model" in words
    recognizer = LiveRecognizer(window.rules)
    assert "manual mode" in recognizer.prepare()  # the camera image is shown, unrecognised
    source = open_demo(window.rules)
    try:
        assert isinstance(source, VideoDemoSource) and source.detector is None
        assert "fake detector" in source.recognition
        frame = source.read()
        assert len(frame.boxes) >= 28 and frame.layout is not None  # the overlay works with the fake too
    finally:
        source.close()
    window.set_manual(False, start_source=False)
    window.start_source("demo")
    qtbot.waitUntil(lambda: "fake detector" in window.source_status.text(), timeout=10000)
    assert "no model" in window.source_status.text()


def test_a_broken_model_falls_back_with_the_reason(monkeypatch, tmp_path):
    from companion.app.recognition import shipped_detector

    folder = tmp_path / "broken"
    folder.mkdir()
    for name in ("corner_detector.onnx", "card_classifier.onnx"):
        (folder / name).write_bytes(b"not a model")
    monkeypatch.setenv("PYRAMID_COMPANION_MODELS", str(folder))
    detector, words = shipped_detector()
    assert detector is None and words.startswith("model not loadable") and "corner_detector.onnx" in words


def test_confirming_a_deal_keeps_its_corners_named_as_confirmed(window, qtbot):
    from companion.app.fakes import ScriptedSource
    from companion.app.flow import DECK_SAMPLES
    from companion.app.places import Place
    from companion.app.recognition import LiveRecognizer
    from companion.vision.deck_samples import load_frames, load_samples

    dets, deal, (h, w) = dealt_table()
    import cv2

    rng = np.random.default_rng(1)  # a smooth random texture: each crop of it is distinct
    image = cv2.GaussianBlur(rng.random((h, w, 3)).astype(np.float32), (0, 0), 2.0)
    image = (255 * (image - image.min()) / (image.max() - image.min())).astype(np.uint8)
    recognizer = LiveRecognizer(window.rules, fps=10, detector=FixedDetector(dets), description="test detector")
    window.set_manual(False, start_source=False)
    window.start_source("camera:0", opener=lambda: ScriptedSource([image]), recognizer=recognizer)
    places = [Place.slot(r, i) for r in range(7) for i in range(r + 1)]
    qtbot.waitUntil(lambda: window.board.picture.slots.get(places[-1]) is not None, timeout=10000)
    qtbot.waitUntil(lambda: window.last_frame is not None and set(window.last_frame.boxes) >= set(places),
                    timeout=10000)
    # the person corrects two cards (swapped), then confirms
    window.corrections.swap(places[0], places[1])
    window.confirm()
    assert window.session is not None
    samples = load_samples(window.data_dir / DECK_SAMPLES)
    named = {s.where: s.card for s in samples}
    assert len(samples) >= 28
    assert named[str(places[0])] is deal[1] and named[str(places[1])] is deal[0]
    assert all(named[str(p)] is c for p, c in zip(places[2:], deal[2:28]))
    # and the whole frame, with the deal as confirmed (to check a learned model as the pipeline reads)
    (kept,) = load_frames(window.data_dir / DECK_SAMPLES)
    flat = [c for row in kept.pyramid for c in row]
    assert flat[:2] == deal[1::-1] and flat[2:] == deal[2:28] and kept.rules == window.rules.name
    assert kept.stamp == samples[0].path.name.split("_")[0] and kept.image().shape == image.shape
    # the saved picture holds the frame's corner: cropped again it matches the frame's own crop
    from companion.vision.detector import corner_crop

    s = next(s for s in samples if s.where == str(places[27]))
    box = np.array(window.last_frame.boxes[places[27]])
    want = corner_crop(image, box, 1.3, 64).astype(float)
    got = corner_crop(s.image(), np.array(s.box), 1.3, 64).astype(float)
    assert np.abs(want - got).mean() < 5
    assert np.abs(corner_crop(image, box + 3, 1.3, 64) - want).mean() > 12  # (a crop 3 px off)


def test_corners_are_not_kept_when_the_person_turned_it_off(window, qtbot):
    from companion.app.fakes import ScriptedSource
    from companion.app.flow import DECK_SAMPLES
    from companion.app.places import Place
    from companion.app.recognition import LiveRecognizer

    dets, deal, (h, w) = dealt_table()
    recognizer = LiveRecognizer(window.rules, fps=10, detector=FixedDetector(dets), description="test detector")
    window.act_learn.trigger()  # off
    assert not window.act_learn.isChecked() and window.settings.value("learn_deck", type=bool) is False
    window.set_manual(False, start_source=False)
    window.start_source("camera:0", opener=lambda: ScriptedSource([np.zeros((h, w, 3), np.uint8)]),
                        recognizer=recognizer)
    qtbot.waitUntil(lambda: window.board.picture.slots.get(Place.slot(6, 6)) is not None, timeout=10000)
    window.confirm()
    assert window.session is not None and not (window.data_dir / DECK_SAMPLES).exists()


def test_the_camera_learns_the_deal_the_person_checked(window, qtbot):
    # The deal as confirmed, a card corrected by the person included, goes to the pipeline that
    # reads the frames (its misread card's second index is then named by it); a new game forgets it.
    from companion.app.fakes import ScriptedSource
    from companion.app.places import Place
    from companion.app.recognition import LiveRecognizer

    dets, deal, (h, w) = dealt_table()
    recognizer = LiveRecognizer(window.rules, fps=10, detector=FixedDetector(dets), description="test detector")
    window.set_manual(False, start_source=False)
    window.start_source("camera:0", opener=lambda: ScriptedSource([np.zeros((h, w, 3), np.uint8)]),
                        recognizer=recognizer)
    qtbot.waitUntil(lambda: window.board.picture.slots.get(Place.slot(6, 6)) is not None, timeout=10000)
    assert recognizer._pipeline.known == {}
    other = next(c for c in deal[28:] if c is not None)  # a stock card: the camera's read was wrong
    window.corrections.set(Place.slot(6, 6), other)
    window.confirm()
    known = recognizer._pipeline.known
    assert known[(6, 6)] == other and known[(0, 0)] == deal[0] and len(known) == 28
    window.new_game()
    assert recognizer._pipeline.known == {}
