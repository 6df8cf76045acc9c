"""Small cards named from their face as well as their index (companion.vision.face_read)."""

import cv2
import numpy as np
import pytest

from companion.cards import CARD_CODES
from companion.vision.detections import Detections
from companion.vision.face_read import (FACE_OFFSET, face_centre, face_crop, fused_names, named_with_faces,
                                       top_distribution)
from companion.vision.fake import Noise, detections_from_truth, synth_truth
from companion.vision.orientation import layout_angle
from companion.vision.pipeline import LayoutPipeline


def card_image(angle_deg: float, size=(400, 400)):
    """A white card (100 x 140 px) turned by ``angle_deg`` (``layout_angle``'s sense) on a dark table,
    with a red mark at its top-right pip place and a blue one at its bottom-left; returns the image
    and the box of its top-left index."""
    img = np.full((size[1], size[0], 3), 40, np.uint8)
    a = np.radians(angle_deg)
    right, down = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    corner = np.array([200.0, 200.0]) - 50 * right - 70 * down

    def at(x, y):
        return corner + x * right + y * down

    cv2.fillPoly(img, [np.round([at(0, 0), at(100, 0), at(100, 140), at(0, 140)]).astype(np.int32)], (255, 255, 255))
    cv2.circle(img, tuple(int(v) for v in np.round(at(75, 30))), 8, (0, 0, 255), -1)
    cv2.circle(img, tuple(int(v) for v in np.round(at(25, 110))), 8, (255, 0, 0), -1)
    c = at(10, 20)  # the index: ~0.3, 0.55 of its 37 px side from the corner, as on real decks
    return img, np.array([c[0] - 18.5, c[1] - 18.5, c[0] + 18.5, c[1] + 18.5])


@pytest.mark.parametrize("angle", [0.0, 30.0, -75.0, 180.0])
def test_the_face_crop_stands_the_card_upright_whichever_way_it_lies(angle):
    img, box = card_image(angle)
    crop = face_crop(img, box, 64, angle)
    red = np.argwhere((crop[:, :, 2] > 200) & (crop[:, :, 0] < 80))
    assert len(red) > 10
    y, x = red.mean(0)
    assert x > 32 and y < 32  # the top-right mark is up and right in the crop
    # the crop starts about at the card's corner and spans about its width
    centre, side = face_centre(box, angle)
    assert side == pytest.approx(3.0 * 37, rel=0.01)
    assert np.hypot(*(centre - (box[:2] + box[2:]) / 2)) == pytest.approx(37 * np.hypot(*FACE_OFFSET), rel=0.01)


def test_pooling_picks_the_name_both_readings_allow():
    top_ids = np.array([[10, 11, 9, 12]])  # index: JC 0.5, QC 0.4, TC 0.05, KC 0.04
    top_p = np.array([[0.5, 0.4, 0.05, 0.04]])
    face = np.full((1, 52), 0.1 / 50)
    face[0, 11], face[0, 24] = 0.45, 0.45  # face: QC or QD, not JC
    fused = fused_names(top_distribution(top_ids, top_p, 52), face)
    assert CARD_CODES[int(fused[0].argmax())] == "QC"
    assert fused.sum() == pytest.approx(1.0)
    # a name the index reading ruled out needs far more than an even face reading to win
    face2 = np.full((1, 52), 0.02 / 50)
    face2[0, 24], face2[0, 10] = 0.5, 0.48
    assert CARD_CODES[int(fused_names(top_distribution(top_ids, top_p, 52), face2)[0].argmax())] == "JC"


def test_named_with_faces_renames_only_the_rows_given_and_keeps_the_corner_share():
    dets = Detections(np.array([[0, 0, 10, 14], [20, 0, 30, 14]], np.float32), np.array([10, 5]),
                      np.array([0.3, 0.6], np.float32), np.array([[11, 9, 12], [6, 4, 7]]),
                      np.array([[0.3, 0.1, 0.1], [0.1, 0.0, 0.0]], np.float32))
    face = np.full((1, 52), 0.01 / 51, np.float32)
    face[0, 11] = 0.99
    out = named_with_faces(dets, np.array([0]), face)
    assert out.class_id.tolist() == [11, 5]
    assert out.confidence[1] == pytest.approx(0.6)
    # corner share 0.3 / 0.5 (what the runner-ups leave to the best), times the pooled name's probability
    fused = fused_names(top_distribution(np.array([[10, 11, 9, 12]]), np.array([[0.5, 0.3, 0.1, 0.1]]), 52), face)
    assert out.confidence[0] == pytest.approx(0.6 * fused[0, 11], rel=1e-4)
    assert out.alt_class_id[0, 0] == 10
    # with the index reading's 52 probabilities, the corner's share is the score over its best one
    index = np.full((1, 52), 0.2 / 51)
    index[0, 10] = 0.8
    out = named_with_faces(dets, np.array([0]), face, index_probs=index)
    assert out.confidence[0] == pytest.approx(0.3 / 0.8 * fused_names(index, face)[0, 11], rel=1e-4)


