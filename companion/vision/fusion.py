"""Temporal fusion: accept a new table layout only when it is stable.

Rule: the last ``K`` usable frames vote slot by slot (each pyramid slot, and the
waste tops + cells + reserve as one more "slot"). A slot's value is settled when
at least ``quorum`` of the ``K`` frames agree on it; when every slot is settled
and the settled layout differs from the accepted one, it is accepted.

``K = 30`` and ``quorum = 20`` by default. At a webcam's 30 frames/s a real
change is reported 20 frames (two thirds of a second) after the table settles,
and a value must hold two thirds of the last second. A hand moving over the
cards hides or garbles a different set of corners every few frames, so a wrong
value rarely gathers 20 of 30 votes; a single missed or misread corner (the
detector's occasional error) is simply outvoted, which exact frame-to-frame
equality could not do: with a 1% miss rate per corner, a third of all frames of
a full deal differ somewhere. Measured with ``tools/evaluate_layout.py
--static-hands``: with K=15/quorum 10, slow hands resting over the uncovered
edge of the pyramid or over the waste for about half a second produced false
removals (19 in 10,000 frames); the longer window is the price of not
mistaking a resting hand for a move.

Before voting, each frame is cleaned:

* a frame with no pyramid, one where fewer than ``min_seen`` of the
  accepted layout's cards are read (a hand or an arm over the table; late in a
  game at least all but two, a move may take the last cards), or one with more
  than ``max_anomalies`` signs of trouble beyond the lasting ones (weak reads,
  slots that must hold a card but show none, a card read twice: what a hand's
  edge does to the detector; a card whose index the camera never sees is a
  hidden slot in every frame, and a model unsure of a deck reads some cards
  weakly in every frame, so the median over the last ``2 K`` frames that read
  nearly as many cards as the best of them is the lasting count; a large
  count wanders, so a fifth of it more is allowed too: ``ANOMALY_SPREAD``) is skipped
  (it does not enter the window); too few accepted cards seen for ``3 K``
  frames in a row is no hand but a table several moves
  ahead of the accepted one (the person played on while frames were skipped):
  such frames then vote, or nothing would ever be accepted again;
* hand cue: a frame where accepted cards vanished (a waste pile left empty
  counts, a new card on it does not: that is a draw) *and* the read count
  dropped by more than those cards' corners, or more boxes were placed nowhere
  (against the median of recent frames where nothing vanished, and a fifth of it
  more: ``ANOMALY_SPREAD``) shows a hand: it
  is skipped, so it votes neither way; a change that only ever shows with the
  cue is voted on normally after a whole window of such frames (no deadlock on
  a stale baseline);
* more than ``max_removed`` (2) adjacent accepted cards vanishing at once is no
  move (a move takes at most two): the frame is skipped too (were those slots
  filled from the accepted layout, the frame would vote for the old cards there
  and for the new table elsewhere, and a table from the middle of a move, say
  the waste card of a pair lifted and the pyramid card not yet, could settle);
  the same group gone for ``3 K`` frames in a row is real (several moves made
  while the view was blocked);
* a slot that must hold a card (a card still lies on it) but shows none is
  taken from the accepted layout: a card cannot leave from under another, so
  this is occlusion, not a move (unless the accepted layout has the slots lying
  on it empty: then the card read there is the misread). The same for a slot
  read with a score under ``min_score``.

A slot an accepted layout has shown emptied is empty while no card holds the quorum there (also
after a misread once held it): a read flickering on it (the second index of the card it bared,
misread) would otherwise leave it unsettled and hold up every other change.

The first accepted layout says, for each of its empty slots, the card read there most often
before it (``EARLY_READS`` in ``extra``, read in 3 frames or more, none on the layout): a move made
before the view first settled, from which ``FollowStart`` takes the deal.

A settled change is accepted only when most of the newest frames show it too
(after many skipped frames the window holds old ones: a table seen again as it
was is no change). A change that only takes cards away, and not as a move
would (a lone card that is no king, two cards that do not make a pair: a hand
resting on them, or the first card of a pair lifted) must hold ``K // 2``
frames more; an illegal removal lasts that long (the person looks, puts the
cards back), a hand passing does not. The wait is for the same cards gone: a
misread slot or a waste read settling another way meanwhile does not start it
again (with a fast player the next move came first, and the table was lost).
``rules`` gives the card values and the pair sum (a 52-card deck by default).

``LayoutFuser.for_fps(fps)`` sizes the window as one second of any video.

Scores of the accepted layout are the mean, over the agreeing frames, of each slot's score.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import replace
from typing import Optional

import numpy as np

from companion.game.geometry import geometry
from companion.layout import EARLY_READS, SlotReading, TableLayout
from companion.rules import Rules
from companion.vision.pipeline import FrameReading, LayoutPipeline
from companion.vision.votes import early_reads, settle, voted_card

#: Frames in the voting window, and the agreeing frames a value needs (see the module docstring).
DEFAULT_K = 30
DEFAULT_QUORUM = 20
#: Frames that must read a card on a slot before the first accepted layout, for ``EARLY_READS``.
EARLY_MIN_FRAMES = 3


#: A frame's count of anomalies wanders around the table's lasting count, more the larger it is: a
#: video whose corners the detector finds only faintly shows ~20 weak reads in every frame, 15 to 27.
#: A fifth more than the lasting count is that wandering, not a hand (with only ``max_anomalies``
#: allowed above it, half such frames were skipped and a rendered game, g00412, lost 6 of 20 moves:
#: moves came faster than the window filled; a square root's spread let hands vote in clearer games).
#: The same for the boxes placed nowhere that a hand's cue counts (g00401: one move more).
ANOMALY_SPREAD = 0.2


def _extras(layout: TableLayout) -> tuple:
    return (layout.waste_tops(), layout.cells, layout.reserve)


def _key(layout: TableLayout) -> tuple:
    return tuple(s.card for _, _, s in layout.slots()) + (_extras(layout),)


class LayoutFuser:
    """Feed every frame's reading to ``update``; it returns a layout only when a change is accepted."""

    def __init__(self, k: int = DEFAULT_K, quorum: Optional[int] = None, *, min_seen: float = 0.6,
                 min_score: float = 0.3, max_anomalies: int = 1, max_removed: int = 2,
                 rules: Optional[Rules] = None, pipeline: Optional[LayoutPipeline] = None) -> None:
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k!r}")
        self.k = k
        self.quorum = quorum if quorum is not None else (DEFAULT_QUORUM if k == DEFAULT_K
                                                         else math.ceil(2 * k / 3))
        if not 1 <= self.quorum <= k:
            raise ValueError(f"quorum must be 1..{k}, got {self.quorum!r}")
        self.min_seen = min_seen
        self.min_score = min_score
        self.max_anomalies = max_anomalies
        #: Why the last skipped frame was skipped ("anomalies", "lost", "hand", "group"): for
        #: tracing a video (``skipped`` counts them).
        self.skip_reason = ""
        self.max_removed = max_removed
        #: Card values and the pair sum (``_doubtful``); default: a 52-card deck, pairs make 13.
        self.rules = rules if rules is not None else Rules()
        #: The pipeline reading the frames, if given: it learns each accepted layout (where every
        #: card lies), which places reads only a card's second index explains.
        self.pipeline = pipeline
        self.accepted: Optional[TableLayout] = None
        self._window: deque[TableLayout] = deque(maxlen=k)
        #: (reads, anomalies, unplaced reads) of recent frames where nothing vanished: the hand
        #: cue's baseline.
        self._counts: deque[tuple[int, int, int]] = deque(maxlen=k)
        self._cue_run = 0
        #: (cards read, anomalies) of the last ``2 k`` frames read (the lasting anomalies are no hand).
        self._anomaly_counts: deque[tuple[int, int]] = deque(maxlen=2 * k)
        #: The last group of more than ``max_removed`` vanished cards, and for how many frames.
        self._group: frozenset = frozenset()
        self._group_run = 0
        #: The slots a doubtful settled change empties, waiting to hold longer (see ``_doubtful``),
        #: and for how long.
        self._pending: Optional[frozenset] = None
        self._pending_run = 0
        #: Per waste pile, the earlier accepted tops still beneath the accepted one (oldest
        #: first): such a card showing on top again is the top taken, not a draw (``_doubtful``).
        self._beneath: list[list] = []
        self.skipped = 0
        #: The last frame each card was read in (skipped frames too; a pyramid card only on its
        #: accepted slot): the order cards vanished in, for a view that hid several moves
        #: (``extra["last_seen"]`` of accepted layouts).
        self.last_seen: dict = {}
        #: Frames in a row showing too few of the accepted cards (see ``update``).
        self._lost_run = 0
        #: Pyramid positions an accepted layout has shown emptied (see ``votes.settle``).
        self._emptied: set[int] = set()
        #: Each pyramid card's slot in the accepted layouts (a card never changes slots; see
        #: ``_note_seen``).
        self._home: dict = {}
        #: Until the first layout is accepted: per pyramid position, the cards read there (see
        #: ``EARLY_READS``).
        self._early: dict[int, Counter] = {}

    @classmethod
    def for_fps(cls, fps: float, seconds: float = 1.0, **kw) -> "LayoutFuser":
        """A window of ``seconds`` of video (at least 3 frames), quorum two thirds of it: the
        defaults are this at a webcam's 30 frames/s; a 10 frames/s video gets K=10, quorum 7."""
        k = max(3, round(fps * seconds)) if fps and fps > 0 else DEFAULT_K
        return cls(k, DEFAULT_QUORUM if k == DEFAULT_K else math.ceil(2 * k / 3), **kw)

    def reset(self) -> None:
        self.accepted = None
        if self.pipeline is not None:
            self.pipeline.expected = None
        self._window.clear()
        self._counts.clear()
        self._cue_run = 0
        self._group, self._group_run = frozenset(), 0
        self._pending, self._pending_run = None, 0
        self._beneath = []
        self._anomaly_counts.clear()
        self._lost_run = 0
        self.last_seen.clear()
        self._emptied.clear()
        self._home.clear()
        self._early.clear()

    def update(self, reading: FrameReading | TableLayout | None, frame: int = -1) -> Optional[TableLayout]:
        layout = reading.layout if isinstance(reading, FrameReading) else reading
        hidden = reading.hidden if isinstance(reading, FrameReading) else ()
        out_of_view = reading.out_of_view if isinstance(reading, FrameReading) else ()
        anomalies = reading.anomalies if isinstance(reading, FrameReading) else 0
        if layout is not None:
            self._anomaly_counts.append((len(layout.visible_cards()), anomalies))
            self._note_seen(layout, frame)
        lasting = self._lasting_anomalies()
        if layout is None or anomalies > self.max_anomalies + lasting * (1.0 + ANOMALY_SPREAD):
            return self._skip("anomalies")
        # Too few accepted cards seen: a hand or an arm over the table, unless it lasts ``3 k``
        # frames in a row (the accepted layout fell behind several moves: were such frames
        # skipped for good, nothing would ever be accepted again).
        lost = not self._usable(layout)
        self._lost_run = self._lost_run + 1 if lost else 0
        if lost and self._lost_run <= 3 * self.k:
            return self._skip("lost")
        if self._window and self._window[-1].rows != layout.rows:
            self._window.clear()
            self._emptied.clear()
            self._home.clear()
        if isinstance(reading, FrameReading) and self._hand_cue(reading, layout):
            return self._skip("hand")  # cards vanished in a frame that shows a hand: no vote either way
        filled, group = self._fill_unclear_removals(self._fill_occluded(layout, hidden, out_of_view))
        if group:
            # More cards gone at once than a move takes: a hand over them. The frame votes neither
            # way (the refilled slots would vote for the old cards, the rest for the new table,
            # and an in-between table could settle). The same group gone for ``3 k`` frames in a
            # row is real (several moves made while the view was blocked); a card of it read in
            # some frames and not in others (a weak read) does not start the count again.
            self._group_run = self._group_run + 1 if len(group ^ self._group) <= 1 else 1
            self._group = group
            if self._group_run <= 3 * self.k and self._lost_run <= 3 * self.k:
                return self._skip("group")
            filled = layout
        else:
            self._group_run, self._group = 0, frozenset()
        self._window.append(filled)
        settled = self._settled()
        if settled is None:
            return None
        if self.accepted is not None and _key(self.accepted) == settled:
            self._pending, self._pending_run = None, 0
            return None
        if self.accepted is not None and not self._recent_agree(settled):
            return None
        if self.accepted is not None and self._doubtful(settled):
            # Cards gone that no move takes away together (a lone card that is no king, two that
            # do not make a pair: a hand resting on them, or the first card of a pair lifted):
            # an illegal removal stays that way for long, so it must hold half a window more.
            # The same cards gone (a misread elsewhere or a flickering waste read settling
            # another way does not start the wait again; a card coming back does).
            gone = self._gone_slots(settled)
            if self._pending != gone:
                self._pending, self._pending_run = gone, 0
            self._pending_run += 1
            if self._pending_run <= self.k // 2:
                return None
        self._pending, self._pending_run = None, 0
        self._note_beneath(settled[-1][0])
        if self.accepted is not None and len(settled) == len(_key(self.accepted)):
            self._emptied |= {p for p, (a, b) in enumerate(zip(_key(self.accepted)[:-1], settled[:-1]))
                              if a is not None and b is None}
        self.accepted = self._build(settled, frame)
        self._home.update({s.card: (r, i) for r, i, s in self.accepted.slots() if s.card is not None})
        if self.pipeline is not None:
            self.pipeline.expected = self.accepted
        return self.accepted

    # --- helpers -------------------------------------------------------------------------------
    def _skip(self, reason: str) -> None:
        self.skipped += 1
        self.skip_reason = reason
        return None

    def _note_seen(self, layout: TableLayout, frame: int) -> None:
        if self.accepted is None:
            for pos, (_, _, slot) in enumerate(layout.slots()):
                if slot.card is not None and slot.score >= self.min_score:
                    self._early.setdefault(pos, Counter())[slot.card] += 1
        if frame < 0:
            return
        # A pyramid card never changes slots: read on another slot than the one accepted layouts
        # showed it on, it is a misread of that slot's card (g00403: QS "seen" 90 frames after
        # it was taken, and the moves hidden by one hand were recorded out of order).
        # (nor is a card no accepted layout showed on the pyramid, a stock card, ever on it: g00580,
        # AH read AC by a frame, AC "glimpsed" deep in the waste)
        home = self._home
        for r, i, s in layout.slots():
            where = home.get(s.card, None if home else (r, i))  # (before any layout: wherever read)
            if s.card is not None and s.score >= self.min_score and where == (r, i):
                self.last_seen[s.card] = frame
        for pile in layout.waste:
            for c in pile:
                self.last_seen[c] = frame

    def _note_beneath(self, tops: tuple) -> None:
        """Keep each waste pile's earlier tops (``_beneath``) as a new layout is accepted: a new
        card drawn covers the old top; an earlier top showing again means the cards above it
        were taken; a pile seen empty (taken, or turned over into the stock) holds nothing."""
        old = self.accepted.waste_tops() if self.accepted is not None else ()
        if len(old) != len(tops):
            self._beneath = [[] for _ in tops]
            return
        while len(self._beneath) < len(tops):
            self._beneath.append([])
        for p, (a, b) in enumerate(zip(old, tops)):
            below = self._beneath[p]
            if b is None:
                below.clear()
            elif b is not a:
                if b in below:
                    del below[below.index(b):]
                elif a is not None:
                    below.append(a)

    def _lasting_anomalies(self) -> int:
        """Anomalies the table shows lastingly: the median of the last ``2 k`` frames that read at
        least 80% as many cards as the best of them. A hand over the table reads fewer cards,
        hence fewer weak ones, or none at all: such a frame must not make the clear ones look
        troubled. A move changes the lasting count (cards come into view, read well or badly),
        so it follows the table within a window. Until a window has been seen, the frames
        so far stand for the table (a model that reads a deck weakly must still accept the deal
        before the first move)."""
        counts = self._anomaly_counts
        if not counts:
            return 0
        most = max(n for n, _ in counts)
        return int(np.median([a for n, a in counts if n >= 0.8 * most]))

    def _recent_agree(self, settled: tuple) -> bool:
        """Most of the newest frames show the change too (the window may hold old frames when
        many were skipped: a table seen again as it was is no change; one misread is not)."""
        old = _key(self.accepted)
        changed = [p for p, (a, b) in enumerate(zip(old, settled)) if a != b]
        recent = list(self._window)[-max(3, self.k // 3):]
        agree = sum(1 for l in recent if all(_key(l)[p] == settled[p] for p in changed))
        return 2 * agree > len(recent)

    def _doubtful(self, settled: tuple) -> bool:
        """The settled change only takes cards away, and not as a move would: the pyramid,
        cell and reserve cards gone plus the waste tops gone (a pile left empty, showing a card
        the accepted top covered, or showing an older card while a pyramid card went too) are
        not one king or two cards making a pair. A new card on a waste pile (a draw) or a card
        appearing is never doubtful. (A waste top misread for a moment as the card beneath it
        is no draw but the top taken alone: it must hold as long as any lone removal.)"""
        acc = self.accepted
        assert acc is not None
        slots = [s.card for _, _, s in acc.slots()]
        new_slots, (tops, cells, reserve) = settled[:-1], settled[-1]
        if len(new_slots) != len(slots):
            return False
        # Slot by slot: a card misread twice (its own and another slot) must not hide its removal.
        old_side = [c for c in acc.cells + acc.reserve if c is not None]
        new_side = {c for c in cells + reserve if c is not None}
        if (any(a is None and b is not None for a, b in zip(slots, new_slots))
                or new_side - set(old_side) - set(slots)):
            return False  # a card appearing
        gone = [a for a, b in zip(slots, new_slots) if a is not None and b is None and a not in new_side]
        gone += [c for c in old_side if c not in new_side and c not in new_slots]
        for p, (a, b) in enumerate(zip(acc.waste_tops(), tops)):
            if a is not None and b is not a:
                below = self._beneath[p] if p < len(self._beneath) else ()
                if b is not None and not gone and b not in below:
                    return False  # a draw: a new card on the pile
                gone.append(a)  # taken: the pile empty, or showing a card it covered
        if not gone:
            return False
        return not ((len(gone) == 1 and self.rules.is_king(gone[0]))
                    or (len(gone) == 2 and self.rules.pairs(*gone)))

    def _gone_slots(self, settled: tuple) -> frozenset:
        """What a settled change takes away: the slots of accepted pyramid cards it empties, and
        the accepted waste tops no longer on top (not what the new tops read as)."""
        old = _key(self.accepted)
        tops = settled[-1][0]
        return (frozenset(p for p, (a, b) in enumerate(zip(old[:-1], settled[:-1]))
                          if a is not None and b is None)
                | frozenset(("waste", a) for a in old[-1][0] if a is not None and a not in tops))

    def _settled(self) -> Optional[tuple]:
        """Each position's value held by a quorum of the window, or None (``votes.settle``)."""
        if len(self._window) < self.quorum:
            return None
        return settle([_key(l) for l in self._window], self.quorum,
                      _key(self.accepted) if self.accepted is not None else None, self._emptied)

    def _build(self, settled: tuple, frame: int) -> TableLayout:
        window = list(self._window)
        # The newest frame that agrees on the extras gives waste/cells/reserve/problems.
        base = next((l for l in reversed(window) if _extras(l) == settled[-1]), window[-1])
        rows, pos = [], 0
        for r, row in enumerate(base.pyramid):
            out = []
            for i in range(len(row)):
                agree = [l.pyramid[r][i] for l in window if l.pyramid[r][i].card is settled[pos]]
                last = agree[-1]
                mean = sum(s.score for s in agree) / len(agree)
                if last.card is None:
                    out.append(SlotReading(last.card, round(mean, 4), last.alternatives, last.corrected))
                else:
                    out.append(voted_card(last, mean, len(agree), [l.pyramid[r][i].card for l in window]))
                pos += 1
            rows.append(tuple(out))
        extra = dict(base.extra or {})
        if self.last_seen:
            extra["last_seen"] = {str(c): f for c, f in self.last_seen.items()}
        if self.accepted is None:
            early = early_reads(self._early, rows, EARLY_MIN_FRAMES)
            if early:
                extra[EARLY_READS] = early
            self._early.clear()
        return replace(base, pyramid=tuple(rows), frame=frame if frame >= 0 else base.frame, extra=extra)

    def _usable(self, layout: TableLayout) -> bool:
        if self.accepted is None or self.accepted.rows != layout.rows:
            return True
        before = [(r, i) for r, i, s in self.accepted.slots() if s.card is not None]
        if not before:
            return True
        seen = sum(1 for r, i in before if layout.pyramid[r][i].card is not None)
        # Late in a game a move may take most of the few cards left (the last two: all of them).
        return seen >= min(self.min_seen * len(before), len(before) - self.max_removed)

    def _hand_cue(self, reading: FrameReading, layout: TableLayout) -> bool:
        """Accepted cards (pyramid or waste top) vanished in a frame with a sudden drop of the
        read count (fewer reads than the recent frames where nothing vanished, beyond what the
        vanished cards account for: two corners each, a whole waste fan; a hand hides the
        neighbours' corners too, a lifted pair does not) or with more boxes placed nowhere than
        those frames, by more than their count wanders (a hand's edge makes false boxes).
        (Counting weak reads and hidden slots too was tried: it held back real moves of the
        bundled demo video.)"""
        n = len(reading.detections)
        acc = self.accepted
        vanished = corners = 0
        if acc is not None and acc.rows == layout.rows:
            vanished = sum(1 for r, i, s in layout.slots()
                           if s.card is None and acc.pyramid[r][i].card is not None)
            corners = 2 * vanished
            for pile, a, b in zip(acc.waste, acc.waste_tops(), layout.waste_tops()):
                if a is not None and b is None:  # a pile gone: all of its fanned cards
                    vanished += 1
                    corners += 2 * max(len(pile), 1)
                elif a is not None and b is not a:
                    # a new top is a draw (nothing vanished) or the card beneath a top taken in a
                    # pair, which may show fewer corners than the top did
                    corners += 2
        # Baselines from recent frames where nothing vanished: a table may show a lasting
        # anomaly (a card the camera never sees, a loose card) that is no hand.
        now = (n, reading.anomalies, len(reading.unplaced))
        if vanished == 0:
            self._counts.append(now)
            self._cue_run = 0
            return False
        if self._counts:
            typ = np.median(np.array(self._counts), 0)
            troubled = now[0] < typ[0] - corners - 1 or now[2] > typ[2] * (1.0 + ANOMALY_SPREAD)
        else:
            troubled = False
        cue = vanished > 0 and troubled
        # A change that only ever shows with the cue (a resting hand, or a baseline gone stale)
        # is voted on normally after a whole window of such frames.
        self._cue_run = self._cue_run + 1 if cue else 0
        if self._cue_run > self.k:
            self._counts.clear()
            return False
        return cue

    def _fill_unclear_removals(self, layout: TableLayout) -> tuple[TableLayout, frozenset]:
        """Accepted cards that vanished in this frame count as removed only when seen clearly.

        Vanished slots are grouped by adjacency (same row, or lying on each other).
        A move takes at most two pyramid cards: a group of more than ``max_removed``
        slots is a hand over the cards, and the accepted cards stay. Returns the
        layout and the slots of such groups (empty when none). (Also refusing
        groups next to a hidden slot was tried: a card the camera never sees then
        blocks every real removal next to it, see rendered game g01001.)
        """
        acc = self.accepted
        if acc is None or acc.rows != layout.rows:
            return layout, frozenset()
        gone = {(r, i) for r, i, s in layout.slots()
                if s.card is None and acc.pyramid[r][i].card is not None}
        if not gone:
            return layout, frozenset()
        rows = [list(r) for r in layout.pyramid]
        seen: set = set()
        big: set = set()
        for start in sorted(gone):
            if start in seen:
                continue
            group, todo = [], [start]
            seen.add(start)
            while todo:
                cur = todo.pop()
                group.append(cur)
                for nb in _neighbours(*cur, layout.rows):
                    if nb in gone and nb not in seen:
                        seen.add(nb)
                        todo.append(nb)
            if len(group) > self.max_removed:
                big.update(group)
                for r, i in group:
                    rows[r][i] = acc.pyramid[r][i]
        if not big:
            return layout, frozenset()
        return replace(layout, pyramid=tuple(tuple(r) for r in rows)), frozenset(big)

    def _fill_occluded(self, layout: TableLayout, hidden: tuple[tuple[int, int], ...],
                       out_of_view: tuple[tuple[int, int], ...] = ()) -> TableLayout:
        if self.accepted is None or self.accepted.rows != layout.rows:
            return layout
        acc = self.accepted.pyramid
        held = [s.card is not None for _, _, s in self.accepted.slots()]
        geo = geometry(layout.rows, self.rules.inverted)
        rows = [list(r) for r in layout.pyramid]
        changed = False
        for pos, (r, i, s) in enumerate(layout.slots()):
            old = acc[r][i]
            # Hidden: a card read on a slot lying on it. Where the accepted layout has both of those
            # slots empty, that read is a misread (no card comes back onto the pyramid), and the
            # slot is as the frame shows it (g00405: 6H's second index read as 8H on the emptied
            # slot below kept the 9S taken from above it on the table for 50 frames).
            lain_on = any(held[c] for c in geo.covers(pos))
            # Out of the picture: not seen, so not taken (the camera moved, or frames the table tight).
            if (((r, i) in hidden and lain_on) or (r, i) in out_of_view
                    or (s.card is not None and s.score < self.min_score)) and old.card is not None:
                rows[r][i] = old
                changed = True
        return replace(layout, pyramid=tuple(tuple(r) for r in rows)) if changed else layout


def _neighbours(r: int, i: int, rows: int) -> list[tuple[int, int]]:
    """Slots next to ``(r, i)``: left/right in its row, the two it lies on and the two lying on it."""
    cand = [(r, i - 1), (r, i + 1), (r - 1, i - 1), (r - 1, i), (r + 1, i), (r + 1, i + 1)]
    return [(a, b) for a, b in cand if 0 <= a < rows and 0 <= b <= a]
