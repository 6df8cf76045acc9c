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

Tracking (video). Cards do not move: the last frame's fit is refined on the
new points (the whole homography with many points; with fewer, late in a game,
only moved as a rigid whole, so no drift builds up), and kept unless the
frame's reads clearly contradict it. A search on a few reads (a hand hiding
most cards) replaces it only when it places clearly more reads.

Modules: ``lattice`` (coordinates, homographies, placing points under a fit),
``lattice_search`` (steps 1-3 above); here the fit with tracking.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

# The lattice and the search live in their own modules; their public names are used from here.
from companion.vision.lattice import (ASSIGN_TOL, DEFAULT_TOL, SECOND_INDEX_WINDOW,  # noqa: F401
                                      LatticeFit, _assign, apply_h, assign_points, covering, fit_affine,
                                      fit_homography, fit_similarity, in_area, orientation_cue,
                                      pyramid_nodes, snap, violations)
from companion.vision.lattice_search import _finish, _search, convincing  # noqa: F401

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
        h, full = _track(pts, prior, rows, inverted, tol)
        for cand, refit in ((h, full), (prior, False)):
            if cand is None:
                continue
            fit = _finish(pts, cand, rows, inverted, assign_tol, absolute=True, refit=refit)
            if fit is not None and same_place(fit, prior) and _prior_holds(fit, n):
                if cand is prior and h is not None and (_strays(fit) or violations(fit)):
                    # The refined prior moved too far to be taken, the prior as it is leaves reads
                    # inside the pyramid on no node or cards lying on an empty slot: it may have
                    # drifted (refined on a few reads while a hand hid the rest) and then holds on
                    # most reads but never moves back. A search placing more reads is offered (the caller
                    # takes it only when found in the same place several frames in a row).
                    found = _search(pts, rows, inverted, tol, assign_tol, max_rotation_deg, neighbours,
                                    grow, pairs, frame_size)
                    if found is not None and found.inliers >= max(5, fit.inliers + 1):
                        return found
                return replace(fit, tracked=True)
        as_before = _finish(pts, prior, rows, inverted, assign_tol, absolute=True, refit=False)
        found = _search(pts, rows, inverted, tol, assign_tol, max_rotation_deg, neighbours, grow, pairs,
                        frame_size)
        # A search on a few reads (a hand hiding most cards) finds some lattice through any three
        # points: it replaces the prior only when it places clearly more reads than the prior does.
        # (With no read on the prior's nodes the caller sees a cleared pyramid only when no read
        # lies inside it either.)
        if as_before is not None and (found is None or found.inliers < max(5, as_before.inliers + 2)):
            return replace(as_before, tracked=True)
        return found
    return _search(pts, rows, inverted, tol, assign_tol, max_rotation_deg, neighbours, grow, pairs,
                   frame_size)


#: Lattice maps moving a fit a row down its left or its right edge: the same lattice with the
#: slot it called (r, i) now (r - 1, i) or (r - 1, i - 1).
_ROW_UP = (np.array([[1.0, 0.0, -0.5], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]),
           np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]))


def closed_at_apex(fit: LatticeFit, points: np.ndarray, sure: int,
                   assign_tol: float = ASSIGN_TOL) -> LatticeFit:
    """The searched ``fit``, or, when it leaves the apex empty, the same lattice moved a row up
    either edge if that puts a card on the apex, lies on no empty slot and places every read among
    the first ``sure`` of ``points`` (the reads named surely) that the fit placed.

    The apex is the last card of a pyramid to go, so a pyramid with cards left and no apex is a
    fit placed a row off: a partly cleared pyramid's right edge read nowhere but for faint corners
    of its cards' pips (val_s64_000263, tigullio-international: three reads at 0.08-0.11 one
    slot past the rows' ends made the lattice a row lower the better one), or the apex's slot
    taken out of the picture. Not when the move loses a sure read: the apex's own corner unread
    and its right edge read well (val_s66_000181) is a pyramid missing only its apex's read.
    Rendered val: 5 scenes of 1,200 more right (3 more exact), none less. (A hand over the apex
    of a pyramid cleared along its right edge would be moved wrongly: the deal is checked.)"""
    if fit.inverted or fit.tracked or fit.inliers < 3 or (fit.node_of_point == 0).any():
        return fit
    placed = int((fit.node_of_point[:sure] >= 0).sum())
    best = fit
    for t in _ROW_UP:
        alt = place_with(points, fit.homography @ t, fit.rows, fit.inverted, assign_tol)
        if (alt is not None and (alt.node_of_point == 0).any() and violations(alt) == 0
                and (alt.node_of_point[:sure] >= 0).sum() >= placed
                and (best is fit or alt.inliers > best.inliers)):
            best = alt
    return best