class SmallCardsMisread:
    """Reads the truth's corners but misnames ``wrong`` slots' first indices (the right name a weak
    runner-up, as a tiny index is read); names every card right from its face."""

    face_weight = 1.0

    def __init__(self, truth, wrong, face_below_px=100.0):
        self.truth, self.wrong, self.face_below_px = truth, wrong, face_below_px
        self.face_calls = []

    def detect(self, image):
        dets = detections_from_truth(self.truth, Noise.none(), np.random.default_rng(0))
        cls, alt_c, alt_p = dets.class_id.copy(), np.zeros((len(dets), 3), np.int64), np.zeros((len(dets), 3), np.float32)
        stock = [CARD_CODES.index(c) for c in CARD_CODES if c not in str(self.truth["pyramid_codes"])]
        for k, box in enumerate(dets.xyxy):
            label = self.label_at(box)
            r, i = ((int(v) for v in label["where"].split(":")[1:]) if label["where"].startswith("pyramid")
                    else ("waste", 0) if label["where"].startswith("waste") else (-1, -1))
            alt_c[k] = [stock[k % len(stock)], stock[(k + 1) % len(stock)], stock[(k + 2) % len(stock)]]
            if (r, i) in self.wrong and (label["which"] == "tl" or r == "waste"):  # a waste card: both
                alt_c[k, 0], alt_p[k] = cls[k], [0.3, 0.05, 0.05]
                cls[k] = stock[(k + 5) % len(stock)]
        return Detections(dets.xyxy, cls, np.full(len(dets), 0.5, np.float32), alt_c, alt_p)

    def label_at(self, box):
        c = (box[:2] + box[2:]) / 2
        return min(self.truth["labels"], key=lambda l: np.hypot(*(c - (np.array(l["box"][:2]) + l["box"][2:]) / 2)))

    def name_faces(self, image, boxes, angle=0.0):
        self.face_calls.append((np.asarray(boxes).copy(), angle))
        probs = np.full((len(boxes), 52), 0.05 / 51, np.float32)
        for k, b in enumerate(boxes):
            probs[k, CARD_CODES.index(self.label_at(b)["card"])] = 0.95
        return probs


def test_small_cards_misread_by_their_index_are_named_right_from_their_face():
    # The waste's top card too: its whole face is in view (rendered val, 600 scenes: 6 more waste
    # tops right, 3 fewer).
    truth = synth_truth(np.random.default_rng(5))
    image = np.zeros((truth["height"], truth["width"], 3), np.uint8)
    wrong = [(1, 0), (3, 2), (5, 4), ("waste", 0)]  # covered cards: one index each; the waste top's first
    det = SmallCardsMisread(truth, wrong, face_below_px=None)
    plain = LayoutPipeline(det, turn=False).process(image).layout
    assert all(plain.to_json()["pyramid"][r][i] != truth["pyramid_codes"][r][i] for r, i in wrong[:3])
    assert [str(c) for c in plain.waste_tops()] != ["6H"]
    det = SmallCardsMisread(truth, wrong)
    reading = LayoutPipeline(det, turn=False).process(image)
    assert reading.layout.to_json()["pyramid"] == truth["pyramid_codes"]
    assert [str(c) for c in reading.layout.waste_tops()] == [truth["waste"][0]["top"]] == ["6H"]
    boxes, angle = det.face_calls[-1]
    assert len(boxes) == 29  # the cards on the slots and the waste's top, not their second indices
    assert angle == pytest.approx(layout_angle(reading.fit.homography))


def test_cards_big_enough_are_not_looked_at_again():
    truth = synth_truth(np.random.default_rng(5))
    image = np.zeros((truth["height"], truth["width"], 3), np.uint8)
    det = SmallCardsMisread(truth, [(3, 2)], face_below_px=1.0)
    reading = LayoutPipeline(det, turn=False).process(image)
    assert det.face_calls == []
    assert reading.layout.to_json()["pyramid"][3][2] != truth["pyramid_codes"][3][2]


def test_training_crops_follow_each_card_and_skip_faces_out_of_view():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from train_face import card_angle, card_quad, train_crops

    truth = synth_truth(np.random.default_rng(2))
    quad = truth["pyramid"][0][0]["quad"]
    assert card_quad(truth, "pyramid:0:0") == quad
    turned = [quad[1], quad[2], quad[3], quad[0]]  # the same card a quarter turn round
    d = (card_angle(turned, "tl") - card_angle(quad, "tl")) % 360
    assert min(abs(d - 90), abs(d - 270)) < 1.0  # (a card seen in perspective is no exact rectangle)
    assert (card_angle(quad, "br") - card_angle(quad, "tl")) % 360 == pytest.approx(180)
    truth["waste"] = [{"cards": ["2C", "3C"], "top": "3C", "quad": quad}]
    assert card_quad(truth, "waste:0:0") is None and card_quad(truth, "waste:0:1") == quad
    image = np.zeros((truth["height"], truth["width"], 3), np.uint8)
    crops = list(train_crops(truth, image, np.random.default_rng(0)))
    tl = [l for l in truth["labels"] if l["which"] == "tl" and l["where"].startswith("pyramid")]
    assert len(tl) <= len(crops) < len(truth["labels"]) + 1
    assert all(c.shape == (64, 64, 3) for _, c in crops)
