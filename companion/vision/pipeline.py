"""From one camera frame (or its detections) to a checked ``TableLayout``.

Steps for one frame (``LayoutPipeline.read``):

1. drop detections below ``min_score``;
2. put aside probable second indices: of several reads of one card, all but the
   top-most are the rotated bottom-right index of an uncovered card (or a
   duplicate), and would fall on lattice nodes of rows that are not there;
3. fit the pyramid lattice (``companion.vision.slots``), starting from the last
   frame's fit when it still explains the reads (video), else from scratch; a
   searched fit placing a few reads is weighed against lattices of a nearly
   cleared pyramid (``companion.vision.few_cards``: what is left is closed
   towards the apex, and each card's two indices give its size and turn);
4. one card, one place: a read sitting down-right of the same card's read
   (0.1..1.8 slot pitches right, 0.6..3.8 row pitches down) is that card's
   second index and confirms it; several reads on one slot keep the best and
   pool the rest into its alternatives; a card lying on an empty slot with
   the same card read elsewhere, or lying where that card's second index lies
   (rows dealt overlapping by about a row), is a stray index;
5. cards off the lattice: below the pyramid they are the waste (one pile, or
   up to three piles left to right; within a pile left to right = bottom to
   top, as a fanned draw-3 lies, except a card seen only by the bottom-right
   index peeking from under the top one; a draw-1 pile reports its top only),
   a reserve row when the rules have one
   (the band right under the pyramid, the waste below it), to the right of the
   pyramid the free cell(s); anything else is reported as a stray card;
6. one card in one place: a card read twice keeps the better read, the other
   place takes its best alternative that is seen nowhere, and the person is
   asked to check it; cards outside the rules' deck, low scores, and slots
   that must hold a card (a card lies on them) but show none are reported.

With a tracked fit (video), a frame whose reads all lie off the pyramid is a
cleared pyramid, and a frame with no read at all an empty table (the game
over); fusion decides whether either lasts. A searched fit that contradicts the
tracked one is used only once found in the same place in ``REFIT_FRAMES``
frames in a row, or at once when the tracked one slid (``DRIFTED_MIN``).
Parts: ``second_index`` (step 4), ``outside`` (step 5), ``card_read`` (one
read), ``slots`` and ``few_cards`` (step 3).

The stock is a face-down pile the detector cannot see: ``stock_present`` is
taken from the caller (``None`` = unknown, reported as present), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, Sequence

import numpy as np

from companion.cards import CARD_CODES, DECK, Card
from companion.layout import SlotReading, TableLayout, slot_name, up_left_of
from companion.rules import Rules
from companion.vision.detections import Detections
from companion.vision.few_cards import FEW_MAX, FewCards, better_fit, few_cards_on
from companion.vision.card_read import (  # noqa: F401 (re-exported)
    NO_ALTERNATIVE, CardRead, dedupe_cards, keeper_first, rename_to_free_alternative)
from companion.vision.orientation import apply_dir, layout_angle
from companion.vision.outside import WASTE_MIN_SCORE, outside_places
from companion.vision.second_look import SecondLooks
from companion.vision.second_index import (DEFAULT_SECOND_OFFSET, OWN_SLOT_TOL, br_cover_of, cards_over,  # noqa: F401
                                           bared_slots, cross_second_indices, home_second_indices, maybe_second,
                                           place_orphans, turned_on_slots,
                                           pair_indices, second_indices)
from companion.vision.lattice import in_frame
from companion.vision.slots import (LatticeFit, assign_points, closed_at_apex, convincing, covering, fit_pyramid,
                                    in_area, place_with, pyramid_nodes, same_place, violations)

#: Slot scores under this are reported for checking.
LOW_SCORE = 0.5
#: A read on a slot naming a card placed elsewhere and, at least this sure as its runner-up, the card
#: whose second index lies there (the card up-left, bared as the slot's card was taken) is that
#: index (``read``).
BARED_ALT = 0.1
#: A still's lone waste read naming a card the pyramid shows surer takes its likeliest other name
#: scored this much or more (else it is dropped: the stock's back or the table read as a card).
WASTE_ALT_MIN = 0.2
#: Frames in a row a searched fit must be found in before it replaces the tracked one.
REFIT_FRAMES = 5
#: A clean search placing at least this many reads, and this many more than the held lattice does
#: while that one leaves cards lying on empty slots, replaces it at once: the tracked lattice slid
#: (g00412, a faintly read video: 21 reads placed and cards on empty slots against a search's 27,
#: frame after frame, never in the same place five frames in a row, each frame searched again).
DRIFTED_MIN, DRIFTED_GAIN = 20, 4
#: A read told standing upright less likely than this (a classifier trained with the turn as a
#: label) lay turned: a second index. Lone ones are kept out of the lattice fit when at least
#: ``MIN_TOLD`` reads are told and more than ``MOSTLY_UPRIGHT`` of them stood upright (rendered
#: val, r5 + c4 names and a turn net: 891 -> 809 and 691 -> 640 slots wrong of 8,400 with the
#: turn told in ``_best_turn`` too; every turned read kept out instead: 827 / 630, but a partly
#: cleared pyramid's second indices placed it a row off, val_s22_000219 3 -> 22 wrong). Not while
#: following a video (``track``): all 29 rendered games lost a move each in g00300, g00411 and g00412.
TOLD_TURNED, MIN_TOLD, MOSTLY_UPRIGHT = 0.2, 6, 0.6
#: A read told standing upright more likely than this (with the turns told, ``_turns_told``) is a
#: first index, never a lone second one (``place_orphans``).
TOLD_FIRST = 0.9


class Detector(Protocol):
    def detect(self, image_bgr: np.ndarray) -> Detections: ...


@dataclass
class FrameReading:
    """The outcome of one frame: a layout, or ``None`` with the reason in ``problems``."""

    layout: Optional[TableLayout]
    detections: Detections
    fit: Optional[LatticeFit] = None
    #: Slots (row, index) that must hold a card (a card lies on them) but none was read.
    hidden: tuple[tuple[int, int], ...] = ()
    problems: tuple[str, ...] = ()
    #: Detections used nowhere (false boxes, loose cards), as indices into ``detections``.
    unplaced: tuple[int, ...] = ()
    #: Signs of trouble in this frame (a hand over the table, usually): weak reads, slots that
    #: must hold a card but show none, cards read twice. Fusion does not trust frames with several.
    anomalies: int = 0
    #: Open slots (row, index: nothing lies on them) showing no card but a corner found on them, not
    #: named surely, and that corner's box: worth a second look. (A hidden slot is looked at where
    #: the lattice puts its corner: a weak read there is as often another card's second index.)
    unsure: dict[tuple[int, int], tuple[float, float, float, float]] = field(default_factory=dict)
    #: Of those slots, the ones where another weak corner lies nearer the slot's corner than the surest
    #: one, and its box: looked at too (synth_v2: a card's own index named a card seen elsewhere, so
    #: less surely than a neighbour's index reaching onto its slot; 1 deal more exactly right).
    unsure_nearest: dict[tuple[int, int], tuple[float, float, float, float]] = field(default_factory=dict)
    #: A still's lowest-row open slots, on two cards read, showing no card, and the box of a weak corner
    #: lying where their second index does: named again from the index (synth_v2: 1 deal more exactly
    #: right, 1 scene a slot worse, a J/Q misnamed; synth_val64: 1 slot more right).
    unsure_second: dict[tuple[int, int], tuple[float, float, float, float]] = field(default_factory=dict)
    #: Slots whose card is read, less surely, at another place too and has no other likely name,
    #: and the read's box: named again with the cards seen ruled out.
    twice: dict[tuple[int, int], tuple[float, float, float, float]] = field(default_factory=dict)
    #: For each pyramid slot (``pyramid_nodes`` order), the index of the read placed on it among the
    #: detections given to ``read`` (before weak ones were set aside), or -1.
    placed: tuple[int, ...] = ()
    #: The read of each waste pile's top card (index as ``placed``), for piles with one.
    waste_tops: tuple[int, ...] = ()
    #: For each pyramid slot (as ``placed``), how likely the index of the read placed on it stood
    #: upright (``Detections.upright``; NaN: no read, or not told); empty when the classifier does
    #: not tell. Turned the right way, first indices stand upright: ``orientation.way_round_mass``.
    slot_upright: tuple[float, ...] = ()
    #: Slots (row, index) outside the picture showing no card: not seen, whether cards lie on them
    #: or not (the camera cut off an end of the lowest row): not known to be empty.
    out_of_view: tuple[tuple[int, int], ...] = ()

    @property
    def ok(self) -> bool:
        return self.layout is not None




class LayoutPipeline(SecondLooks):
    """Detector + slot mapping + consistency checks; keeps the last lattice fit between frames."""

    def __init__(self, detector: Optional[Detector] = None, rules: Rules = Rules(), *,
                 min_score: float = 0.25, stock_present: Optional[bool] = None, track: bool = True,
                 reread: bool = True, fit_min_score: float = 0.03, turn: bool = True) -> None:
        self.detector = detector
        #: Name the corners of a layout turned in the image with crops turned back (``read_image``).
        self.turn = turn
        #: Reads scored from this up to ``min_score`` (a corner found, its name unsure) help fit the
        #: lattice and are otherwise ignored.
        self.fit_min_score = min(fit_min_score, min_score)
        #: Look again, with the detector's classifier, at slots that must hold a card but showed
        #: no read (``companion.vision.reread``); needs a detector with ``classify``.
        self.reread = reread
        self.rules = rules
        self.min_score = min_score
        self.stock_present = stock_present
        self.track = track
        #: Made to track, it reads a game followed frame by frame: rules that weigh runner-up names
        #: stay off (those flip from frame to frame). Second looks at a still switch ``track`` on for
        #: a moment (``_read_on_fit``); this stays as made.
        self.follows = track
        self._prior: Optional[np.ndarray] = None
        #: A searched fit contradicting the prior, and in how many frames in a row it was found.
        self._candidate: Optional[tuple[np.ndarray, int]] = None
        #: The last searched fit of a nearly cleared pyramid and what it says (``few_cards``).
        self._few: Optional[tuple[np.ndarray, FewCards]] = None
        self._deck = set(rules.deck_cards())
        #: The layout accepted so far (``LayoutFuser`` keeps it up to date when given this
        #: pipeline): where each card lies, for reads only its second index explains.
        self.expected: Optional[TableLayout] = None
        #: Each pyramid card's slot as the person checked the deal (``know_deal``): a card the camera
        #: misreads keeps being misread, and where its slot is still held the person's word names it.
        self.known: dict[tuple[int, int], Card] = {}
        self._dealt: frozenset[Card] = frozenset()  # the cards of ``known``

    def reset(self) -> None:
        """Forget the view (another source, the camera back); the deal the person checked stays."""
        self._prior = None
        self._candidate = None
        self._few = None
        self.expected = None

    def know_deal(self, pyramid: Optional[Sequence[Optional[Card]]]) -> None:
        """The pyramid's cards as the person checked the deal, row-major from the apex
        (``Deal.pyramid``; None: a slot not known), or None to forget them (a new game)."""
        places = [(r, i) for r in range(self.rules.rows) for i in range(r + 1)]
        self.known = {} if pyramid is None else {
            place: card for place, card in zip(places, pyramid) if card is not None}
        self._dealt = frozenset(self.known.values())

    def process(self, image_bgr: np.ndarray, frame: int = -1) -> FrameReading:
        if self.detector is None:
            raise RuntimeError("LayoutPipeline.process needs a detector")
        # A tracked layout's turn is known before the frame is read: its crops are turned back at once,
        # and a turn net (``turn_classifier``) is not asked which way the indices stood: time saved.
        angle = layout_angle(self._prior) if self._prior is not None and self._turns() else 0.0
        if hasattr(self.detector, "tell_turn"):
            self.detector.tell_turn = not (self.track and self._prior is not None)
        dets = self.detector.detect(image_bgr, angle=angle) if angle else self.detector.detect(image_bgr)
        return self.read_image(image_bgr, dets, frame, angle)

    def _lowest_row(self, held: list[Optional[Card]], nodes_ri: np.ndarray) -> Optional[int]:
        """Following a game, the lowest row a card may lie on: two below the accepted layout's
        lowest card (a pair taken across two rows and put back), or the lowest read on a slot now.
        A lattice tracked since the deal extrapolates the cleared rows badly: the waste of a nearly
        cleared pyramid lay at row 6.8 of it, above the floor of a full pyramid's waste, and passed
        for a loose card (a rendered whole game, g00542: 3H unread for 4 s, taken for a recycle).
        A still: two below the lowest read on a slot (rendered val_s64_000025, five cards left:
        the waste at row 7.05 of the fit, a loose card; 600 stills, 1 more waste top right)."""
        rules = self.rules
        if rules.inverted or rules.free_cells or rules.reserve:
            return None  # (cells and a reserve row are placed by the full pyramid's rows)
        now = max((int(nodes_ri[m][0]) for m, card in enumerate(held) if card is not None), default=-1)
        if not self.follows:
            return min(rules.rows - 1, now + 2)
        if self.expected is None or self.expected.rows != rules.rows:
            return None
        accepted = max((r for r, _, slot in self.expected.slots() if slot.card is not None), default=-1)
        return min(rules.rows - 1, max(accepted + 2, now))

    # --- one frame -----------------------------------------------------------------------------
    def read(self, dets: Detections, frame: int = -1,
             image_size: Optional[tuple[int, int]] = None) -> FrameReading:
        """Read one frame's detections; ``image_size`` (width, height) lets the fit know which
        slots lie outside the picture (a pyramid partly out of view)."""
        rules = self.rules
        keep = np.flatnonzero(dets.confidence >= self.min_score)
        # Corners found but not named surely still say where the pyramid lies: they help the fit only.
        weak_dets = dets[(dets.confidence < self.min_score) & (dets.confidence >= self.fit_min_score)]
        weak = weak_dets.centers
        dets = dets[keep] if len(keep) != len(dets) else dets
        n = len(dets)
        if n == 0:
            if self.track and self._prior is not None:
                return self._empty_table(dets, frame)
            return FrameReading(None, dets, problems=("no cards seen",))
        centers = dets.centers.astype(np.float64)
        primary = self._primary_mask(dets, centers)
        pair_idx = pair_indices(dets.class_id)
        pairs = centers[pair_idx]  # (P, 2, 2): image points of two reads of one card
        fit = fit_pyramid(np.vstack([centers[primary], weak]), rules.rows, rules.inverted,
                          prior=self._prior if self.track else None, pairs=pairs, frame_size=image_size)
        if fit is not None and not fit.tracked and fit.inliers >= 3:
            # Searched without knowing the layout's "down" (a camera turned by more than ~45 deg
            # puts second indices above first ones in the image): pick the first indices again
            # along the fit's own down, and refit when that changes them.
            again = self._primary_mask(dets, centers, fit.homography)
            if (again != primary).any():
                refit = fit_pyramid(np.vstack([centers[again], weak]), rules.rows, rules.inverted,
                                    prior=self._prior if self.track else None, pairs=pairs,
                                    frame_size=image_size)
                if refit is not None and refit.inliers > fit.inliers:
                    fit, primary = refit, again
        if fit is not None and not fit.tracked:
            fit = closed_at_apex(fit, np.vstack([centers[primary], weak]), int(primary.sum()))
        few: Optional[FewCards] = None
        if fit is None or not fit.tracked:
            # A nearly cleared pyramid: a few cards, which the search may put on a wrong lattice.
            fit, few = better_fit(fit, centers, primary, pair_idx, rules.rows, rules.inverted,
                                  np.vstack([centers[primary], weak]), image_size)
            self._few = None if few is None or fit is None else (fit.homography, few)
        elif fit.inliers <= FEW_MAX and self._few_cards_fit(fit):
            # The few cards' lattice held (a still's second look, a followed frame): what it says of
            # this frame's reads. (Not once the frame places more reads: a game tracked from its deal
            # whose lattice a troubled frame found through a few cards is no nearly cleared pyramid.)
            few = few_cards_on(fit.homography, centers, pair_idx, rules.rows, image_size)
        if fit is not None and not fit.tracked and self.track and self._prior is not None:
            fit = self._confirm(fit, centers[primary], pairs, dets.class_id[primary])
        # No read on the pyramid: a cleared pyramid when the tracked lattice still explains the
        # frame (every read lies outside it: the waste), else no pyramid in view.
        cleared = (fit is not None and fit.inliers == 0 and fit.tracked
                   and not in_area(fit.uv, rules.rows, rules.inverted).any())
        if fit is None or (fit.inliers == 0 and not cleared):
            return FrameReading(None, dets, problems=(
                f"no pyramid found among {n} card reads (need at least 3 cards of it in view)",))
        ids, uv, res = assign_points(fit, centers)
        if few is not None:  # the few cards left lie on these slots, second indices on none
            ids[((ids >= 0) & ~np.isin(ids, few.slots)) | few.second] = -1
        reads = [self._make_read(dets, j, uv[j]) for j in range(n)]
        nodes_ri, nodes_uv = pyramid_nodes(rules.rows, rules.inverted)
        n_nodes = len(nodes_ri)
        # Slots outside the picture (a pyramid partly out of view) show no read without being empty.
        in_picture = np.ones(n_nodes, bool) if image_size is None else in_frame(fit.node_xy(), image_size)
        # Second indices (a card's rotated bottom-right index) confirm their card and claim nothing.
        cov = covering(rules.rows, rules.inverted)
        # A card shows its second index only when nothing lies on it. Reads that may be second
        # indices themselves (a read of the same card up-left of them) do not count as cards on it.
        may_be_second = maybe_second(reads, uv)
        on_node: list[list[int]] = [[] for _ in range(n_nodes)]
        for j in np.flatnonzero((ids >= 0) & ~may_be_second):
            on_node[ids[j]].append(int(j))
        over = cards_over(rules.rows, rules.inverted)
        # Only the card lying down-right on a card hides its second index.
        br_cover = br_cover_of(rules.rows, rules.inverted)
        on_br = [[] if ids[j] < 0 or br_cover[ids[j]] < 0 else
                 [k for k in on_node[br_cover[ids[j]]] if reads[k].card is not reads[j].card]
                 for j in range(n)]
        can_show_second = np.array([not ks for ks in on_br])
        certain = np.array([ids[j] >= 0 and not over[ids[j]] for j in range(n)])
        weakly_hidden = np.array([all(reads[k].score < LOW_SCORE for k in ks) for ks in on_br])
        second, br_off = second_indices(reads, uv, can_show_second, certain, weakly_hidden)
        lain_on = np.array([any(on_node[o] for o in over[m]) for m in range(n_nodes)])  # a card read on it
        # (a misread second index on the slot below its card is pooled with it in stills only: following
        # a rendered game, g00315, it kept the deal from being taken: 18 of 20 moves -> none)
        from_own_corner = None if self.follows else np.array([
            0.0 if ids[j] < 0 or lain_on[ids[j]] else float(np.hypot(*(uv[j] - nodes_uv[ids[j]])))
            for j in range(n)])
        cross_second_indices(reads, uv, on_br, second, br_off, from_own_corner=from_own_corner)
        slot_reads: list[list[int]] = [[] for _ in range(n_nodes)]
        for j in np.flatnonzero((ids >= 0) & (second < 0)):
            slot_reads[ids[j]].append(int(j))
        # A read of a card also read on another slot (most often a card's second index falling
        # near the next slot) gives way to a read of a card found nowhere else.
        nodes_of: dict = {}
        for node, js in enumerate(slot_reads):
            for j in js:
                nodes_of.setdefault(reads[j].card, set()).add(node)
        winner = [max(js, key=lambda j: (len(nodes_of[reads[j].card]) == 1, reads[j].score)) if js else -1
                  for js in slot_reads]
        if not self.follows:
            winner = winners_held_once(reads, slot_reads, winner)
        for node, js in enumerate(slot_reads):
            for j in js:
                if j != winner[node]:  # a weaker read of the same slot: its cards become alternatives
                    w = reads[winner[node]]
                    for c, s in reads[j].best_alternatives():
                        w.alts[c] = max(w.alts.get(c, 0.0), s)
        # A card on an empty slot whose card is read elsewhere is a stray index, not a card; so is
        # one lying where the second index of the same card read on another slot lies (rows dealt
        # overlapping by about a row: the index shows on the next row's slot once it is cleared).
        # A slot outside the picture is out of view, not empty (val_s22_000087: 2S kept on row 3
        # under the rows cut off, its twin on the lowest row renamed 2C; 7 -> 4 slots wrong).
        up_left = up_left_of(rules.rows, rules.inverted)  # the node whose corner each node covers
        # (a still's reads tell first indices, upright, from second ones, turned)
        told = self._turns_told(dets)
        first = (dets.upright > TOLD_FIRST) if told else np.zeros(n, bool)
        for node in range(n_nodes):
            j = winner[node]
            if j < 0:
                continue
            lonely = any(winner[c] < 0 and in_picture[c] for c in cov[node])
            twins = [m for m in range(n_nodes)
                     if m != node and winner[m] >= 0 and reads[winner[m]].card is reads[j].card]
            if twins and (lonely or any(np.hypot(*(uv[j] - uv[winner[m]] - br_off)) < 0.45
                                        and (br_cover[m] in (-1, node) or winner[br_cover[m]] < 0)
                                        for m in twins)):
                winner[node] = -1
                continue
            # A read naming a card placed on another slot, lying where the second index of the card
            # up-left of this slot lies (this slot's card covers its bottom-right corner) and naming
            # that card next: that card's index, bared as this slot's card was taken (a rendered
            # whole game, g00505: TD taken, KS's second index read KC 0.5 / KS 0.3 on TD's slot,
            # frame after frame, so TD never left and 18 of 73 moves were lost).
            m = up_left[node]
            if (twins and m >= 0 and winner[m] >= 0 and not first[j]
                    and reads[j].alts.get(reads[winner[m]].card, 0.0) >= BARED_ALT
                    and np.hypot(*(uv[j] - uv[winner[m]] - br_off)) < 0.45):
                winner[node] = -1
        # A weak read on a slot a shown second index bares (with no card read lying on that slot) is
        # the face of the card above it seen through the lattice (pips, a figure), not a card.
        bared = bared_slots(second, ids, winner, br_cover, br_off)
        for node in bared:
            if winner[node] >= 0 and reads[winner[node]].score < LOW_SCORE and not lain_on[node]:
                winner[node] = -1
        used = np.zeros(n, bool)
        used[[j for j in winner if j >= 0]] = True
        used[second >= 0] = True
        if told:
            turned_on_slots(winner, used, dets.upright < TOLD_TURNED, lain_on)
        # Following a video, a lowest-row card whose first index a hand hides is left to fusion
        # (a resting hand's cue: its neighbours vanish too; placed by their second indices, the
        # one card left unseen passed for an illegal removal after a window).
        told_first = (dets.upright > TOLD_FIRST) if told else None
        place_orphans(self.rules, reads, winner, used, ids, uv, br_off, cov,
                      lowest_by_place=not self.follows and few is None, in_picture=in_picture,
                      first_index=told_first)
        if self.expected is not None and self.expected.rows == rules.rows:
            home_second_indices(self.expected, reads, winner, used, uv, br_off, nodes_ri, nodes_uv,
                                known=self.known)
        # A read of a card on the pyramid lying near where that card's second index lies is that
        # index (a little off the frame's offset), not a card on the waste below the pyramid.
        node_of_card = {reads[w].card: m for m, w in enumerate(winner) if w >= 0}
        for j in range(n):
            m = node_of_card.get(reads[j].card)
            if not used[j] and m is not None and winner[m] != j and np.hypot(*(uv[j] - nodes_uv[m] - br_off)) < 0.7:
                used[j] = True
        # Off the lattice: waste, cells, reserve.
        off = [j for j in range(n) if not used[j] and (ids[j] < 0 or winner[ids[j]] != j)]
        held = [reads[w].card if w >= 0 else None for w in winner]
        waste, cells, reserve, stray = outside_places(self.rules, reads, off, uv, br_off, held,
                                                      few.lowest_row if few is not None
                                                      else self._lowest_row(held, nodes_ri),
                                                      WASTE_MIN_SCORE if self.follows else 0.0,
                                                      name_tops=not self.follows,
                                                      second=None if dets.upright is None or self.follows
                                                      else dets.upright < TOLD_TURNED)
        # A waste pile read as one card that the pyramid shows by a surer read: most often the
        # stock's back or the table read as a card. Not the waste, and no "seen twice" anomaly (which
        # makes fusion skip the frame: a rendered game went 8 s without a stable view). A still
        # first tries the read's likeliest other name (rendered val: 2 of 600 waste tops more right).
        sure = {reads[w].card: reads[w].score for w in winner if w >= 0}
        if self._dealt:
            # the deal the person checked: a card not in it read on the pyramid is that slot misread
            sure = {c: v for c, v in sure.items() if c in self._dealt}
        if not self.follows:
            for pile in waste:
                if len(pile) == 1 and sure.get(pile[0].card, 0.0) > pile[0].score:
                    rename_to_free_alternative(pile[0], set(sure), WASTE_ALT_MIN, self._deck)
        waste = [[] if len(pile) == 1 and sure.get(pile[0].card, 0.0) > pile[0].score else pile for pile in waste]
        problems: list[str] = []
        # One card, one place.
        places: dict[Card, list[tuple[str, CardRead]]] = {}
        for node in range(n_nodes):
            if winner[node] >= 0:
                r, i = nodes_ri[node]
                places.setdefault(reads[winner[node]].card, []).append((slot_name(r, i), reads[winner[node]]))
        for pile in waste:
            for rd in pile:
                places.setdefault(rd.card, []).append(("waste", rd))
        for k, rd in enumerate(cells):
            if rd is not None:
                places.setdefault(rd.card, []).append((f"cell {k + 1}", rd))
        for k, rd in enumerate(reserve):
            if rd is not None:
                places.setdefault(rd.card, []).append((f"reserve {k + 1}", rd))
        seen = set(places)
        slot_of_name = {slot_name(int(r), int(i)): (int(r), int(i)) for r, i in nodes_ri}
        twice: dict[tuple[int, int], tuple[float, ...]] = {}

        def free_alt(rd: CardRead) -> Optional[tuple[Card, float]]:
            return next(((c, s) for c, s in rd.best_alternatives(6)[1:]
                         if c not in seen and c in self._deck and s > NO_ALTERNATIVE), None)
        for card, where in list(places.items()):
            if len(where) < 2:
                continue
            # A still keeps the card where giving it up costs most; a followed game keeps the surer
            # read (names weighed by their runner-ups flip from frame to frame: a rendered game,
            # g00313, recorded 2 phantom moves).
            if self.follows:
                # (with the deal the person checked, a slot dealt another card is the misread one)
                where.sort(key=lambda t: (self._misdealt(t[0], card, slot_of_name), -t[1].score))
            else:
                where[:] = keeper_first(where, free_alt)
            for place, rd in where[1:]:
                found = free_alt(rd)
                if found is not None:
                    alt = found[0]
                    rd.alts[card] = rd.score
                    rd.card, rd.score = alt, min(rd.alts.get(alt, 0.0), rd.score)
                    seen.add(alt)
                    problems.append(f"{place}: read as {card}, which is also at {where[0][0]}; "
                                    f"taken as {alt} - please check")
                else:
                    problems.append(f"{card} is seen twice: at {where[0][0]} and at {place} - please check")
                    if place in slot_of_name:  # the classifier may name it with the card ruled out
                        twice[slot_of_name[place]] = tuple(float(v) for v in dets.xyxy[rd.det])
        for pile in waste:  # (a still takes even a weak read there for the waste)
            if pile and pile[-1].score < LOW_SCORE:
                problems.append(unsure_read("waste top", pile[-1]))
        # Build the layout. A card lies on everything under it, recursively: those slots must hold cards.
        must_hold = np.zeros(n_nodes, bool)
        for node in sorted(range(n_nodes), key=lambda m: -nodes_ri[m][0] if not rules.inverted else nodes_ri[m][0]):
            if winner[node] >= 0 or must_hold[node]:
                for c in cov[node]:
                    must_hold[c] = True
        hidden: list[tuple[int, int]] = []
        out_of_view: list[tuple[int, int]] = []
        rows_out: list[list[SlotReading]] = [[] for _ in range(rules.rows)]
        for node in range(n_nodes):
            r, i = (int(x) for x in nodes_ri[node])
            j = winner[node]
            if j >= 0:
                rd = reads[j]
                rows_out[r].append(SlotReading(rd.card, round(rd.score, 4), rd.best_alternatives()))
                if rd.card not in self._deck:
                    problems.append(f"{slot_name(r, i)}: {rd.card} is not in the deck of {rules.name!r}")
                elif rd.score < LOW_SCORE:
                    problems.append(unsure_read(f"{slot_name(r, i)}:", rd))
                elif (runner := rows_out[r][-1].close_runner_up()) is not None:
                    problems.append(f"{slot_name(r, i)}: {rd.card} read, but it may be {runner[0]} - please check")
            else:
                covered_by = must_hold[node]
                if covered_by:
                    hidden.append((r, i))
                if not in_picture[node]:
                    # (an open slot outside the picture is not seen to be empty either: a cut-off end
                    # of the lowest row read "empty" passed silently as a card taken)
                    out_of_view.append((r, i))
                    problems.append(f"{slot_name(r, i)} is outside the picture - move the camera "
                                    "to see the whole pyramid")
                elif covered_by:
                    problems.append(f"{slot_name(r, i)}: no card seen, but cards lie on it - "
                                    "is it hidden or misplaced?")
                rows_out[r].append(SlotReading.empty(0.0 if covered_by or not in_picture[node] else 1.0))
        for j in stray:
            rd = reads[j]
            if rd.score >= LOW_SCORE:
                problems.append(f"{rd.card} seen outside the pyramid, waste and cells - a loose card?")
        layout = TableLayout(
            tuple(tuple(r) for r in rows_out),
            waste=tuple(tuple(rd.card for rd in pile) for pile in waste) or ((),),
            cells=tuple(None if rd is None else rd.card for rd in cells),
            reserve=tuple(None if rd is None else rd.card for rd in reserve),
            stock_present=True if self.stock_present is None else self.stock_present,
            problems=(),
            frame=frame,
            extra={"homography": fit.homography.tolist(), "hidden": hidden,
                   "stock_known": self.stock_present is not None,
                   "stock": [str(c) for c in self.unseen(seen)]},
        )
        # The core's own check (deck, duplicates, structure) adds what the steps above did not say.
        for p in layout.check(rules):
            if not any(p.split(":")[0] in q for q in problems) and "was not seen" not in p:
                if "which is empty" in p and hidden:
                    continue
                problems.append(p)
        layout = TableLayout(layout.pyramid, layout.waste, layout.cells, layout.reserve, layout.stock_present,
                             tuple(problems), frame, layout.extra)
        # Track from this fit next frame, unless it was searched in a troubled frame and is not
        # convincing (a hand hiding half the pyramid can make a turned reading fit best once).
        if self.track and fit.inliers >= 3 and (fit.tracked or (self._prior is None and convincing(
                fit, pairs, int(primary.sum())))):
            self._prior, self._candidate = fit.homography, None
        anomalies = (int((dets.confidence < LOW_SCORE).sum()) + len(hidden)
                     + sum(1 for p in problems if "twice" in p or "also at" in p))
        # Empty slots a weakly named corner lies on: the classifier may name it once the deck
        # rules out the cards seen elsewhere (``read_image``).
        # (not a slot a shown second index bares: the weak corner there is the face above it)
        weak_ids, weak_uv, weak_off = assign_points(fit, weak)
        unsure: dict[tuple[int, int], tuple[float, float, float, float]] = {}
        unsure_nearest: dict[tuple[int, int], tuple[float, float, float, float]] = {}
        # the surest corner on a slot is its box; the one nearest the slot's corner is looked at too
        for found, order in ((unsure, np.argsort(-weak_dets.confidence)), (unsure_nearest, np.argsort(weak_off))):
            for k in order:
                m = int(weak_ids[k])
                if m >= 0 and winner[m] < 0 and not must_hold[m] and m not in bared:
                    found.setdefault((int(nodes_ri[m][0]), int(nodes_ri[m][1])),
                                     tuple(float(v) for v in weak_dets.xyxy[k]))  # type: ignore[arg-type]
        unsure_nearest = {s: b for s, b in unsure_nearest.items() if unsure[s] != b}
        # A still's lowest-row slot showing no card, on two cards read, with a weak corner where its
        # second index lies.
        unsure_second: dict[tuple[int, int], tuple[float, float, float, float]] = {}
        if not self.follows and len(weak):
            for m in range(n_nodes):
                if (winner[m] >= 0 or over[m] or not in_picture[m] or must_hold[m]
                        or any(winner[c] < 0 for c in cov[m])):
                    continue
                d = np.hypot(*(weak_uv - nodes_uv[m] - br_off).T)
                near = np.flatnonzero(d < OWN_SLOT_TOL)
                if len(near):
                    k = near[np.argmax(weak_dets.confidence[near])]
                    unsure_second[(int(nodes_ri[m][0]), int(nodes_ri[m][1]))] = tuple(
                        float(v) for v in weak_dets.xyxy[k])  # type: ignore[assignment]
        placed = tuple(int(keep[w]) if w >= 0 else -1 for w in winner)
        waste_tops = tuple(int(keep[pile[-1].det]) for pile in waste if pile)
        slot_upright = () if dets.upright is None else tuple(
            float(dets.upright[w]) if w >= 0 else float("nan") for w in winner)
        return FrameReading(layout, dets, fit, tuple(hidden), tuple(problems), tuple(stray), anomalies,
                            unsure=unsure, unsure_nearest=unsure_nearest,  # type: ignore[arg-type]
                            unsure_second=unsure_second,
                            twice=twice, placed=placed,
                            waste_tops=waste_tops, out_of_view=tuple(out_of_view), slot_upright=slot_upright)

    def _misdealt(self, place: str, card: Card, slot_of_name: dict[str, tuple[int, int]]) -> bool:
        """Whether ``place`` is a pyramid slot the checked deal gives another card than ``card``."""
        dealt = self.known.get(slot_of_name[place]) if place in slot_of_name else None
        return dealt is not None and dealt is not card

    def _few_cards_fit(self, fit: LatticeFit) -> bool:
        """Whether ``fit`` is (or tracks) the last fit found for a nearly cleared pyramid."""
        return self._few is not None and same_place(fit, self._few[0])

    def _confirm(self, fit: LatticeFit, points: np.ndarray, pairs: np.ndarray,
                 classes: Optional[np.ndarray] = None) -> LatticeFit:
        """A search that contradicts the tracked fit (a hand hiding most of a late-game pyramid
        can make some lattice through a few reads fit best) replaces it only when it is found in
        the same place in ``REFIT_FRAMES`` frames in a row (the camera really moved), or at once when
        it places far more reads than the tracked fit, which leaves cards on empty slots
        (``DRIFTED_MIN``); until then the frame is read with the tracked fit."""
        assert self._prior is not None
        # (A lattice shifted by a slot explains most reads too, but leaves cards lying on
        # empty slots: only a clean fit counts.)
        # Reads outside the found pyramid (the waste, late in a game as many as the pyramid's
        # cards) neither confirm nor contradict it.
        inside = int(((fit.node_of_point >= 0) | in_area(fit.uv, fit.rows, fit.inverted)).sum())
        held = place_with(points, self._prior, self.rules.rows, self.rules.inverted)
        if (self.known and classes is not None and held is not None and self._on_dealt(
                place_with(points, fit.homography, self.rules.rows, self.rules.inverted), classes)
                < self._on_dealt(held, classes)):
            # with the deal the person checked, a search that puts fewer reads on the slots dealt
            # their cards than the tracked fit does is that fit slid (g00588: a row up while a hand
            # took cards, tracked there for the rest of the game)
            self._candidate = None
            return held
        if convincing(fit, pairs, inside) and fit.inliers >= 5 and violations(fit) <= 1:
            same = self._candidate is not None and same_place(fit, self._candidate[0], placed_only=True)
            self._candidate = (fit.homography, self._candidate[1] + 1 if same else 1)
            if self._candidate[1] >= REFIT_FRAMES or (
                    held is not None and fit.inliers >= max(DRIFTED_MIN, held.inliers + DRIFTED_GAIN)
                    and violations(held) >= 2):
                self._prior, self._candidate = fit.homography, None
                return fit
        else:
            self._candidate = None
        return held if held is not None else fit

    def _on_dealt(self, placed: Optional[LatticeFit], classes: np.ndarray) -> int:
        """How many reads (card ids ``classes``) a lattice placing them (``place_with``) puts on the
        slot the checked deal gives their card."""
        if placed is None:
            return 0
        nodes_ri, _ = pyramid_nodes(self.rules.rows, self.rules.inverted)
        return sum(1 for node, k in zip(placed.node_of_point, classes) if node >= 0
                   and self.known.get(tuple(int(v) for v in nodes_ri[node])) == Card.from_index(int(k)))

    def _empty_table(self, dets: Detections, frame: int) -> FrameReading:
        """No card seen where a pyramid was tracked: a cleared table (the game over), as far as
        one frame can tell (fusion decides whether it lasts)."""
        rules = self.rules
        layout = TableLayout(
            tuple(tuple(SlotReading.empty() for _ in range(r + 1)) for r in range(rules.rows)),
            waste=((),) * rules.waste_piles, cells=(None,) * rules.free_cells,
            reserve=(None,) * rules.reserve,
            stock_present=True if self.stock_present is None else self.stock_present, problems=(),
            frame=frame, extra={"homography": np.asarray(self._prior).tolist(), "hidden": [],
                                "stock_known": self.stock_present is not None,
                                "stock": [str(c) for c in rules.deck_cards()]})
        return FrameReading(layout, dets)

    def unseen(self, seen: set[Card]) -> list[Card]:
        """The rules' deck minus the cards seen: the stock (and anything hidden)."""
        return [c for c in self.rules.deck_cards() if c not in seen]

    # --- helpers -------------------------------------------------------------------------------
    def _primary_mask(self, dets: Detections, centers: np.ndarray,
                      homography: Optional[np.ndarray] = None) -> np.ndarray:
        """All reads but the lower ones of a card read several times (likely its second index);
        "lower" along the layout's own down (apex to base) under ``homography`` or the last
        fit, else the image's, after any told turned (``TOLD_TURNED``); and but lone reads told turned."""
        primary = np.ones(len(dets), bool)
        down = np.array([0.0, 1.0])
        h = homography if homography is not None else self._prior
        if h is not None:
            p = apply_dir(h)
            down = p / max(np.hypot(*p), 1e-9)
        proj = centers @ down
        told = self._turns_told(dets)
        if told:
            # a read told upright comes first, whatever lies "up": along a wrong fit's down, the
            # second indices (rendered val, 600 stills: 4 with fewer slots wrong, 1 with 2 more)
            proj = proj + np.where(dets.upright < TOLD_TURNED, 1e6, 0.0)
        order = np.argsort(dets.class_id, kind="stable")
        cls = dets.class_id[order]
        starts = np.flatnonzero(np.r_[True, cls[1:] != cls[:-1]])
        ends = np.r_[starts[1:], len(cls)]
        for a, b in zip(starts, ends):
            if b - a > 1:
                idx = order[a:b]
                top = idx[np.argmin(proj[idx])]
                primary[idx] = False
                primary[top] = True
        # A lone read that the classifier tells lay turned (``Detections.upright``) is a second index
        # whose first was missed: not a slot's corner (unless the reads lie turned on the whole: the
        # corners were named at the wrong angle, and then they tell nothing of first and second).
        # A still's only: following a video it cost moves (``TOLD_TURNED``).
        if told:
            ups = dets.upright
            lone = np.bincount(dets.class_id, minlength=len(DECK))[dets.class_id] == 1
            turned = ~np.isnan(ups) & (ups < TOLD_TURNED) & lone
            if (primary & ~turned).sum() >= 3:
                primary &= ~turned
        return primary

    def _turns_told(self, dets: Detections) -> bool:
        """Whether ``dets`` tell first indices from second ones by their turn: a still's (``track``
        off), enough told (``MIN_TOLD``), mostly upright (``MOSTLY_UPRIGHT``; else the corners were
        named at the wrong angle)."""
        ups = dets.upright
        if ups is None or self.track:
            return False
        told = ~np.isnan(ups)
        return bool(told.sum() >= MIN_TOLD and np.mean(ups[told] > 0.5) > MOSTLY_UPRIGHT)

    def _make_read(self, dets: Detections, j: int, uv: np.ndarray) -> CardRead:
        card = DECK[int(dets.class_id[j])]
        score = float(dets.confidence[j])
        alts: dict[Card, float] = {}
        if dets.alt_class_id is not None and dets.alt_confidence is not None:
            for c, s in zip(dets.alt_class_id[j], dets.alt_confidence[j]):
                if 0 <= int(c) < 52:
                    alts[DECK[int(c)]] = max(alts.get(DECK[int(c)], 0.0), float(s))
        return CardRead(j, card, score, alts, (float(uv[0]), float(uv[1])))


