"""Procedurally drawn card faces: many fonts, vector suit signs, index layouts and inks.

A procedural deck is fully defined by the generator it is given: ``make_deck(rng, source)`` takes
every style choice from ``rng`` (fonts, suit-sign shapes, sizes, gaps, inks, paper, pips), so the
same seed gives the same deck, byte for byte. ``source`` says what a split may draw from: its rank
fonts, its suit-glyph fonts and its band of vector-shape parameters (``ProcSource``). Train and val
sources share no font file and no shape parameter value (``shape_param``: val draws each parameter
from the middle fifth of its range, train from the rest), so the val decks measure how well a model
reads index styles it never saw.

Suit signs come either from a font's four glyphs (U+2660/3/5/6) or from vector shapes with
randomised proportions (``suit_mask``): a heart from two lobes and a tip, a spade from an inverted
heart and a flared stem, a club from three lobes and a stem, a diamond as a super-ellipse. Glyph and
shape renders are cached (``lru_cache``): a deck builds in a few tens of ms.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from companion.cards import CARD_CODES, Card
from tools.synth.art import ART_WIDTH, DeckArt

# SYNTH_FONT_DIRS (os.pathsep list) is searched first: fonts carried to a machine without them
FONT_DIRS = [Path(d) for d in os.environ.get("SYNTH_FONT_DIRS", "").split(os.pathsep) if d] + [Path("/usr/share/fonts")]
SUIT_CHARS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
RANK_TEXT = {1: "A", 10: "10", 11: "J", 12: "Q", 13: "K"}
# pip centres (fractions of the pip area) for 2..10
PIPS = {
    2: [(0.5, 0.0), (0.5, 1.0)],
    3: [(0.5, 0.0), (0.5, 0.5), (0.5, 1.0)],
    4: [(0, 0), (1, 0), (0, 1), (1, 1)],
    5: [(0, 0), (1, 0), (0.5, 0.5), (0, 1), (1, 1)],
    6: [(0, 0), (1, 0), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    7: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    8: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0.5, 0.75), (0, 1), (1, 1)],
    9: [(0, 0), (1, 0), (0, 1 / 3), (1, 1 / 3), (0.5, 0.5), (0, 2 / 3), (1, 2 / 3), (0, 1), (1, 1)],
    10: [(0, 0), (1, 0), (0.5, 1 / 6), (0, 1 / 3), (1, 1 / 3), (0, 2 / 3), (1, 2 / 3), (0.5, 5 / 6),
         (0, 1), (1, 1)],
}
FALLBACK_FONT = "DejaVuSans-Bold"   # fonts-dejavu-core: always installed
# Vector suit-sign parameters, in units of the sign's width. Each range is split between the splits
# by ``shape_param``: val takes the middle fifth, train the rest.
SHAPE_RANGES: dict[str, tuple[float, float]] = {
    "heart_lobe": (0.23, 0.31),     # lobe radius: small = deep notch, large = round top
    "heart_tip": (0.50, 0.95),      # tip depth below the lobe centres: small = squat heart
    "spade_lobe": (0.22, 0.30),
    "spade_tip": (0.55, 1.05),
    "stem_top": (0.03, 0.13),       # stem width where it leaves the body
    "stem_base": (0.18, 0.50),      # stem width at its foot
    "stem_len": (0.22, 0.48),       # stem length below the lobe centres
    "stem_flare": (1.0, 3.2),       # 1 = straight sides, larger = concave, trumpet-like foot
    "club_lobe": (0.20, 0.28),
    "club_top": (0.22, 0.40),       # height of the top lobe's centre above the side lobes
    "club_side_y": (-0.04, 0.10),   # side lobes slightly lower or higher than the centre line
    "diamond_aspect": (1.12, 1.62),
    "diamond_round": (0.72, 1.45),  # super-ellipse exponent: <1 concave sides, >1 bulging sides
}
VAL_BAND = (0.4, 0.6)


@dataclass(frozen=True)
class ProcSource:
    """What the decks of one split may be drawn from (see datasets/decks.json "procedural")."""

    rank_fonts: tuple[str, ...]
    suit_fonts: tuple[str, ...]
    band: str  # "train" or "val": which part of every SHAPE_RANGES parameter range

    def __post_init__(self):
        if self.band not in ("train", "val"):
            raise ValueError(f"unknown shape band {self.band!r} (use 'train' or 'val')")


# ---------------------------------------------------------------------------------------- fonts
@lru_cache(maxsize=None)
def font_path(stem: str) -> Path | None:
    for base in FONT_DIRS:
        for ext in (".ttf", ".otf"):
            hits = sorted(base.rglob(stem + ext))
            if hits:
                return hits[0]
    return None


def available_fonts(stems) -> list[str]:
    return [s for s in stems if font_path(s) is not None]


@lru_cache(maxsize=None)
def has_suit_glyphs(stem: str) -> bool:
    """Whether a font maps all four suit code points (checked in its cmap with fontTools when
    present, else by PIL drawing something for each)."""
    path = font_path(stem)
    if path is None:
        return False
    try:
        from fontTools.ttLib import TTFont
    except ImportError:
        from PIL import ImageFont
        f = ImageFont.truetype(str(path), 32)
        return all(f.getmask(ch).getbbox() for ch in SUIT_CHARS.values())
    cmap = TTFont(str(path), lazy=True).getBestCmap() or {}
    return all(ord(ch) in cmap for ch in SUIT_CHARS.values())


@lru_cache(maxsize=256)
def _font(stem: str, size: int):
    from PIL import ImageFont
    path = font_path(stem)
    if path is None:
        raise FileNotFoundError(f"font {stem!r} not installed (see README: fonts-dejavu-core etc.)")
    return ImageFont.truetype(str(path), size)


@lru_cache(maxsize=4096)
def text_mask(stem: str, text: str, size: int, stroke: int = 0) -> np.ndarray:
    """Coverage (uint8, cropped to the ink) of ``text`` in a font; ``stroke`` px emboldens."""
    from PIL import Image, ImageDraw
    font = _font(stem, size)
    pad = 4 + stroke
    l, t, r, b = font.getbbox(text, stroke_width=stroke)
    img = Image.new("L", (r - l + 2 * pad, b - t + 2 * pad), 0)
    ImageDraw.Draw(img).text((pad - l, pad - t), text, font=font, fill=255, stroke_width=stroke,
                             stroke_fill=255)
    return _crop(np.array(img))


def _crop(a: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(a > 8)
    if len(xs) == 0:
        return np.zeros((1, 1), np.uint8)
    return np.ascontiguousarray(a[ys.min():ys.max() + 1, xs.min():xs.max() + 1])


def _resize(a: np.ndarray, w: int, h: int) -> np.ndarray:
    from PIL import Image
    return np.array(Image.fromarray(a).resize((max(1, w), max(1, h)), Image.LANCZOS))


def _height(a: np.ndarray, h: int) -> np.ndarray:
    return _resize(a, round(a.shape[1] * h / a.shape[0]), h)


# ------------------------------------------------------------------------------- vector suits
def shape_param(rng: np.random.Generator, name: str, band: str) -> float:
    """One vector-shape parameter: val from the middle fifth of its range, train from the rest,
    so no val value ever occurs in train."""
    lo, hi = SHAPE_RANGES[name]
    a, b = VAL_BAND
    if band == "val":
        u = rng.uniform(a, b)
    else:
        u = rng.uniform(0.0, 1.0 - (b - a))
        u = u if u < a else u + (b - a)
    return float(lo + u * (hi - lo))


def shape_params(rng: np.random.Generator, band: str) -> dict[str, tuple[float, ...]]:
    p = {k: shape_param(rng, k, band) for k in SHAPE_RANGES}
    return {
        "H": (p["heart_lobe"], p["heart_tip"]),
        "S": (p["spade_lobe"], p["spade_tip"], p["stem_top"], p["stem_base"], p["stem_len"], p["stem_flare"]),
        "C": (p["club_lobe"], p["club_top"], p["club_side_y"], p["stem_top"], p["stem_base"] * 0.9,
              p["stem_len"] * 0.95, p["stem_flare"]),
        "D": (p["diamond_aspect"], p["diamond_round"]),
    }


def _tangent(px: float, py: float, cx: float, cy: float, r: float, outer_sign: float) -> tuple[float, float]:
    """Tangent point on circle (c, r) seen from p, on the side of ``outer_sign`` (x)."""
    vx, vy = cx - px, cy - py
    d = max(float(np.hypot(vx, vy)), r + 1e-6)
    th = np.arcsin(r / d)
    best = None
    for s in (1, -1):
        c, sn = np.cos(s * th), np.sin(s * th)
        ux, uy = (vx * c - vy * sn) / d, (vx * sn + vy * c) / d
        t = d * np.cos(th)
        pt = (px + ux * t, py + uy * t)
        if best is None or pt[0] * outer_sign > best[0] * outer_sign:
            best = pt
    return best


def _stem(top_w: float, base_w: float, y0: float, y1: float, flare: float) -> list[tuple[float, float]]:
    ts = np.linspace(0, 1, 12)
    half = top_w / 2 + (base_w / 2 - top_w / 2) * ts ** flare
    ys = y0 + (y1 - y0) * ts
    right = list(zip(half, ys))
    left = [(-x, y) for x, y in reversed(right)]
    return right + left


@lru_cache(maxsize=2048)
def suit_mask(suit: str, params: tuple[float, ...], height: int) -> np.ndarray:
    """Coverage (uint8, cropped) of a vector suit sign ``height`` px tall."""
    from PIL import Image, ImageDraw
    ss = 3 * max(height, 16)  # supersampled drawing units per sign width
    size = int(ss * 2.2)
    img = Image.new("L", (size, size), 0)
    d = ImageDraw.Draw(img)
    o = size / 2

    def P(x: float, y: float) -> tuple[float, float]:
        return (o + x * ss, o + y * ss)

    def circle(x: float, y: float, r: float) -> None:
        d.ellipse([*P(x - r, y - r), *P(x + r, y + r)], fill=255)

    def poly(pts) -> None:
        d.polygon([P(x, y) for x, y in pts], fill=255)

    if suit in ("H", "S"):
        lobe, tip = params[0], params[1]
        c = 0.5 - lobe
        sign = 1.0 if suit == "H" else -1.0  # the spade is the heart upside down
        tl = _tangent(0, tip, -c, 0, lobe, -1)
        tr = _tangent(0, tip, c, 0, lobe, 1)
        for x in (-c, c):
            circle(x, 0, lobe)
        poly([(0, sign * tip), (tl[0], sign * tl[1]), (-c, 0), (c, 0), (tr[0], sign * tr[1])])
        if suit == "S":
            top_w, base_w, length, flare = params[2:6]
            poly(_stem(top_w, base_w, 0.0, lobe + length * 0.6, flare))
    elif suit == "C":
        lobe, top, side_y, top_w, base_w, length, flare = params
        side = 0.5 - lobe
        circle(-side, side_y, lobe)
        circle(side, side_y, lobe)
        circle(0, -top, lobe)
        circle(0, -top * 0.3, lobe * 0.7)  # fills the middle between the three lobes
        poly(_stem(top_w, base_w, -top * 0.3, lobe + length * 0.6, flare))
    elif suit == "D":
        aspect, p = params
        t = np.linspace(0, 2 * np.pi, 96, endpoint=False)
        ct, st = np.cos(t), np.sin(t)
        xs = 0.5 * np.sign(ct) * np.abs(ct) ** (2 / p)
        ys = aspect / 2 * np.sign(st) * np.abs(st) ** (2 / p)
        poly(list(zip(xs, ys)))
    else:
        raise ValueError(f"unknown suit {suit!r} (use C, D, H or S)")
    return _height(_crop(np.array(img)), height)


# ------------------------------------------------------------------------------------ drawing
def _stamp(img: np.ndarray, mask: np.ndarray, x: int, y: int, colour) -> None:
    """Blend ``colour`` into RGBA ``img`` through coverage ``mask`` at (x, y), clipped to the image."""
    h, w = mask.shape
    H, W = img.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x1 <= x0 or y1 <= y0:
        return
    a = mask[y0 - y:y1 - y, x0 - x:x1 - x].astype(np.float32)[:, :, None] / 255.0
    region = img[y0:y1, x0:x1, :3].astype(np.float32)
    img[y0:y1, x0:x1, :3] = (region * (1 - a) + np.asarray(colour[:3], np.float32) * a + 0.5).astype(np.uint8)


def _dilate(mask: np.ndarray, px: int) -> np.ndarray:
    from PIL import Image, ImageFilter
    padded = np.pad(mask, px + 1)
    return np.array(Image.fromarray(padded).filter(ImageFilter.MaxFilter(2 * px + 1)))


def _mix(a, b, t: float):
    return tuple(float(x) + (float(y) - float(x)) * t for x, y in zip(a, b))


def _inks(rng: np.random.Generator) -> dict[str, tuple[int, int, int]]:
    # reds from orange-red to crimson, blacks from pure black to dark blue or grey
    red = _mix((228, 62, 22), (172, 8, 48), rng.uniform()) + rng.normal(0, 8, 3)
    black = np.array([12.0, 12, 14])
    r = rng.random()
    if r < 0.25:
        black = np.array(_mix(black, (22, 32, 92), rng.uniform(0.3, 1.0)))
    elif r < 0.45:
        black = np.array(_mix(black, (70, 70, 74), rng.uniform(0.3, 1.0)))
    black = black + rng.normal(0, 4, 3)
    ink = {"H": red, "D": red, "S": black, "C": black}
    if rng.random() < 0.12:  # four-colour deck: green clubs, blue or orange diamonds
        ink["C"] = np.array([rng.uniform(0, 40), rng.uniform(110, 155), rng.uniform(30, 80)])
        ink["D"] = (np.array([rng.uniform(10, 40), rng.uniform(50, 90), rng.uniform(170, 215)])
                    if rng.random() < 0.6 else
                    np.array([rng.uniform(225, 250), rng.uniform(105, 145), rng.uniform(0, 30)]))
    return {k: tuple(int(v) for v in np.clip(c, 0, 255)) for k, c in ink.items()}


def _ten_mask(stem: str, size: int, stroke: int, style: str, rng_kern: float) -> np.ndarray:
    """``10`` as set, squeezed narrow, tightly kerned, or as an 'IO'-like bar and narrow ring."""
    full = text_mask(stem, "10", size, stroke)
    if style == "narrow":
        return _resize(full, int(full.shape[1] * (0.55 + 0.25 * rng_kern)), full.shape[0])
    one, zero = text_mask(stem, "1", size, stroke), text_mask(stem, "0", size, stroke)
    h = max(one.shape[0], zero.shape[0])
    if style == "io":
        bar_w = max(2, int(round(zero.shape[1] * 0.2)))
        one = np.full((h, bar_w), 255, np.uint8)
        zero = _resize(zero, int(zero.shape[1] * (0.6 + 0.2 * rng_kern)), h)
    gap = int(round(size * (-0.04 + 0.08 * rng_kern)))
    if style != "tight":
        gap = max(gap, 1)
    w = one.shape[1] + max(gap, -one.shape[1] // 2) + zero.shape[1]
    out = np.zeros((h, max(w, zero.shape[1])), np.uint8)
    out[h - one.shape[0]:, :one.shape[1]] = one
    x = out.shape[1] - zero.shape[1]
    out[h - zero.shape[0]:, x:] = np.maximum(out[h - zero.shape[0]:, x:], zero)
    return out


def make_deck(rng: np.random.Generator, source: ProcSource, name: str | None = None) -> DeckArt:
    """Draw a whole procedural deck; every style choice comes from ``rng``."""
    from PIL import Image, ImageDraw

    rank_fonts = available_fonts(source.rank_fonts) or [FALLBACK_FONT]
    suit_fonts = [f for f in available_fonts(source.suit_fonts) if has_suit_glyphs(f)]
    w = ART_WIDTH
    h = int(round(w * rng.uniform(1.38, 1.56)))
    rank_font = rank_fonts[int(rng.integers(len(rank_fonts)))]
    court_font = rank_fonts[int(rng.integers(len(rank_fonts)))] if rng.random() < 0.3 else rank_font
    glyph_suits = bool(suit_fonts) and rng.random() < 0.45
    suit_font = suit_fonts[int(rng.integers(len(suit_fonts)))] if glyph_suits else None
    shapes = shape_params(rng, source.band)
    ink = _inks(rng)
    paper = tuple(int(v) for v in np.clip(rng.normal([246, 246, 243], 6), 215, 255))

    # index geometry: rank cap height, suit sign height, gap, inset, alignment
    rank_px = int(round(w * rng.uniform(0.095, 0.17)))   # cap height of the rank, px
    suit_px = int(round(rank_px * rng.uniform(0.62, 1.0)))
    stroke = int(rng.choice([0, 0, 0, 1, 2]) * rank_px / 40)
    ten_style = ["set", "narrow", "tight", "io"][int(rng.choice(4, p=[0.4, 0.25, 0.2, 0.15]))]
    kern = float(rng.uniform())
    gap = int(round(rank_px * rng.uniform(0.06, 0.35)))
    far_in = rng.random() < 0.2
    margin_x = int(round(w * (rng.uniform(0.08, 0.14) if far_in else rng.uniform(0.025, 0.08))))
    margin_y = int(round(h * (rng.uniform(0.05, 0.09) if far_in else rng.uniform(0.02, 0.05))))
    centred = rng.random() < 0.75
    outline = rng.random() < 0.12
    radius = int(w * rng.uniform(0.03, 0.09))
    while radius > 4 and (radius - margin_x) ** 2 + (radius - margin_y) ** 2 > (radius - 4) ** 2 \
            and margin_x < radius and margin_y < radius:
        radius -= 1  # keep the index clear of the rounded corner's outline
    border = rng.random() < 0.5
    pip_px = int(round(w * rng.uniform(0.12, 0.19)))

    def rank_mask(rank: int) -> np.ndarray:
        font = court_font if rank in (1, 11, 12, 13) else rank_font
        if rank == 10:
            m = _ten_mask(font, 64, int(stroke * 64 / max(rank_px, 1)), ten_style, kern)
        else:
            m = text_mask(font, RANK_TEXT.get(rank, str(rank)), 64, int(stroke * 64 / max(rank_px, 1)))
        # scale so digits/capitals share one cap height (Q's tail may hang below)
        cap = text_mask(font, "K", 64, int(stroke * 64 / max(rank_px, 1))).shape[0]
        return _height(m, max(4, int(round(m.shape[0] * rank_px / cap))))

    @lru_cache(maxsize=None)
    def sign_mask(suit: str, px: int) -> np.ndarray:
        if suit_font is not None:
            m = text_mask(suit_font, SUIT_CHARS[suit], max(8, px * 2), 0)
            return _height(m, px)
        return suit_mask(suit, shapes[suit], px)

    ranks = {r: rank_mask(r) for r in range(1, 14)}
    signs = {s: sign_mask(s, suit_px) for s in SUIT_CHARS}
    # an outlined sign is the sign over a dilated, darker copy (which is 2 * (o + 1) px larger)
    o = max(1, suit_px // 14)
    signs_out = {s: _dilate(m, o) for s, m in signs.items()} if outline else signs
    rank_h = max(m.shape[0] for m in ranks.values())
    col_w = max(max(m.shape[1] for m in ranks.values()), max(m.shape[1] for m in signs_out.values()))
    block_h = rank_h + gap + max(m.shape[0] for m in signs_out.values())
    ace_px = int(pip_px * rng.uniform(1.6, 2.6))

    base = np.zeros((h, w, 4), np.uint8)
    card = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    ImageDraw.Draw(card).rounded_rectangle([0, 0, w - 1, h - 1], radius=radius, fill=paper + (255,),
                                           outline=(120, 120, 120, 255) if border else None, width=2)
    base[:] = np.array(card)
    court_seed = int(rng.integers(2**31))

    def render(code: str) -> np.ndarray:
        c = Card.parse(code)
        colour = ink[c.suit]
        block = np.zeros((block_h, col_w, 4), np.uint8)
        block[:, :, :3] = paper
        block[:, :, 3] = 0
        rm = ranks[c.rank]
        rx = (col_w - rm.shape[1]) // 2 if centred else 0
        _stamp_block(block, rm, rx, 0, colour)  # tops aligned: Q's tail may hang below
        sm = signs[c.suit]
        if outline:
            om = signs_out[c.suit]
            sx = (col_w - om.shape[1]) // 2 if centred else max(0, (rm.shape[1] - om.shape[1]) // 2)
            _stamp_block(block, om, sx, rank_h + gap, _darker(colour))
            _stamp_block(block, sm, sx + (om.shape[1] - sm.shape[1]) // 2,
                         rank_h + gap + (om.shape[0] - sm.shape[0]) // 2, colour)
        else:
            sx = (col_w - sm.shape[1]) // 2 if centred else max(0, (rm.shape[1] - sm.shape[1]) // 2)
            _stamp_block(block, sm, sx, rank_h + gap, colour)
        img = base.copy()
        _over(img, block, margin_x, margin_y)
        _over(img, block[::-1, ::-1], w - margin_x - col_w, h - margin_y - block_h)
        left = min(margin_x + col_w + w * 0.05, w * 0.4)
        top = margin_y + h * 0.04
        if c.rank >= 11:
            _court(img, c, left, top, w, h, colour, court_seed)
        elif c.rank == 1:
            m = sign_mask(c.suit, ace_px)
            _stamp(img, m, (w - m.shape[1]) // 2, (h - m.shape[0]) // 2, colour)
        else:
            pm = sign_mask(c.suit, pip_px)
            x1, y1, x2, y2 = left, top + h * 0.03, w - left, h - top - h * 0.03
            for px, py in PIPS[c.rank]:
                cx, cy = x1 + (x2 - x1) * (0.2 + 0.6 * px), y1 + (y2 - y1) * (0.04 + 0.92 * py)
                m = pm[::-1, ::-1] if py > 0.5 else pm  # lower pips upside down, as printed
                _stamp(img, m, int(cx - m.shape[1] / 2), int(cy - m.shape[0] / 2), colour)
        return np.ascontiguousarray(img[:, :, [2, 1, 0, 3]])  # RGBA -> BGRA
    pad = 3
    box = ((margin_x - pad) / w, (margin_y - pad) / h, (margin_x + col_w + pad) / w, (margin_y + block_h + pad) / h)
    back = _draw_back(rng, w, h, radius)
    label = name or f"proc/{rank_font}"
    return DeckArt(label, LazyFaces(render), back, tuple(float(v) for v in box))


class LazyFaces(Mapping):
    """The 52 faces of a procedural deck, each drawn on first use: a scene shows only some of them,
    and a face depends on the deck's style alone (never on which faces were drawn before)."""

    def __init__(self, render: Callable[[str], np.ndarray]):
        self._render = render
        self._faces: dict[str, np.ndarray] = {}

    def __getitem__(self, code: str) -> np.ndarray:
        if code not in self._faces:
            if code not in CARD_CODES:
                raise KeyError(code)
            self._faces[code] = self._render(code)
        return self._faces[code]

    def __iter__(self) -> Iterator[str]:
        return iter(CARD_CODES)

    def __len__(self) -> int:
        return len(CARD_CODES)


