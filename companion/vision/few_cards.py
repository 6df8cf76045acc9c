"""Placing a nearly cleared pyramid in a still: a handful of cards and no earlier fit.

The lattice search (``lattice_search``) needs elementary triangles of the lattice among the reads;
with one to a few cards left there is none, or the second indices and the waste make a wrong one
that explains as many reads. Two facts decide instead:

- what is left of a pyramid is always closed towards the apex: a card stays while a card lies on
  it, so one card left is the apex, two are the apex and a card under it, and so on;
- a card showing both indices gives its own size and turn: its second index lies down-right of
  its first (``SECOND_INDEX_WINDOW``), and the lattice's pitches are a card's size give or take the
  gaps the person dealt with (rendered val: row pitch 0.5-1.5, row step 0.2-1.3 times the
  distance between a card's two indices; the rows turned about -53 degrees from that diagonal).

Hypotheses: three reads on three nodes of a small closed set (an affine map exactly), two reads as
the apex and a card under it with the pair's diagonal giving the lattice's turn (or a card further
down an edge with a card read near each node between: a line dealt unevenly is placed by its mean
step; rendered val, 3 scenes more right, none less), one read as the apex alone. Each is scored on
every read (``few_score``): a point per slot holding a card (a first index on it, or a lone second
index down-right of it) with a card under it, or in the top two rows (a card above may be unread);
minus a point per card lying on an empty slot in view; half a point per card whose second index
lies where it should, minus a point per card whose two reads contradict the lattice and one and a
half per card on two slots; minus half a point per read near the cards left that sits on no slot
and is no second index, a quarter per read above the apex (the stock and the waste lie below), and
one and a half for one card alone with nothing below it (as likely the waste of a cleared
pyramid). The best replaces a searched fit placing a few reads when it scores ``MARGIN`` higher
(``better_fit``), or at all when that fit's rows run across the cards, at a turn from their
diagonals no dealt pyramid shows (``_rows_across_cards``: rendered val, 5 of 1,200 scenes more
right, 2 already wrong more wrong); the pipeline then looks for the waste right below the cards
left (``FewCards``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache
from itertools import permutations
from typing import Optional

import numpy as np

from companion.vision.lattice import (ASSIGN_TOL, SECOND_INDEX_WINDOW, LatticeFit, _assign,
                                      _node_table, apply_h, covering, fit_affine, in_area, in_frame, node_ids,
                                      pyramid_nodes)
from companion.vision.second_index import DEFAULT_SECOND_OFFSET

#: A searched fit placing at most this many reads may be a nearly cleared pyramid placed wrong (at 9,
#: a close-up partial view of 15 cards, nine read, went wrong in synth_val64; none gained).
FEW_MAX = 8
#: ... and is replaced when a fit of a few cards scores more than this higher (rendered val: with
#: no margin three more scenes of 4-7 cards went wrong for one more right).
MARGIN = 1.0
#: A fit of a few cards scoring no more than this is no pyramid (a card with its second index: 1.5).
MIN_SCORE = 1.0
#: At most this many first-index reads make three-read hypotheses (n * (n-1) * (n-2) of them).
TRIPLE_MAX = 12
#: Node triples (not on one line) of small closed sets, and triangles near the apex when its card is unread.
_TRIPLES = ((0, 1, 2), (0, 2, 3), (0, 1, 5), (0, 1, 4), (0, 2, 4), (0, 3, 5), (1, 3, 4), (2, 4, 5), (1, 2, 4))
#: Turn (degrees) from a card's diagonal (first index -> second) to the rows' direction ("down" is
#: 90 degrees on), and the turns tried, the most usual first (rendered val: 5-95% -43..-61, all -27..-71).
_ROW_TURN = -53.0
_ROW_TURNS = (-53.0, -47.0, -59.0, -41.0, -65.0, -35.0, -71.0)
#: Row pitch and row step in card diagonals, for one card alone (the row step at the low end: the
#: waste then lies rows below the apex, where ``outside`` looks for it).
_ONE_PITCH, _ONE_STEP = 0.91, 0.4
#: Plausible lattices (rendered val, 2,760 cards with the three under them, 0-100%, with margins):
#: row pitch and row step in card diagonals (0.52-1.5, 0.19-1.34), turn from the rows to a card's
#: diagonal (21-70 degrees, 99% within 38-64), row step per row pitch (0.2-1.7), and the cosine of
#: the angle between rows and "down" (99% of the angles within 68-110 degrees).
_PITCH, _STEP = (0.5, 1.6), (0.17, 1.4)
_TURN = (30.0, 72.0)
#: A card under the apex may be taken this many cards down an edge (the rows' length less one)...
_EDGE_STEPS = 6
#: ... with a read within this share of a step of each node between.
_EDGE_NEAR = 0.35
_STEP_PER_PITCH = (0.18, 1.8)
_MAX_SKEW = 0.4


def _rot(deg: float) -> np.ndarray:
    a = np.radians(deg)
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


def _frame_h(u_px: np.ndarray, v_px: np.ndarray, apex_xy: np.ndarray) -> np.ndarray:
    """Homographies (m, 3, 3) with the lattice's unit steps ``u_px``, ``v_px`` and the apex at ``apex_xy``."""
    m = len(apex_xy)
    h = np.zeros((m, 3, 3))
    h[:, :2, 0], h[:, :2, 1], h[:, :2, 2], h[:, 2, 2] = u_px, v_px, apex_xy, 1.0
    return h


