"""Fakes for tests and evaluation without camera, renderer or model.

* ``synth_truth(rng, ...)``: the geometry of a dealt table (pyramid, waste, stock)
  seen by a tilted, rotated camera, as a truth dict in the format of
  ``tools/synth`` (``truth/NAME.json``: ``pyramid``, ``pyramid_codes``, ``waste``,
  ``labels`` with index-corner boxes, ``conditions``). No pixels are drawn.
* ``FakeDetector``: ``detect(image) -> Detections`` from such a truth (generated
  here or read from a rendered scene) plus controllable noise: box jitter,
  misses, misreads (with the true card among the alternatives), false boxes,
  and hands that hide or garble the corners under them.
* ``FakeFrameSource``: blank frames, so the pipeline can run on the fake.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from companion.cards import CARD_CODES, DECK, Card
from companion.vision.detections import Detections

CARD_W, CARD_H = 63.0, 88.0  # mm, a poker-size card
#: Index corner region in card coordinates (fraction of width/height), top-left one.
INDEX_BOX = (0.03, 0.03, 0.18, 0.27)


@dataclass(frozen=True)
class Camera:
    """Table plane (mm, origin at the pyramid's apex) -> image pixels."""

    tilt_deg: float = 0.0       # camera off vertical
    roll_deg: float = 0.0       # rotation of the whole layout
    card_width_px: float = 80.0  # at the layout's centre
    width: int = 1280
    height: int = 720
    center: tuple[float, float] = (0.0, 150.0)  # table point put at the image centre (mm)
    shift: tuple[float, float] = (0.0, 0.0)     # pixels
    focal: float = 1000.0

    def homography(self) -> np.ndarray:
        t, a = np.radians(self.tilt_deg), np.radians(self.roll_deg)
        rz = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
        rx = np.array([[1, 0, 0], [0, np.cos(t), -np.sin(t)], [0, np.sin(t), np.cos(t)]])
        r = rx @ rz
        dist = CARD_W * self.focal / self.card_width_px
        k = np.array([[self.focal, 0, self.width / 2 + self.shift[0]],
                      [0, self.focal, self.height / 2 + self.shift[1]], [0, 0, 1]])
        c = np.array([-self.center[0], -self.center[1], 0.0])
        # p_cam = R (p + c) + (0, 0, dist) for table points p = (x, y, 0)
        m = np.column_stack([r[:, 0], r[:, 1], r @ c + np.array([0, 0, dist])])
        h = k @ m
        return h / h[2, 2]

    def project(self, pts: np.ndarray) -> np.ndarray:
        h = self.homography()
        q = np.asarray(pts, float) @ h[:, :2].T + h[:, 2]
        return q[:, :2] / q[:, 2:3]


def _card_quad(x: float, y: float, angle_deg: float) -> np.ndarray:
    """Card outline TL, TR, BR, BL on the table for a card whose top-left is near (x, y)."""
    a = np.radians(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = np.array([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]], float)
    centre = np.array([CARD_W / 2, CARD_H / 2])
    return (local - centre) @ rot.T + centre + [x, y]


def _index_quads(quad: np.ndarray) -> dict[str, np.ndarray]:
    """Table quads of the two index corners of a card with outline ``quad``."""
    tl, tr, br, bl = quad
    ex, ey = tr - tl, bl - tl
    x0, y0, x1, y1 = INDEX_BOX
    out = {}
    for which, (fx0, fy0, fx1, fy1) in (("tl", (x0, y0, x1, y1)), ("br", (1 - x1, 1 - y1, 1 - x0, 1 - y0))):
        out[which] = np.array([tl + ex * fx0 + ey * fy0, tl + ex * fx1 + ey * fy0,
                               tl + ex * fx1 + ey * fy1, tl + ex * fx0 + ey * fy1])
    return out


def synth_truth(rng: np.random.Generator, *, rows: int = 7, inverted: bool = False,
                removed: int = 0, tilt_deg: Optional[float] = None, roll_deg: Optional[float] = None,
                card_width_px: Optional[float] = None, spacing_jitter: float = 0.04,
                waste_cards: int = 1, waste_piles: int = 1, stock: bool = True,
                width: int = 1280, height: int = 720, name: str = "fake") -> dict[str, Any]:
    """A random deal seen by a random camera, as a ``tools/synth`` truth dict (geometry only).

    ``removed`` cards are taken off the pyramid by legal-looking patterns (only
    uncovered cards, bottom rows first), so the rest keeps its slots.
    ``spacing_jitter`` is the per-card placement noise as a fraction of the card width.
    """
    tilt = float(rng.uniform(0, 45)) if tilt_deg is None else float(tilt_deg)
    roll = float(rng.uniform(-25, 25)) if roll_deg is None else float(roll_deg)
    gap = rng.uniform(0.03, 0.25) * CARD_W
    overlap = rng.uniform(0.3, 0.55) * CARD_H
    deck = list(rng.permutation(52))
    n_pyr = rows * (rows + 1) // 2
    # Slots and their cards.
    slots: list[list[dict]] = []
    present = np.ones(n_pyr, bool)
    order = [(r, i) for r in range(rows) for i in range(r + 1)]
    index = {ri: j for j, ri in enumerate(order)}
    removable = removed
    from companion.vision.slots import covering
    cov = covering(rows, inverted)
    over = [[m for m in range(n_pyr) if j in cov[m]] for j in range(n_pyr)]
    while removable > 0 and present.sum() > 1:
        # Only a card with nothing on it can go (bottom rows first; the wide rows of an inverted one).
        free = [j for j in range(n_pyr) if present[j] and not any(present[m] for m in over[j])
                and (inverted or j > 0)]
        if not free:
            break
        present[free[int(rng.integers(len(free)))]] = False
        removable -= 1
    for r in range(rows):
        row = []
        for i in range(r + 1):
            v = rows - 1 - r if inverted else r
            u = i - r / 2 + ((rows - 1) / 2 if inverted else 0.0)
            x = u * (CARD_W + gap) - CARD_W / 2 + rng.normal(0, spacing_jitter) * CARD_W
            y = v * overlap + rng.normal(0, spacing_jitter) * CARD_W
            quad = _card_quad(x, y, float(rng.normal(0, 2.5)))
            card = CARD_CODES[deck.pop()] if present[index[(r, i)]] else None
            row.append({"card": card, "table_quad": quad})
        slots.append(row)
    # Waste and stock below the pyramid: stock on the left, waste to its right.
    base_y = (rows - 1) * overlap + CARD_H + rng.uniform(0.25, 0.7) * CARD_H
    stock_x = -CARD_W * rng.uniform(1.6, 2.4)
    waste = []
    for p in range(waste_piles):
        x0 = stock_x + CARD_W * (1.3 + 1.3 * p) + rng.uniform(0, 0.3) * CARD_W
        cards = [CARD_CODES[deck.pop()] for _ in range(waste_cards)]
        quads = [_card_quad(x0 + k * 0.22 * CARD_W, base_y + rng.normal(0, 1.5), float(rng.normal(0, 3)))
                 for k in range(len(cards))]
        waste.append({"cards": cards, "table_quads": quads})
    cam = Camera(tilt, roll, card_width_px=float(card_width_px or rng.uniform(45, 90)),
                 width=width, height=height,
                 center=(0.0, (base_y + CARD_H) / 2 * 1.0),
                 shift=(float(rng.uniform(-0.05, 0.05) * width), float(rng.uniform(-0.03, 0.03) * height)))
    # Keep the whole table in the frame: zoom out until every card is inside.
    table = np.concatenate([s["table_quad"] for row in slots for s in row]
                           + [q for pile in waste for q in pile["table_quads"]])
    for _ in range(20):
        p = cam.project(table)
        if p.min() >= 2 and p[:, 0].max() <= width - 2 and p[:, 1].max() <= height - 2:
            break
        cam = replace(cam, card_width_px=cam.card_width_px * 0.92, shift=(cam.shift[0] * 0.7, cam.shift[1] * 0.7))
    return _truth_dict(name, cam, rows, inverted, slots, waste, stock, stock_x, base_y, removed)


def _truth_dict(name: str, cam: Camera, rows: int, inverted: bool, slots: list, waste: list, stock: bool,
                stock_x: float, base_y: float, removed: int) -> dict[str, Any]:
    labels: list[dict] = []
    n_index = {(r, i): (r, i) for r in range(rows) for i in range(r + 1)}
    pyramid = []

    def box(q: np.ndarray) -> list[float]:
        p = cam.project(q)
        return [float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()), float(p[:, 1].max())]

    def in_frame(b: list[float]) -> bool:
        return b[0] >= 0 and b[1] >= 0 and b[2] <= cam.width and b[3] <= cam.height

    for r, row in enumerate(slots):
        out_row = []
        for i, slot in enumerate(row):
            quad = slot["table_quad"]
            iq = _index_quads(quad)
            # The cards lying on this one: the next row (the previous one in an inverted pyramid).
            over = [(r - 1, j) for j in (i - 1, i)] if inverted else [(r + 1, j) for j in (i, i + 1)]
            covered = any(k in n_index and slots[k[0]][k[1]]["card"] is not None for k in over)
            corners = []
            for which in ("tl", "br"):
                b = box(iq[which])
                visible = slot["card"] is not None and (which == "tl" or not covered) and in_frame(b)
                corners.append({"which": which, "box": b, "visible": bool(visible), "in_frame": in_frame(b)})
                if visible:
                    labels.append({"cls": CARD_CODES.index(slot["card"]), "card": slot["card"], "box": b,
                                   "where": f"pyramid:{r}:{i}", "which": which})
            pq = cam.project(quad)
            out_row.append({"card": slot["card"], "quad": pq.tolist(), "center": pq.mean(0).tolist(),
                            "corners": corners})
        pyramid.append(out_row)
    waste_out = []
    for p, pile in enumerate(waste):
        for j, (code, q) in enumerate(zip(pile["cards"], pile["table_quads"])):
            iq = _index_quads(q)
            top = j == len(pile["cards"]) - 1
            for which in ("tl", "br") if top else ("tl",):
                b = box(iq[which])
                if in_frame(b):
                    labels.append({"cls": CARD_CODES.index(code), "card": code, "box": b,
                                   "where": f"waste:{p}:{j}", "which": which})
        waste_out.append({"cards": list(pile["cards"]), "top": pile["cards"][-1] if pile["cards"] else None,
                          "quad": cam.project(pile["table_quads"][-1]).tolist() if pile["cards"] else None})
    stock_quad = cam.project(_card_quad(stock_x, base_y, 0.0)).tolist() if stock else None
    return {
        "version": 1, "name": name, "width": cam.width, "height": cam.height, "form": "pyramid",
        "rows": rows, "inverted": inverted, "pyramid": pyramid,
        "pyramid_codes": [[s["card"] for s in row] for row in pyramid],
        "waste": waste_out, "stock": {"present": stock, "quad": stock_quad}, "loose": [],
        "labels": labels, "hands": [],
        "conditions": {"tilt_deg": cam.tilt_deg, "roll_deg": cam.roll_deg, "card_width_px": cam.card_width_px,
                       "light": "normal", "hands": 0, "partial": removed > 0, "removed": removed,
                       "waste_piles": len(waste), "source": "fake"},
    }