def winners_held_once(reads: list[CardRead], slot_reads: list[list[int]], winner: list[int]) -> list[int]:
    """``winner`` again, a read of a card also read on another slot counting as found nowhere else
    while no other slot's winner holds that card: a surer read is not given up for a card that ends
    up held nowhere (val_s22_000021: 4H 0.72 gave way to 2S 0.41 on its slot, its second read lay on
    a slot that another card won). Slots with the surest reads choose first; a card taken is held."""
    held: dict[Card, set[int]] = {}
    for node, j in enumerate(winner):
        if j >= 0:
            held.setdefault(reads[j].card, set()).add(node)
    out = list(winner)
    for node in sorted((m for m, js in enumerate(slot_reads) if js),
                       key=lambda m: -max(reads[j].score for j in slot_reads[m])):
        best = max(slot_reads[node], key=lambda j: (not held.get(reads[j].card, set()) - {node}, reads[j].score))
        if best != out[node]:
            held[reads[out[node]].card].discard(node)
            held.setdefault(reads[best].card, set()).add(node)
            out[node] = best
    return out


def unsure_read(where: str, rd: CardRead) -> str:
    """The problem a weakly named card raises: where it lies, its score and runner-ups."""
    alts = ", ".join(f"{c} {s:.2f}" for c, s in rd.best_alternatives()[1:])
    return (f"{where} {rd.card} read with low confidence {rd.score:.2f}"
            + (f" (or {alts})" if alts else "") + " - please check")


def read_to_json(reading: FrameReading) -> dict[str, Any]:
    """The ``recognize --json`` object of one reading."""
    if reading.layout is None:
        return {"pyramid": None, "waste": [], "problems": list(reading.problems), "scores": None}
    data = reading.layout.to_json()
    waste = data["waste"]
    return {"pyramid": data["pyramid"], "waste": waste[0] if len(waste) == 1 else waste,
            "problems": data["problems"], "scores": data["scores"],
            "alternatives": data["alternatives"], "cells": data["cells"], "reserve": data["reserve"],
            "stock_present": data["stock_present"], "frame": data["frame"]}
