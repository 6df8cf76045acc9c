#!/usr/bin/env python3
"""Pack rendered scenes into a small detector dataset that travels to a GPU machine.

    python tools/pack_detector_data.py --train data/synth_gpu_close data/synth_gpu --val data/synth_gpu_val \
        --out gpu/det --budget-mb 28 && (cd gpu && tar -czf det.tgz det)

The corner detector never sees more than its input (640 px wide, ``recognition.json``
``detector_size``): a 1280x720 frame is letterboxed to 640x360 first. So scenes shrunk to that
width and stored as WebP (quality 75) lose nothing it could learn from, and weigh ~18 KB instead of
~150 KB: 1,745 scenes took 31 MiB, beside the ~26 MiB of tracked files in the 64 MiB a device call
may carry. Labels are folded to the one class "corner" (as ``tools/train.py``'s prepare stage
does). ``--budget-mb`` stops adding train scenes (in name order, so the same scenes on every run)
once the folder would outgrow it.

Writes ``OUT/{train,val}/{images,labels}``; ``tools/train.py`` writes ``data.yaml`` beside them, with
their absolute path where they land (``tools/device_train_detector.sh``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tools.train import corner_labels, split_images  # noqa: E402


def pack_split(roots: list[Path], split: str, out: Path, width: int, quality: int,
               budget: float, limit: int | None, skip: int = 0) -> tuple[int, int]:
    """Shrink, re-encode and relabel one split, after its first ``skip`` scenes; returns (scenes
    written, bytes)."""
    import cv2

    images_out, labels_out = out / split / "images", out / split / "labels"
    images_out.mkdir(parents=True, exist_ok=True)
    labels_out.mkdir(parents=True, exist_ok=True)
    count = size = 0
    images = [path for root in roots for path in split_images(root, split)][skip:]
    for image_path in images:
        if limit is not None and count >= limit:
            break
        label_path = image_path.parents[1] / "labels" / f"{image_path.stem}.txt"
        image = cv2.imread(str(image_path))
        if image is None or not label_path.exists():
            print(f"warning: {image_path} unreadable or unlabelled, skipped", file=sys.stderr)
            continue
        h, w = image.shape[:2]
        if w > width:  # YOLO labels are relative to the frame: unchanged by the resize
            image = cv2.resize(image, (width, round(h * width / w)), interpolation=cv2.INTER_AREA)
        ok, data = cv2.imencode(".webp", image, [cv2.IMWRITE_WEBP_QUALITY, quality])
        if not ok:
            raise SystemExit(f"cannot encode {image_path} as WebP")
        if size + len(data) > budget:
            break
        (images_out / f"{image_path.stem}.webp").write_bytes(data.tobytes())
        (labels_out / f"{image_path.stem}.txt").write_text(corner_labels(label_path.read_text()))
        count += 1
        size += len(data)
    return count, size


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", type=Path, nargs="+", required=True, help="dataset roots for the train split")
    p.add_argument("--val", type=Path, nargs="+", required=True, help="dataset roots for the val split")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--width", type=int, default=640, help="the detector's input width (default 640)")
    p.add_argument("--quality", type=int, default=75, help="WebP quality (default 75)")
    p.add_argument("--budget-mb", type=float, default=28.0, help="most MiB of train images (default 28)")
    p.add_argument("--val-count", type=int, default=100, help="val scenes at most (default 100)")
    p.add_argument("--skip", type=int, default=0,
                   help="leave out the first N train scenes (the ones an earlier pack of the same roots took)")
    args = p.parse_args(argv)
    if any((args.out / s / "images").exists() for s in ("train", "val")):
        p.error(f"{args.out} already holds a packed dataset: remove it first")
    n_val, b_val = pack_split(args.val, "val", args.out, args.width, args.quality, float("inf"), args.val_count)
    n_tr, b_tr = pack_split(args.train, "train", args.out, args.width, args.quality, args.budget_mb * 2**20, None,
                            args.skip)
    print(f"packed {n_tr} train scenes ({b_tr / 2**20:.1f} MiB) and {n_val} val scenes "
          f"({b_val / 2**20:.1f} MiB) into {args.out}")
    return 0 if n_tr and n_val else 1


if __name__ == "__main__":
    sys.exit(main())