def place_with(points: np.ndarray, h_abs: np.ndarray, rows: int = 7, inverted: bool = False,
               assign_tol: float = ASSIGN_TOL) -> Optional[LatticeFit]:
    """The fit ``h_abs`` as it is (no refit), with ``points`` placed under it."""
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    return _finish(pts, h_abs, rows, inverted, assign_tol, absolute=True, refit=False)


def _strays(fit: LatticeFit) -> int:
    """Reads inside the pyramid's area that sit on no node."""
    return int(((fit.node_of_point < 0) & in_area(fit.uv, fit.rows, fit.inverted)).sum())


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
                                      or (fit.inliers >= 0.5 * n and violations(fit) <= 2)):
        return True  # the original rule: most reads on the pyramid
    off = (fit.node_of_point < 0) & in_area(fit.uv, fit.rows, fit.inverted)
    stray = int(off.sum())
    if fit.inliers < 1:
        return stray == 0  # a cleared pyramid: every read lies outside it (the waste)
    if violations(fit) > (0 if fit.inliers < 3 else 2):
        return False
    return stray < fit.inliers and (fit.inliers >= 3 or stray <= 2)


def same_place(fit: LatticeFit, prior: np.ndarray, limit: float = 0.35, *, placed_only: bool = False) -> bool:
    """The refined fit puts every slot within ``limit`` slot pitches of where the prior put it
    (a fit that slid by a slot while a hand hid part of the pyramid is refused). ``placed_only``:
    only the slots holding a read (two searches on the few cards left late in a game agree where
    the cards are and extrapolate the empty rows differently)."""
    _, nodes_uv = pyramid_nodes(fit.rows, fit.inverted)
    if placed_only and fit.inliers:
        nodes_uv = nodes_uv[np.unique(fit.node_of_point[fit.node_of_point >= 0])]
    moved = apply_h(np.linalg.inv(prior), apply_h(fit.homography, nodes_uv)) - nodes_uv
    return bool(np.hypot(moved[:, 0], moved[:, 1]).max() < limit)


#: Reads on the pyramid needed to refit the whole homography while tracking; with fewer (late in a
#: game, the cards left cluster in a corner) the prior is only moved as a rigid whole (camera
#: shake), since a homography refit on clustered points extrapolates the empty slots elsewhere and
#: the error builds up frame after frame.
TRACK_FULL_REFIT = 15


def _track(pts: np.ndarray, prior: np.ndarray, rows: int, inverted: bool, tol: float
           ) -> tuple[Optional[np.ndarray], bool]:
    """Refine last frame's fit on this frame's points (two assign-and-refit rounds). Returns the
    homography and whether it was refit whole (else: the prior moved by a similarity)."""
    h = prior
    full = False
    _, nodes_uv = pyramid_nodes(rows, inverted)
    for _ in range(2):
        try:
            ids, _, _ = _assign(pts, h, rows, inverted, tol)
        except np.linalg.LinAlgError:
            return None, False
        on = ids >= 0
        if on.sum() >= TRACK_FULL_REFIT:
            new = fit_homography(nodes_uv[ids[on]], pts[on])
            full = new is not None
        elif on.sum() >= 1:
            s = fit_similarity(apply_h(prior, nodes_uv[ids[on]]), pts[on])
            new = None if s is None else s @ prior
            full = False
        else:
            return h, full
        if new is None:
            return h, full
        h = new
    return h, full
