"""Pyramid slots from index-corner detections: a robust lattice fit.

Model. The top-left index corners of a dealt pyramid lie on a triangular
lattice. Slot ``(r, i)`` (row ``r`` from the apex row, slot ``i`` from the left)
has lattice coordinates ``u = i - r/2`` (card pitches along a row) and
``v = r`` (row pitches); for an inverted pyramid ``v = rows - 1 - r`` (the wide
row is farthest from the player, i.e. at the top of the image). A homography
``H`` maps ``(u, v, 1)`` to image pixels. It absorbs the camera tilt
(perspective), the rotation and scale of the whole layout and the spacing the
person dealt with (gap between cards, how much rows overlap), so nothing about
card size or spacing is assumed; uneven spacing is the fit's residual.

Fit (RANSAC-like, then region growing):

1. hypotheses: every point ``p`` with two of its nearest neighbours ``a, b``
   read as an elementary triangle of the lattice (``a`` = down-left and ``b`` =
   down-right child of ``p``, or ``a`` = right neighbour, ``b`` = down-right
   child) gives a local affine map. Mirror images and layouts whose "down"
   points more than ``max_rotation_deg`` away from the image's down are
   dropped: that is what tells the apex from the other two corners of the
   (3-fold symmetric) triangle, so the layout may be rotated up to +-60 deg
   by default, and the camera looks at it from the player's side;
2. each hypothesis is scored by the points within 2 lattice units of its seed
   that fall on lattice nodes; the best few are grown: inliers within a radius
   of 2.5, 4.5, 8 and then any distance refit a homography (local affine first,
   perspective as the region grows, so a 45 deg tilt does not break the
   extrapolation);
3. the relative lattice found is placed in the pyramid: the integer offset
   that puts the most points on the pyramid's nodes, minus half a point for
   every present card whose covered card is missing (a real pyramid is always
   an order ideal around the apex: a partly cleared pyramid keeps its upper
   part, so empty slots stay empty and nothing is shifted).

Points that fall on no pyramid node (second indices of uncovered cards, the
waste, loose cards, false boxes) keep their lattice coordinates for the
caller (see ``companion.vision.pipeline``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Optional

import numpy as np

#: Largest distance (lattice units) between a point and its node while fitting ...
DEFAULT_TOL = 0.3
#: ... and when placing points on slots at the end (the next node is >= 1 away, 1.1 diagonally).
ASSIGN_TOL = 0.45


@lru_cache(maxsize=16)
def pyramid_nodes(rows: int = 7, inverted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(ri, uv)``: slot ``(row, index)`` and lattice coordinates of each node, row-major."""
    ri, uv = [], []
    for r in range(rows):
        for i in range(r + 1):
            ri.append((r, i))
            v = rows - 1 - r if inverted else r
            u = i - r / 2 + ((rows - 1) / 2 if inverted else 0.0)
            uv.append((u, v))
    ri_arr, uv_arr = np.array(ri, np.int64), np.array(uv, np.float64)
    ri_arr.setflags(write=False)
    uv_arr.setflags(write=False)
    return ri_arr, uv_arr


def _lattice_key(uv: np.ndarray) -> np.ndarray:
    """Integer lattice key ``(w, v)`` with ``w = u + v/2`` (integer on every node; far away if not finite)."""
    k = np.stack([np.round(uv[:, 0] + uv[:, 1] / 2), np.round(uv[:, 1])], 1)
    return np.where(np.isfinite(k), np.clip(k, -10**6, 10**6), 10**6).astype(np.int64)


