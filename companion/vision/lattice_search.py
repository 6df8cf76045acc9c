"""Finding the pyramid lattice from scratch (no earlier fit): hypotheses, growing, placing.

1. hypotheses: every point ``p`` with two of its nearest neighbours ``a, b``
   read as an elementary triangle of the lattice gives a local affine map;
   mirror images and implausible shapes are dropped;
2. each hypothesis is scored by the points near its seed that fall on lattice
   nodes; the best few are grown (inliers within a growing radius refit a
   homography: local affine first, perspective as the region grows);
3. the relative lattice found is placed in the pyramid (``_rebase``): the
   re-basing and integer offset that put the most points on the pyramid's
   nodes, minus half a point for every present card whose covered card is
   missing and a point for every read past the first lying one slot beyond a
   row's end (``BESIDE_COST``), then the second-index cue and an apex-up prior.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from companion.vision.lattice import (SECOND_INDEX_WINDOW, LatticeFit, _assign, _lattice_key, _node_table, apply_h,
                                      covering, fit_affine, fit_homography, in_frame, orientation_cue, pyramid_nodes,
                                      snap)

# Elementary triangles tried as hypotheses: lattice steps of neighbours a and b from p.
_TEMPLATES = (
    np.array([[-0.5, 1.0], [0.5, 1.0]]),   # a = down-left child, b = down-right child
    np.array([[1.0, 0.0], [0.5, 1.0]]),    # a = right neighbour, b = down-right child
)


def _hypotheses(pts: np.ndarray, k: int, max_rotation_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """Local affine maps ``(seed index, 2x2 matrix lattice-step -> pixels)`` passing the priors."""
    n = len(pts)
    d2 = ((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    k = min(k, n - 1)
    nn = np.argsort(d2, 1)[:, :k]
    ia, ib = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    keep = ia != ib
    ia, ib = ia[keep], ib[keep]
    seeds = np.repeat(np.arange(n), len(ia))
    a = nn[:, ia].reshape(-1)
    b = nn[:, ib].reshape(-1)
    da, db = pts[a] - pts[seeds], pts[b] - pts[seeds]
    d = np.stack([da, db], 2)  # (m, 2, 2): columns = image steps
    all_seeds, all_m = [], []
    for tmpl in _TEMPLATES:
        # M @ tmpl.T = d  ->  M = d @ inv(tmpl.T)
        m = d @ np.linalg.inv(tmpl.T)
        all_seeds.append(seeds)
        all_m.append(m)
    seeds = np.concatenate(all_seeds)
    m = np.concatenate(all_m)
    det = m[:, 0, 0] * m[:, 1, 1] - m[:, 0, 1] * m[:, 1, 0]
    down = m[:, :, 1]      # image direction of lattice "down"
    right = m[:, :, 0]     # image direction of a row
    ld, lr = np.hypot(*down.T), np.hypot(*right.T)
    cos_down = down[:, 1] / np.maximum(ld, 1e-9)
    cos_skew = np.abs((down * right).sum(1)) / np.maximum(ld * lr, 1e-9)
    ok = ((det > 0) & (cos_down > np.cos(np.radians(max_rotation_deg)))
          & (ld > 0.15 * lr) & (ld < 4 * lr) & (cos_skew < 0.7))
    return seeds[ok], m[ok]


def _grow(pts: np.ndarray, h: np.ndarray, tol: float) -> Optional[np.ndarray]:
    """Refit ``h`` (relative lattice -> image) on inliers of growing radius."""
    last = None
    for radius in (2.5, 3.5, 5.0, 7.0, np.inf):
        try:
            uv = apply_h(np.linalg.inv(h), pts)
        except np.linalg.LinAlgError:
            return None
        node, res = snap(uv)
        inl = (res < tol) & (np.abs(node).max(1) <= radius)
        if inl.sum() < 3:
            return h if radius > 2.5 else None
        # One point per node: the closest.
        nodes, pick = _one_per_node(node[inl], res[inl])
        src, dst = nodes, pts[inl][pick]
        homography = len(src) >= 6 and radius > 2.5
        # (the same points on the same nodes, fitted the same way, give ``h`` back: no refit)
        same = (homography, src.tobytes(), dst.tobytes())
        if same == last:
            continue
        last = same
        new = fit_homography(src, dst) if homography else fit_affine(src, dst)
        if new is None:
            return h
        h = new
    return h


def _one_per_node(node: np.ndarray, res: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    key = _lattice_key(node)
    order = np.lexsort((res, key[:, 1], key[:, 0]))
    k = key[order]
    first = np.ones(len(k), bool)
    first[1:] = np.any(k[1:] != k[:-1], 1)
    pick = order[first]
    return node[pick], pick


def _place(keys: np.ndarray, rows: int, inverted: bool, candidates_out: Optional[list] = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Best integer offset inside the pyramid for each set of lattice ``keys`` (G, n, 2).

    Returns per set (score, offset key). Score: slots filled, minus half a point
    per filled slot whose covered card is missing and ``BESIDE_COST`` per read
    (past the first) one slot beyond a row's end.
    """
    node_key, lo, grid, pj, pc = _node_table(rows, inverted)
    g, n = keys.shape[:2]
    # Votes: every (point, node) pair proposes the offset that puts the point there.
    offs = (node_key[None, None, :, :] - keys[:, :, None, :]).reshape(g, -1, 2)
    # Offsets are small integers: count them with one bincount over a grid just wide enough (at most
    # 64 x 64 a set: a wider one only costs time, the search's hottest step).
    span = min(32, int(np.abs(offs).max(initial=0)) + 1)
    cells = (2 * span) ** 2
    ok = (np.abs(offs) < span).all(2)
    code = (offs[..., 0] + span) * (2 * span) + (offs[..., 1] + span) + np.arange(g)[:, None] * cells
    counts = np.bincount(code[ok], minlength=g * cells).reshape(g, cells)
    # Offsets that put at least one point on a node (with very few points "max - 3" alone would
    # keep every one of the 4096 offsets of every re-basing, and the search would take seconds).
    gi, top = np.nonzero((counts >= counts.max(1, keepdims=True) - 3) & (counts >= 1))
    cand = np.stack([top // (2 * span) - span, top % (2 * span) - span], 1)
    shifted = keys[gi] + cand[:, None, :] - lo                    # (C, n, 2)
    inside = ((shifted >= 0) & (shifted < np.array(grid.shape))).all(2)
    sx = np.where(inside, shifted[..., 0], 0)
    sy = np.where(inside, shifted[..., 1], 0)
    ids = np.where(inside, grid[sx, sy], -1)
    present = np.zeros((len(cand), len(node_key) + 1), bool)
    present[np.repeat(np.arange(len(cand)), n), ids.reshape(-1)] = True
    present = present[:, :-1]  # ids of -1 wrote into the spare last column
    score = (present.sum(1) - 0.5 * (present[:, pj] & ~present[:, pc]).sum(1)
             - BESIDE_COST * _beside(shifted + lo, rows, inverted))
    if candidates_out is not None:
        candidates_out.extend([gi, cand, present, score])
    best_score = np.full(g, -np.inf)
    np.maximum.at(best_score, gi, score)
    best_off = np.zeros((g, 2), np.int64)
    pick = score >= best_score[gi]
    best_off[gi[pick]] = cand[pick]
    return best_score, best_off


#: Reads on lattice nodes one slot past either end of a pyramid row, beyond the first, cost a point
#: each: a pyramid placed a row and a slot off (its apex rows unread, far and small under a tilt)
#: leaves a whole column of the real one beside its rows, and fills its lowest row with the real
#: lowest row's second indices. One such read is free: a loose card or a stray second index lies
#: there now and then. Rendered val (300 + 300 scenes): 4 full deals placed right that were a row
#: off, slots right 87.48 -> 88.03% and 90.20 -> 90.46%.
BESIDE_COST = 1.0
BESIDE_FREE = 1


@lru_cache(maxsize=16)
def _row_ends(rows: int, inverted: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each row's first and last lattice key ``w`` (the slot index along the row)."""
    node_key = _node_table(rows, inverted)[0]
    first = np.full(rows, 10**6)
    last = np.full(rows, -10**6)
    np.minimum.at(first, node_key[:, 1], node_key[:, 0])
    np.maximum.at(last, node_key[:, 1], node_key[:, 0])
    return first, last


def _beside(keys: np.ndarray, rows: int, inverted: bool) -> np.ndarray:
    """Per set of absolute lattice keys (..., n, 2): how many lie one slot past a row's ends, less
    the ``BESIDE_FREE`` that cost nothing."""
    first, last = _row_ends(rows, inverted)
    r = keys[..., 1]
    ok = (r >= 0) & (r < rows)
    rc = np.clip(r, 0, rows - 1)
    n = (ok & ((keys[..., 0] == first[rc] - 1) | (keys[..., 0] == last[rc] + 1))).sum(-1)
    return np.maximum(n - BESIDE_FREE, 0)


def _unimodular(limit: int = 2) -> np.ndarray:
    """Orientation-preserving integer re-bases of the lattice keys with small entries."""
    out = []
    rng = range(-limit, limit + 1)
    for a in rng:
        for b in rng:
            for c in rng:
                for d in rng:
                    if a * d - b * c == 1:
                        out.append(((a, b), (c, d)))
    return np.array(out, np.int64)


_REBASES = _unimodular()


_A = np.array([[1.0, 0.5], [0.0, 1.0]])  # uv -> key (w = u + v/2, v)


_A_INV = np.linalg.inv(_A)


_REBASE_GINV = np.round(np.linalg.inv(_REBASES)).astype(np.int64)


#: For each re-basing: new uv -> old uv (linear part).
_REBASE_M = np.einsum("ij,gjk,kl->gil", _A_INV, _REBASE_GINV, _A)


def _up_angle(h_abs: np.ndarray, centre_uv: np.ndarray) -> float:
    """Angle (radians) between the layout's "down" and the image's down at ``centre_uv``."""
    p = apply_h(h_abs, np.array([centre_uv, centre_uv + [0.0, 1.0]]))
    d = p[1] - p[0]
    if not np.isfinite(d).all():  # the centre lies on the horizon of a degenerate fit
        return float(np.pi)
    return float(np.arccos(np.clip(d[1] / max(np.hypot(*d), 1e-9), -1, 1)))


def _rebase(pts: np.ndarray, h: np.ndarray, rows: int, inverted: bool, tol: float,
            max_rotation_deg: float, pairs: Optional[np.ndarray] = None,
            frame_size: Optional[tuple[int, int]] = None) -> tuple[float, Optional[np.ndarray]]:
    """Place a relative lattice ``h`` in the pyramid, trying every small re-basing of the lattice.

    The lattice seen in the image is the same point set under many bases (a row
    of the pyramid and one of its diagonals look alike, and the triangle looks
    the same turned by 120 degrees); the pyramid's shape, then the second-index
    cue (``orientation_cue``), then the "apex on top of the image" prior tell
    them apart. Returns (score, absolute homography).
    """
    uv = apply_h(np.linalg.inv(h), pts)
    node, res = snap(uv)
    good = res < tol
    if good.sum() < 1:
        return -np.inf, None
    keys = _lattice_key(node)[good]
    centre = uv[good].mean(0)
    # Jacobian of h at the centre of the points: lattice directions -> image directions.
    eps = 0.5
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        c3 = apply_h(h, np.array([centre, centre + [eps, 0], centre + [0, eps]]))
        jac = np.column_stack([(c3[1] - c3[0]) / eps, (c3[2] - c3[0]) / eps])
    if not np.isfinite(jac).all():
        return -np.inf, None  # the points' centre maps to infinity: a degenerate lattice
    right = jac @ _REBASE_M[:, :, 0].T        # (2, G): image direction of each new row direction
    down = jac @ _REBASE_M[:, :, 1].T
    lr, ld = np.hypot(*right), np.hypot(*down)
    cos_skew = np.abs((right * down).sum(0)) / np.maximum(lr * ld, 1e-9)
    ok = (ld > 0.15 * lr) & (ld < 4 * lr) & (cos_skew < 0.8)
    if max_rotation_deg < 180:
        cos_lim = np.cos(np.radians(max_rotation_deg))
        ok &= (right[0] > cos_lim * lr) & (down[1] > cos_lim * ld)
    sel = np.flatnonzero(ok)
    if len(sel) == 0:
        return -np.inf, None
    cands: list = []
    _place(np.einsum("gij,nj->gni", _REBASES[sel], keys), rows, inverted, cands)
    gis, offs, present, scores = cands
    if frame_size is not None:
        # Part of the pyramid may lie outside the picture: a missing card there is no evidence.
        _, nodes_uv = pyramid_nodes(rows, inverted)
        _, _, _, pj, pc = _node_table(rows, inverted)
        top = scores.max()
        keep = np.flatnonzero(scores >= top - 4)
        keep = keep[np.argsort(-scores[keep], kind="stable")[:40]]
        gis, offs, present, scores = gis[keep], offs[keep], present[keep], scores[keep].astype(float)
        hs = h @ _rebase_ts(sel[gis], offs)                                  # (C, 3, 3)
        q = np.einsum("cij,nj->cni", hs, np.hstack([nodes_uv, np.ones((len(nodes_uv), 1))]))
        with np.errstate(divide="ignore", invalid="ignore"):  # nodes on the horizon: not in the picture
            seen = in_frame(q[..., :2] / q[..., 2:3], frame_size)
        # (the half point of a card lying on a missing one given back where that one is out of view)
        scores += 0.5 * (present[:, pj] & ~present[:, pc] & ~seen[:, pc]).sum(1)
    top = scores.max()
    near_top = np.flatnonzero(scores >= top - 3.0)
    # Bounded work: the tie-break (worth at most ~1 point) is weighed for the best 64 placements.
    near_top = near_top[np.argsort(-scores[near_top], kind="stable")[:64]]
    h_abs = h @ _rebase_ts(sel[gis[near_top]], offs[near_top])
    total = scores[near_top] + _tie_breaks(h_abs, pairs, rows)
    total = np.where(np.isnan(total), -np.inf, total)
    best = int(np.argmax(total))  # (the first of equals, as the placements are ordered)
    if not total[best] > -np.inf:
        return -np.inf, None
    return float(total[best]), h_abs[best]


#: The apex-up prior: a placement's layout turned from upright by ``a`` costs ``APEX_UP * a / pi``
#: (a point for an upside-down one). A camera looks at the table from the player's side. Raised from
#: 0.5 in session 27: nearly cleared and partly hidden stills placed upside down or turned by 120
#: degrees (rendered val: slots right 88.03 -> 88.33% and 90.46 -> 90.74%, exact 52.67 -> 53.00%
#: and 51.33% both; 1.5 did as well on one set, 0.75 less).
APEX_UP = 1.0


def _tie_break(h_abs: np.ndarray, pairs: Optional[np.ndarray], rows: int) -> float:
    """Second-index cue (0.25 a pair) and the apex-up prior (at most ``APEX_UP``, for an upside-down
    layout): worth a few cards hidden under a hand, less than the bottom row's pairs."""
    centre = np.array([0.0, (rows - 1) / 2])
    return 0.25 * orientation_cue(h_abs, pairs) - APEX_UP * _up_angle(h_abs, centre) / np.pi


def _rebase_ts(gis: np.ndarray, offs: np.ndarray) -> np.ndarray:
    """New (absolute) lattice coordinates -> relative ones, for each re-basing ``gis`` and key offset
    ``offs``: (c, 3, 3)."""
    t = np.zeros((len(gis), 3, 3))
    t[:, 2, 2] = 1.0
    t[:, :2, :2] = _REBASE_M[gis]
    t[:, :2, 2] = -np.einsum("ij,cjk,ck->ci", _A_INV, _REBASE_GINV[gis], offs)
    return t


def _tie_breaks(hs: np.ndarray, pairs: Optional[np.ndarray], rows: int) -> np.ndarray:
    """``_tie_break`` of many absolute homographies (c, 3, 3) at once."""
    centre = np.array([0.0, (rows - 1) / 2])
    ends = np.array([[*centre, 1.0], [centre[0], centre[1] + 1.0, 1.0]])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.einsum("cij,kj->cki", hs, ends)
        p = q[..., :2] / q[..., 2:3]
        d = p[:, 1] - p[:, 0]
        up = np.arccos(np.clip(d[:, 1] / np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9), -1, 1))
    up = np.where(np.isfinite(d).all(1), up, np.pi)
    cue = np.zeros(len(hs))
    if pairs is not None and len(pairs):
        inv = np.linalg.inv(hs)
        pts = np.hstack([pairs.reshape(-1, 2), np.ones((2 * len(pairs), 1))])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = np.einsum("cij,kj->cki", inv, pts)
            uv = (r[..., :2] / r[..., 2:3]).reshape(len(hs), -1, 2, 2)
        dd = uv[:, :, 1] - uv[:, :, 0]
        (u0, u1), (v0, v1) = SECOND_INDEX_WINDOW

        def inside(x: np.ndarray) -> np.ndarray:
            return (x[..., 0] >= u0) & (x[..., 0] <= u1) & (x[..., 1] >= v0) & (x[..., 1] <= v1)
        cue = (inside(dd) | inside(-dd)).sum(1).astype(float)
    return 0.25 * cue - APEX_UP * up / np.pi


def _fit_score(fit: LatticeFit, tol: float, frame_size: Optional[tuple[int, int]] = None) -> float:
    on = fit.node_of_point >= 0
    present = np.zeros(len(pyramid_nodes(fit.rows, fit.inverted)[0]), bool)
    present[fit.node_of_point[on]] = True
    seen = np.ones(len(present), bool) if frame_size is None else in_frame(fit.node_xy(), frame_size)
    cov = covering(fit.rows, fit.inverted)
    violations = sum(1 for j in np.flatnonzero(present) for c in cov[j] if not present[c] and seen[c])
    node, res = snap(fit.uv)
    beside = int(_beside(_lattice_key(node)[res < tol], fit.rows, fit.inverted))
    residual = float(fit.residual[on].mean() if on.any() else 0)
    return present.sum() - 0.5 * violations - BESIDE_COST * beside - 0.1 * residual


def convincing(fit: LatticeFit, pairs: Optional[np.ndarray], n: int) -> bool:
    """Stop searching: most points placed, and the card-pairs agree with the orientation."""
    if fit.inliers < 0.9 * n:
        return False
    return pairs is None or len(pairs) == 0 or orientation_cue(fit.homography, pairs) >= 0.5 * len(pairs)


def _finish(pts: np.ndarray, h: np.ndarray, rows: int, inverted: bool, tol: float, absolute: bool,
            max_rotation_deg: float = 180.0, pairs: Optional[np.ndarray] = None,
            frame_size: Optional[tuple[int, int]] = None, refit: bool = True) -> Optional[LatticeFit]:
    try:
        if absolute:
            h_abs = h
        else:
            score, h_abs = _rebase(pts, h, rows, inverted, tol, max_rotation_deg, pairs, frame_size)
            if h_abs is None or score <= 0:
                return None
        ids, uv, res = _assign(pts, h_abs, rows, inverted, tol)
        # Refit on the placed points for the final (sub-pixel) model, then place again.
        on = ids >= 0
        if refit and on.sum() >= 6:
            _, nodes_uv = pyramid_nodes(rows, inverted)
            refit = fit_homography(nodes_uv[ids[on]], pts[on])
            if refit is not None:
                h_abs = refit
                ids, uv, res = _assign(pts, h_abs, rows, inverted, tol)
    except np.linalg.LinAlgError:
        return None
    return LatticeFit(h_abs, rows, inverted, ids, uv, res)


def _search(pts: np.ndarray, rows: int, inverted: bool, tol: float, assign_tol: float,
            max_rotation_deg: float, neighbours: int, grow: int, pairs: Optional[np.ndarray],
            frame_size: Optional[tuple[int, int]]) -> Optional[LatticeFit]:
    """Fit from scratch: hypotheses from local triangles, grown, placed in the pyramid."""
    n = len(pts)
    if n < 3:
        return None
    seeds, ms = _hypotheses(pts, neighbours, 89.0)
    if len(seeds) == 0:
        return None
    # Quick score: points within 2 lattice units of the seed that sit on a node.
    inv = np.linalg.inv(ms)                                  # (m, 2, 2)
    rel = np.einsum("mij,mnj->mni", inv, pts[None, :, :] - pts[seeds][:, None, :])
    v = np.round(rel[..., 1])
    w = np.round(rel[..., 0] + v / 2)
    res = np.hypot(rel[..., 0] - (w - v / 2), rel[..., 1] - v)
    near = (np.abs(v) <= 2) & (np.abs(w - v / 2) <= 2.5)
    score = ((res < tol) & near).sum(1) - res.mean(1) * 0.01
    order = np.argsort(-score)
    tried: list[np.ndarray] = []
    best: tuple[float, Optional[LatticeFit]] = (-np.inf, None)
    seeds_tried: set[int] = set()
    placed: set[tuple[bytes, bytes]] = set()
    for j in order[: grow * 6]:
        if len(tried) >= grow or (len(tried) >= 2 and best[1] is not None and convincing(best[1], pairs, n)):
            break
        if int(seeds[j]) in seeds_tried:  # grow from different places
            continue
        seeds_tried.add(int(seeds[j]))
        h0 = np.eye(3)
        h0[:2, :2], h0[:2, 2] = ms[j], pts[seeds[j]]
        h = _grow(pts, h0, tol)
        if h is None:
            continue
        tried.append(h)
        # Seeds grown into the same lattice (the same points on the same nodes, up to a shift of
        # the keys) are placed alike: placing one again would give the same fit (rendered val:
        # a quarter of the placements).
        same = _lattice_signature(pts, h, tol, assign_tol)
        if same in placed:
            continue
        placed.add(same)
        fit = _finish(pts, h, rows, inverted, assign_tol, absolute=False,
                      max_rotation_deg=max_rotation_deg, pairs=pairs, frame_size=frame_size)
        if fit is None:
            continue
        s = _fit_score(fit, tol, frame_size) + _tie_break(fit.homography, pairs, rows)
        if s > best[0]:
            best = (s, fit)
    return best[1]


#: Lattice steps around a grown lattice's first point at which ``_lattice_signature`` compares lattices.
_AROUND = np.array([[0.0, 0.0], [4.0, 0.0], [-4.0, 0.0], [0.0, 4.0], [0.0, -4.0]])
SIGNATURE_PX = 2.0


def _lattice_signature(pts: np.ndarray, h: np.ndarray, tol: float, assign_tol: float) -> tuple[bytes, bytes]:
    """The points within ``tol`` of a node of the relative lattice ``h``, and the lattice keys of
    those within ``assign_tol`` less the first one's: two grown lattices alike in this are placed
    alike (the placement counts the first, the final fit the second)."""
    try:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            node, res = snap(apply_h(np.linalg.inv(h), pts))
    except np.linalg.LinAlgError:  # a degenerate lattice: placed (and refused) as before
        return np.array([id(h)]).tobytes(), b""
    on = np.flatnonzero(res < tol)
    keys = _lattice_key(node)
    if len(on) == 0:
        return on.tobytes(), b""
    # ... and map the lattice around the first of them to within ``SIGNATURE_PX`` of each other
    # (lattices through the same points that bend differently beyond them are placed differently).
    around = apply_h(h, node[on[0]] + _AROUND)
    return (on.tobytes() + (keys[res < assign_tol] - keys[on[0]]).tobytes(),
            np.round(np.clip(np.nan_to_num(around, nan=-1.0), -1e9, 1e9) / SIGNATURE_PX).astype(np.int64).tobytes())

