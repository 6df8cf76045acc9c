"""Frames of a whole game as a webcam sees them, and the labels the detector should find in each.

One ``GameCamera`` per game: a held-out deck, a table, slot positions and a camera that stay fixed
(``tools.synth.scene.build_layout`` gives the same positions for every spec from one generator seed).
Per table (a spec) the card pixels and the owner map are drawn once and cached; per frame the hand
(``tools.synth.look.draw_hand``, drawn at quarter size), lighting drift, camera shake, motion blur and
sensor noise are added. Labels (the index corners at least ``VISIBLE_MIN`` seen, as in
``tools/synth``) are measured on a half-size owner map with the hand's mask, so truth-only runs
(``pixels=False``, for the fake detector) give exactly the labels of the pixel runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

import cv2
import numpy as np

from companion.cards import Card
from tools.synth import VISIBLE_MIN, look
from tools.synth.scene import Canvas, build_layout, camera_homography, project, shrink, sub_quad

SIZE = (960, 540)
SHADOW = 0.3


def held_out_decks() -> list[str]:
    from tools.synth.writer import svg_families
    return [d for fam in svg_families("val").values() for d in fam]


@dataclass
class Table:
    """One spec drawn: the image (or None), half-size owner map, and the face-up corners."""

    image: Optional[np.ndarray]
    owner: np.ndarray                       # half size, -1 background, else object number
    #: (card index, full-size quad, half-size pixels it shows, its area in half-size pixels)
    corners: list[tuple[int, np.ndarray, np.ndarray, int]]
    places: dict[tuple, np.ndarray]         # place -> image centre (full size)


class GameCamera:
    def __init__(self, seed: int, deck: Optional[str] = None, size: tuple[int, int] = SIZE,
                 pixels: bool = True) -> None:
        from tools.synth.writer import svg_deck
        self.seed = seed
        self.size = size
        self.pixels = pixels
        decks = held_out_decks()
        self.deck_name = deck or decks[seed % len(decks)]
        self.deck = svg_deck(self.deck_name)
        self._tables: dict[str, Table] = {}
        rng = np.random.default_rng([seed, 4242])
        self.look_rng_seed = int(rng.integers(2 ** 31))
        # a camera that frames the whole table with cards big enough to read
        probe = {"form": "pyramid", "pyramid": [[None] * (r + 1) for r in range(7)], "waste": [[]], "stock": 24}
        for attempt in range(50):
            g_cam = np.random.default_rng([seed, 7, attempt])
            lay = build_layout(self._g_layout(), self.deck.aspect, self.deck.index_box, probe)
            hm, cam = camera_homography(g_cam, np.concatenate(lay["anchors"]), size, False)
            card_w = float(np.linalg.norm(project(hm, lay["slots"][0][0][1][:2])[1] - project(hm, lay["slots"][0][0][1][:2])[0]))
            if not cam["partial_view"] and cam["tilt_deg"] < 32 and card_w >= size[0] * 0.06:
                break
        self.hm, self.cam, self.card_w = hm, cam, card_w
        self.bg_kind = ""

    def _g_layout(self) -> np.random.Generator:
        return np.random.default_rng([self.seed, 11])

    # --- one table ---------------------------------------------------------------------------
    def table(self, spec: dict) -> Table:
        key = json.dumps(spec, sort_keys=True)
        t = self._tables.get(key)
        if t is None:
            if len(self._tables) > 64:
                self._tables.clear()
            t = self._tables[key] = self._draw(spec)
        return t

    def _draw(self, spec: dict) -> Table:
        w, h = self.size
        lay = build_layout(self._g_layout(), self.deck.aspect, self.deck.index_box, spec)
        objects: list[tuple[Optional[str], np.ndarray]] = []  # (code or None for a back, image quad)
        for r, row in enumerate(lay["slots"]):
            for i, (code, plane) in enumerate(row):
                if code is not None:
                    objects.append((code, project(self.hm, plane)))
        for plane in lay["stock"]:
            objects.append((None, project(self.hm, plane)))
        for pile in lay["waste"]:
            for code, plane in pile[-6:]:  # deeper cards are hidden under these
                objects.append((code, project(self.hm, plane)))
        places: dict[tuple, np.ndarray] = {}
        for r, row in enumerate(lay["slots"]):
            for i, (_, plane) in enumerate(row):
                places[("slot", r, i)] = project(self.hm, plane).mean(0)
        stock_plane = lay["anchors"][sum(len(r) for r in lay["slots"])]
        places[("stock",)] = project(self.hm, stock_plane).mean(0)
        places[("waste",)] = project(self.hm, lay["anchors"][sum(len(r) for r in lay["slots"]) + 1]).mean(0)
        owner = np.full((h // 2, w // 2), -1, np.int32)
        for k, (_, quad) in enumerate(objects):
            cv2.fillConvexPoly(owner, np.round(quad * 2).astype(np.int32), k, cv2.LINE_8, shift=2)
        ib = self.deck.index_box
        boxes = (ib, (1 - ib[2], 1 - ib[3], 1 - ib[0], 1 - ib[1]))
        corners = []
        for k, (code, quad) in enumerate(objects):
            if code is None:
                continue
            plane = _plane_of(lay, code)
            for frac in boxes:
                cq = project(self.hm, sub_quad(plane, frac))
                m = np.zeros_like(owner, np.uint8)
                cv2.fillConvexPoly(m, np.round(cq * 2).astype(np.int32), 1, cv2.LINE_8, shift=2)
                area = int(m.sum())
                if area == 0:
                    continue
                own = np.flatnonzero((m.ravel() > 0) & (owner.ravel() == k))
                if len(own) < VISIBLE_MIN * area:
                    continue
                corners.append((Card.parse(code).index, cq, own, area))
        image = self._paint(objects) if self.pixels else None
        return Table(image, owner, corners, places)

    def _paint(self, objects: list[tuple[Optional[str], np.ndarray]]) -> np.ndarray:
        w, h = self.size
        rng = np.random.default_rng(self.look_rng_seed)
        bg, self.bg_kind = look.background(rng, h, w)
        canvas = Canvas(bg)
        pv = look.print_variation(rng)
        back = self.deck.back if self.deck.back is not None else np.full((400, 300, 4), 200, np.uint8)
        off = rng.normal(0, 1, 2)
        shadow = (off / max(1e-6, float(np.linalg.norm(off))) * self.card_w * 0.03, self.card_w * 0.04, SHADOW)
        for k, (code, quad) in enumerate(objects):
            tex = back if code is None else self.deck.faces[code]
            card_rng = np.random.default_rng([self.look_rng_seed, k if code is None else 100 + Card.parse(code).index])
            canvas.paste(look.wear_card(card_rng, shrink(tex, quad), pv), quad, k, shadow)
        return canvas.img

    # --- one frame ---------------------------------------------------------------------------
    def hand(self, plan_hand: tuple, seed: int, table: Table) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
        """The hand's colour and alpha at quarter size, and its fingertip target (full size)."""
        a, b, t = plan_hand
        pa, pb = self._point(a, table, seed), self._point(b, table, seed)
        target = pa + (pb - pa) * t
        w, h = self.size
        rng = np.random.default_rng([self.seed, seed])
        colour, alpha = look.draw_hand(rng, h // 4, w // 4, (float(target[0]) / 4, float(target[1]) / 4),
                                       self.card_w * 1.6 / 4)
        return colour, alpha, (float(target[0]), float(target[1]))

    def _point(self, place: tuple, table: Table, seed: int) -> np.ndarray:
        if place[0] != "edge":
            return table.places[place]
        # off the frame, on the side the hand comes from (draw_hand's first draw picks the edge)
        inner = table.places[tuple(place[1:])]
        edge = np.random.default_rng([self.seed, seed]).choice(["bottom", "bottom", "right", "left", "top"])
        w, h = self.size
        x, y = inner
        return np.array({"bottom": (x, h * 1.15), "top": (x, -h * 0.15), "left": (-w * 0.1, y),
                         "right": (w * 1.1, y)}[str(edge)])

    def labels(self, table: Table, alpha: Optional[np.ndarray], shake: np.ndarray) -> list[list[float]]:
        """``[cls, x1, y1, x2, y2]`` per visible index corner, after the shake (2x3 affine)."""
        w, h = self.size
        hand = None
        if alpha is not None:
            hand = cv2.resize(alpha, (w // 2, h // 2), interpolation=cv2.INTER_LINEAR).ravel() > 0.4
        out = []
        for cls, quad, own, area in table.corners:
            seen = len(own) if hand is None else int((~hand[own]).sum())
            if seen < VISIBLE_MIN * area:
                continue
            q = quad @ shake[:, :2].T + shake[:, 2]
            x1, y1 = np.maximum(q.min(0), 0)
            x2, y2 = np.minimum(q.max(0), (w, h))
            if x2 - x1 >= 2 and y2 - y1 >= 2:
                out.append([cls, round(float(x1), 1), round(float(y1), 1), round(float(x2), 1), round(float(y2), 1)])
        return out

    def image(self, table: Table, hand: Optional[tuple[np.ndarray, np.ndarray]], shake: np.ndarray,
              gain: float, tilt: tuple[float, float], blur_px: float, blur_angle: float,
              rng: np.random.Generator, noise: float = 2.0) -> np.ndarray:
        assert table.image is not None
        w, h = self.size
        img = table.image.copy()
        if hand is not None:
            colour, alpha = hand
            a = cv2.resize(alpha, (w, h), interpolation=cv2.INTER_LINEAR)
            c = cv2.resize(colour, (w, h), interpolation=cv2.INTER_LINEAR)
            sh = cv2.GaussianBlur(np.roll(a, (int(self.card_w * 0.1), int(self.card_w * 0.08)), (0, 1)), (0, 0), 4)
            img *= (1 - 0.35 * sh)[:, :, None]
            img = img * (1 - a[:, :, None]) + c * a[:, :, None]
        # lighting drift: a slowly changing gain and a gentle gradient
        yy = np.linspace(-0.5, 0.5, h, dtype=np.float32)[:, None]
        xx = np.linspace(-0.5, 0.5, w, dtype=np.float32)[None, :]
        img *= (gain * (1 + tilt[0] * xx + tilt[1] * yy))[:, :, None]
        if np.any(shake != np.array([[1, 0, 0], [0, 1, 0]])):
            img = cv2.warpAffine(img, shake, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        if blur_px >= 1.5:
            k = int(np.ceil(blur_px)) | 1
            kernel = np.zeros((k, k), np.float32)
            kernel[k // 2, :] = 1
            rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), blur_angle, 1.0)
            kernel = cv2.warpAffine(kernel, rot, (k, k))
            img = cv2.filter2D(img, -1, kernel / max(1e-6, float(kernel.sum())))
        if noise > 0:
            img += rng.normal(0, noise, (h, w, 1)).astype(np.float32)
        return np.clip(img, 0, 255).astype(np.uint8)


def _plane_of(lay: dict, code: str) -> np.ndarray:
    for row in lay["slots"]:
        for c, plane in row:
            if c == code:
                return plane
    for pile in lay["waste"]:
        for c, plane in pile:
            if c == code:
                return plane
    raise KeyError(code)


def shake_matrix(dx: float, dy: float, angle_deg: float, centre: tuple[float, float]) -> np.ndarray:
    m = cv2.getRotationMatrix2D(centre, angle_deg, 1.0)
    m[:, 2] += (dx, dy)
    return m
