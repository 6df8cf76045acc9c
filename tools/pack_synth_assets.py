#!/usr/bin/env python3
"""Pack what the scene generator reads from the system, so that scenes can be rendered on a machine
without the Debian card decks and fonts (a lent GPU machine, which has no package registry).

    python tools/pack_synth_assets.py --out gpu/assets.tgz            # here: ~24 MiB
    python tools/pack_synth_assets.py --unpack gpu/assets.tgz /tmp/assets   # there
    CARDART_CACHE=/tmp/assets/cardart SYNTH_FONT_DIRS=/tmp/assets/fonts python tools/make_dataset.py ...

The generator reads two things outside the repo: the card faces of the SVG decks (rendered once
with rsvg-convert into ``cache/cardart/``, ``tools/synth/art.py``) and the font files the
procedural decks are lettered from (``datasets/decks.json`` "procedural"). The packer renders every
train and val deck into the cache (if not done yet), stores each face as WebP (quality 92, alpha
kept: ~6x smaller than the PNG renders) beside the deck's ``meta.json``, and copies the font files
(cut down to the glyphs the decks draw).
Unpacking turns the faces back into the PNGs the generator loads. Backgrounds, hands and clutter
are drawn by code and need nothing.
"""

from __future__ import annotations

import argparse
import io
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.cards import CARD_CODES  # noqa: E402

QUALITY = 92


def deck_names() -> list[str]:
    """Every SVG deck of the train and val families (datasets/decks.json)."""
    from tools.synth.writer import svg_families

    return [deck for split in ("train", "val") for family in svg_families(split).values() for deck in family]


def font_names(wide: bool = False) -> list[str]:
    """Every font the procedural decks of either split may be lettered from (``wide``: the
    'proc-wide' train decks' fonts too), plus the fallback."""
    from tools.synth.procedural import FALLBACK_FONT
    from tools.synth.writer import proc_source

    sources = [proc_source("train", wide=wide), proc_source("val")]
    return sorted({name for src in sources for name in (*src.rank_fonts, *src.suit_fonts)} | {FALLBACK_FONT})


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def pack(out: Path, wide_fonts: bool = False, decks: list[str] | None = None,
         quality: int = QUALITY) -> tuple[int, int, int]:
    """Write the archive (``decks``: default every train and val deck; ``quality``: the faces' WebP
    quality); returns (decks, fonts, bytes)."""
    import cv2

    from tools.synth import art
    from tools.synth.procedural import font_path

    decks = deck_names() if decks is None else decks
    names = font_names(wide_fonts)
    out.parent.mkdir(parents=True, exist_ok=True)
    fonts = 0
    with tarfile.open(out, "w:gz") as tar:
        for deck in decks:
            art.load_svg_deck(deck, art.CACHE_DIR)  # renders what is missing and marks the cache complete
            folder = art.CACHE_DIR / deck.replace("/", "__")
            for code in [*CARD_CODES, "BACK"]:
                png = folder / f"{code}.png"
                if not png.exists():
                    continue  # a deck without a back
                ok, data = cv2.imencode(".webp", cv2.imread(str(png), cv2.IMREAD_UNCHANGED),
                                        [cv2.IMWRITE_WEBP_QUALITY, quality])
                if not ok:
                    raise SystemExit(f"cannot encode {png} as WebP")
                _add(tar, f"cardart/{folder.name}/{code}.webp", data.tobytes())
            _add(tar, f"cardart/{folder.name}/meta.json", (folder / "meta.json").read_bytes())
        for name in names:
            path = font_path(name)
            if path is not None:  # fonts not installed here are not drawn from here either
                _add(tar, f"fonts/{path.name}", subset_font(path))
                fonts += 1
    return len(decks), fonts, out.stat().st_size


def subset_font(path: Path) -> bytes:
    """The font file cut down to the glyphs a procedural deck draws (ranks and suit signs), so the
    47 fonts take ~1 MiB instead of 16; the whole file where fontTools is missing."""
    try:
        from fontTools import subset
    except ImportError:
        return path.read_bytes()
    import logging

    logging.getLogger("fontTools").setLevel(logging.ERROR)  # "FFTM NOT subset" for every FontForge font
    from tools.synth.procedural import RANK_TEXT, SUIT_CHARS

    text = "".join(RANK_TEXT.values()) + "0123456789" + "".join(SUIT_CHARS.values())
    options = subset.Options()
    options.notdef_outline = True
    font = subset.load_font(str(path), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=text)
    subsetter.subset(font)
    buf = io.BytesIO()
    subset.save_font(font, buf, options)
    return buf.getvalue()


def unpack(archive: Path, dest: Path) -> tuple[int, int]:
    """Extract the archive into ``dest`` (cardart/ as PNG, fonts/); returns (faces, fonts)."""
    import cv2
    import numpy as np

    faces = fonts = 0
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            parts = Path(member.name).parts
            if not member.isfile() or ".." in parts or member.name.startswith("/"):
                continue
            data = tar.extractfile(member).read()
            target = dest / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.suffix == ".webp":
                img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
                if img is None:
                    raise SystemExit(f"{archive}: cannot decode {member.name}")
                cv2.imwrite(str(target.with_suffix(".png")), img)
                faces += 1
            else:
                target.write_bytes(data)
                fonts += parts[0] == "fonts"
    return faces, fonts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="archive to write (.tgz)")
    ap.add_argument("--wide-fonts", action="store_true", help="also the fonts only 'proc-wide' decks use")
    ap.add_argument("--decks", help="comma list of SVG decks (e.g. aisleriot/anglo; '' for none); "
                                    "default: every train and val deck of datasets/decks.json")
    ap.add_argument("--quality", type=int, default=QUALITY,
                    help=f"the faces' WebP quality (default {QUALITY}; 80 makes the whole archive about 30%% "
                         "smaller: room in a device call for a checkpoint)")
    ap.add_argument("--unpack", nargs=2, type=Path, metavar=("ARCHIVE", "DEST"))
    args = ap.parse_args(argv)
    if args.unpack:
        faces, fonts = unpack(*args.unpack)
        print(f"unpacked {faces} card faces and {fonts} fonts into {args.unpack[1]}")
    elif args.out:
        chosen = None if args.decks is None else [d.strip() for d in args.decks.split(",") if d.strip()]
        if not 1 <= args.quality <= 100:
            ap.error(f"--quality {args.quality}: 1 to 100")
        decks, fonts, size = pack(args.out, args.wide_fonts, chosen, args.quality)
        print(f"packed {decks} decks and {fonts} fonts into {args.out} ({size / 2**20:.1f} MiB)")
    else:
        ap.error("give --out ARCHIVE or --unpack ARCHIVE DEST")
    return 0


if __name__ == "__main__":
    sys.exit(main())
