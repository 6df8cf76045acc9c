"""The pyramid lattice: slot coordinates, homographies, a fit's placement of points.

Slot ``(r, i)`` (row ``r`` from the apex row, slot ``i`` from the left) has
lattice coordinates ``u = i - r/2`` (card pitches along a row) and ``v = r``
(row pitches); for an inverted pyramid ``v = rows - 1 - r``. A homography ``H``
maps ``(u, v, 1)`` to image pixels (see ``companion.vision.slots`` for the fit).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np

#: Largest distance (lattice units) between a point and its node while fitting ...
DEFAULT_TOL = 0.3


#: ... and when placing points on slots at the end (the next node is >= 1 away, 1.1 diagonally).
ASSIGN_TOL = 0.45


#: Where a card's second (bottom-right) index lies from its first, lattice units: (u range, v range).
SECOND_INDEX_WINDOW = ((0.1, 1.8), (0.6, 3.8))


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


def in_frame(xy: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Which image points ``xy`` (..., 2) lie inside a picture of ``size`` (width, height); NaN and
    inf (points on a lattice's horizon) do not."""
    with np.errstate(invalid="ignore"):
        return (xy[..., 0] >= 0) & (xy[..., 0] < size[0]) & (xy[..., 1] >= 0) & (xy[..., 1] < size[1])


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


def fit_similarity(src: np.ndarray, dst: np.ndarray) -> Optional[np.ndarray]:
    """Least-squares similarity (rotation, uniform scale, translation) ``src -> dst`` as a 3x3
    matrix (Umeyama); a translation alone for one point; ``None`` when degenerate."""
    if len(src) == 0:
        return None
    ms, md = src.mean(0), dst.mean(0)
    s, d = src - ms, dst - md
    m = np.eye(3)
    var = float((s ** 2).sum())
    if len(src) >= 2 and var > 1e-9:
        a = float((s * d).sum())                                   # sum of dot products
        b = float((s[:, 0] * d[:, 1] - s[:, 1] * d[:, 0]).sum())   # sum of cross products
        m[:2, :2] = np.array([[a, -b], [b, a]]) / var
    m[:2, 2] = md - m[:2, :2] @ ms
    return m if np.isfinite(m).all() else None


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


def in_area(uv: np.ndarray, rows: int, inverted: bool, margin: float = 0.5) -> np.ndarray:
    """Lattice points inside the pyramid's triangle (grown by ``margin``); NaN/inf are outside."""
    with np.errstate(invalid="ignore"):
        u, v = uv[:, 0], uv[:, 1]
        r = (rows - 1 - v) if inverted else v
        centre = (rows - 1) / 2 if inverted else 0.0
        inside = (r >= -margin) & (r <= rows - 1 + margin) & (np.abs(u - centre) <= np.clip(r, 0, None) / 2 + margin)
    return np.asarray(inside & np.isfinite(u) & np.isfinite(v))


def violations(fit: LatticeFit) -> int:
    present = np.zeros(len(pyramid_nodes(fit.rows, fit.inverted)[0]), bool)
    present[fit.node_of_point[fit.node_of_point >= 0]] = True
    return sum(1 for j in np.flatnonzero(present) for c in covering(fit.rows, fit.inverted)[j] if not present[c])


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
    _, lo, grid, _, _ = _node_table(rows, inverted)
    ids, res = node_ids(uv, lo, grid)
    ids[res >= tol] = -1
    return ids, uv, res


def node_ids(uv: np.ndarray, lo: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Node id (-1: none) of the lattice node nearest each point ``uv`` (..., 2), and the distance;
    ``lo``, ``grid``: the pyramid's node lookup (``_node_table``)."""
    node, res = snap(uv.reshape(-1, 2))
    k = _lattice_key(node) - lo
    inside = ((k >= 0) & (k < np.array(grid.shape))).all(1)
    ids = np.full(len(k), -1, np.int64)
    ids[inside] = grid[k[inside, 0], k[inside, 1]]
    return ids.reshape(uv.shape[:-1]), res.reshape(uv.shape[:-1])


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