def _triples(pts: np.ndarray, rows: int) -> np.ndarray:
    """Affine maps putting any three reads on the nodes of one of ``_TRIPLES``."""
    _, nodes_uv = pyramid_nodes(rows, False)
    n = len(pts)
    if n < 3:
        return np.zeros((0, 3, 3))
    perm = np.array(list(permutations(range(n), 3)))
    out = []
    for tri in _TRIPLES:
        if max(tri) >= len(nodes_uv):
            continue
        src = np.hstack([nodes_uv[list(tri)], np.ones((3, 1))])          # rows [u v 1]
        coef = np.linalg.inv(src) @ pts[perm]                            # (m, 3, 2): [u v 1] @ coef = xy
        h = np.zeros((len(perm), 3, 3))
        h[:, :2, :] = np.transpose(coef, (0, 2, 1))
        h[:, 2, 2] = 1.0
        out.append(h)
    return np.concatenate(out)


def _from_pairs(pts: np.ndarray, diag: np.ndarray) -> np.ndarray:
    """Lattices from a read taken for the apex (its card's diagonal ``diag``, NaN when unknown) and
    another for a card under it or further down an edge (``_edge_steps``; the rows' turn from the
    diagonal tried within its usual range, the most usual first), or the apex alone."""
    n = len(pts)
    out = []
    has = np.flatnonzero(np.isfinite(diag[:, 0]))
    has = has[np.hypot(*diag[has].T) >= 1.0]
    if len(has):
        d = diag[has]
        out.append(_frame_h(_ONE_PITCH * d @ _rot(_ROW_TURN).T, _ONE_STEP * d @ _rot(_ROW_TURN + 90).T, pts[has]))
    fallback = np.nanmedian(diag, 0) if len(has) else None
    steps = _edge_steps(pts)
    for turn in _ROW_TURNS:
        ru, rv = _rot(turn), _rot(turn + 90)
        for i in range(n):
            d = diag[i] if np.isfinite(diag[i, 0]) else fallback
            if d is None or np.hypot(*d) < 1.0:  # (two reads of one corner: no diagonal)
                continue
            cu, cv = ru @ d, rv @ d
            for off in steps[i]:
                for side in (-0.5, 0.5):  # the card under it on the left (node 1) or the right (node 2)
                    alpha, beta = np.linalg.solve(np.column_stack([side * cu, cv]), off)
                    if _PITCH[0] <= alpha <= _PITCH[1] and _STEP[0] <= beta <= _STEP[1]:
                        out.append(_frame_h((alpha * cu)[None], (beta * cv)[None], pts[i][None]))
    return np.concatenate(out) if out else np.zeros((0, 3, 3))


