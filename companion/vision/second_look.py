"""Second looks at one frame, with the image at hand (``LayoutPipeline.read_image``).

``LayoutPipeline.read`` works from detections alone. With the image and a detector that names
corners (``classify``, ``detect(image, angle=...)``) two more looks pay off:

- a layout turned in the image is named again with its corner crops turned back upright, and a
  searched fit far from upright is compared with the two other ways its corners make a pyramid
  (``orientation``): the surest-named reading wins;
- cards small in the frame are named from their face too (``face_read``);
- slots that must hold a card but show no read, and open slots with a weakly named corner, are
  read again by the classifier (``reread``), small ones pooled with their face reading.

Each extra read of the frame starts from the tracking state the frame started with: a second look
is not a second frame confirming a refit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from companion.vision.detections import Detections
from companion.vision.face_read import fused_names, named_with_faces
from companion.vision.lattice import pyramid_nodes
from companion.vision.orientation import (angle_gap, layout_angle, named_mass, named_scores, slots_lie_turned,
                                          told_upright, turned_homographies, upright_share, way_round_mass)
from companion.vision.quarter_turn import (SECOND_OPINION, back_matrix, corners_lie_turned, likely_turns,
                                          map_homography, read_aside, reading_back, turn_image, turn_matrix)
from companion.vision.reread import (REREAD_MIN_PROB, REREAD_WEIGHT, concat, hidden_corner_boxes,
                                     reread_detections, scored_at_least)
from companion.vision.second_index import cards_over

if TYPE_CHECKING:
    from companion.vision.lattice import LatticeFit
    from companion.vision.pipeline import FrameReading

#: A layout turned this much (degrees) from the angle its corners were named at is named again.
TURN_MIN_DEG = 25.0
#: A lattice searched again whose slots lie this many pitches (median) or more from the chosen fit's
#: has moved off it (``_moved``).
MOVED_PITCH = 0.5
#: A pyramid named with a mean score under this may lie another way round: the other ways are tried.
WEAK_NAMING = 0.45
#: A searched layout this far (degrees) from upright is read again from the frame turned by quarter turns.
QUARTER_MIN_DEG = 45.0
#: The share of its named mass a reading keeps against the other ways round when its corners were
#: named at an angle TURN_MIN_DEG or more off its own fit's (rendered val, 0.9: slots right 81.21% ->
#: 81.37%, deals exact 39.00% -> 39.33%, waste top 62.00% -> 62.67%: 4 scenes changed, one lost 3
#: slots; 0.97: 2 slots fewer).
SELF_CONTRADICTING = 0.9


class SecondLooks:
    """Mixed into ``LayoutPipeline``: uses its ``read``, ``detector``, ``rules``, ``min_score``,
    ``track``, ``turn``, ``reread`` and tracking state (``_prior``, ``_candidate``)."""

    detector: Any
    rules: Any
    min_score: float
    track: bool
    turn: bool
    reread: bool
    _prior: Optional[np.ndarray]
    _candidate: Optional[tuple]
    read: Callable[..., "FrameReading"]
    _few_cards_fit: Callable[[Any], bool]

    def read_image(self, image_bgr: np.ndarray, dets: Detections, frame: int = -1,
                   angle: float = 0.0) -> "FrameReading":
        """``read`` the frame's detections (named with the crops turned by ``angle``), then, with
        the pipeline's detector: name the corners again with the crops turned as the lattice fit
        says the layout lies, when that differs by ``TURN_MIN_DEG`` or more, and keep that reading
        when it names the pyramid surer (a table turned by 90 degrees reads far better); and
        re-read slots that must hold a card but showed none (``reread``).

        With no layout tracked yet, a reading far from upright (``QUARTER_MIN_DEG``), weakly named
        or with no pyramid is compared with readings of the frame turned by quarter turns
        (``quarter_turn``): the surest named wins. Not a nearly cleared pyramid placed by its own
        cards' indices (``few_cards``): that lattice already says which way it lies, and a turned
        reading names more cards by putting the waste on a turned lattice (rendered val: 2 scenes
        right, none lost)."""
        state = (self._prior, self._candidate)
        reading, first_far = self._read_upright(image_bgr, dets, frame, angle)
        # (a frame with no read at all is an empty table: one look; with even a few reads it may be
        # a table read poorly upright that reads well turned: 5 reads upright, 26 of 28 slots turned)
        if (state[0] is not None or not self._turns() or len(dets) == 0
                or not (first_far or self._far_or_weak(reading))
                or (reading.fit is not None and self._few_cards_fit(reading.fit))):
            return reading
        return self._quarter_turns(image_bgr, reading, state, frame)

    def _quarter_turns(self, image_bgr: np.ndarray, reading: "FrameReading", state: tuple,
                       frame: int) -> "FrameReading":
        """The surer named of ``reading`` and the reading of the frame turned by the one of the
        likely quarter turns (``quarter_turn.likely_turns``) whose first look names the pyramid
        surest (mapped back to the frame's pixels); the tracking state follows the one chosen."""
        size = (image_bgr.shape[1], image_bgr.shape[0])
        way = None if reading.fit is None else layout_angle(reading.fit.homography)
        best = (way_round_mass(reading), reading, (self._prior, self._candidate))
        # A first look at each turn (its corners read, no second looks) picks the one turn read in
        # full: most of a turned frame's time goes to those second looks.
        first: list[tuple[float, int, np.ndarray, Detections]] = []
        turns = likely_turns(reading.detections)
        if reading.fit is not None and told_upright(reading) and len(turns) > 1:
            turns = (min(turns, key=lambda k: angle_gap(
                layout_angle(turn_matrix(k, size) @ reading.fit.homography), 0.0)),)
        for k in turns:
            self._prior, self._candidate = state
            turned = turn_image(image_bgr, k)
            with read_aside(self.detector):
                turned_dets = self.detector.detect(turned)
            quick = self.read(turned_dets, frame, (turned.shape[1], turned.shape[0]))
            if quick.fit is not None:
                first.append((way_round_mass(quick), k, turned, turned_dets))
        again = None
        if first:
            _, k, turned, turned_dets = max(first, key=lambda t: t[0])
            self._prior, self._candidate = state
            with read_aside(self.detector):
                again, _ = self._read_upright(turned, turned_dets, frame, 0.0)
        # (one or two cards read in a turned frame are most often the waste: so few cards are placed
        # from the frame itself, their lattice searched up to 100 degrees off upright: ``few_cards``)
        if again is not None and again.fit is not None and len(named_scores(again.layout)) >= 3:
            mass = way_round_mass(again)
            back = back_matrix(k, size)
            if way is not None:
                back_way = layout_angle(back @ again.fit.homography)
                # The same way round, seen no nearer upright: a second detector pass, not another
                # way; its naming varies by itself, so it must name the pyramid clearly surer.
                if (angle_gap(back_way, way) < QUARTER_MIN_DEG
                        and angle_gap(layout_angle(again.fit.homography), 0.0) >= angle_gap(way, 0.0)):
                    mass /= SECOND_OPINION
            if mass > best[0]:
                best = (mass, reading_back(again, k, size),
                        (map_homography(self._prior, back),
                         None if self._candidate is None
                         else (map_homography(self._candidate[0], back), self._candidate[1])))
        self._prior, self._candidate = best[2]
        return best[1]

    def _far_or_weak(self, reading: "FrameReading") -> bool:
        if reading.fit is None or reading.layout is None:
            return True
        named = named_scores(reading.layout)
        # (a lattice found near upright through corners no taller than wide is most often a pyramid
        # turned by about 120 degrees placed the wrong way round: its three corners look alike)
        # (a classifier that tells which way indices lie says so outright: ``slots_lie_turned``)
        return (angle_gap(layout_angle(reading.fit.homography), 0.0) >= QUARTER_MIN_DEG
                or not named or float(np.mean(named)) < WEAK_NAMING or corners_lie_turned(reading.detections)
                or slots_lie_turned(reading))

    def _read_upright(self, image_bgr: np.ndarray, dets: Detections, frame: int,
                      angle: float) -> tuple["FrameReading", bool]:
        """The reading of ``read_image`` without quarter turns, and whether the first searched fit
        lay far from upright (``QUARTER_MIN_DEG``)."""
        size = (image_bgr.shape[1], image_bgr.shape[0])
        state = (self._prior, self._candidate)
        reading = self.read(dets, frame, size)
        first_far = (reading.fit is not None and not reading.fit.tracked
                     and angle_gap(layout_angle(reading.fit.homography), 0.0) >= QUARTER_MIN_DEG)
        if reading.fit is not None and self._turns():
            reading, dets, angle = self._best_turn(image_bgr, reading, dets, angle, state, frame, size)
        reading, dets = self._face_look(image_bgr, reading, dets, angle, frame, size)
        after = (self._prior, self._candidate)
        classify = getattr(self.detector, "classify", None)
        if not (self.reread and (reading.hidden or reading.unsure or reading.twice or reading.unsure_second)
                and reading.fit is not None
                and callable(classify)):
            return reading, first_far
        # a hidden slot's corner where the lattice puts it; an unsure one's where it was found
        boxes = np.vstack([self._hidden_boxes(reading, size),
                           np.array(list(reading.unsure.values()), np.float32).reshape(-1, 4),
                           np.array(list(reading.unsure_nearest.values()), np.float32).reshape(-1, 4)])
        dup_boxes = np.array(list(reading.twice.values()), np.float32).reshape(-1, 4)
        second_boxes = np.array(list(reading.unsure_second.values()), np.float32).reshape(-1, 4)
        assert reading.layout is not None
        taken = set(reading.layout.visible_cards())
        # (a re-read scored under min_score would only be a corner for the fit again)
        extra = Detections.empty()
        min_prob = max(REREAD_MIN_PROB, self.min_score / REREAD_WEIGHT)
        if len(boxes):
            extra = reread_detections(self._reread_probs(image_bgr, boxes, angle, reading), boxes, taken,
                                      min_prob=min_prob)
        if len(second_boxes):  # (named from the index alone: a face crop is cut from a first index)
            taken |= set(extra.cards())
            probs = self._reread_probs(image_bgr, second_boxes, angle, reading, faces=False)
            extra = concat(extra, reread_detections(probs, second_boxes, taken, min_prob=min_prob))
        if len(dup_boxes):
            # A card read twice is wrong at one place: its best free name, however unsure, scored
            # just enough to count (and marked for checking) beats a deal with a card twice.
            taken |= set(extra.cards())
            dup = reread_detections(self._reread_probs(image_bgr, dup_boxes, angle, reading), dup_boxes, taken,
                                    min_prob=0.0)
            extra = concat(extra, scored_at_least(dup, self.min_score))
        if len(extra) == 0:
            return self._guess_hidden(image_bgr, reading, dets, angle, frame, size), first_far
        # Read the frame again with the re-read corners, from the tracking state it started with
        # (a second pass must not count as a second frame confirming a refit): the corners added
        # may mend the fit. A fit searched again that lies another way round than the one chosen
        # (by ``_best_turn``, or kept by ``_face_look``) is not taken: read on the chosen one.
        self._prior, self._candidate = state
        dets = concat(dets, extra)
        again = self.read(dets, frame, size)
        if again.fit is None or angle_gap(layout_angle(again.fit.homography),
                                          layout_angle(reading.fit.homography)) >= TURN_MIN_DEG:
            self._prior, self._candidate = after
            again = self._read_on_fit(dets, reading, frame, size)
        elif not self.follows and _moved(again.fit, reading.fit):
            # Nor a lattice moved off the chosen one that places fewer of the same corners than the
            # chosen one does, or as many with more signs of trouble (val_s22_000219: a row up, 18
            # reads placed against 15, 6 -> 21 slots wrong).
            searched = (self._prior, self._candidate)
            self._prior, self._candidate = after
            held = self._read_on_fit(dets, reading, frame, size)
            if held.layout is not None and (_placed(held), -held.anomalies) > (_placed(again), -again.anomalies):
                again = held
            else:
                self._prior, self._candidate = searched
        return self._guess_hidden(image_bgr, again, dets, angle, frame, size), first_far

    def _guess_hidden(self, image_bgr: np.ndarray, reading: "FrameReading", dets: Detections, angle: float,
                      frame: int, size: tuple[int, int]) -> "FrameReading":
        """A still's slots that cards lie on (they must hold one) still showing no card after the looks
        above: each named its likeliest card not seen elsewhere, however unsure, scored just enough to
        count and so shown for checking (the correction UI offers its runner-ups), as a card read twice
        is. Only slots both cards lying on which are placed (a card misplaced below a nearly cleared
        pyramid would make every slot above it "hidden"); row by row, a named slot lets the one above
        it be named next. Read on the same fit: guessed corners must not move the lattice (searched
        again with them, nearly cleared pyramids were placed on another lattice). Not while
        following: fusion waits for the hand over a slot to pass."""
        if self.follows:
            return reading
        while reading.hidden and reading.fit is not None and reading.layout is not None:
            boxes = self._hidden_boxes(reading, size, both_over_seen=True)
            if not len(boxes):
                break
            guess = reread_detections(self._reread_probs(image_bgr, boxes, angle, reading), boxes,
                                      set(reading.layout.visible_cards()), min_prob=0.0)
            if not len(guess):
                break
            dets = concat(dets, scored_at_least(guess, self.min_score))
            again = self._read_on_fit(dets, reading, frame, size)
            if again.layout is None:
                break
            named_some = len(again.hidden) < len(reading.hidden)
            reading = again
            if not named_some:
                break
        return reading

    def _hidden_boxes(self, reading: "FrameReading", size: tuple[int, int],
                      both_over_seen: bool = False) -> np.ndarray:
        """Corner boxes (``reread.hidden_corner_boxes``) of ``reading``'s hidden slots in the picture,
        where its fit puts them; with ``both_over_seen``, only slots both cards lying on which were read."""
        assert reading.fit is not None and reading.layout is not None
        nodes_ri, _ = pyramid_nodes(self.rules.rows, self.rules.inverted)
        node_of = {(int(r), int(i)): k for k, (r, i) in enumerate(nodes_ri)}
        nodes = [node_of[ri] for ri in reading.hidden]
        if both_over_seen:
            held = {node_of[(r, i)] for r, i, s in reading.layout.slots() if s.card is not None}
            over = cards_over(self.rules.rows, self.rules.inverted)
            nodes = [m for m in nodes if all(o in held for o in over[m])]
        return hidden_corner_boxes(reading.fit.node_xy(), nodes, reading.detections, size)[1]

    def _reread_probs(self, image_bgr: np.ndarray, boxes: np.ndarray, angle: float,
                      reading: "FrameReading", faces: bool = True) -> np.ndarray:
        """Class probabilities of the corners ``boxes`` looked at again: the classifier's, pooled with
        the card's face reading for corners small in the frame (as ``_face_look`` names placed ones),
        unless ``faces`` is off (boxes that are no first index)."""
        assert reading.fit is not None
        turned = {"angle": angle} if angle else {}
        probs = self.detector.classify(image_bgr, boxes, **turned)
        if not faces:
            return probs
        small = self._face_rows(boxes)
        if len(small):
            faces = self.detector.name_faces(image_bgr, boxes[small], layout_angle(reading.fit.homography))
            probs = probs.copy()
            probs[small] = fused_names(probs[small], faces, getattr(self.detector, "face_weight", 1.0))
        return probs

    def _face_rows(self, boxes: np.ndarray) -> np.ndarray:
        """Indices of the index ``boxes`` small enough in the frame to be named from the card's face
        too (the detector's ``face_below_px``); none without a face reader."""
        below = getattr(self.detector, "face_below_px", None)
        if below is None or not len(boxes):
            return np.zeros(0, np.int64)
        sides = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
        return np.flatnonzero(sides < below)

    def _face_look(self, image_bgr: np.ndarray, reading: "FrameReading", dets: Detections, angle: float,
                   frame: int, size: tuple[int, int]) -> tuple["FrameReading", Detections]:
        """Cards placed on the pyramid, and the waste piles' top cards, whose index is small in the
        frame, named again from their face too (``face_read``: the detector's ``name_faces``, turned
        as the fit lies), and the frame read again with those names (a card misnamed on one slot can
        free the name another slot needs). A waste top shows its whole face (rendered val, 600
        scenes, with a waste read renamed rather than dropped: 7 more waste tops right, 2 of them by
        the renaming alone, 3 fewer)."""
        if reading.fit is None or reading.layout is None or not reading.placed:
            return reading, dets
        small = set(self._face_rows(dets.xyxy).tolist())
        rows = np.array([j for j in reading.placed + reading.waste_tops if j in small], np.int64)
        if len(rows) == 0:
            return reading, dets
        faces = self.detector.name_faces(image_bgr, dets.xyxy[rows], layout_angle(reading.fit.homography))
        # all 52 probabilities of the index reading when the detector keeps them, else its best four
        index = getattr(self.detector, "index_probs", None)
        # (a corner placed on a slot stays a read however the two views disagree on its name: under
        # ``min_score`` it would leave its slot empty; it is shown for checking instead)
        named = named_with_faces(dets, rows, faces, getattr(self.detector, "face_weight", 1.0),
                                 index(image_bgr, dets.xyxy[rows], angle) if callable(index) else None,
                                 keep_at_least=self.min_score)
        again = self._read_on_fit(named, reading, frame, size)
        if again.fit is None or again.layout is None:  # (a nearly cleared pyramid's fit not held)
            return reading, dets
        return again, named

    def _read_on_fit(self, dets: Detections, reading: "FrameReading", frame: int,
                     size: tuple[int, int]) -> "FrameReading":
        """``read`` the same frame again on ``reading``'s fit (the way round chosen for it, which a
        fresh search need not find), leaving the tracking state as that reading left it."""
        assert reading.fit is not None
        saved = (self.track, self._prior, self._candidate)
        self.track, self._prior, self._candidate = True, reading.fit.homography, None
        try:
            return self.read(dets, frame, size)
        finally:
            self.track, self._prior, self._candidate = saved

    def _best_turn(self, image_bgr: np.ndarray, reading: "FrameReading", dets: Detections, angle: float,
                   state: tuple, frame: int, size: tuple[int, int]) -> tuple["FrameReading", Detections, float]:
        """The reading that names the pyramid surest among: this one; the corners named with crops
        turned as its fit lies (when that is ``TURN_MIN_DEG`` off the angle they were named at);
        and, for a searched (not tracked) fit far from upright or a weakly named pyramid, the two
        other ways the same corners make a pyramid (``orientation.turned_homographies``), each named turned its way;
        not those two once the fit named at its own angle is told upright (``orientation.told_upright``)."""
        assert reading.fit is not None and self.detector is not None
        fitted = layout_angle(reading.fit.homography)
        tries: list[tuple[Optional[np.ndarray], float]] = []
        if angle_gap(fitted, angle) >= TURN_MIN_DEG:
            tries.append((None, fitted))
        # (a tracked fit's orientation was settled when it was found)
        # (nor one of a few cards left, placed the way their second indices lie: ``few_cards``)
        if not self.rules.inverted and not reading.fit.tracked and not self._few_cards_fit(reading.fit):
            named = named_scores(reading.layout)
            if (angle_gap(fitted, 0.0) >= TURN_MIN_DEG or (named and float(np.mean(named)) < WEAK_NAMING)
                    or slots_lie_turned(reading)):
                tries += [(h, layout_angle(h))
                          for h in turned_homographies(reading.fit.homography, self.rules.rows)]
        if not tries:
            return reading, dets, angle
        # A reading whose corners were named at an angle far from its own fit's contradicts itself
        # (crops upright read a layout said to lie 90 degrees off): it keeps only clearly surer.
        contradicts = angle_gap(fitted, angle) >= TURN_MIN_DEG
        # (its indices' turn, told at the angle they were named at, says nothing of its own fit's:
        # that is told by the same fit named again at its angle, the first of the tries)
        mass = (named_mass(reading.layout) * SELF_CONTRADICTING if contradicts else way_round_mass(reading))
        best = (mass, reading, dets, angle, (self._prior, self._candidate))
        track = self.track
        for h, turned in tries:
            self._prior, self._candidate = state  # the same frame again, not a second frame
            named_dets = self.detector.detect(image_bgr, angle=turned)  # type: ignore[call-arg]
            if h is None:
                again = self.read(named_dets, frame, size)
            else:  # read as if tracking that orientation
                self.track, self._prior, self._candidate = True, h, None
                try:
                    again = self.read(named_dets, frame, size)
                finally:
                    self.track = track
            mass = way_round_mass(again)
            if h is None and contradicts and best[1] is reading:
                best = (best[0] * upright_share(again),) + best[1:]
            if mass > best[0]:
                # Another way round read as if tracked is this frame's reading; it becomes the
                # tracked lattice only when none was tracked before: a troubled frame (a hand over
                # most of the pyramid) must not replace a tracked lattice at once (``_confirm``).
                keep = track and (h is None or state[0] is None)
                best = (mass, again, named_dets, turned, (self._prior, self._candidate) if keep else state)
                if h is None and told_upright(again):
                    break  # its own fit named at its angle, its indices told upright: the way round
        self._prior, self._candidate = best[4]
        return best[1], best[2], best[3]

    def _turns(self) -> bool:
        """Whether the detector names corners with turned crops (``detect(image, angle=...)``)."""
        return self.turn and bool(getattr(self.detector, "names_turned", False))


def _moved(fit: "LatticeFit", chosen: "LatticeFit") -> bool:
    """Whether ``fit`` puts the slots elsewhere than ``chosen`` does: its nodes half a pitch or more
    away, as a rule (a lattice a row or a slot off, not the same one refined)."""
    gap = np.linalg.norm(fit.node_xy() - chosen.node_xy(), axis=1)
    return bool(np.median(gap) >= MOVED_PITCH * chosen.pitch_px())


def _placed(reading: "FrameReading") -> int:
    """How many reads ``reading`` placed on pyramid slots."""
    return sum(1 for j in reading.placed if j >= 0)
