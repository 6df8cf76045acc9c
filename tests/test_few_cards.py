"""A nearly cleared pyramid in a still: a few cards placed by what is left of a pyramid
(closed towards the apex) and by each card's two indices (companion.vision.few_cards)."""

import numpy as np
import pytest

from companion.vision.fake import Noise, detections_from_truth, synth_truth
from companion.vision.few_cards import better_fit, few_score
from companion.vision.second_index import pair_indices
from companion.vision.pipeline import LayoutPipeline


def scene(seed: int, left: int, **kw):
    truth = synth_truth(np.random.default_rng(seed), removed=28 - left, **kw)
    return truth, detections_from_truth(truth, Noise.none(), np.random.default_rng(seed))


def cards_left(truth) -> dict:
    return {(r, i): c for r, row in enumerate(truth["pyramid_codes"]) for i, c in enumerate(row) if c}


@pytest.mark.parametrize("left", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", range(6))
def test_a_few_cards_left_are_read_on_their_slots_with_the_waste_below(seed, left):
    truth, dets = scene(seed, left)
    assert len(cards_left(truth)) == left
    reading = LayoutPipeline(track=False).read(dets, -1, (truth["width"], truth["height"]))
    assert reading.layout is not None, reading.problems
    assert reading.layout.to_json()["pyramid"] == truth["pyramid_codes"]
    assert [str(c) for c in reading.layout.waste_tops()] == [truth["waste"][0]["top"]]


def test_only_the_waste_left_is_no_pyramid():
    """A card with its second index and nothing below it: as likely the waste of a cleared pyramid."""
    truth, dets = scene(1, 1, waste_cards=1)
    apex = [j for j, l in enumerate(truth["labels"]) if l["where"] == "pyramid:0:0"]
    keep = np.setdiff1d(np.arange(len(dets)), [j for j, c in enumerate(dets.centers)
                                               if any(_near(c, truth["labels"][a]["box"]) for a in apex)])
    reading = LayoutPipeline(track=False).read(dets[keep], -1, (truth["width"], truth["height"]))
    assert reading.layout is None


def _near(point, box) -> bool:
    x1, y1, x2, y2 = box
    return x1 - 2 <= point[0] <= x2 + 2 and y1 - 2 <= point[1] <= y2 + 2


def test_a_full_deal_keeps_the_searched_fit():
    """The searched fit of a deal with many cards is never questioned (more than FEW_MAX placed)."""
    truth, dets = scene(2, 28)
    centers = dets.centers.astype(float)
    reading = LayoutPipeline(track=False).read(dets)
    fit, few = better_fit(reading.fit, centers, np.ones(len(dets), bool), pair_indices(dets.class_id), 7, False,
                          centers)
    assert fit is reading.fit and few is None


def test_the_true_lattice_scores_above_one_shifted_by_a_slot():
    truth, dets = scene(3, 3)
    reading = LayoutPipeline(track=False).read(dets)
    h = reading.fit.homography
    shift = np.eye(3)
    shift[0, 2] = 1.0  # one slot to the right: the apex on (1, 1)'s place
    scores, kept, second = few_score(np.stack([h, h @ shift]), dets.centers.astype(float),
                                     pair_indices(dets.class_id), 7)
    assert scores[0] > scores[1]
    nodes = {(r, i): k for k, (r, i) in enumerate((r, i) for r in range(7) for i in range(r + 1))}
    assert sorted(np.flatnonzero(kept[0]).tolist()) == sorted(nodes[ri] for ri in cards_left(truth))
    # the lower read of each card read twice is its second index, under the true lattice
    for a, b in pair_indices(dets.class_id):
        low = a if dets.centers[a, 1] > dets.centers[b, 1] else b
        assert second[0, low] and not second[0, a + b - low]


def test_pair_indices():
    assert pair_indices(np.array([3, 5, 3, 7, 5, 3])).tolist() == [[0, 2], [0, 5], [1, 4], [2, 5]]
    assert pair_indices(np.array([1, 2])).shape == (0, 2)


def test_an_inverted_pyramid_is_left_to_the_search():
    truth, dets = scene(4, 2, inverted=True)
    centers = dets.centers.astype(float)
    assert better_fit(None, centers, np.ones(len(dets), bool), pair_indices(dets.class_id), 7, True,
                      centers) == (None, None)


@pytest.mark.parametrize("left", [1, 2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_a_game_followed_from_a_nearly_cleared_pyramid_is_accepted_right(seed, left):
    """Following started late: no deal seen, a few cards left. The few cards' lattice is found in
    the first frame and what it says holds in the frames tracked on it."""
    from companion.rules import Rules
    from companion.vision.fake import FakeDetector
    from companion.vision.fusion import LayoutFuser
    truth = synth_truth(np.random.default_rng(seed), removed=28 - left)
    pipe = LayoutPipeline(FakeDetector(truth, Noise.none()))
    fuser = LayoutFuser.for_fps(30, rules=Rules.parse("classic"), pipeline=pipe)
    frame = np.full((720, 1280, 3), 40, np.uint8)
    for i in range(20):
        fuser.update(pipe.process(frame, frame=i), i)
    assert fuser.accepted is not None
    assert fuser.accepted.to_json()["pyramid"] == truth["pyramid_codes"]
    assert [str(c) for c in fuser.accepted.waste_tops()] == [truth["waste"][0]["top"]]


def test_a_searched_fit_with_rows_across_the_cards_gives_way():
    """val_s66_000053 (these are its reads): the apex KH and the two cards under it, 2H and 2D, each
    showing both indices, were placed as 2H KH in one row and 2D under them, the apex's slot out of
    the picture: a lattice whose rows run at 90 degrees to the cards' own diagonals, scoring as
    high as the true one. Such a fit counts for nothing; the waste, 9H, lies far below."""
    from companion.cards import CARD_CODES
    from companion.vision.detections import Detections
    codes = ["2D", "2H", "2H", "9H", "2D", "KH", "9H", "KD"]
    dets = Detections(
        np.array([[705.9, 92.5, 728.0, 139.5], [553.5, 111.9, 577.9, 157.1], [670.5, 221.0, 693.2, 262.8],
                  [492.4, 561.1, 512.0, 592.2], [808.9, 213.6, 828.7, 253.4], [629.6, 28.6, 652.0, 74.9],
                  [591.3, 642.6, 610.3, 672.1], [461.1, 659.2, 478.8, 683.2]], np.float32),
        np.array([CARD_CODES.index(c) for c in codes]),
        np.array([0.8, 0.78, 0.78, 0.77, 0.75, 0.75, 0.73, 0.07], np.float32))
    reading = LayoutPipeline(track=False).read(dets, -1, (1280, 720))
    assert reading.layout is not None, reading.problems
    assert reading.layout.to_json()["pyramid"][:3] == [["KH"], ["2H", "2D"], [None, None, None]]
    assert [str(c) for c in reading.layout.waste_tops()] == ["9H"]


def test_rows_across_cards_needs_two_cards_that_agree_and_reads_either_way_along_them():
    from companion.vision.few_cards import _rows_across_cards

    def lattice(u, v):
        return np.array([[u[0], v[0], 600.0], [u[1], v[1], 100.0], [0.0, 0.0, 1.0]])
    diags = np.array([[60.0, 90.0], [62.0, 93.0]])
    upright, across = lattice((100, 0), (0, 60)), lattice((0, 100), (-60, 0))
    assert not _rows_across_cards(upright, diags) and not _rows_across_cards(upright, -diags)
    assert _rows_across_cards(across, diags) and _rows_across_cards(across, -diags)
    assert not _rows_across_cards(across, diags[:1])                       # one card says nothing
    assert not _rows_across_cards(across, np.array([[60.0, 90.0], [120.0, 20.0]]))  # two that disagree


def test_a_line_of_cards_dealt_unevenly_down_an_edge_is_placed_by_its_mean_step():
    """val_s64_000154 (these are its reads): 7D, AH, 5H, 7H and 4D left down the right edge, dealt
    unevenly (steps of 88, 60, 81 and 60 px across): a lattice from the apex's first step alone
    places no more than three of them, and AH became the apex. Taken four cards down the edge, the
    mean step places all five."""
    from companion.cards import CARD_CODES
    from companion.vision.detections import Detections
    codes = ["7H", "5H", "7D", "AH", "4D", "4D", "2H"]
    dets = Detections(
        np.array([[900.9, 190.4, 924.4, 221.8], [820.2, 147.1, 843.7, 181.2], [671.9, 56.2, 695.4, 93.6],
                  [760.4, 94.5, 783.8, 130.2], [1027.3, 312.9, 1048.6, 337.5], [960.7, 233.6, 983.8, 262.0],
                  [745.3, 435.4, 769.2, 455.5]], np.float32),
        np.array([CARD_CODES.index(c) for c in codes]),
        np.array([0.82, 0.81, 0.79, 0.79, 0.77, 0.62, 0.21], np.float32))
    reading = LayoutPipeline(track=False).read(dets, -1, (1280, 720))
    assert reading.layout is not None, reading.problems
    assert [row[-1] for row in reading.layout.to_json()["pyramid"][:5]] == ["7D", "AH", "5H", "7H", "4D"]
    assert sum(c is not None for row in reading.layout.to_json()["pyramid"] for c in row) == 5
