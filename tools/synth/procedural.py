"""Procedurally drawn card faces (PIL): varied fonts, index sizes and positions, ink colours, pips.

A procedural deck is fully defined by ``(seed, font)``: ``make_deck(rng, fonts)`` draws one from the
generator it is given, so the same scene seed gives the same deck. Court cards get a framed
placeholder picture; number cards get pips in the usual arrangement.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from companion.cards import CARD_CODES, Card
from tools.synth.art import ART_WIDTH, DeckArt

FONT_DIRS = [Path("/usr/share/fonts")]
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
SYMBOL_FONT = "DejaVuSans"  # has the four suit glyphs


@lru_cache(maxsize=None)
def font_path(stem: str) -> Path | None:
    for base in FONT_DIRS:
        for ext in (".ttf", ".otf"):
            hits = sorted(base.rglob(stem + ext))
            if hits:
                return hits[0]
    return None


def available_fonts(stems: list[str]) -> list[str]:
    return [s for s in stems if font_path(s) is not None]


@lru_cache(maxsize=256)
def _font(stem: str, size: int):
    from PIL import ImageFont
    path = font_path(stem)
    if path is None:
        raise FileNotFoundError(f"font {stem!r} not installed (see README: fonts-dejavu-core etc.)")
    return ImageFont.truetype(str(path), size)


def make_deck(rng: np.random.Generator, fonts: list[str], name: str | None = None) -> DeckArt:
    """Draw a whole procedural deck; every style choice comes from ``rng``."""
    from PIL import Image, ImageDraw

    fonts = available_fonts(fonts) or ["DejaVuSans-Bold"]
    font_stem = fonts[int(rng.integers(len(fonts)))]
    w = ART_WIDTH
    h = int(round(w * rng.uniform(1.38, 1.56)))
    paper = tuple(int(v) for v in np.clip(rng.normal([246, 246, 244], 6), 215, 255))
    red = tuple(int(v) for v in np.clip(rng.normal([200, 20, 30], [25, 15, 15]), 0, 255))
    black = tuple(int(v) for v in np.clip(rng.normal([20, 20, 25], 8), 0, 70))
    four_colour = rng.random() < 0.1
    ink = {"H": red, "D": (20, 60, 200) if four_colour else red,
           "S": black, "C": (20, 130, 40) if four_colour else black}
    rank_size = int(w * rng.uniform(0.12, 0.19))
    suit_size = int(rank_size * rng.uniform(0.7, 1.05))
    margin_x = w * rng.uniform(0.03, 0.08)
    margin_y = h * rng.uniform(0.02, 0.05)
    radius = int(w * rng.uniform(0.03, 0.09))
    border = rng.random() < 0.5
    rank_font, suit_font = _font(font_stem, rank_size), _font(SYMBOL_FONT, suit_size)
    pip_font = _font(SYMBOL_FONT, int(w * rng.uniform(0.16, 0.22)))
    condensed_ten = rng.random() < 0.3

    # measure the index block once (widest rank) so every card shares one index box
    probe = ImageDraw.Draw(Image.new("RGBA", (w, h)))
    rank_w = max(probe.textbbox((0, 0), RANK_TEXT.get(r, str(r)), font=rank_font)[2] for r in range(1, 14))
    rank_h = max(probe.textbbox((0, 0), RANK_TEXT.get(r, str(r)), font=rank_font)[3] for r in range(1, 14))
    suit_w = max(probe.textbbox((0, 0), ch, font=suit_font)[2] for ch in SUIT_CHARS.values())
    suit_h = max(probe.textbbox((0, 0), ch, font=suit_font)[3] for ch in SUIT_CHARS.values())
    col_w = max(rank_w, suit_w)
    gap = rank_size * rng.uniform(-0.05, 0.15)

    faces: dict[str, np.ndarray] = {}
    for code in CARD_CODES:
        card = Card.parse(code)
        img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
        d = ImageDraw.Draw(img)
        d.rounded_rectangle([0, 0, w - 1, h - 1], radius=radius, fill=paper + (255,),
                            outline=(120, 120, 120, 255) if border else None, width=2)
        colour = ink[card.suit] + (255,)
        text = RANK_TEXT.get(card.rank, str(card.rank))
        corner = Image.new("RGBA", (int(col_w + 4), int(rank_h + gap + suit_h + 4)), (0, 0, 0, 0))
        cd = ImageDraw.Draw(corner)
        tw = cd.textbbox((0, 0), text, font=rank_font)[2]
        if text == "10" and condensed_ten and tw > col_w:
            tw = col_w
        cd.text(((col_w - tw) / 2, 0), text, font=rank_font, fill=colour)
        sw = cd.textbbox((0, 0), SUIT_CHARS[card.suit], font=suit_font)[2]
        cd.text(((col_w - sw) / 2, rank_h + gap), SUIT_CHARS[card.suit], font=suit_font, fill=colour)
        img.alpha_composite(corner, (int(margin_x), int(margin_y)))
        img.alpha_composite(corner.rotate(180), (int(w - margin_x - corner.width), int(h - margin_y - corner.height)))
        _draw_centre(d, card, w, h, margin_x + col_w, margin_y, colour, pip_font, rng)
        faces[code] = np.array(img)[:, :, [2, 1, 0, 3]].copy()  # RGBA -> BGRA
    box = ((margin_x - 2) / w, (margin_y - 2) / h,
           (margin_x + col_w + 6) / w, (margin_y + rank_h + gap + suit_h + 6) / h)
    back = _draw_back(rng, w, h, radius)
    return DeckArt(name or f"proc/{font_stem}", faces, back, tuple(float(v) for v in box))


def _draw_centre(d, card: Card, w: int, h: int, left: float, top: float, colour, pip_font,
                 rng: np.random.Generator) -> None:
    x1, y1 = left + w * 0.06, top + h * 0.08
    x2, y2 = w - x1, h - y1
    sym = SUIT_CHARS[card.suit]
    if card.rank >= 11:
        d.rectangle([x1, y1, x2, y2], outline=colour, width=3)
        # placeholder "court": a few coloured blocks and a big letter, like a simplified picture
        for _ in range(5):
            bx, by = rng.uniform(x1, x2), rng.uniform(y1, y2)
            c = tuple(int(v) for v in rng.integers(0, 255, 3)) + (255,)
            d.ellipse([bx - w * 0.08, by - w * 0.08, bx + w * 0.08, by + w * 0.08], fill=c)
        return
    if card.rank == 1:
        d.text(((x1 + x2) / 2, (y1 + y2) / 2), sym, font=pip_font, fill=colour, anchor="mm")
        return
    for px, py in PIPS[card.rank]:
        cx, cy = x1 + (x2 - x1) * (0.2 + 0.6 * px), y1 + (y2 - y1) * (0.05 + 0.9 * py)
        d.text((cx, cy), sym, font=pip_font, fill=colour, anchor="mm")


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
    arr[:, :, 3] = np.array(Image.new("L", (w, h)))  # re-cut the outline after the diagonal lines
    mask = Image.new("L", (w, h), 0)
    ImageDraw.Draw(mask).rounded_rectangle([0, 0, w - 1, h - 1], radius=radius, fill=255)
    arr[:, :, 3] = np.array(mask)
    return arr[:, :, [2, 1, 0, 3]].copy()
