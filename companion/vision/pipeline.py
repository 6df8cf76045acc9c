"""From one camera frame (or its detections) to a checked ``TableLayout``.

Steps for one frame (``LayoutPipeline.read``):

1. drop detections below ``min_score``;
2. put aside probable second indices: of several reads of one card, all but the
   top-most are the rotated bottom-right index of an uncovered card (or a
   duplicate), and would fall on lattice nodes of rows that are not there;
3. fit the pyramid lattice (``companion.vision.slots``), starting from the last
   frame's fit when it still explains the reads (video), else from scratch;
4. one card, one place: a read sitting down-right of the same card's read
   (0.1..1.8 slot pitches right, 0.6..3.8 row pitches down) is that card's
   second index and confirms it; several reads on one slot keep the best and
   pool the rest into its alternatives; a card lying on an empty slot with
   the same card read elsewhere is a stray index;
5. cards off the lattice: below the pyramid they are the waste (one pile, or
   up to three piles left to right; within a pile left to right = bottom to
   top, as a fanned draw-3 lies), a reserve row when the rules have one
   (the band right under the pyramid, the waste below it), to the right of the
   pyramid the free cell(s); anything else is reported as a stray card;
6. one card in one place: a card read twice keeps the better read, the other
   place takes its best alternative that is seen nowhere, and the person is
   asked to check it; cards outside the rules' deck, low scores, and slots
   that must hold a card (a card lies on them) but show none are reported.

The stock is a face-down pile the detector cannot see: ``stock_present`` is
taken from the caller (``None`` = unknown, reported as present), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional, Protocol

import numpy as np

from companion.cards import CARD_CODES, DECK, Card
from companion.layout import SlotReading, TableLayout, slot_name
from companion.rules import Rules
from companion.vision.detections import Detections
from companion.vision.slots import (SECOND_INDEX_WINDOW, LatticeFit, assign_points, convincing, covering,
                                    fit_pyramid, pyramid_nodes)

#: Slot scores under this are reported for checking.
LOW_SCORE = 0.5
#: Its usual place when no card of the frame shows both (cards dealt half-overlapping).
DEFAULT_SECOND_OFFSET = (0.7, 2.0)


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

    @property
    def ok(self) -> bool:
        return self.layout is not None


@dataclass
class _Read:
    det: int
    card: Card
    score: float
    alts: dict[Card, float] = field(default_factory=dict)
    uv: tuple[float, float] = (0.0, 0.0)

    def best_alternatives(self, k: int = 3) -> tuple[tuple[Card, float], ...]:
        merged = dict(self.alts)
        merged[self.card] = max(merged.get(self.card, 0.0), self.score)
        items = sorted(merged.items(), key=lambda t: -t[1])
        first = [(self.card, merged[self.card])]
        return tuple(first + [(c, s) for c, s in items if c is not self.card][: k - 1])


class LayoutPipeline:
    """Detector + slot mapping + consistency checks; keeps the last lattice fit between frames."""

    def __init__(self, detector: Optional[Detector] = None, rules: Rules = Rules(), *,
                 min_score: float = 0.25, stock_present: Optional[bool] = None, track: bool = True) -> None:
        self.detector = detector
        self.rules = rules
        self.min_score = min_score
        self.stock_present = stock_present
        self.track = track
        self._prior: Optional[np.ndarray] = None
        self._deck = set(rules.deck_cards())

    def reset(self) -> None:
        self._prior = None

    def process(self, image_bgr: np.ndarray, frame: int = -1) -> FrameReading:
        if self.detector is None:
            raise RuntimeError("LayoutPipeline.process needs a detector")
        return self.read(self.detector.detect(image_bgr), frame, (image_bgr.shape[1], image_bgr.shape[0]))

    # --- one frame -----------------------------------------------------------------------------
    def read(self, dets: Detections, frame: int = -1,
             image_size: Optional[tuple[int, int]] = None) -> FrameReading:
        """Read one frame's detections; ``image_size`` (width, height) lets the fit know which
        slots lie outside the picture (a pyramid partly out of view)."""
        rules = self.rules
        keep = np.flatnonzero(dets.confidence >= self.min_score)
        dets = dets[keep] if len(keep) != len(dets) else dets
        n = len(dets)
        if n == 0:
            return FrameReading(None, dets, problems=("no cards seen",))
        centers = dets.centers.astype(np.float64)
        primary = self._primary_mask(dets, centers)
        pairs = _same_card_pairs(dets, centers)
        fit = fit_pyramid(centers[primary], rules.rows, rules.inverted,
                          prior=self._prior if self.track else None, pairs=pairs, frame_size=image_size)
        if fit is None or fit.inliers == 0:
            return FrameReading(None, dets, problems=(
                f"no pyramid found among {n} card reads (need at least 3 cards of it in view)",))
        ids, uv, res = assign_points(fit, centers)
        reads = [self._make_read(dets, j, uv[j]) for j in range(n)]
        nodes_ri, _ = pyramid_nodes(rules.rows, rules.inverted)
        n_nodes = len(nodes_ri)
        # Second indices (a card's rotated bottom-right index) confirm their card and claim nothing.
        cov = covering(rules.rows, rules.inverted)
        # A card shows its second index only when nothing lies on it. Reads that may be second
        # indices themselves (a read of the same card up-left of them) do not count as cards on it.
        maybe_second = self._maybe_second(reads, uv)
        on_node: list[list[int]] = [[] for _ in range(n_nodes)]
        for j in np.flatnonzero((ids >= 0) & ~maybe_second):
            on_node[ids[j]].append(int(j))
        over = _over(rules.rows, rules.inverted)
        # Only the card lying down-right on a card hides its second index.
        br_cover = _br_cover(rules.rows, rules.inverted)
        can_show_second = np.array([
            ids[j] < 0 or br_cover[ids[j]] < 0
            or not any(reads[k].card is not reads[j].card for k in on_node[br_cover[ids[j]]])
            for j in range(n)])
        certain = np.array([ids[j] >= 0 and not over[ids[j]] for j in range(n)])
        second, br_off = self._second_indices(reads, uv, can_show_second, certain)
        self._cross_second_indices(reads, uv, can_show_second, second, br_off)
        slot_reads: list[list[int]] = [[] for _ in range(n_nodes)]
        for j in np.flatnonzero((ids >= 0) & (second < 0)):
            slot_reads[ids[j]].append(int(j))
        winner = [max(js, key=lambda j: reads[j].score) if js else -1 for js in slot_reads]
        for node, js in enumerate(slot_reads):
            for j in js:
                if j != winner[node]:  # a weaker read of the same slot: its cards become alternatives
                    w = reads[winner[node]]
                    for c, s in reads[j].best_alternatives():
                        w.alts[c] = max(w.alts.get(c, 0.0), s)
        # A card on an empty slot whose card is read elsewhere is a stray index, not a card.
        for node in range(n_nodes):
            j = winner[node]
            if j < 0:
                continue
            lonely = any(winner[c] < 0 for c in cov[node])
            if lonely and any(winner[m] >= 0 and reads[winner[m]].card is reads[j].card
                              for m in range(n_nodes) if m != node):
                winner[node] = -1
        used = np.zeros(n, bool)
        used[[j for j in winner if j >= 0]] = True
        used[second >= 0] = True
        self._place_orphans(reads, winner, used, ids, uv, br_off, cov)
        # Off the lattice: waste, cells, reserve.
        off = [j for j in range(n) if not used[j] and (ids[j] < 0 or winner[ids[j]] != j)]
        waste, cells, reserve, stray = self._outside(reads, off, uv, br_off)
        problems: list[str] = []
        # One card, one place.
        places: dict[Card, list[tuple[str, _Read]]] = {}
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
        for card, where in list(places.items()):
            if len(where) < 2:
                continue
            where.sort(key=lambda t: -t[1].score)
            for place, rd in where[1:]:
                alt = next((c for c, s in rd.best_alternatives(6)[1:]
                            if c not in seen and c in self._deck and s > 0.02), None)
                if alt is not None:
                    rd.alts[card] = rd.score
                    rd.card, rd.score = alt, min(rd.alts.get(alt, 0.0), rd.score)
                    seen.add(alt)
                    problems.append(f"{place}: read as {card}, which is also at {where[0][0]}; "
                                    f"taken as {alt} - please check")
                else:
                    problems.append(f"{card} is seen twice: at {where[0][0]} and at {place} - please check")
        # Build the layout. A card lies on everything under it, recursively: those slots must hold cards.
        must_hold = np.zeros(n_nodes, bool)
        for node in sorted(range(n_nodes), key=lambda m: -nodes_ri[m][0] if not rules.inverted else nodes_ri[m][0]):
            if winner[node] >= 0 or must_hold[node]:
                for c in cov[node]:
                    must_hold[c] = True
        hidden: list[tuple[int, int]] = []
        in_picture = np.ones(n_nodes, bool)
        if image_size is not None:
            xy = fit.node_xy()
            in_picture = ((xy[:, 0] >= 0) & (xy[:, 0] < image_size[0])
                          & (xy[:, 1] >= 0) & (xy[:, 1] < image_size[1]))
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
                    alts = ", ".join(f"{c} {s:.2f}" for c, s in rd.best_alternatives()[1:])
                    problems.append(f"{slot_name(r, i)}: {rd.card} read with low confidence "
                                    f"{rd.score:.2f}" + (f" (or {alts})" if alts else "") + " - please check")
            else:
                covered_by = must_hold[node]
                if covered_by:
                    hidden.append((r, i))
                    if not in_picture[node]:
                        problems.append(f"{slot_name(r, i)} is outside the picture - move the camera "
                                        "to see the whole pyramid")
                    else:
                        problems.append(f"{slot_name(r, i)}: no card seen, but cards lie on it - "
                                        "is it hidden or misplaced?")
                rows_out[r].append(SlotReading.empty(0.0 if covered_by else 1.0))
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
        if self.track and fit.inliers >= 3 and (fit.tracked or self._prior is None
                                                or convincing(fit, pairs, int(primary.sum()))):
            self._prior = fit.homography
        anomalies = (int((dets.confidence < LOW_SCORE).sum()) + len(hidden)
                     + sum(1 for p in problems if "twice" in p or "also at" in p))
        return FrameReading(layout, dets, fit, tuple(hidden), tuple(problems), tuple(stray), anomalies)

    def unseen(self, seen: set[Card]) -> list[Card]:
        """The rules' deck minus the cards seen: the stock (and anything hidden)."""
        return [c for c in self.rules.deck_cards() if c not in seen]

    # --- helpers -------------------------------------------------------------------------------
    def _primary_mask(self, dets: Detections, centers: np.ndarray) -> np.ndarray:
        """All reads but the lower ones of a card read several times (likely its second index)."""
        primary = np.ones(len(dets), bool)
        down = np.array([0.0, 1.0])
        if self._prior is not None:
            # The layout's own "down" (apex to base) from the last fit.
            p = apply_dir(self._prior)
            down = p / max(np.hypot(*p), 1e-9)
        proj = centers @ down
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
        return primary

    def _make_read(self, dets: Detections, j: int, uv: np.ndarray) -> _Read:
        card = DECK[int(dets.class_id[j])]
        score = float(dets.confidence[j])
        alts: dict[Card, float] = {}
        if dets.alt_class_id is not None and dets.alt_confidence is not None:
            for c, s in zip(dets.alt_class_id[j], dets.alt_confidence[j]):
                if 0 <= int(c) < 52:
                    alts[DECK[int(c)]] = max(alts.get(DECK[int(c)], 0.0), float(s))
        return _Read(j, card, score, alts, (float(uv[0]), float(uv[1])))

    @staticmethod
    def _maybe_second(reads: list[_Read], uv: np.ndarray) -> np.ndarray:
        """Reads lying where a second index of another read of the same card would lie."""
        (du0, du1), (dv0, dv1) = SECOND_INDEX_WINDOW
        cards = np.array([rd.card.index for rd in reads])
        d = uv[:, None, :] - uv[None, :, :]
        same = (cards[:, None] == cards[None, :]) & ~np.eye(len(reads), dtype=bool)
        inside = (d[..., 0] >= du0) & (d[..., 0] <= du1) & (d[..., 1] >= dv0) & (d[..., 1] <= dv1)
        return (same & inside).any(1)

    def _second_indices(self, reads: list[_Read], uv: np.ndarray, can_show: np.ndarray,
                        certain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each read, the read whose second index it is (-1: none), merging their scores; and
        where second indices lie from first ones in this frame (lattice units).

        Candidates are two reads of one card, the lower one inside ``SECOND_INDEX_WINDOW`` of the
        other. Pairs whose upper read surely has nothing on it (``certain``: the bottom row, the
        waste) give the frame's offset; with it, every pair must match it to 0.45 units. Without
        them, pairs whose upper read has no other card over it (``can_show``) are taken.
        """
        (du0, du1), (dv0, dv1) = SECOND_INDEX_WINDOW
        by_card: dict[Card, list[int]] = {}
        for j, rd in enumerate(reads):
            by_card.setdefault(rd.card, []).append(j)
        cands = []
        for js in by_card.values():
            for j in js:
                for k in js:
                    d = uv[j] - uv[k]
                    if k != j and du0 <= d[0] <= du1 and dv0 <= d[1] <= dv1:
                        cands.append((j, k, d))
        sure = [d for j, k, d in cands if certain[k]]
        if sure:
            off = np.median(sure, 0)
            # Exactly at the offset: a second index even on a "covered" card (rows dealt without
            # overlap show every card whole); near it: only on a card with nothing down-right on it.
            ok = [(j, k) for j, k, d in cands
                  if np.hypot(*(d - off)) < 0.2 or (np.hypot(*(d - off)) < 0.45 and can_show[k])]
        else:
            ok = [(j, k) for j, k, d in cands if can_show[k]]
            off = np.median([uv[j] - uv[k] for j, k in ok], 0) if ok else np.array(DEFAULT_SECOND_OFFSET)
        second = np.full(len(reads), -1)
        firsts: set[int] = set()
        for j, k in sorted(ok, key=lambda t: -uv[t[0]][1]):   # lowest first
            if second[j] >= 0 or second[k] >= 0 or k in firsts or j in firsts:
                continue
            second[j] = k
            firsts.add(k)
            top, rd = reads[k], reads[j]
            # Two independent reads of one card agree: noisy-or of their scores.
            top.score = 1 - (1 - top.score) * (1 - rd.score)
            for c, sc in rd.alts.items():
                if c is not top.card:
                    top.alts[c] = max(top.alts.get(c, 0.0), sc)
        return second, off

    def _cross_second_indices(self, reads: list[_Read], uv: np.ndarray, can_show: np.ndarray,
                              second: np.ndarray, br_off: np.ndarray, tol: float = 0.35) -> None:
        """Pairs whose two reads disagree: exactly where a second index lies, and one read's card is
        among the other's alternatives. Their evidence is pooled and the better card kept."""
        is_first = set(second[second >= 0].tolist())
        for j in range(len(reads)):
            if second[j] >= 0 or j in is_first:
                continue
            d = uv - (uv[j] - br_off)
            near = np.flatnonzero(np.hypot(d[:, 0], d[:, 1]) < tol)
            for k in near:
                if k == j or second[k] >= 0 or k in is_first or not can_show[k]:
                    continue
                a, b = reads[k], reads[j]
                if b.card not in a.alts and a.card not in b.alts:
                    continue
                pooled: dict[Card, float] = {}
                for rd in (a, b):
                    for c, sc in list(rd.alts.items()) + [(rd.card, rd.score)]:
                        pooled[c] = max(pooled.get(c, 0.0), 0.0)
                for c in pooled:
                    pa = max(a.alts.get(c, 0.0), a.score if c is a.card else 0.0)
                    pb = max(b.alts.get(c, 0.0), b.score if c is b.card else 0.0)
                    pooled[c] = 1 - (1 - pa) * (1 - pb)
                best = max(pooled, key=pooled.get)
                a.card, a.score = best, pooled[best]
                a.alts = {c: sc for c, sc in pooled.items() if c is not best}
                second[j] = k
                is_first.add(int(k))
                break

    def _place_orphans(self, reads: list[_Read], winner: list[int], used: np.ndarray, ids: np.ndarray,
                       uv: np.ndarray, br_off: np.ndarray, cov: tuple) -> None:
        """A lone second index (its card's first index was missed) names the card of the slot it belongs to.

        Candidates: reads off the lattice, and reads on a slot whose covered
        cards are missing (impossible for a card, natural for a second index
        falling onto the cleared part of the pyramid).
        """
        rules = self.rules
        _, nodes_uv = pyramid_nodes(rules.rows, rules.inverted)
        n_nodes = len(nodes_uv)
        covers_me = _over(rules.rows, rules.inverted)
        placed = {reads[w].card for w in winner if w >= 0}
        cand = []
        for node in range(n_nodes):
            j = winner[node]
            if j >= 0 and any(winner[c] < 0 for c in cov[node]):
                cand.append(j)
        cand += [j for j in range(len(reads)) if not used[j] and ids[j] < 0]
        for j in cand:
            target = uv[j] - br_off
            d = np.hypot(*(nodes_uv - target).T)
            m = int(np.argmin(d))
            if d[m] > 0.5 or winner[m] >= 0 or any(winner[c] >= 0 for c in covers_me[m]):
                continue
            if any(winner[c] < 0 for c in cov[m]):
                continue
            card = reads[j].card
            home = [node for node in range(n_nodes) if winner[node] == j]
            if card in placed and not home:
                continue
            for node in home:
                winner[node] = -1
            winner[m] = j
            used[j] = True
            placed.add(card)

    def _outside(self, reads: list[_Read], off: list[int], uv: np.ndarray, br_off: np.ndarray
                 ) -> tuple[list[list[_Read]], list[Optional[_Read]], list[Optional[_Read]], list[int]]:
        rules = self.rules
        last = rules.rows - 1
        half = last / 2
        centre = last / 2 if rules.inverted else 0.0
        # The waste lies below the bottom row's cards: below their second indices.
        floor = last + float(np.clip(br_off[1], 0.8, 4.0)) + 0.4
        below, right, stray = [], [], []
        for j in off:
            u, v = uv[j]
            if v > floor and abs(u - centre) <= half + 3.5:
                below.append(j)
            elif rules.free_cells and u > centre + half + 0.8 and -1 <= v <= floor:
                right.append(j)
            else:
                stray.append(j)
        reserve: list[Optional[_Read]] = []
        if rules.reserve and below:
            vs = sorted(uv[j][1] for j in below)
            cut = vs[0] + 1.5
            band = [j for j in below if uv[j][1] < cut]
            below = [j for j in below if uv[j][1] >= cut]
            reserve = list(_dedupe_cards(reads, sorted(band, key=lambda j: uv[j][0])))
        # Waste piles: clusters along the row direction, left to right.
        piles: list[list[int]] = []
        for j in sorted(below, key=lambda j: uv[j][0]):
            near = [p for p in piles if min(np.hypot(*(uv[k] - uv[j])) for k in p) < 1.2
                    and uv[j][0] - uv[p[-1]][0] < 0.6]
            if near:
                near[-1].append(j)
            else:
                piles.append([j])
        piles = [[j for j in p] for p in piles]
        if rules.waste_piles == 1 and len(piles) > 1:
            best = max(piles, key=lambda p: sum(reads[j].score for j in p))
            stray += [j for p in piles if p is not best for j in p]
            piles = [best]
        elif len(piles) > rules.waste_piles:
            piles.sort(key=lambda p: -sum(reads[j].score for j in p))
            stray += [j for p in piles[rules.waste_piles:] for j in p]
            piles = sorted(piles[: rules.waste_piles], key=lambda p: uv[p[0]][0])
        waste = [list(_dedupe_cards(reads, p)) for p in piles]
        cells: list[Optional[_Read]] = list(_dedupe_cards(reads, sorted(right, key=lambda j: uv[j][1])))
        cells = cells[: max(rules.free_cells, 0)] + [None] * max(0, rules.free_cells - len(cells))
        return waste, cells, reserve, stray


def _same_card_pairs(dets: Detections, centers: np.ndarray) -> np.ndarray:
    """Image points of every two reads of one card, (P, 2, 2)."""
    out = []
    order = np.argsort(dets.class_id, kind="stable")
    cls = dets.class_id[order]
    starts = np.flatnonzero(np.r_[True, cls[1:] != cls[:-1]])
    for a, b in zip(starts, np.r_[starts[1:], len(cls)]):
        idx = order[a:b]
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                out.append((centers[idx[x]], centers[idx[y]]))
    return np.array(out, np.float64).reshape(-1, 2, 2)


@lru_cache(maxsize=16)
def _br_cover(rows: int, inverted: bool) -> tuple[int, ...]:
    """For each node, the node whose card covers its bottom-right corner (-1: none)."""
    idx = {(r, i): n for n, (r, i) in enumerate((r, i) for r in range(rows) for i in range(r + 1))}
    out = []
    for (r, i) in idx:
        out.append(idx.get((r - 1, i), -1) if inverted else idx.get((r + 1, i + 1), -1))
    return tuple(out)


@lru_cache(maxsize=16)
def _over(rows: int, inverted: bool) -> tuple[tuple[int, ...], ...]:
    """For each node, the nodes lying on it."""
    cov = covering(rows, inverted)
    return tuple(tuple(m for m in range(len(cov)) if node in cov[m]) for node in range(len(cov)))


def _dedupe_cards(reads: list[_Read], js: list[int]) -> list[_Read]:
    """One read per card (a loose card shows two indices), in the given order, scores pooled."""
    out: dict[Card, _Read] = {}
    for j in js:
        rd = reads[j]
        if rd.card in out:
            top = out[rd.card]
            top.score = 1 - (1 - top.score) * (1 - rd.score)
        else:
            out[rd.card] = rd
    return list(out.values())


def apply_dir(h: np.ndarray) -> np.ndarray:
    """Image direction of the lattice's "down" at the apex under homography ``h``."""
    from companion.vision.slots import apply_h
    p = apply_h(h, np.array([[0.0, 0.0], [0.0, 1.0]]))
    return p[1] - p[0]


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