def load_truth(path: str | Path) -> dict[str, Any]:
    """Read a ``truth/NAME.json`` (from ``tools/synth`` or written from ``synth_truth``)."""
    from companion.errors import CompanionError
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise CompanionError(f"cannot read truth file {str(path)!r}: {exc}") from None
    if not isinstance(data, dict) or "labels" not in data or "pyramid" not in data:
        raise CompanionError(f"{str(path)!r} is not a scene truth file (needs 'pyramid' and 'labels')")
    return data


# --- noise -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Hand:
    """A hand over the table: a disc in pixels that hides the corners under it
    and garbles (misreads) those near its edge."""

    x: float
    y: float
    radius: float
    garble_margin: float = 0.35   # fraction of the radius beyond it where reads go wrong
    garble_rate: float = 0.5


@dataclass(frozen=True)
class Noise:
    """What the fake detector gets wrong, per index corner unless said otherwise."""

    jitter: float = 0.08         # box jitter, fraction of the box size (std)
    miss: float = 0.01           # probability a visible corner is not found
    misread: float = 0.005       # probability a found corner gets the wrong card
    false_boxes: float = 0.1     # expected false boxes per frame (Poisson)
    score_low: float = 0.75      # confidence of right reads ~ U(score_low, 0.99)
    hands: tuple[Hand, ...] = ()

    @classmethod
    def none(cls) -> "Noise":
        return cls(0.0, 0.0, 0.0, 0.0)

    @classmethod
    def realistic(cls) -> "Noise":
        """Roughly what a decent detector does on a clear frame."""
        return cls(0.08, 0.01, 0.005, 0.1)


