#!/usr/bin/env python3
"""Generate a synthetic card-recognition dataset (formats: tools/synth/__init__.py).

    python tools/make_dataset.py --seed 1 --count 2000 --split train --out data/synth_v1
    python tools/make_dataset.py --seed 2 --count 300 --split val --out data/synth_v1

Resumable (existing images are skipped) and reproducible: scene i of (split, seed) is the same
bytes whatever --workers or --start. Needs the Debian card art (gnome-cards-data,
kdegames-card-data-kf5, librsvg2-bin); renders are cached in cache/cardart/.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _work(job: tuple) -> tuple[int, str]:
    out, split, seed, index, crops, variants, hard_share, decks, close_up = job
    from tools.synth.writer import generate_one
    return index, generate_one(Path(out), split, seed, index, crops, variants, hard_share, decks, close_up)


def _init_worker() -> None:
    import cv2
    cv2.setNumThreads(1)


def update_readme(out: Path, split: str, seed: int, start: int, count: int, done: int, skipped: int,
                  seconds: float, finished: bool, variants: float = 0.0, hard_share: float | None = None,
                  decks: tuple[str, ...] | None = None, close_up: float = 0.0) -> None:
    variants_arg = f" --variants {variants}" if variants else ""
    variants_arg += f" --close-up {close_up}" if close_up else ""
    variants_arg += f" --hard-share {hard_share}" if hard_share is not None else ""
    variants_arg += f" --decks {','.join(decks)}" if decks else ""
    readme = out / "README.txt"
    lines = readme.read_text().splitlines() if readme.exists() else [
        "Synthetic Pyramid-table scenes for card recognition (formats: tools/synth/__init__.py).",
        "dataset.yaml: ultralytics detect config (absolute paths). cls/: classification crops.",
        "train uses only the train decks of datasets/decks.json; val only the held-out decks.",
        "",
    ]
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    state = "FINISHED" if finished else "IN PROGRESS (or interrupted: rerun the same command to resume)"
    n_img = len(list((out / split / "images").glob("*.jpg")))
    entry = (f"[{stamp}] {split}: seed {seed}, scenes {start}..{start + count - 1}: {state}; "
             f"{done} rendered, {skipped} already there, {n_img} images in {split}/images; "
             f"{seconds:.0f} s. Command: python tools/make_dataset.py --seed {seed} --start {start} "
             f"--count {count} --split {split} --out {out}{variants_arg}")
    key = f"{split}: seed {seed}, scenes {start}..{start + count - 1}:"
    lines = [ln for ln in lines if key not in ln] + [entry]
    readme.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, required=True, help="number of scenes")
    ap.add_argument("--start", type=int, default=0, help="first scene index (default 0)")
    ap.add_argument("--split", choices=["train", "val"], required=True)
    ap.add_argument("--out", type=Path, required=True, help="dataset root (e.g. data/synth_v1)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--crops", type=int, default=4, help="classification crops per scene (0: none)")
    ap.add_argument("--variants", type=float, default=0.0,
                    help="share of scenes with a rule-variant layout: inverted pyramid, face-down rows, "
                         "reserve row, cells (default 0; suggested 0.15)")
    ap.add_argument("--decks", default=None,
                    help="comma list of deck families of the split (datasets/decks.json) and/or 'proc' "
                         "(procedural faces only: no SVG rendering, for quick CI data) and/or 'proc-wide' "
                         "(train only: procedural faces lettered from many more fonts); default: all")
    ap.add_argument("--hard-share", type=float, default=None,
                    help="share of scenes drawn from the hard-condition mix (strong tilt, dim light, glare, "
                         "blur); default 0.25; 1.0 makes a hard-conditions evaluation set")
    ap.add_argument("--close-up", type=float, default=0.0,
                    help="share of scenes seen from near the table: cards 130..420 px wide at 1280, part of "
                         "the layout in view, like a phone photo of a few cards (default 0)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="stop after this many seconds with the scenes finished by then (a fixed-time "
                         "round on a lent machine); scenes left are made by a later run")
    args = ap.parse_args(argv)
    if args.count < 0 or args.start < 0 or args.workers < 1:
        ap.error("--count/--start must be >= 0 and --workers >= 1")

    from tools.synth.writer import write_yaml
    out = args.out
    yaml = write_yaml(out)
    if not 0 <= args.variants <= 1:
        ap.error(f"--variants must be a share 0..1, got {args.variants}")
    from tools.synth.writer import HARD_SHARE
    hard_share = HARD_SHARE if args.hard_share is None else args.hard_share
    if not 0 <= hard_share <= 1:
        ap.error(f"--hard-share must be a share 0..1, got {hard_share}")
    if not 0 <= args.close_up <= 1:
        ap.error(f"--close-up must be a share 0..1, got {args.close_up}")
    decks = tuple(x.strip() for x in args.decks.split(",") if x.strip()) if args.decks else None
    if decks:
        from tools.synth.writer import WIDE_PROC, svg_families
        known = set(svg_families(args.split)) | {"proc"} | ({WIDE_PROC} if args.split == "train" else set())
        unknown = [x for x in decks if x not in known]
        if unknown:
            ap.error(f"--decks: unknown families for {args.split}: {unknown} (known: {', '.join(sorted(known))})")
    jobs = [(str(out), args.split, args.seed, i, args.crops, args.variants, hard_share, decks, args.close_up)
            for i in range(args.start, args.start + args.count)]
    opts = {"variants": args.variants, "hard_share": args.hard_share, "decks": decks, "close_up": args.close_up}
    t0 = time.time()
    done = skipped = 0
    last = t0
    update_readme(out, args.split, args.seed, args.start, args.count, 0, 0, 0, False, **opts)
    if args.workers == 1:
        _init_worker()
        results = map(_work, jobs)
    else:
        import multiprocessing as mp
        pool = mp.get_context("spawn").Pool(args.workers, initializer=_init_worker)
        results = pool.imap_unordered(_work, jobs, chunksize=4)
    stopped = False
    for _, state in results:
        if args.time_limit is not None and time.time() - t0 > args.time_limit:
            stopped = True  # scenes in flight are dropped: an image is written last, so none is half made
            break
        if state == "done":
            done += 1
        else:
            skipped += 1
        now = time.time()
        if now - last > 30:
            last = now
            rate = done / max(1e-6, now - t0)
            print(f"{done + skipped}/{len(jobs)} ({done} new, {rate:.2f} scenes/s)", flush=True)
            update_readme(out, args.split, args.seed, args.start, args.count, done, skipped, now - t0,
                          False, **opts)
    if args.workers > 1:
        pool.terminate()
        pool.join()
    secs = time.time() - t0
    update_readme(out, args.split, args.seed, args.start, args.count, done, skipped, secs, not stopped, **opts)
    print(f"{args.split}: {done} scenes rendered, {skipped} skipped in {secs:.1f} s"
          f"{' (time limit reached)' if stopped else ''} "
          f"({done / max(secs, 1e-6):.2f} scenes/s with {args.workers} worker(s)); config {yaml}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
