"""Train the face classifier (``models/face_classifier.onnx``): cards named from their face.

    python tools/make_dataset.py --seed 31 --count 2400 --split train --out data/synth_s15 --workers 2
    python tools/make_dataset.py --seed 41 --count 2400 --split train --out data/synth_s16 --decks proc-wide --workers 2
    python tools/weights_from_onnx.py --only classifier       # the start: the shipped index classifier
    python tools/train_face.py --data data/synth_s15 data/synth_s16 --val data/synth_v2 --name f1 --epochs 4

Stages (``--stages``, all by default; each resumable): ``crops`` cuts one face crop
(``companion.vision.face_read.face_crop``) per visible card corner of the rendered train scenes,
turned as the truth says the card lies, jittered and, for 60% of them, brought down to 14-54 px
and back up (a far camera's small cards, from cards of every size); val crops come from the
held-out decks (``--val``, ``val/truth``). ``train`` fine-tunes ultralytics' classifier from
``--init``; ``export`` writes ``runs/face/NAME/face_classifier.onnx`` (copy it to ``models/`` and set
``face_below_px`` in ``recognition.json`` to use it).

On a lent GPU machine ``tools/device_train_face.sh`` renders the scenes there, cuts the crops on every
core (``--processes``: the same crops as one process cuts) and trains for a fixed time (``--hours``,
``--device 0``); ``--stages export --work DIR`` then exports the best epoch it brought back.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from companion.cards import CARD_CODES  # noqa: E402
from companion.vision.face_read import face_crop  # noqa: E402
from train import cls_folder  # noqa: E402

RESOLUTION_SHARE = 0.6  # share of train crops brought down to a small card's resolution and back
VAL_CROPS = 1600
SEED = 17


def card_quad(truth: dict, where: str):
    """The outline of the card a label (``where``: ``pyramid:r:i``, ``waste:p:k``, ``loose:k``)
    belongs to, or None when its face is not in view (a waste card under the pile's top)."""
    kind, *ix = where.split(":")
    if kind == "pyramid":
        return truth["pyramid"][int(ix[0])][int(ix[1])]["quad"]
    if kind == "waste":
        pile, k = truth["waste"][int(ix[0])], int(ix[1])
        return pile["quad"] if k == len(pile["cards"]) - 1 else None
    if kind == "loose":
        return truth["loose"][int(ix[0])]["quad"]
    return None


def card_angle(quad, which: str) -> float:
    """The card's turn (``layout_angle``'s sense) seen from the index ``which`` (tl or br: a second
    index is the first one turned by half a turn)."""
    q = np.asarray(quad, np.float64)
    down = q[3] - q[0]
    angle = float(np.degrees(np.arctan2(-down[0], down[1])))
    return angle + 180.0 if which == "br" else angle


def train_crops(truth: dict, image: np.ndarray, rng: np.random.Generator):
    """(class, crop) for the scene's labels, jittered; half the second indices are skipped."""
    import cv2

    for label in truth["labels"]:
        quad = card_quad(truth, label["where"])
        if quad is None or (label["which"] == "br" and rng.random() < 0.5):
            continue
        u = rng.random(6)
        crop = face_crop(image, np.asarray(label["box"], np.float64), 64,
                         card_angle(quad, label["which"]) + (u[0] - 0.5) * 12, 0.9 + 0.22 * u[1],
                         ((u[2] - 0.5) * 0.1, (u[3] - 0.5) * 0.1))
        if u[4] < RESOLUTION_SHARE:
            m = int(14 + 40 * u[5])
            small = cv2.resize(crop, (m, m), interpolation=cv2.INTER_AREA)
            crop = cv2.resize(small, (64, 64), interpolation=cv2.INTER_LINEAR)
        yield int(label["cls"]), crop


def _scene_crops(job: tuple[int, Path, Path, str, Path]) -> int:
    """Cut one train scene's face crops; how many (0 for a scene still being rendered)."""
    import cv2

    k, folder, f, tag, root = job
    image = cv2.imread(str(folder / "train" / "images" / (f.stem + ".jpg")))
    if image is None:
        return 0
    rng = np.random.default_rng([SEED, k])
    n = 0
    for j, (cls, crop) in enumerate(train_crops(json.loads(f.read_text()), image, rng)):
        cv2.imwrite(str(root / "train" / cls_folder(cls) / f"{tag}_{j}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
        n += 1
    (root / ".done" / tag).touch()
    return n


def make_crops(data: list[Path], val: Path | None, work: Path, processes: int = 1) -> None:
    import cv2

    root = work / "crops"
    for c in range(len(CARD_CODES)):
        (root / "train" / cls_folder(c)).mkdir(parents=True, exist_ok=True)
        (root / "val" / cls_folder(c)).mkdir(parents=True, exist_ok=True)
    done_dir = root / ".done"
    done_dir.mkdir(exist_ok=True)
    files = [(d, f) for d, folder in enumerate(data) for f in sorted((folder / "train" / "truth").glob("*.json"))]
    # (k: the scene's own random stream, whatever else is done, so any number of processes cut the same crops)
    jobs = [(k, data[d], f, f"{d}_{f.stem}", root) for k, (d, f) in enumerate(files)
            if not (done_dir / f"{d}_{f.stem}").exists()]
    if processes > 1:
        from multiprocessing import Pool

        with Pool(processes) as pool:
            n = sum(pool.imap_unordered(_scene_crops, jobs, chunksize=8))
    else:
        n = sum(map(_scene_crops, jobs))
    print(f"[crops] {n} new train crops in {root / 'train'}")
    if val is None or any((root / "val").rglob("*.jpg")):
        return
    rng = np.random.default_rng(SEED)
    items = []
    for f in sorted((val / "val" / "truth").glob("*.json")):
        truth = json.loads(f.read_text())
        items += [(f, truth["image"], label) for label in truth["labels"] if card_quad(truth, label["where"])]
    cache: dict = {}
    for k in sorted(rng.choice(len(items), min(VAL_CROPS, len(items)), replace=False)):
        f, name, label = items[k]
        truth = cache.setdefault(f, json.loads(f.read_text()))
        image = cv2.imread(str(val / "val" / "images" / Path(name).name))
        crop = face_crop(image, np.asarray(label["box"], np.float64), 64,
                         card_angle(card_quad(truth, label["where"]), label["which"]))
        cv2.imwrite(str(root / "val" / cls_folder(int(label["cls"])) / f"v{k}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
    print(f"[crops] {min(VAL_CROPS, len(items))} val crops of held-out decks")


def train(work: Path, init: Path, epochs: int, lr: float, threads: int, device: str = "cpu", batch: int = 64,
          workers: int = 0, hours: float = 0.0) -> Path:
    """Fine-tune from ``init``; resumable. ``hours`` > 0: ultralytics' ``time`` (the epoch count fitted to it,
    a lent GPU's budget); ``device``, ``batch``, ``workers`` as ultralytics takes them."""
    import ultralytics_env

    ultralytics_env.setup(threads)
    from ultralytics import YOLO

    run = work / "train"
    last = run / "weights" / "last.pt"
    if (run / "weights" / "best.pt").exists() and not last.exists():
        return run / "weights" / "best.pt"
    if last.exists():
        import torch

        done = torch.load(last, map_location="cpu", weights_only=False).get("epoch", -1) == -1
        if done:
            return last
        YOLO(str(last)).train(resume=True)
        return last
    if not init.exists():
        raise SystemExit(f"{init} is missing: python tools/weights_from_onnx.py --only classifier")
    YOLO(str(init)).train(
        data=str(work / "crops"), project=str(work), name="train", exist_ok=True, seed=0, deterministic=False,
        plots=False, verbose=False, epochs=epochs, imgsz=64, batch=batch, fliplr=0.0, scale=0.2, erasing=0.1,
        auto_augment=None, optimizer="AdamW", lr0=lr, cache="ram", warmup_epochs=min(1, epochs), val=True,
        workers=workers, device=device, amp=device != "cpu", save_period=1, **({"time": hours} if hours else {}))
    return last


def export(work: Path, weights: Path) -> Path:
    import ultralytics_env

    ultralytics_env.setup(None)  # (torchvision's nms registered: loading a checkpoint needs it)
    from ultralytics import YOLO

    path = YOLO(str(weights)).export(format="onnx", imgsz=64, opset=17, simplify=True, dynamic=True, verbose=False)
    out = work / "face_classifier.onnx"
    shutil.copy(path, out)
    print(f"[export] {out}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", required=True, help="rendered datasets (train/truth, train/images)")
    ap.add_argument("--val", type=Path, default=None, help="a rendered dataset of held-out decks (val/truth)")
    ap.add_argument("--name", default="f1")
    ap.add_argument("--init", type=Path, default=REPO / "runs" / "recognition" / "from-onnx" / "classifier.pt")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--stages", default="crops,train,export")
    ap.add_argument("--processes", type=int, default=1, help="processes cutting the train crops (the same crops)")
    ap.add_argument("--device", default="cpu", help="ultralytics' device (0: the first GPU)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=0, help="data-loading processes")
    ap.add_argument("--hours", type=float, default=0.0, help="train for this long instead (the epochs fitted to it)")
    ap.add_argument("--work", type=Path, default=None, help="work folder (default runs/face/NAME)")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    work = args.work or REPO / "runs" / "face" / args.name
    stages = set(args.stages.split(","))
    if "crops" in stages:
        make_crops(args.data, args.val, work, args.processes)
    weights = work / "train" / "weights" / "last.pt"
    if not weights.exists():  # a lent machine's run brings back its best epoch alone
        weights = weights.with_name("best.pt")
    if "train" in stages:
        weights = train(work, args.init, args.epochs, args.lr, args.threads, args.device, args.batch, args.workers,
                        args.hours)
    if "export" in stages:
        export(work, weights)
    return 0


if __name__ == "__main__":
    sys.exit(main())