def _confusable(code_index: int, rng: np.random.Generator) -> int:
    """A plausible misread: same rank other suit of the same colour, or a neighbouring rank."""
    card = DECK[code_index]
    if rng.random() < 0.5:
        twin = {"C": "S", "S": "C", "D": "H", "H": "D"}[card.suit]
        return Card(card.rank, twin).index
    rank = card.rank + (1 if rng.random() < 0.5 else -1)
    rank = 2 if rank < 1 else 12 if rank > 13 else rank
    return Card(rank, card.suit).index


def detections_from_truth(truth: dict[str, Any], noise: Noise, rng: np.random.Generator) -> Detections:
    """Detections a detector with the given ``noise`` would return on the scene ``truth``."""
    boxes, cls, conf, alt_c, alt_s = [], [], [], [], []
    for lab in truth["labels"]:
        b = np.array(lab["box"], float)
        c = int(lab["cls"])
        cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
        hidden, garbled = False, False
        for hand in noise.hands:
            d = np.hypot(cx - hand.x, cy - hand.y)
            if d < hand.radius:
                hidden = True
            elif d < hand.radius * (1 + hand.garble_margin) and rng.random() < hand.garble_rate:
                garbled = True
        if hidden or rng.random() < noise.miss:
            continue
        size = np.array([b[2] - b[0], b[3] - b[1]])
        if noise.jitter:
            shift = rng.normal(0, noise.jitter, 2) * size
            grow = 1 + rng.normal(0, noise.jitter / 2, 2)
            centre = np.array([cx, cy]) + shift
            half = size * grow / 2
            b = np.concatenate([centre - half, centre + half])
        score = float(rng.uniform(noise.score_low, 0.99))
        if garbled or rng.random() < noise.misread:
            wrong = _confusable(c, rng)
            wscore = float(rng.uniform(0.35, 0.7))
            alts = [(wrong, wscore), (c, float(rng.uniform(0.1, wscore))), (_confusable(c, rng), 0.05)]
        else:
            other = _confusable(c, rng)
            alts = [(c, score), (other, (1 - score) * 0.6), (_confusable(other, rng), (1 - score) * 0.2)]
        _append(boxes, cls, conf, alt_c, alt_s, b, alts)
    n_false = rng.poisson(noise.false_boxes) if noise.false_boxes else 0
    w, h = truth.get("width", 1280), truth.get("height", 720)
    sizes = [np.array(l["box"][2:]) - np.array(l["box"][:2]) for l in truth["labels"]] or [np.array([12.0, 24.0])]
    typical = np.median(np.array(sizes), 0)
    for _ in range(n_false):
        centre = rng.uniform([0, 0], [w, h])
        b = np.concatenate([centre - typical / 2, centre + typical / 2])
        c = int(rng.integers(52))
        s = float(rng.uniform(0.3, 0.6))
        _append(boxes, cls, conf, alt_c, alt_s, b, [(c, s), (_confusable(c, rng), s * 0.5), ((c + 13) % 52, 0.05)])
    if not boxes:
        return Detections.empty()
    return Detections(np.array(boxes, np.float32), np.array(cls, np.int64), np.array(conf, np.float32),
                      np.array(alt_c, np.int64), np.array(alt_s, np.float32))


