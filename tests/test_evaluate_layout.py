"""tools/evaluate_layout.py: where the lattice fit lies against the rendered cards."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.vision.fake import Noise, detections_from_truth, synth_truth  # noqa: E402
from companion.vision.pipeline import LayoutPipeline  # noqa: E402
from tools.evaluate_layout import LATTICE_OFF, lattice_error  # noqa: E402


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
