"""tools/evaluate_naming.py bookkeeping: which first indices it names, and at what angle."""

from __future__ import annotations

import numpy as np
import pytest

from companion.cards import CARD_CODES
from tools.evaluate_naming import first_indices, scale_set


def slot(card, turn_deg, visible=True, which="tl"):
    a = np.radians(turn_deg)
    right, down = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    quad = [np.zeros(2), 50 * right, 50 * right + 70 * down, 70 * down]
    return {"card": card, "quad": [q.tolist() for q in quad],
            "corners": [{"which": which, "box": [0, 0, 8, 14], "visible": visible, "in_frame": True}]}


@pytest.mark.parametrize("turn", [0.0, 30.0, -90.0])
def test_first_indices_in_view_and_the_layouts_turn(turn):
    truth = {"pyramid": [[slot("JH", turn)],
                         [slot("QS", turn), slot("2C", turn, visible=False)],
                         [{"card": None, "corners": []}, slot("KD", turn, which="br"), slot("7D", turn + 10)]]}
    boxes, ids, angle = first_indices(truth)
    assert [CARD_CODES[i] for i in ids] == ["JH", "QS", "7D"]  # no hidden, second or empty ones
    assert boxes.shape == (3, 4)
    # the cards' own turn (orientation.layout_angle's: the card's right is (cos a, sin a) in the
    # image), the median of those named
    assert angle == pytest.approx(turn)


def test_face_scale_sets_are_positive_sizes():
    import argparse

    assert scale_set("0.9,1.0") == (0.9, 1.0) and scale_set("0.85") == (0.85,)
    for bad in ("0,1", "big", "", "0.9,-1"):
        with pytest.raises(argparse.ArgumentTypeError, match="not positive sizes"):
            scale_set(bad)
