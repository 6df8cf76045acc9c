"""tools/evaluate_layout.py: where the lattice fit lies against the rendered cards."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.cards import Card  # noqa: E402
from companion.vision.detections import Detections  # noqa: E402
from companion.vision.fake import Noise, detections_from_truth, synth_truth  # noqa: E402
from companion.vision.pipeline import LayoutPipeline  # noqa: E402
from tools.evaluate_layout import LATTICE_OFF, lattice_error, waste_why  # noqa: E402


def test_lattice_error_in_card_pitches():
    rng = np.random.default_rng(3)
    truth = synth_truth(rng, removed=5)
    reading = LayoutPipeline(track=False).read(detections_from_truth(truth, Noise.none(), rng), -1, (1280, 720))
    fit = reading.fit
    assert fit is not None and lattice_error(truth, fit, 7, False) < LATTICE_OFF
    # the same lattice moved by one slot along the rows (and by half a slot down a row) is off by that
    one_slot = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert 0.9 < lattice_error(truth, replace(fit, homography=fit.homography @ one_slot), 7, False) < 1.1
    assert lattice_error(truth, None, 7, False) == float("inf")
    cleared = dict(truth, pyramid=[[dict(slot, card=None) for slot in row] for row in truth["pyramid"]])
    assert lattice_error(cleared, None, 7, False) == 0.0  # no card left: nothing to place


def test_waste_why_says_why_a_waste_top_is_wrong():
    rng = np.random.default_rng(5)
    truth = synth_truth(rng)
    top = truth["waste"][0]["top"]
    dets = detections_from_truth(truth, Noise.none(), rng)
    other = next(c for c in ("2C", "3D", "4H") if c != top)
    assert waste_why(truth, dets, [top]) == "right"
    assert waste_why(truth, dets, [other]) == "read right, not taken"
    assert waste_why(truth, dets, [None]) == "read right, not taken"
    top_boxes = [l["box"] for l in truth["labels"] if l["where"].startswith("waste:0:")]
    on_top = np.array([any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in top_boxes) for x, y in dets.centers])
    assert on_top.any()
    misread = replace(dets, class_id=np.where(on_top, Card.parse(other).index, dets.class_id))
    assert waste_why(truth, misread, [other]) == "misread"
    unread = Detections(dets.xyxy[~on_top], dets.class_id[~on_top], dets.confidence[~on_top])
    assert waste_why(truth, unread, [None]) == "no read on it"
    hidden = dict(truth, labels=[l for l in truth["labels"] if not l["where"].startswith("waste:")])
    assert waste_why(hidden, dets, [other]) == "not in view"
    empty = dict(truth, waste=[{"cards": [], "top": None}])
    assert waste_why(empty, dets, [top]) == "empty waste read as a card"
    assert waste_why(empty, dets, [None]) == "right"