def _stamp_block(block: np.ndarray, mask: np.ndarray, x: int, y: int, colour) -> None:
    """Ink into a transparent index block: colour where the mask covers, alpha = coverage."""
    h, w = mask.shape
    H, W = block.shape[:2]
    x, y = max(0, min(x, W - w)), max(0, min(y, H - h))
    h, w = min(h, H - y), min(w, W - x)
    a = mask[:h, :w].astype(np.float32) / 255.0
    reg = block[y:y + h, x:x + w]
    old = reg[:, :, 3].astype(np.float32) / 255.0
    new_a = a + old * (1 - a)
    for ch in range(3):
        mixed = (colour[ch] * a + reg[:, :, ch] * old * (1 - a)) / np.maximum(new_a, 1e-6)
        reg[:, :, ch] = np.clip(mixed + 0.5, 0, 255).astype(np.uint8)
    reg[:, :, 3] = np.clip(new_a * 255 + 0.5, 0, 255).astype(np.uint8)


def _over(img: np.ndarray, block: np.ndarray, x: int, y: int) -> None:
    """Composite an RGBA block onto the opaque card at (x, y)."""
    h, w = block.shape[:2]
    a = block[:, :, 3:4].astype(np.float32) / 255.0
    reg = img[y:y + h, x:x + w, :3].astype(np.float32)
    img[y:y + h, x:x + w, :3] = (reg * (1 - a) + block[:, :, :3].astype(np.float32) * a + 0.5).astype(np.uint8)


