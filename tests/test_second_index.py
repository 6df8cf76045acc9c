"""Second indices that the first reading gets wrong (companion.vision.second_index)."""

import numpy as np
import pytest

from companion.cards import Card
from companion.vision.card_read import CardRead
from companion.vision.second_index import (AS_NEAR, AS_NEAR_ALT, UNDER_NEXT_ROW, bared_slots, br_cover_of, cross_second_indices,
                                           second_indices)
from companion.vision.slots import pyramid_nodes

NODES_RI, NODES_UV = pyramid_nodes(7, False)
NODE = {(int(r), int(i)): k for k, (r, i) in enumerate(NODES_RI)}
BR_COVER = br_cover_of(7, False)


def read(k, code, score, uv, alts=()):
    return CardRead(k, Card.parse(code), score, {Card.parse(c): s for c, s in alts}, uv=tuple(uv))


@pytest.mark.parametrize("lain_on", [False, True])
def test_a_misread_second_index_on_the_slot_down_right_is_pooled_with_its_card(lain_on):
    # 9H on (4,2), rows dealt about a row apart: its second index lies on (5,3), read there as 7H
    # (9H its runner-up). It lies nearer where 9H's index belongs than (5,3)'s own corner.
    br_off = np.array([0.5, 1.37])
    reads = [read(0, "9H", 0.78, NODES_UV[NODE[(4, 2)]]),
             read(1, "7H", 0.45, NODES_UV[NODE[(4, 2)]] + br_off + [0.05, 0.05], [("9H", 0.39)])]
    uv = np.array([rd.uv for rd in reads])
    ids = np.array([NODE[(4, 2)], NODE[(5, 3)]])
    on_br = [[1], []]  # 7H on the slot over 9H's corner
    # how far each read lies from its slot's corner; 0 with cards read on (6,3) and (6,4): (5,3) holds a card
    from_own = np.array([np.hypot(*(uv[j] - NODES_UV[ids[j]])) for j in range(2)])
    if lain_on:
        from_own[1] = 0.0
    second = np.full(2, -1)
    cross_second_indices(reads, uv, on_br, second, br_off, from_own_corner=from_own)
    if lain_on:  # a card of its own, hiding 9H's index
        assert second[1] == -1 and str(reads[1].card) == "7H"
    else:
        assert second[1] == 0 and str(reads[0].card) == "9H" and reads[0].score > 0.78


@pytest.mark.parametrize("runner_up, farther, pooled", [
    (0.44, 0.0, True), (AS_NEAR_ALT / 2, 0.0, False), (0.44, AS_NEAR, False)])
def test_a_read_about_as_near_its_slot_as_the_second_index_spot_is_pooled_when_it_names_the_card(
        runner_up, farther, pooled):
    # val_s64_000206: TC on (5,4), rows dealt a row apart (br offset 1.2 rows): its second index lies
    # on (6,5)'s corner, read there as 8C (TC its runner-up), a little nearer (6,5)'s corner than
    # where TC's index belongs. Named TC as its runner-up, it is TC's index; barely so, a card.
    br_off = np.array([0.75, 1.2])
    own = NODES_UV[NODE[(6, 5)]]
    spot = NODES_UV[NODE[(5, 4)]] + br_off
    at = own + [0.12, 0.07]
    at = at + (at - spot) / np.hypot(*(at - spot)) * farther  # moved away from the spot
    reads = [read(0, "TC", 0.755, NODES_UV[NODE[(5, 4)]], [("9C", 0.001)]),
             read(1, "8C", 0.358, at, [("TC", runner_up), ("9C", 0.038)])]
    uv = np.array([rd.uv for rd in reads])
    from_own = np.array([0.0, np.hypot(*(at - own))])
    assert np.hypot(*(at - spot)) > from_own[1]  # nearer its own slot's corner
    second = np.full(2, -1)
    cross_second_indices(reads, uv, [[1], []], second, br_off, from_own_corner=from_own)
    if pooled:
        assert second[1] == 0 and str(reads[0].card) == "TC" and reads[0].score > 0.755
    else:
        assert second[1] == -1 and str(reads[1].card) == "8C" and str(reads[0].card) == "TC"


@pytest.mark.parametrize("weak", [False, True])
def test_a_second_index_under_only_weak_reads_is_still_taken_at_its_offset(weak):
    # Two open cards show both indices (the offset); 3C's pair matches it, but a read (its face's
    # pips) lies on the slot down-right of 3C: only weak ones there do not hide its second index.
    off = np.array([0.66, 2.3])
    firsts = [("TS", (3, 0)), ("6C", (3, 2)), ("3C", (3, 1))]
    reads = []
    for code, at in firsts:
        reads.append(read(len(reads), code, 0.7, NODES_UV[NODE[at]]))
        reads.append(read(len(reads), code, 0.65, NODES_UV[NODE[at]] + off + [0.03, -0.02]))
    uv = np.array([rd.uv for rd in reads])
    can_show = np.array([True, True, True, True, False, True])
    weakly_hidden = np.array([False, False, False, False, weak, False])
    second, br_off = second_indices(reads, uv, can_show, np.zeros(len(reads), bool), weakly_hidden)
    assert np.allclose(br_off, off + [0.03, -0.02])
    assert list(second[[1, 3]]) == [0, 2]
    assert second[5] == (4 if weak else -1)


def test_a_shown_second_index_bares_the_slot_down_right_only_when_rows_overlap():
    k = NODE[(3, 1)]
    ids = np.array([k, -1])
    winner = [-1] * len(NODES_RI)
    winner[k] = 0
    second = np.array([-1, 0])
    assert bared_slots(second, ids, winner, BR_COVER, np.array([0.6, 1.4])) == {NODE[(4, 2)]}
    # val_s22_000057: KC's second index 0.87 rows below its first lies under the next row's cards
    # (their top edges lie above their first indices): its figure read as JC there is no card
    assert bared_slots(second, ids, winner, BR_COVER, np.array([0.73, 0.87])) == {NODE[(4, 2)]}
    # rows dealt apart: every second index shows, whatever lies down-right
    assert bared_slots(second, ids, winner, BR_COVER, np.array([0.6, UNDER_NEXT_ROW - 0.2])) == set()
    # the index's card is not the one placed on its slot
    winner[k] = -1
    assert bared_slots(second, ids, winner, BR_COVER, np.array([0.6, 1.4])) == set()


def test_the_keeper_of_a_card_read_twice_is_the_likeliest_table():
    from companion.vision.card_read import NO_ALTERNATIVE, keeper_first

    js, jc, qs = Card.parse("JS"), Card.parse("JC"), Card.parse("QS")
    upper = ("row 3 card 2", read(0, "JS", 0.62, (0, 2), [("JD", 0.05)]))
    lower = ("row 7 card 2", read(1, "JS", 0.92, (0, 6), [("JC", 0.17)]))

    def free(rd):
        return max(((c, s) for c, s in rd.alts.items() if c not in (js, qs) and s > NO_ALTERNATIVE),
                   key=lambda t: t[1], default=None)
    assert keeper_first([lower, upper], free)[0] is upper  # 0.62 x 0.17 > 0.92 x 0.05
    upper[1].alts[jc] = 0.3  # now giving it up at the upper slot costs less
    assert keeper_first([upper, lower], free)[0] is lower