def _append(boxes, cls, conf, alt_c, alt_s, b, alts) -> None:
    # Alternatives must be distinct cards, best first.
    seen, uniq = set(), []
    for c, s in sorted(alts, key=lambda t: -t[1]):
        if c not in seen:
            seen.add(c)
            uniq.append((c, s))
    while len(uniq) < 3:
        c = (uniq[-1][0] + 1) % 52
        while c in seen:
            c = (c + 1) % 52
        seen.add(c)
        uniq.append((c, 0.0))
    boxes.append(b)
    cls.append(uniq[0][0])
    conf.append(uniq[0][1])
    alt_c.append([c for c, _ in uniq[:3]])
    alt_s.append([s for _, s in uniq[:3]])


class FakeDetector:
    """A ``Detector`` reading a scene truth instead of pixels.

    ``truth`` is one truth dict, or a callable ``frame_number -> truth`` for a
    changing scene; ``noise`` likewise may be a callable ``frame_number -> Noise``
    (hands moving over the table). Each ``detect`` call advances the frame number.
    """

    def __init__(self, truth: dict[str, Any] | Callable[[int], dict[str, Any]],
                 noise: Noise | Callable[[int], Noise] = Noise.realistic(), seed: int = 0) -> None:
        self._truth = truth
        self._noise = noise
        self.rng = np.random.default_rng(seed)
        self.frame = 0

    def detect(self, image_bgr: Optional[np.ndarray] = None) -> Detections:
        t = self._truth(self.frame) if callable(self._truth) else self._truth
        n = self._noise(self.frame) if callable(self._noise) else self._noise
        self.frame += 1
        return detections_from_truth(t, n, self.rng)


