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
from tools.evaluate_layout import LATTICE_OFF, lattice_error, piles_left_to_right, waste_why  # noqa: E402


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


def _quad(cx: float, cy: float, turn: int) -> list[list[float]]:
    """A card's quad (top-left, top-right, bottom-right, bottom-left) at (cx, cy), the table turned
    by ``turn`` half turns in the image."""
    q = np.array([[cx - 30, cy - 40], [cx + 30, cy - 40], [cx + 30, cy + 40], [cx - 30, cy + 40]])
    return (q * (-1) ** turn).tolist()


def test_waste_piles_are_compared_left_to_right_as_the_player_sees_them():
    # The renderer lists three piles from the stock outward; the pipeline reports them left to right.
    for turn in (0, 1):
        for stock_x, xs in ((100, (200, 300, 400)), (500, (400, 300, 200))):
            truth = {"waste": [{"cards": [c], "top": c, "quad": _quad(x, 500, turn)}
                               for c, x in zip(("QH", "5D", "2D"), xs)],
                     "stock": {"present": True, "quad": _quad(stock_x, 500, turn)}, "labels": []}
            left_first = stock_x < xs[0]
            assert piles_left_to_right(truth) == ([0, 1, 2] if left_first else [2, 1, 0])
            tops = ["QH", "5D", "2D"] if left_first else ["2D", "5D", "QH"]
            assert waste_why(truth, Detections.empty(), tops) == "right"
            # with no stock in view, pile 0 still lies nearest where it was
            assert piles_left_to_right(dict(truth, stock={"present": False, "quad": None})) == \
                piles_left_to_right(truth)
    one = {"waste": [{"cards": ["QH"], "top": "QH", "quad": _quad(200, 500, 0)}], "labels": []}
    assert piles_left_to_right(one) == [0]


def test_flagged_slots_are_the_apps_checks():
    """The layout evaluation counts as checked exactly what the app's correction flags: an unsure
    read, a read with a close runner-up, a card read twice, a slot with no card read."""
    from companion.layout import SlotReading, TableLayout
    from companion.rules import Rules
    from tools.evaluate_layout import flagged_slots
    C = Card.parse
    rules = Rules.parse("classic")
    cards = [c for c in rules.deck_cards()][:28]
    rows, k = [], 0
    for r in range(7):
        rows.append(tuple(SlotReading(cards[k + i], 0.95, ((cards[k + i], 0.95),)) for i in range(r + 1)))
        k += r + 1
    layout = TableLayout(tuple(rows))
    layout = layout.with_slot(6, 0, SlotReading(C("JH"), 0.9, ((C("JH"), 0.9), (C("QH"), 0.3))))  # close second
    layout = layout.with_slot(6, 1, SlotReading(C("KH"), 0.9, ((C("KH"), 0.9), (C("QS"), 0.01))))  # sure: silent
    layout = layout.with_slot(6, 2, SlotReading(C("4S"), 0.55, ((C("4S"), 0.55),)))  # unsure
    layout = layout.with_slot(6, 3, SlotReading.empty(1.0))  # no card read
    layout = layout.with_slot(6, 4, SlotReading(cards[0], 0.95, ((cards[0], 0.95),)))  # read twice
    assert flagged_slots(layout, rules) == {(6, 0), (6, 2), (6, 3), (6, 4), (0, 0)}
