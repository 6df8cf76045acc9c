"""Dataset writers: scene files (image, YOLO labels, truth), classification crops, dataset YAML.

Scene ``i`` of ``(split, seed)`` is rendered from ``numpy.random.default_rng([seed, i, split_code])``
alone, so any subset can be regenerated, in any order, by any number of workers, with the same bytes.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from companion.cards import CARD_CODES
from tools.synth import CROP_SIZE
from tools.synth.art import REPO, DeckArt, load_svg_deck

DECKS_JSON = REPO / "datasets" / "decks.json"
SPLIT_CODE = {"train": 0, "val": 1}
WIDE_PROC = "proc-wide"     # the deck family of procedural decks lettered from wide_train_fonts too
PROC_SEED = 7301           # procedural deck k of a split: seed (PROC_SEED, split code, k)
HARD_SHARE = 0.25          # scenes drawn from the hard-condition mix
CROP_MIN_PX = 14           # no classification crops of index corners under this height (unreadable)


def scene_name(split: str, seed: int, index: int) -> str:
    return f"{split}_s{seed}_{index:06d}"


def check_split(split: str) -> None:
    if split not in SPLIT_CODE:
        raise ValueError(f"unknown split {split!r} (use 'train' or 'val')")


@lru_cache(maxsize=None)
def deck_config() -> dict:
    return json.loads(DECKS_JSON.read_text(encoding="utf-8"))


def svg_families(split: str) -> dict[str, list[str]]:
    check_split(split)
    return deck_config()[split]


@lru_cache(maxsize=10)
def svg_deck(name: str) -> DeckArt:
    return load_svg_deck(name)


def proc_deck_count(split: str) -> int:
    """Procedural decks per split (datasets/decks.json "procedural": train_decks / val_decks)."""
    check_split(split)
    return int(deck_config()["procedural"][f"{split}_decks"])


def proc_source(split: str, wide: bool = False):
    """Fonts and shape band the procedural decks of ``split`` draw from; ``wide`` adds the
    ``wide_train_fonts`` to the rank lettering (train only: val keeps its own fonts)."""
    from tools.synth.procedural import ProcSource
    check_split(split)
    cfg = deck_config()["procedural"]
    fonts = tuple(cfg[f"{split}_fonts"])
    if wide:
        if split != "train":
            raise ValueError(f"{WIDE_PROC!r} decks are train-only (split {split!r})")
        fonts += tuple(cfg["wide_train_fonts"])
    return ProcSource(fonts, tuple(cfg[f"{split}_suit_fonts"]), split)


@lru_cache(maxsize=8)
def proc_deck(split: str, k: int, wide: bool = False) -> DeckArt:
    """Procedural deck ``k`` of a split: a function of (split, k, wide) alone (a few tens of ms to
    draw). Wide decks have their own seeds, so the plain decks stay as they were."""
    from tools.synth.procedural import make_deck
    seed = [PROC_SEED, SPLIT_CODE[split], k] + ([1] if wide else [])
    return make_deck(np.random.default_rng(seed), proc_source(split, wide),
                     name=f"{WIDE_PROC if wide else 'proc'}/{split}-{k}")


def pick_deck(rng: np.random.Generator, split: str, only: tuple[str, ...] | None = None) -> DeckArt:
    """The face design of one scene. ``only``: restrict to these families of the split and/or
    ``"proc"`` (e.g. ``("proc",)`` renders no SVG at all: quick CI datasets) and ``"proc-wide"``
    (train only: procedural decks lettered from many more fonts)."""
    if only:
        fams = svg_families(split)
        unknown = [x for x in only if x not in ("proc", WIDE_PROC) and x not in fams]
        if unknown:
            raise ValueError(f"unknown deck families for split {split!r}: {unknown} "
                             f"(choose from proc, {', '.join(sorted(fams))})")
        item = sorted(only)[int(rng.integers(len(only)))]
        if item in ("proc", WIDE_PROC):
            return proc_deck(split, int(rng.integers(proc_deck_count(split))), item == WIDE_PROC)
        decks = fams[item]
        return svg_deck(decks[int(rng.integers(len(decks)))])
    share = deck_config()["procedural"][f"{split}_share"]
    if rng.random() < share:
        return proc_deck(split, int(rng.integers(proc_deck_count(split))))
    fams = svg_families(split)
    fam = sorted(fams)[int(rng.integers(len(fams)))]
    decks = fams[fam]
    return svg_deck(decks[int(rng.integers(len(decks)))])


def yolo_lines(labels: list[dict], w: int, h: int) -> str:
    out = []
    for lab in labels:
        x1, y1, x2, y2 = lab["box"]
        out.append(f"{lab['cls']} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} "
                   f"{(x2 - x1) / w:.6f} {(y2 - y1) / h:.6f}")
    return "\n".join(out) + ("\n" if out else "")


def crop_corner(rng: np.random.Generator, img: np.ndarray, box: list[float], size: int = CROP_SIZE) -> np.ndarray:
    """A square crop around an index box with random margin, scale, offset and rotation."""
    x1, y1, x2, y2 = box
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    bw, bh = x2 - x1, y2 - y1
    side = max(bw, bh) * rng.uniform(1.1, 1.6)
    cx += rng.uniform(-0.12, 0.12) * bw
    cy += rng.uniform(-0.12, 0.12) * bh
    ang = rng.uniform(-10, 10)
    scale = size / max(side, 1.0)
    m = cv2.getRotationMatrix2D((cx, cy), ang, scale)
    m[:, 2] += [size / 2 - cx, size / 2 - cy]
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(img, m, (size, size), flags=interp, borderMode=cv2.BORDER_REPLICATE)


def generate_one(out: Path, split: str, seed: int, index: int, crops: int = 4, variants: float = 0.0,
                 hard_share: float = HARD_SHARE, decks: tuple[str, ...] | None = None,
                 close_up: float = 0.0) -> str:
    """Render and write scene ``index``; skipped when its image exists. Returns 'done' or 'skip'.

    ``close_up``: share of scenes seen from near the table (cards 130..420 px wide, part of the
    layout in view)."""
    from tools.synth.scene import render_scene
    name = scene_name(split, seed, index)
    img_path = out / split / "images" / f"{name}.jpg"
    if img_path.exists():
        return "skip"
    rng = np.random.default_rng([seed, index, SPLIT_CODE[split]])
    deck = pick_deck(rng, split, decks) if decks else pick_deck(rng, split)
    hard = bool(rng.random() < hard_share)
    near = bool(close_up > 0 and rng.random() < close_up)  # no draw at 0: older datasets' seeds stay as they were
    res = render_scene(rng, deck, hard=hard, p_variant=variants, close_up=near)
    w, h = res.truth["width"], res.truth["height"]
    truth = {"name": name, "image": f"{name}.jpg", "split": split, "seed": seed, "index": index, **res.truth}
    for sub in ("images", "labels", "truth"):
        (out / split / sub).mkdir(parents=True, exist_ok=True)
    (out / split / "labels" / f"{name}.txt").write_text(yolo_lines(res.labels, w, h))
    (out / split / "truth" / f"{name}.json").write_text(json.dumps(truth, separators=(",", ":")))
    readable = [k for k, lab in enumerate(res.labels) if lab["box"][3] - lab["box"][1] >= CROP_MIN_PX]
    if crops > 0 and readable:
        frame = cv2.imdecode(np.frombuffer(res.jpeg, np.uint8), cv2.IMREAD_COLOR)
        picks = [readable[int(k)] for k in rng.permutation(len(readable))[:crops]]
        for k in picks:
            lab = res.labels[int(k)]
            folder = out / "cls" / split / lab["card"]
            folder.mkdir(parents=True, exist_ok=True)
            crop = crop_corner(rng, frame, lab["box"])
            ok, buf = cv2.imencode(".jpg", crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
            (folder / f"{name}_{int(k)}.jpg").write_bytes(buf.tobytes())
    tmp = img_path.with_suffix(".tmp")
    tmp.write_bytes(res.jpeg)
    os.replace(tmp, img_path)  # image last and atomic: its presence means the scene is complete
    return "done"


def write_yaml(out: Path) -> Path:
    """``OUT/dataset.yaml`` with absolute paths (ultralytics resolves relative ones against its cwd)."""
    root = out.resolve()
    for split in SPLIT_CODE:
        for sub in ("images", "labels"):
            (root / split / sub).mkdir(parents=True, exist_ok=True)
        for code in CARD_CODES:
            (root / "cls" / split / code).mkdir(parents=True, exist_ok=True)
    lines = [
        "# written by tools/make_dataset.py (absolute paths on purpose)",
        f"path: {root}",
        f"train: {root / 'train' / 'images'}",
        f"val: {root / 'val' / 'images'}",
        f"nc: {len(CARD_CODES)}",
        "names:",
    ] + [f"  {i}: {code}" for i, code in enumerate(CARD_CODES)]
    path = root / "dataset.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path