class FakeFrameSource:
    """``count`` blank frames (BGR, ``height`` x ``width``): drives a pipeline fed by a fake detector."""

    name = "fake"

    def __init__(self, count: int, width: int = 1280, height: int = 720, fps: float = 30.0) -> None:
        self.count, self.width, self.height, self.fps = count, width, height, fps
        self._frame = np.zeros((height, width, 3), np.uint8)

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        for i in range(self.count):
            yield i, self._frame

    def close(self) -> None:
        pass

    def __enter__(self) -> "FakeFrameSource":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def hand_path(rng: np.random.Generator, truth: dict[str, Any], frames: int, radius_cards: float = 1.5
              ) -> list[Hand]:
    """A hand moving in a straight line across the pyramid over ``frames`` frames."""
    quads = [np.array(s["quad"]) for row in truth["pyramid"] for s in row]
    pts = np.concatenate(quads)
    lo, hi = pts.min(0), pts.max(0)
    width = np.median([np.linalg.norm(q[1] - q[0]) for q in quads])
    start = rng.uniform(lo, hi)
    end = rng.uniform(lo, hi)
    radius = radius_cards * width * rng.uniform(0.7, 1.3)
    return [Hand(*(start + (end - start) * t), radius) for t in np.linspace(0, 1, max(frames, 1))]


def hands_over_table(rng: np.random.Generator, truth: dict[str, Any], frames: int, quiet: float = 0.4,
                     base: Noise = Noise.realistic()) -> list[Noise]:
    """Per-frame noise for a static table: quiet spells and hands crossing the pyramid
    (each crossing 8..60 frames, hiding the corners under the hand and garbling those at its edge,
    with more false boxes while a hand is in view)."""
    noises: list[Noise] = []
    while len(noises) < frames:
        if rng.random() < quiet:
            noises += [base] * int(rng.integers(5, 40))
        else:
            path = hand_path(rng, truth, int(rng.integers(8, 60)))
            noises += [replace(base, false_boxes=base.false_boxes + 0.2, hands=(h,)) for h in path]
    return noises[:frames]