def _edge_steps(pts: np.ndarray) -> list[np.ndarray]:
    """Per read taken for the apex, the offsets (m, 2) to a card under it: to every other read, and
    to every other read taken k (2 to ``_EDGE_STEPS``) cards down an edge with a read near each
    card between, the k-th of the way (a line of cards dealt unevenly: the mean step places the
    last as well as the first, val_s64_000154)."""
    n = len(pts)
    whole = pts[None, :, :] - pts[:, None, :]                 # (i, j, 2)
    out = [[whole[i, j] for j in range(n) if j != i] for i in range(n)]
    for k in range(2, 1 + _EDGE_STEPS):
        off = whole / k
        ok = ~np.eye(n, dtype=bool)
        for m in range(1, k):
            at = pts[:, None, None, :] + m * off[:, :, None, :] - pts[None, None, :, :]   # (i, j, n, 2)
            ok &= np.hypot(at[..., 0], at[..., 1]).min(2) < _EDGE_NEAR * np.hypot(off[..., 0], off[..., 1])
        for i, j in zip(*np.nonzero(ok)):
            out[i].append(off[i, j])
    return [np.asarray(o).reshape(-1, 2) for o in out]


def _plausible(h: np.ndarray, diag: Optional[np.ndarray]) -> np.ndarray:
    """No mirror image, the layout's "down" within 100 degrees of the image's, rows and steps of
    sane proportions, and, when a card's diagonal ``diag`` is known, of its size and turn."""
    u, v = h[:, :2, 0], h[:, :2, 1]
    lu, lv = np.hypot(*u.T), np.hypot(*v.T)
    det = u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]
    cos_skew = np.abs((u * v).sum(1)) / np.maximum(lu * lv, 1e-9)
    ok = ((det > 1e-6 * lu * lv) & (v[:, 1] > np.cos(np.radians(100)) * lv) & (lv > _STEP_PER_PITCH[0] * lu)
          & (lv < _STEP_PER_PITCH[1] * lu) & (cos_skew < _MAX_SKEW))
    if diag is not None:
        ld = float(np.hypot(*diag))
        turn = np.degrees(np.arctan2(u[:, 0] * diag[1] - u[:, 1] * diag[0], u @ diag))
        ok &= ((lu >= _PITCH[0] * ld) & (lu <= _PITCH[1] * ld) & (lv >= _STEP[0] * ld) & (lv <= _STEP[1] * ld)
               & (turn >= _TURN[0]) & (turn <= _TURN[1]))
    return ok


@lru_cache(maxsize=8)
def _tables(rows: int):
    _, lo, grid, pj, pc = _node_table(rows, False)
    nodes_ri, nodes_uv = pyramid_nodes(rows, False)
    return lo, grid, len(nodes_ri), covering(rows, False), nodes_ri[:, 0], pj, pc, nodes_uv


