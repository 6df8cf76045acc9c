"""Which way the pyramid lies in the image, and how sure a reading names it.

The index corners of a pyramid form a triangle, and a homography maps any triangle onto any
other: from corner positions alone, a layout turned by about 120 degrees fits as well as the
right one. The lattice search breaks the tie with a card's two indices and an apex-up prior;
on a table turned far from upright that can pick a wrong corner as the apex. The classifier
settles it: crops turned as the right orientation says stand upright and read surely
(``LayoutPipeline.read_image`` compares ``way_round_mass`` of the candidates). A classifier that
tells which way an index lies (``tools/train.py --cls-turn``) settles it better: turned the right
way, the slots' first indices stand upright; the wrong way round, they lie a third of a turn off.
"""

from __future__ import annotations

import numpy as np

from companion.vision.lattice import apply_h, fit_affine, pyramid_nodes


def apply_dir(h: np.ndarray) -> np.ndarray:
    """Image direction of the lattice's "down" at the apex under homography ``h``."""
    p = apply_h(np.asarray(h, np.float64), np.array([[0.0, 0.0], [0.0, 1.0]]))
    return p[1] - p[0]


def layout_angle(h: np.ndarray) -> float:
    """The layout's turn in the image, degrees: 0 when its "down" (apex to base) is the image's,
    positive counter-clockwise; turning a crop by it (``corner_crop(angle=...)``) sets its index
    upright."""
    dx, dy = apply_dir(h)
    return float(np.degrees(np.arctan2(-dx, dy)))


def angle_gap(a: float, b: float) -> float:
    """Absolute difference of two angles in degrees, in 0..180."""
    return abs((a - b + 180.0) % 360.0 - 180.0)


def turned_homographies(h: np.ndarray, rows: int) -> list[np.ndarray]:
    """The fit ``h`` (lattice -> image) with the apex moved to the bottom-left, then to the
    bottom-right corner of the triangle: the other two ways the same corners can be a pyramid.
    Slot (r, i) has barycentric coordinates (i, r - i, rows - 1 - r); a turn permutes them."""
    _, uv = pyramid_nodes(rows, False)
    n = rows - 1

    def node_uv(r: int, i: int) -> np.ndarray:
        return uv[r * (r + 1) // 2 + i]

    corners = [(0, 0), (n, 0), (n, n)]  # apex, bottom-left, bottom-right
    out = []
    for k in (1, 2):
        # corner c of the turned pyramid lies where corner (c + k) % 3 of the fitted one lies
        src = np.array([node_uv(*corners[c]) for c in range(3)])
        dst = np.array([node_uv(*corners[(c + k) % 3]) for c in range(3)])
        a = fit_affine(src, dst)
        if a is None:
            continue
        out.append(np.asarray(h, np.float64) @ a)
    return out


def named_scores(layout) -> list[float]:
    """The scores of the pyramid's cards in a ``TableLayout`` (none for ``None``)."""
    return [] if layout is None else [s.score for _, _, s in layout.slots() if s.card is not None]


def named_mass(layout) -> float:
    """Sum of the pyramid's card scores (0 for no layout): how surely a reading names it."""
    return float(sum(named_scores(layout)))


#: A layout whose slots' indices lie turned on average more likely than this (a classifier that
#: tells, ``Detections.upright``) is placed the wrong way round, however surely it is named.
TURNED_SLOTS = 0.5


def told_slots(reading) -> list[tuple[float, float]]:
    """(score, how likely its index stood upright) of each pyramid card of a ``FrameReading`` read
    from a placed corner whose classifier told (``FrameReading.slot_upright``; others left out)."""
    ups = reading.slot_upright
    if reading.layout is None or not ups:
        return []
    out = []
    for r, i, slot in reading.layout.slots():
        k = r * (r + 1) // 2 + i
        if slot.card is not None and k < len(ups) and not np.isnan(ups[k]):
            out.append((slot.score, ups[k]))
    return out


def way_round_mass(reading) -> float:
    """``named_mass`` of a ``FrameReading``'s layout, each pyramid card's score weighed by how likely
    its index stood upright (``told_slots``; cards whose classifier did not tell count in full)."""
    if reading.layout is None:
        return 0.0
    told = told_slots(reading)
    return named_mass(reading.layout) - sum(score * (1.0 - up) for score, up in told)


#: A reading with at least this many cards whose turn was told ...
TOLD_ENOUGH = 8
#: ... and this share of their named mass told upright lies the right way round: the other ways its
#: corners make a pyramid need not be named (synth_v2: of 70 fits named at their own angle and the
#: two other ways, each of the 41 told so was the surest named; both val sets read the same without
#: those namings, the fit's second looks 42 -> 32 ms a scene on average).
UPRIGHT_ENOUGH = 0.9


def told_upright(reading) -> bool:
    """Whether ``reading`` has ``TOLD_ENOUGH`` cards told and ``UPRIGHT_ENOUGH`` of its mass upright."""
    return len(told_slots(reading)) >= TOLD_ENOUGH and upright_share(reading) >= UPRIGHT_ENOUGH


def upright_share(reading) -> float:
    """``way_round_mass`` over ``named_mass``: 1 when nothing is told or every told index stood upright."""
    named = named_mass(reading.layout)
    return way_round_mass(reading) / named if named > 0 else 1.0


def slots_lie_turned(reading, at_least: int = 3) -> bool:
    """Whether a reading's slots' indices lie turned on average (``TURNED_SLOTS``), with at least
    ``at_least`` told: its lattice is placed the wrong way round."""
    told = told_slots(reading)
    return len(told) >= at_least and float(np.mean([up for _, up in told])) < TURNED_SLOTS