def snap(uv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest lattice node (float ``uv``) and the distance to it, for each point."""
    with np.errstate(invalid="ignore"):
        v = np.round(uv[:, 1])
        w = np.round(uv[:, 0] + v / 2)
        node = np.stack([w - v / 2, v], 1)
        res = np.hypot(uv[:, 0] - node[:, 0], uv[:, 1] - node[:, 1])
    return node, np.where(np.isfinite(res), res, np.inf)


def apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    q = pts @ h[:, :2].T + h[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):  # points on the horizon: inf/nan, never inliers
        return q[:, :2] / q[:, 2:3]


def fit_homography(src: np.ndarray, dst: np.ndarray) -> Optional[np.ndarray]:
    """Least-squares homography ``src -> dst`` (>= 4 points), ``None`` when degenerate."""
    if len(src) < 4:
        return fit_affine(src, dst)
    # Normalise both sides (Hartley) so the linear system is well conditioned.
    ms, md = src.mean(0), dst.mean(0)
    ss = np.sqrt(2) / max(np.sqrt(((src - ms) ** 2).sum(1)).mean(), 1e-9)
    sd = np.sqrt(2) / max(np.sqrt(((dst - md) ** 2).sum(1)).mean(), 1e-9)
    s, d = (src - ms) * ss, (dst - md) * sd
    n = len(s)
    a = np.zeros((2 * n, 8))
    a[0::2, 0:2], a[0::2, 2] = s, 1
    a[1::2, 3:5], a[1::2, 5] = s, 1
    a[0::2, 6:8] = -s * d[:, :1]
    a[1::2, 6:8] = -s * d[:, 1:2]
    b = d.reshape(-1)
    sol, _, rank, _ = np.linalg.lstsq(a, b, rcond=None)
    if rank < 8:
        return fit_affine(src, dst)
    hn = np.append(sol, 1.0).reshape(3, 3)
    ts = np.array([[ss, 0, -ss * ms[0]], [0, ss, -ss * ms[1]], [0, 0, 1]])
    td_inv = np.array([[1 / sd, 0, md[0]], [0, 1 / sd, md[1]], [0, 0, 1]])
    h = td_inv @ hn @ ts
    return h / h[2, 2] if abs(h[2, 2]) > 1e-12 else None


def fit_affine(src: np.ndarray, dst: np.ndarray) -> Optional[np.ndarray]:
    if len(src) < 3:
        return None
    a = np.hstack([src, np.ones((len(src), 1))])
    sol, _, rank, _ = np.linalg.lstsq(a, dst, rcond=None)
    if rank < 3:
        return None
    return np.vstack([sol.T, [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class LatticeFit:
    """Where the pyramid lies in the image and which point sits on which slot."""

    #: 3x3 homography: pyramid lattice ``(u, v)`` -> image pixels.
    homography: np.ndarray
    rows: int
    inverted: bool
    #: Per input point: node index into ``pyramid_nodes(rows, inverted)`` or -1.
    node_of_point: np.ndarray
    #: Per input point: lattice coordinates ``(u, v)`` under the fit.
    uv: np.ndarray
    #: Per input point: distance (lattice units) to the nearest lattice node.
    residual: np.ndarray
    #: True when the fit was refined from the prior (tracking), False when searched from scratch.
    tracked: bool = False

    @property
    def inliers(self) -> int:
        return int((self.node_of_point >= 0).sum())

    def node_xy(self) -> np.ndarray:
        """Image position of every node's index corner, ``(n_nodes, 2)``."""
        return apply_h(self.homography, pyramid_nodes(self.rows, self.inverted)[1])

    def to_image(self, uv: np.ndarray) -> np.ndarray:
        return apply_h(self.homography, np.asarray(uv, np.float64).reshape(-1, 2))

    def pitch_px(self) -> float:
        """Median distance in pixels between neighbouring slots of a row (a scale for the caller)."""
        _, uv = pyramid_nodes(self.rows, self.inverted)
        a, b = self.to_image(uv), self.to_image(uv + [1.0, 0.0])
        return float(np.median(np.hypot(*(b - a).T)))


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
        new = fit_homography(src, dst) if len(src) >= 6 and radius > 2.5 else fit_affine(src, dst)
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


@lru_cache(maxsize=16)
def _node_table(rows: int, inverted: bool):
    """Lookup grid of node ids by lattice key, and (node, covered node) pairs for the structure check."""
    _, nodes_uv = pyramid_nodes(rows, inverted)
    key = _lattice_key(nodes_uv)
    lo = key.min(0)
    grid = np.full(tuple(key.max(0) - lo + 1), -1, np.int64)
    grid[key[:, 0] - lo[0], key[:, 1] - lo[1]] = np.arange(len(key))
    cov = covering(rows, inverted)
    pj = np.array([j for j, cs in enumerate(cov) for _ in cs], np.int64)
    pc = np.array([c for cs in cov for c in cs], np.int64)
    return key, lo, grid, pj, pc


def _place(keys: np.ndarray, rows: int, inverted: bool, candidates_out: Optional[list] = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Best integer offset inside the pyramid for each set of lattice ``keys`` (G, n, 2).

    Returns per set (score, offset key). Score: slots filled, minus half a point
    per filled slot whose covered card is missing.
    """
    node_key, lo, grid, pj, pc = _node_table(rows, inverted)
    g, n = keys.shape[:2]
    # Votes: every (point, node) pair proposes the offset that puts the point there.
    offs = (node_key[None, None, :, :] - keys[:, :, None, :]).reshape(g, -1, 2)
    span = 32  # offsets are small integers: count them with one bincount
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
    score = present.sum(1) - 0.5 * (present[:, pj] & ~present[:, pc]).sum(1)
    if candidates_out is not None:
        candidates_out.extend([gi, cand, present, score])
    best_score = np.full(g, -np.inf)
    np.maximum.at(best_score, gi, score)
    best_off = np.zeros((g, 2), np.int64)
    pick = score >= best_score[gi]
    best_off[gi[pick]] = cand[pick]
    return best_score, best_off


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


@lru_cache(maxsize=16)
def covering(rows: int, inverted: bool = False) -> tuple[tuple[int, ...], ...]:
    """For each node (row-major), the nodes of the cards lying under it (that it covers).

    In a pyramid card ``(r, i)`` lies on ``(r-1, i-1)`` and ``(r-1, i)``; in an
    inverted one the narrow rows lie on the wide ones: on ``(r+1, i)``, ``(r+1, i+1)``.
    """
    idx = {(r, i): n for n, (r, i) in enumerate((r, i) for r in range(rows) for i in range(r + 1))}
    out = []
    for (r, i) in idx:
        under = ((r + 1, i), (r + 1, i + 1)) if inverted else ((r - 1, i - 1), (r - 1, i))
        out.append(tuple(idx[k] for k in under if k in idx))
    return tuple(out)


def fit_pyramid(points: np.ndarray, rows: int = 7, inverted: bool = False, *,
                prior: Optional[np.ndarray] = None, tol: float = DEFAULT_TOL,
                assign_tol: float = ASSIGN_TOL,
                max_rotation_deg: float = 180.0, neighbours: int = 5, grow: int = 8,
                pairs: Optional[np.ndarray] = None, frame_size: Optional[tuple[int, int]] = None,
                ) -> Optional[LatticeFit]:
    """Fit the pyramid lattice to index-corner positions ``points`` (N, 2) in pixels.

    ``prior`` is a homography from an earlier frame: when it still explains the
    points it is refined and used without a search (the usual case in a video,
    and the only way to place a pyramid with fewer than three cards left).
    ``pairs`` (P, 2, 2): image points of two reads of one card (likely a card's
    two indices), the orientation cue. ``max_rotation_deg`` < 180 restricts the
    layout's rotation (its "down" against the image's). ``frame_size`` (width,
    height): slots outside the picture are not expected to show a card.
    Returns ``None`` when no lattice explains at least three points.
    """
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    n = len(pts)
    if prior is not None and n:
        # The refined prior first; when a refit on few, clustered reads extrapolates the rest of the
        # pyramid elsewhere, the prior itself (the cards have not moved).
        h = _track(pts, prior, rows, inverted, tol)
        for cand, refit in ((h, True), (prior, False)):
            if cand is None:
                continue
            fit = _finish(pts, cand, rows, inverted, assign_tol, absolute=True, refit=refit)
            if fit is not None and _same_place(fit, prior) and _prior_holds(fit, n):
                return replace(fit, tracked=True)
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
        fit = _finish(pts, h, rows, inverted, assign_tol, absolute=False,
                      max_rotation_deg=max_rotation_deg, pairs=pairs, frame_size=frame_size)
        if fit is None:
            continue
        s = _fit_score(fit, tol, frame_size) + _tie_break(fit.homography, pairs, rows)
        if s > best[0]:
            best = (s, fit)
    return best[1]


def _prior_holds(fit: LatticeFit, n: int) -> bool:
    """Keep tracking unless this frame's reads clearly contradict the prior.

    The cards of a pyramid do not move, and late in a game only a few of them
    are left while the waste keeps growing, so the share of *all* reads on
    nodes says little. What contradicts the prior is reads inside the
    pyramid's area that sit on no node (the layout slid, the camera moved):
    the prior holds when at least one read sits on a node, the placed cards
    form a pyramid (at most two cards lying on an empty slot), and those
    off-node reads inside the area are fewer than the placed ones (and at most
    two when only one or two cards are placed).
    """
    if fit.inliers >= min(3, n) and (fit.inliers >= 0.6 * n
                                      or (fit.inliers >= 0.5 * n and _violations(fit) <= 2)):
        return True  # the original rule: most reads on the pyramid
    if fit.inliers < 1 or _violations(fit) > (0 if fit.inliers < 3 else 2):
        return False
    off = (fit.node_of_point < 0) & _in_area(fit.uv, fit.rows, fit.inverted)
    stray = int(off.sum())
    return stray < fit.inliers and (fit.inliers >= 3 or stray <= 2)


def _in_area(uv: np.ndarray, rows: int, inverted: bool, margin: float = 0.5) -> np.ndarray:
    """Lattice points inside the pyramid's triangle (grown by ``margin``); NaN/inf are outside."""
    with np.errstate(invalid="ignore"):
        u, v = uv[:, 0], uv[:, 1]
        r = (rows - 1 - v) if inverted else v
        centre = (rows - 1) / 2 if inverted else 0.0
        inside = (r >= -margin) & (r <= rows - 1 + margin) & (np.abs(u - centre) <= np.clip(r, 0, None) / 2 + margin)
    return np.asarray(inside & np.isfinite(u) & np.isfinite(v))


def _same_place(fit: LatticeFit, prior: np.ndarray, limit: float = 0.35) -> bool:
    """The refined fit puts every slot within ``limit`` slot pitches of where the prior put it
    (a fit that slid by a slot while a hand hid part of the pyramid is refused)."""
    _, nodes_uv = pyramid_nodes(fit.rows, fit.inverted)
    moved = apply_h(np.linalg.inv(prior), apply_h(fit.homography, nodes_uv)) - nodes_uv
    return bool(np.hypot(moved[:, 0], moved[:, 1]).max() < limit)


def _track(pts: np.ndarray, prior: np.ndarray, rows: int, inverted: bool, tol: float) -> Optional[np.ndarray]:
    """Refine last frame's fit on this frame's points (two assign-and-refit rounds)."""
    h = prior
    _, nodes_uv = pyramid_nodes(rows, inverted)
    for _ in range(2):
        try:
            ids, _, _ = _assign(pts, h, rows, inverted, tol)
        except np.linalg.LinAlgError:
            return None
        on = ids >= 0
        if on.sum() < 6:
            return h
        new = fit_homography(nodes_uv[ids[on]], pts[on])
        if new is None:
            return h
        h = new
    return h


def convincing(fit: LatticeFit, pairs: Optional[np.ndarray], n: int) -> bool:
    """Stop searching: most points placed, and the card-pairs agree with the orientation."""
    if fit.inliers < 0.9 * n:
        return False
    return pairs is None or len(pairs) == 0 or orientation_cue(fit.homography, pairs) >= 0.5 * len(pairs)


def _violations(fit: LatticeFit) -> int:
    present = np.zeros(len(pyramid_nodes(fit.rows, fit.inverted)[0]), bool)
    present[fit.node_of_point[fit.node_of_point >= 0]] = True
    return sum(1 for j in np.flatnonzero(present) for c in covering(fit.rows, fit.inverted)[j] if not present[c])


def _fit_score(fit: LatticeFit, tol: float, frame_size: Optional[tuple[int, int]] = None) -> float:
    on = fit.node_of_point >= 0
    present = np.zeros(len(pyramid_nodes(fit.rows, fit.inverted)[0]), bool)
    present[fit.node_of_point[on]] = True
    seen = np.ones(len(present), bool)
    if frame_size is not None:
        xy = fit.node_xy()
        seen = (xy[:, 0] >= 0) & (xy[:, 0] < frame_size[0]) & (xy[:, 1] >= 0) & (xy[:, 1] < frame_size[1])
    cov = covering(fit.rows, fit.inverted)
    violations = sum(1 for j in np.flatnonzero(present) for c in cov[j] if not present[c] and seen[c])
    return present.sum() - 0.5 * violations - 0.1 * float(fit.residual[on].mean() if on.any() else 0)


def assign_points(fit: "LatticeFit", points: np.ndarray, tol: float = ASSIGN_TOL
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Place any points under a fit: node id (or -1), lattice ``uv`` and residual of each."""
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    if len(pts) == 0:
        return np.zeros(0, np.int64), np.zeros((0, 2)), np.zeros(0)
    return _assign(pts, fit.homography, fit.rows, fit.inverted, tol)


def _assign(pts: np.ndarray, h_abs: np.ndarray, rows: int, inverted: bool, tol: float
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Node id (or -1), lattice coordinates and residual of every point under ``h_abs``."""
    uv = apply_h(np.linalg.inv(h_abs), pts)
    node, res = snap(uv)
    _, lo, grid, _, _ = _node_table(rows, inverted)
    k = _lattice_key(node) - lo
    inside = ((k >= 0) & (k < np.array(grid.shape))).all(1) & (res < tol)
    ids = np.full(len(pts), -1, np.int64)
    ids[inside] = grid[k[inside, 0], k[inside, 1]]
    return ids, uv, res


_A = np.array([[1.0, 0.5], [0.0, 1.0]])  # uv -> key (w = u + v/2, v)
_A_INV = np.linalg.inv(_A)
_REBASE_GINV = np.round(np.linalg.inv(_REBASES)).astype(np.int64)
#: For each re-basing: new uv -> old uv (linear part).
_REBASE_M = np.einsum("ij,gjk,kl->gil", _A_INV, _REBASE_GINV, _A)


#: Where a card's second (bottom-right) index lies from its first, lattice units: (u range, v range).
SECOND_INDEX_WINDOW = ((0.1, 1.8), (0.6, 3.8))


def orientation_cue(h_abs: np.ndarray, pairs: Optional[np.ndarray]) -> float:
    """How many read pairs of one card lie like a card's two indices (down-right) under ``h_abs``.

    This is what tells the apex from the other two corners of the (3-fold
    symmetric) triangle whatever the layout's rotation: the bottom row, the
    waste and every uncovered card show their rotated second index down-right
    of the first in the true orientation only.
    """
    if pairs is None or len(pairs) == 0:
        return 0.0
    q = apply_h(np.linalg.inv(h_abs), pairs.reshape(-1, 2)).reshape(-1, 2, 2)
    d = q[:, 1] - q[:, 0]
    (u0, u1), (v0, v1) = SECOND_INDEX_WINDOW

    def inside(x: np.ndarray) -> np.ndarray:
        return (x[:, 0] >= u0) & (x[:, 0] <= u1) & (x[:, 1] >= v0) & (x[:, 1] <= v1)
    return float((inside(d) | inside(-d)).sum())


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
    c3 = apply_h(h, np.array([centre, centre + [eps, 0], centre + [0, eps]]))
    jac = np.column_stack([(c3[1] - c3[0]) / eps, (c3[2] - c3[0]) / eps])
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
        w, hgt = frame_size
        for c in range(len(gis)):
            h_abs = h @ _rebase_t(sel[gis[c]], offs[c])
            xy = apply_h(h_abs, nodes_uv)
            seen = (xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < hgt)
            scores[c] = present[c].sum() - 0.5 * (present[c, pj] & ~present[c, pc] & seen[pc]).sum()
    best: tuple[float, Optional[np.ndarray]] = (-np.inf, None)
    top = scores.max()
    near_top = np.flatnonzero(scores >= top - 3.0)
    # Bounded work: the tie-break (worth at most ~1 point) is weighed for the best 64 placements.
    near_top = near_top[np.argsort(-scores[near_top], kind="stable")[:64]]
    for c in near_top:
        h_abs = h @ _rebase_t(sel[gis[c]], offs[c])
        total = float(scores[c]) + _tie_break(h_abs, pairs, rows)
        if total > best[0]:
            best = (total, h_abs)
    return best


def _rebase_t(gi: int, off: np.ndarray) -> np.ndarray:
    """New (absolute) lattice coordinates -> relative ones, for re-basing ``gi`` and key offset ``off``."""
    t = np.eye(3)
    t[:2, :2] = _REBASE_M[gi]
    t[:2, 2] = -(_A_INV @ _REBASE_GINV[gi] @ off)
    return t


def _tie_break(h_abs: np.ndarray, pairs: Optional[np.ndarray], rows: int) -> float:
    """Second-index cue (0.25 a pair) and an apex-up prior (at most 0.5, for an upside-down layout):
    worth a couple of cards hidden under a hand, less than the bottom row's pairs."""
    centre = np.array([0.0, (rows - 1) / 2])
    return 0.25 * orientation_cue(h_abs, pairs) - 0.5 * _up_angle(h_abs, centre) / np.pi


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