def few_score(h: np.ndarray, pts: np.ndarray, pair_idx: np.ndarray, rows: int,
              frame_size: Optional[tuple[int, int]] = None, tol: float = ASSIGN_TOL
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score of each absolute lattice ``h`` (m, 3, 3) on all reads ``pts`` (n, 2), the slots its
    cards fill (m, nodes) held by the cards above them, and which reads are second indices (m, n).

    ``pair_idx`` (P, 2): the two reads of one card; ``frame_size`` (width, height): a slot outside
    the picture may hold a card. See the module's docstring."""
    m, n = len(h), len(pts)
    with np.errstate(all="ignore"):
        inv = np.linalg.inv(h)
        q = np.einsum("mij,nj->mni", inv[:, :, :2], pts) + inv[:, None, :, 2]
        uv = q[..., :2] / q[..., 2:3]
    uv = np.where(np.isfinite(uv), uv, 1e6)
    lo, grid, n_nodes, cov, node_row, pj, pc, nodes_uv = _tables(rows)
    ids, res = node_ids(uv, lo, grid)
    ids[res >= tol] = -1
    # A card's two reads: the one down-right of the other (as a second index lies) is no card.
    second = np.zeros((m, n), bool)
    pair_good = np.zeros(m)
    pair_bad = np.zeros(m)
    offsets = np.full((m, len(pair_idx), 2), np.nan)   # second index from first, consistent pairs
    (u0, u1), (v0, v1) = SECOND_INDEX_WINDOW
    every = np.arange(m)
    for p, (a, b) in enumerate(pair_idx):
        d = uv[:, b] - uv[:, a]
        fwd = (d[:, 0] >= u0) & (d[:, 0] <= u1) & (d[:, 1] >= v0) & (d[:, 1] <= v1)
        back = (-d[:, 0] >= u0) & (-d[:, 0] <= u1) & (-d[:, 1] >= v0) & (-d[:, 1] <= v1)
        first, sec = np.where(fwd, a, b), np.where(fwd, b, a)
        consistent = fwd | back
        second[every[consistent], sec[consistent]] = True
        offsets[consistent, p] = np.where(fwd, 1.0, -1.0)[consistent, None] * d[consistent]
        pair_good += consistent & (ids[every, first] >= 0)
        pair_bad += ~consistent & ((ids[:, a] >= 0) | (ids[:, b] >= 0))
    card = (ids >= 0) & ~second
    # One card, one place: a card whose two reads both lie on slots counts once, and against the lattice.
    twice = np.zeros(m)
    for a, b in pair_idx:
        twice += card[:, a] & card[:, b]
    present = _filled(card, ids, m, n, grid.size, n_nodes)
    # A lone second index (its card's first index unread) shows its card's slot, up-left of it.
    with warnings.catch_warnings():  # (no consistent pair under a lattice: the usual offset)
        warnings.simplefilter("ignore", RuntimeWarning)
        off = np.nanmedian(offsets, 1) if len(pair_idx) else np.full((m, 2), np.nan)
    off = np.where(np.isfinite(off), off, np.asarray(DEFAULT_SECOND_OFFSET, float))
    lone = ~card & ~second
    o_ids, o_res = node_ids(uv - off[:, None, :], lo, grid)
    orphan = lone & (o_ids >= 0) & (o_res < 0.35)
    present |= _filled(orphan, o_ids, m, n, grid.size, n_nodes)
    # What is left of a pyramid is closed towards the apex. A card on a slot with none of the slots
    # under it filled is no card of it (the waste below, a loose card) unless in the top two rows
    # (a card above may be unread); a card with one of them empty counts against the lattice.
    unseen = np.zeros_like(present)
    if frame_size is not None:
        with np.errstate(all="ignore"):
            q = np.einsum("mij,kj->mki", h[:, :, :2], nodes_uv) + h[:, None, :, 2]
            xy = q[..., :2] / q[..., 2:3]
        unseen = ~in_frame(xy, frame_size)
    kept = present.copy()
    for j in range(1, n_nodes):
        if node_row[j] >= 2:
            kept[:, j] &= (kept | unseen)[:, list(cov[j])].any(1)
    viol = (kept[:, pj] & ~(present | unseen)[:, pc]).sum(1)
    deepest = np.where(kept.any(1), np.where(kept, node_row[None, :], -1).max(1), -1)
    on_kept = ((card & np.take_along_axis(kept, np.maximum(ids, 0), 1))
               | (orphan & np.take_along_axis(kept, np.maximum(o_ids, 0), 1)))
    near = uv[..., 1] <= deepest[:, None] + 1.6   # where the cards left and their second indices lie
    strays = (~on_kept & ~second & near & in_area(uv.reshape(-1, 2), rows, False, margin=0.3).reshape(m, n)).sum(1)
    # The stock and the waste lie below the pyramid (``outside``): nothing lies above its apex.
    above = (uv[..., 1] < -0.6).sum(1)
    # One card alone with nothing below it (no waste) is as likely the waste of a cleared pyramid.
    alone = (kept.sum(1) == 1) & ~((uv[..., 1] > 1.5) & ~second).any(1)
    score = (kept.sum(1) - 1.0 * viol + 0.5 * pair_good - 1.0 * pair_bad - 1.5 * twice - 0.5 * strays
             - 0.25 * above - 1.5 * alone)
    return score, kept, second


def _filled(mask: np.ndarray, ids: np.ndarray, m: int, n: int, size: int, n_nodes: int) -> np.ndarray:
    """(m, nodes): the slots the reads ``mask`` (m, n) lie on (``ids``)."""
    out = np.zeros((m, size + 1), bool)
    out[np.repeat(np.arange(m), n), np.where(mask, ids, -1).ravel()] = True
    return out[:, :n_nodes]


@dataclass(frozen=True)
class FewCards:
    """What a lattice of a nearly cleared pyramid says beyond the lattice itself."""

    #: The slots a card may fill: none more than a row below the cards left (the waste, a loose
    #: card or a second index lies lower, where the lattice fitted on a few cards extrapolates rows).
    slots: np.ndarray
    #: Per read: it is its card's second index (down-right of the card's first index) and fills no slot.
    second: np.ndarray
    #: The lowest row holding a card.
    lowest_row: int


def better_fit(fit: Optional[LatticeFit], pts: np.ndarray, primary: np.ndarray, pair_idx: np.ndarray,
               rows: int, inverted: bool, fit_points: np.ndarray, frame_size: Optional[tuple[int, int]] = None
               ) -> tuple[Optional[LatticeFit], Optional[FewCards]]:
    """``fit`` (a searched one placing at most ``FEW_MAX`` reads, or None), or a fit of a nearly
    cleared pyramid scoring ``MARGIN`` higher; with what that lattice says (``FewCards``) when it
    was chosen or agrees with ``fit``.

    ``pts``: every read's image point; ``primary``: the reads that may be a card's first index;
    ``pair_idx``: the reads of one card, two by two; ``fit_points``: the points the fit places
    (as ``fit_pyramid`` was given them)."""
    if inverted or rows < 3 or len(pts) == 0 or (fit is not None and fit.inliers > FEW_MAX):
        return fit, None
    first = np.flatnonzero(primary)
    diag = np.full((len(pts), 2), np.nan)
    for a, b in pair_idx:
        top, low = (a, b) if pts[a, 1] <= pts[b, 1] else (b, a)
        diag[top] = pts[low] - pts[top]
    known = diag[np.isfinite(diag[:, 0])]
    typical = np.median(known, 0) if len(known) else None
    cands = [_from_pairs(pts[first], diag[first])]
    if len(first) <= TRIPLE_MAX:
        cands.append(_triples(pts[first], rows))
    h = np.concatenate(cands)
    h = h[_plausible(h, typical)] if len(h) else h
    if len(h) == 0:
        return fit, None
    scores, kept, second = few_score(h, pts, pair_idx, rows, frame_size)
    best = int(np.argmax(scores))
    if fit is None:
        base = -np.inf
    else:
        b_score, b_kept, b_second = few_score(fit.homography[None], pts, pair_idx, rows, frame_size)
        base = float(b_score[0])
    # A searched fit whose rows run across the cards' own diagonals (val_s66_000053: three cards
    # read as a row and a card under it, the rows at 90 degrees to the cards) counts for nothing.
    if fit is not None and _rows_across_cards(fit.homography, known):
        base = -np.inf
    margin = MARGIN if fit is not None and fit.inliers >= 3 else 0.0
    if scores[best] > max(base + margin, MIN_SCORE):
        few = _few_cards(kept[best], second[best], rows)
        return _placed(fit_points, h[best], rows, few.slots), few
    if fit is not None and scores[best] >= base and b_kept[0].any() and _same_slots(
            fit.homography, h[best], rows, np.flatnonzero(b_kept[0])):
        return fit, _few_cards(b_kept[0], b_second[0], rows)  # the same lattice, found both ways
    return fit, None


def _rows_across_cards(h: np.ndarray, diags: np.ndarray) -> bool:
    """Whether the lattice ``h`` runs its rows at a turn no card lies at: two or more cards whose
    diagonals (first index -> second, ``diags``) agree say how the cards lie, and the rows at the
    apex turn from that diagonal outside ``_TURN`` (either way along it: a layout far from upright
    puts a card's second index above its first)."""
    d = diags[np.hypot(*diags.T) >= 1.0]
    if len(d) < 2:
        return False
    length, angle = np.hypot(*d.T), np.arctan2(d[:, 1], d[:, 0])
    gap = np.abs((angle[:, None] - angle[None, :] + np.pi) % (2 * np.pi) - np.pi)
    agree = (gap < np.radians(20)) & (np.abs(np.log(length[:, None] / length[None, :])) < np.log(1.33))
    best = int(agree.sum(1).argmax())
    if agree[best].sum() < 2:
        return False
    typical = np.median(d[agree[best]], 0)
    xy = apply_h(h, np.array([[-0.5, 1.0], [0.5, 1.0]]))
    u = xy[1] - xy[0]
    turn = np.degrees(np.arctan2(u[0] * typical[1] - u[1] * typical[0], u @ typical))
    return not any(_TURN[0] <= t <= _TURN[1] for t in (turn, turn + 180.0, turn - 180.0))


def few_cards_on(h: np.ndarray, pts: np.ndarray, pair_idx: np.ndarray, rows: int,
                 frame_size: Optional[tuple[int, int]] = None) -> FewCards:
    """What the lattice ``h`` of a nearly cleared pyramid says of this frame's reads ``pts`` (a
    frame after the one it was found in: the same lattice, the reads as they are now)."""
    _, kept, second = few_score(h[None], pts, pair_idx, rows, frame_size)
    return _few_cards(kept[0], second[0], rows)


def _few_cards(kept: np.ndarray, second: np.ndarray, rows: int) -> FewCards:
    node_row = pyramid_nodes(rows, False)[0][:, 0]
    lowest = int(node_row[kept].max()) if kept.any() else 0
    return FewCards(np.flatnonzero(node_row <= lowest + 1), second, lowest)


def _same_slots(h: np.ndarray, other: np.ndarray, rows: int, nodes: np.ndarray, limit: float = 0.35) -> bool:
    """Whether two lattices put the slots ``nodes`` within ``limit`` slot pitches of each other."""
    uv = pyramid_nodes(rows, False)[1][nodes]
    with np.errstate(all="ignore"):
        moved = apply_h(np.linalg.inv(other), apply_h(h, uv)) - uv
    return bool(np.all(np.hypot(moved[:, 0], moved[:, 1]) < limit))


def _placed(pts: np.ndarray, h: np.ndarray, rows: int, slots: np.ndarray) -> LatticeFit:
    """The fit ``h`` with ``pts`` placed on the ``slots``, refined on them (an affine map: three or
    more placed)."""
    def place(h: np.ndarray):
        ids, uv, res = _assign(pts, h, rows, False, ASSIGN_TOL)
        ids[(ids >= 0) & ~np.isin(ids, slots)] = -1
        return ids, uv, res
    ids, uv, res = place(h)
    on = ids >= 0
    if on.sum() >= 3:
        _, nodes_uv = pyramid_nodes(rows, False)
        refit = fit_affine(nodes_uv[ids[on]], pts[on])
        if refit is not None:
            again = place(refit)
            if (again[0] >= 0).sum() >= on.sum():
                h, (ids, uv, res) = refit, again
    return LatticeFit(h, rows, False, ids, uv, res)