def _darker(colour) -> tuple[int, int, int]:
    return tuple(int(v * 0.35) for v in colour)


def _court(img: np.ndarray, card: Card, left: float, top: float, w: int, h: int, colour, seed: int) -> None:
    """Placeholder court picture: a frame and a few coloured blobs (per-card, from the deck seed)."""
    from PIL import Image, ImageDraw
    rng = np.random.default_rng([seed, card.rank, ord(card.suit)])
    x1, y1 = int(left), int(top + h * 0.03)
    x2, y2 = w - x1, h - y1
    panel = Image.new("L", (x2 - x1, y2 - y1), 0)
    d = ImageDraw.Draw(panel)
    d.rectangle([0, 0, panel.width - 1, panel.height - 1], outline=255, width=3)
    _stamp(img, np.array(panel), x1, y1, colour)
    for _ in range(5):
        r = w * rng.uniform(0.05, 0.1)
        bx, by = rng.uniform(x1 + r, max(x1 + r, x2 - r)), rng.uniform(y1 + r, max(y1 + r, y2 - r))
        blob = Image.new("L", (int(2 * r) + 2, int(2 * r) + 2), 0)
        ImageDraw.Draw(blob).ellipse([0, 0, 2 * r, 2 * r], fill=255)
        _stamp(img, np.array(blob), int(bx - r), int(by - r), tuple(int(v) for v in rng.integers(0, 255, 3)))


def _draw_back(rng: np.random.Generator, w: int, h: int, radius: int) -> np.ndarray:
    from PIL import Image, ImageDraw
    base = tuple(int(v) for v in rng.integers(20, 200, 3))
    img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle([0, 0, w - 1, h - 1], radius=radius, fill=(245, 245, 245, 255))
    d.rounded_rectangle([w * 0.05, w * 0.05, w * 0.95, h - w * 0.05], radius=radius, fill=base + (255,))
    step = int(w * rng.uniform(0.04, 0.1))
    light = tuple(min(255, v + 60) for v in base) + (255,)
    for k in range(-h, w + h, step):
        d.line([(k, w * 0.05), (k + h, h)], fill=light, width=2)
    arr = np.array(img)
    mask = Image.new("L", (w, h), 0)
    ImageDraw.Draw(mask).rounded_rectangle([0, 0, w - 1, h - 1], radius=radius, fill=255)
    arr[:, :, 3] = np.array(mask)
    return arr[:, :, [2, 1, 0, 3]].copy()
