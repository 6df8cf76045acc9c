"""Card art from the Debian SVG decks: element lookup, rendering with rsvg-convert, on-disk cache.

Each deck is named ``aisleriot/<file stem>`` (gnome-cards-data) or ``kde/<folder without svg->``
(kdegames-card-data-kf5). Single cards are rendered with ``rsvg-convert --export-id`` (the element's
own extents) to ``cache/cardart/<deck>/<CODE>.png`` at ``ART_WIDTH`` px, on demand; existing files
are reused, so an interrupted run resumes. The index-corner box of a deck is measured once from its
number cards (``index_box``) and cached in ``meta.json`` beside the renders.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.cards import CARD_CODES, Card

AISLERIOT_DIR = Path("/usr/share/aisleriot/cards")
KDE_DIR = Path("/usr/share/carddecks")
REPO = Path(__file__).resolve().parents[2]
CACHE_DIR = Path(os.environ.get("CARDART_CACHE", REPO / "cache" / "cardart"))
ART_WIDTH = 300

SUIT_WORDS = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}
RANK_WORDS = {1: ("1", "ace"), 11: ("jack",), 12: ("queen",), 13: ("king",)}


class ArtError(RuntimeError):
    """Card art cannot be rendered (package missing, element not found)."""


def deck_file(deck: str) -> Path:
    kind, _, name = deck.partition("/")
    if kind == "aisleriot":
        return AISLERIOT_DIR / f"{name}.svgz"
    if kind == "kde":
        files = sorted((KDE_DIR / f"svg-{name}").glob("*.svgz"))
        if files:
            return files[0]
        return KDE_DIR / f"svg-{name}" / "missing.svgz"
    raise ArtError(f"not an SVG deck name: {deck!r} (expected 'aisleriot/NAME' or 'kde/NAME')")


def _svg_ids(path: Path) -> set[str]:
    try:
        text = gzip.open(path, "rt", encoding="utf-8", errors="replace").read()
    except OSError as exc:
        raise ArtError(f"cannot read deck {path}: {exc} (apt-get install gnome-cards-data "
                       "kdegames-card-data-kf5)") from None
    return set(re.findall(r'\bid="([^"]+)"', text))


def element_ids(deck: str) -> dict[str, str]:
    """Map card code (and ``BACK``) to the SVG element id in this deck; missing cards are left out."""
    ids = _svg_ids(deck_file(deck))
    found: dict[str, str] = {}
    for code in CARD_CODES:
        card = Card.parse(code)
        suit = SUIT_WORDS[card.suit]
        ranks = RANK_WORDS.get(card.rank, (str(card.rank),))
        candidates = []
        for r in ranks:
            candidates += [f"{suit}_{r}", f"{r}_{suit}", f"{r}{suit}s", f"{r}-of-{suit}s"]
        for cand in candidates:
            if cand in ids:
                found[code] = cand
                break
    for cand in ("back", "card_back", "back_c1"):
        if cand in ids:
            found["BACK"] = cand
            break
    return found


@dataclass(frozen=True)
class DeckArt:
    """Rendered faces of one deck (RGBA uint8 arrays, card upright) and its index-corner box."""

    name: str
    faces: dict[str, np.ndarray]
    back: np.ndarray | None
    #: Top-left index region as fractions of the card: (x1, y1, x2, y2).
    index_box: tuple[float, float, float, float]

    @property
    def aspect(self) -> float:
        face = next(iter(self.faces.values()))
        return face.shape[0] / face.shape[1]


def render_card(deck: str, code: str, out: Path, width: int = ART_WIDTH) -> Path:
    """Render one element to ``out`` (skipped when it exists)."""
    if out.exists() and out.stat().st_size > 0:
        return out
    ids = element_ids(deck)
    if code not in ids:
        raise ArtError(f"deck {deck!r} has no element for {code!r}")
    out.parent.mkdir(parents=True, exist_ok=True)
    import cv2
    tmp = out.with_suffix(f".tmp{os.getpid()}.png")  # unique: several workers may render at once

    def rsvg(w: int) -> np.ndarray:
        cmd = ["rsvg-convert", "-i", ids[code], "-w", str(w), "-a", str(deck_file(deck)), "-o", str(tmp)]
        try:
            subprocess.run(cmd, check=True, capture_output=True, timeout=120)
        except FileNotFoundError:
            raise ArtError("rsvg-convert not found (apt-get install librsvg2-bin)") from None
        except subprocess.CalledProcessError as exc:
            raise ArtError(f"rsvg-convert failed for {deck} {code}: {exc.stderr.decode()[:200]}") from None
        img = _read_rgba(tmp)
        tmp.unlink()
        return img

    # Some decks report element extents far larger than the card (clip paths, stray defs): render,
    # find the drawn card, and re-render bigger so the card itself gets ``width`` pixels.
    img = rsvg(width)
    box = _alpha_box(img)
    if box is None:
        raise ArtError(f"deck {deck!r}: element for {code!r} renders empty")
    if box[2] - box[0] < 0.9 * width:
        img = rsvg(min(16000, int(width * width / max(1, box[2] - box[0]) * 1.02) + 2))
        box = _alpha_box(img)
        if box is None:
            raise ArtError(f"deck {deck!r}: element for {code!r} renders empty")
    x1, y1, x2, y2 = box
    card = img[y1:y2, x1:x2]
    card = cv2.resize(card, (width, max(1, round(width * card.shape[0] / card.shape[1]))),
                      interpolation=cv2.INTER_AREA)
    cv2.imwrite(str(tmp), card)
    tmp.replace(out)  # atomic: a killed run never leaves a half-written render
    return out


def _alpha_box(img: np.ndarray) -> tuple[int, int, int, int] | None:
    ys, xs = np.nonzero(img[:, :, 3] > 8)
    if len(xs) == 0:
        return None
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def _read_rgba(path: Path) -> np.ndarray:
    import cv2
    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise ArtError(f"cannot read render {path}")
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGRA)
    elif img.shape[2] == 3:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
    return img  # BGRA, OpenCV order throughout the generator


def _ink_mask(face: np.ndarray) -> np.ndarray:
    """Pixels that differ from the card's paper colour (inside the card's alpha)."""
    bgr = face[:, :, :3].astype(np.int16)
    h, w = bgr.shape[:2]
    inner = bgr[int(h * 0.45):int(h * 0.55), int(w * 0.03):int(w * 0.08)].reshape(-1, 3)
    paper = np.median(inner, axis=0)
    diff = np.abs(bgr - paper).max(axis=2)
    return (diff > 60) & (face[:, :, 3] > 200)


def measure_index_box(faces: dict[str, np.ndarray]) -> tuple[float, float, float, float]:
    """Top-left index region (fractions) measured on number cards: the ink cluster nearest the corner.

    Number cards 2..10 are used because their pips stay clear of the corner; the union over
    them covers the widest rank ("10") and every suit symbol. Decks with a thick border line are
    measured again with a deeper inset when the first box does not sit in the corner.
    """
    box = None
    for inset in ((0.012, 0.02), (0.03, 0.045), (0.045, 0.06)):
        try:
            box = _measure_index_box(faces, inset)
        except ArtError:
            continue
        x1, y1, x2, y2 = box
        if x1 < 0.1 and y1 < 0.1 and x2 - x1 > 0.06 and y2 - y1 > 0.12:
            return box
    raise ArtError(f"no plausible index corner found (last try {box})")


def _measure_index_box(faces: dict[str, np.ndarray], inset: tuple[float, float]) -> tuple[float, float, float, float]:
    import cv2
    boxes = []
    for code, face in faces.items():
        if code[0] not in "2345678T" or code == "BACK":
            continue
        h, w = face.shape[:2]
        ink = _ink_mask(face)
        # ignore the card outline: a few percent inset, and the search area is the top-left corner
        m = np.zeros_like(ink)
        y0, x0 = int(h * inset[0]), int(w * inset[1])
        m[y0:int(h * 0.36), x0:int(w * 0.26)] = ink[y0:int(h * 0.36), x0:int(w * 0.26)]
        m = cv2.dilate(m.astype(np.uint8), np.ones((int(h * 0.02) | 1, int(w * 0.02) | 1), np.uint8))
        n, lab, stats, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
        if n <= 1:
            continue
        # component whose box starts closest to the corner, among non-tiny ones
        best, best_d = None, 1e9
        for k in range(1, n):
            x, y, bw, bh, area = stats[k]
            if area < (w * h) * 0.0015 or bw > w * 0.22:
                continue
            d = x / w + y / h
            if d < best_d:
                best, best_d = k, d
        if best is None:
            continue
        x, y, bw, bh, _ = stats[best]
        # rank above suit: grow downward with components that sit right below (the suit glyph)
        x1, y1, x2, y2 = x, y, x + bw, y + bh
        for k in range(1, n):
            kx, ky, kw, kh, area = stats[k]
            if k == best or area < (w * h) * 0.001:
                continue
            if ky >= y1 and ky < y2 + h * 0.08 and kx < x2 and kx + kw > x1 and kw < w * 0.22:
                x1, y1, x2, y2 = min(x1, kx), min(y1, ky), max(x2, kx + kw), max(y2, ky + kh)
        boxes.append((x1 / w, y1 / h, x2 / w, y2 / h))
    if not boxes:
        raise ArtError("no index corner found on the number cards")
    b = np.array(boxes)
    med = np.median(b, axis=0)
    # robust union: drop outliers far from the median, then take the envelope
    keep = np.all(np.abs(b - med) < 0.06, axis=1)
    b = b[keep] if keep.sum() >= 3 else b
    x1, y1 = b[:, 0].min(), b[:, 1].min()
    x2, y2 = b[:, 2].max(), b[:, 3].max()
    pad_x, pad_y = 0.008, 0.006
    return (max(0.0, x1 - pad_x), max(0.0, y1 - pad_y), min(0.5, x2 + pad_x), min(0.5, y2 + pad_y))


def _index_overrides() -> dict[str, list[float]]:
    """Hand-checked index boxes from datasets/decks.json ("index_box") where measuring fails."""
    path = REPO / "datasets" / "decks.json"
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8")).get("index_box", {})


def load_svg_deck(deck: str, cache_dir: Path = CACHE_DIR) -> DeckArt:
    """Render (if needed) and load all 52 faces and the back of an SVG deck."""
    folder = cache_dir / deck.replace("/", "__")
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if meta.get("complete") and all((folder / f"{c}.png").exists() for c in CARD_CODES):
        # Every face rendered before: the SVG is not read, so a machine without the Debian decks
        # (a lent GPU machine, tools/pack_synth_assets.py) renders scenes from the cache alone.
        faces = {code: _read_rgba(folder / f"{code}.png") for code in CARD_CODES}
        back = _read_rgba(folder / "BACK.png") if (folder / "BACK.png").exists() else None
    else:
        ids = element_ids(deck)
        missing = [c for c in CARD_CODES if c not in ids]
        if missing:
            raise ArtError(f"deck {deck!r} lacks elements for {len(missing)} cards, e.g. {missing[:3]}")
        faces = {code: _read_rgba(render_card(deck, code, folder / f"{code}.png")) for code in CARD_CODES}
        back = _read_rgba(render_card(deck, "BACK", folder / "BACK.png")) if "BACK" in ids else None
        if not meta.get("complete"):
            meta["complete"] = True  # faces and back (if the deck has one) all on disk
            meta_path.write_text(json.dumps(meta))
    override = _index_overrides().get(deck)
    if override:
        meta["index_box"] = override
    elif "index_box" not in meta:
        meta["index_box"] = [round(float(v), 4) for v in measure_index_box(faces)]
        meta_path.write_text(json.dumps(meta))
    # back art is rendered at the face size so piles look right
    if back is not None:
        import cv2
        h, w = next(iter(faces.values())).shape[:2]
        back = cv2.resize(back, (w, h), interpolation=cv2.INTER_AREA)
    return DeckArt(deck, faces, back, tuple(meta["index_box"]))
