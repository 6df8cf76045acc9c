"""Train the two-stage card recognition model on CPU, export it to ONNX, ship it to ``models/``.

    python tools/train.py --data data/synth_v2 --name r2 --det-epochs 4 --det-imgsz 512 --det-batch 8 \
        --cls-epochs 8 --crops 1 --cls-batch 32 --cls-min-px 12     # the r2 recipe (resumable, ~95 min)
    python tools/train.py --tiny                                     # end-to-end smoke run, < 1 min

Stages (each resumable; a finished stage is skipped, an interrupted one resumes from last.pt):

1. ``prepare``    detector dataset (labels folded to one class "corner", images symlinked) and
                  classifier crops made with ``companion.vision.detector.corner_crop`` - the very
                  function inference uses - with margin/offset/rotation jitter;
2. ``detector``   a narrow YOLO11 (width 0.125) finds index corners, from scratch;
3. ``classifier`` yolov8n-cls names a crop (52 classes), from scratch;
4. ``export``     both to ONNX (opset 17), ``recognition.json`` and the model card into ``--out``.

The detector and classifier stages run at once, one process and one core each (the classifier's
log goes to ``<work>/classifier.log``); ``--serial`` runs them one after the other.
Everything runs offline with one torch thread (tools/ultralytics_env.py). Work folder:
``runs/recognition/<name>/`` (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.cards import CARD_CODES  # noqa: E402
from companion.vision.model_files import (  # noqa: E402
    CLASSIFIER_FILE, DETECTOR_FILE, SETTINGS_FILE, RecognitionSettings,
)

STAGES = ("prepare", "detector", "classifier", "export")
DETECTOR_WIDTH = 0.125  # measured: 3x faster than yolo11n's 0.25 in ONNX Runtime (see MODEL_CARD.md)


def cls_folder(index: int) -> str:
    """Classifier class folder: zero-padded index first, so ultralytics' sorted order is deck order
    (index 52: the background class, crops of no index)."""
    return f"{index:02d}_{CARD_CODES[index]}" if index < len(CARD_CODES) else BACKGROUND_FOLDER


#: The classifier's optional 53rd class: crops of no index (``--negatives``).
BACKGROUND_FOLDER = f"{len(CARD_CODES):02d}_none"
#: ``--cls-turn``: a crop whose index lies more than a quarter turn off upright goes to its card's
#: "turned" folder, sorted after the upright ones (and the background): the net learns which way
#: an index lies beside what it names (``companion.vision.detector.fold_turned``).
TURNED_PREFIX = "t"
#: ``--cls-turn``: the share of train crops cut at any angle (the rest as they lie, +-10 degrees), so
#: that up and turned are learnt at every angle, not from the table's usual turn alone.
SPUN_SHARE = 0.25


def turned_folder(index: int) -> str:
    """The class folder of card ``index``'s indices lying turned (``--cls-turn``)."""
    return f"{TURNED_PREFIX}{index:02d}_{CARD_CODES[index]}"


def index_up_angle(quad, which: str) -> float:
    """Degrees an index corner's crop must be turned (``corner_crop(angle=...)``) to stand upright:
    from its quad (TL, TR, BR, BL in the card's own orientation) and which corner it is ("br": the
    card's second index, upside down on the card). Same sense as ``orientation.layout_angle``."""
    q = np.asarray(quad, np.float64)
    ux, uy = (q[0] + q[1] - q[2] - q[3]) / 2  # from the corner's bottom edge to its top, card frame
    if which == "br":
        ux, uy = -ux, -uy
    return float(np.degrees(np.arctan2(ux, -uy)))


def lies_turned(up_angle: float, crop_angle: float) -> bool:
    """Whether an index needing ``up_angle`` to stand upright still lies more than a quarter turn off
    upright in a crop turned by ``crop_angle``."""
    return abs((up_angle - crop_angle + 180.0) % 360.0 - 180.0) > 90.0


# -- data ------------------------------------------------------------------------------------
def read_labels(path: Path, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """YOLO label file -> (classes (N,), pixel boxes (N, 4))."""
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    if not rows:
        return np.zeros((0,), np.int64), np.zeros((0, 4), np.float32)
    a = np.array(rows, np.float64)
    cx, cy, w, h = a[:, 1] * width, a[:, 2] * height, a[:, 3] * width, a[:, 4] * height
    return a[:, 0].astype(np.int64), np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1).astype(np.float32)


def crop_jitter(u: np.ndarray, margin: float) -> tuple[float, tuple[float, float], float]:
    """A training crop's margin, shift and turn from four uniform numbers ``u``."""
    return margin * (0.85 + 0.4 * u[0]), ((u[1] - 0.5) * 0.16, (u[2] - 0.5) * 0.16), (u[3] - 0.5) * 20


def split_images(data: Path, split: str) -> list[Path]:
    folder = data / split / "images"
    return sorted(p for p in folder.glob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp"))


def prepare(data: Path, work: Path, settings: RecognitionSettings, crops_per_corner: int, seed: int,
            limit: int | None, val_data: Path | None = None, processes: int = 1, turn: bool = False) -> None:
    """Detector dataset (one class) and classifier crops; resumable per image.

    Takes the scenes present now (a dataset still being generated can be used: an image file
    appears only when its scene is complete); a later call adds the new ones. ``processes`` > 1
    cuts the images in parallel (a lent machine's many cores): the same files either way.
    ``turn`` (``--cls-turn``): crops of turned indices go to their card's turned folder, and a share
    of train crops (``SPUN_SHARE``) is cut at any angle; needs the truth files' corner quads.
    """
    rng = np.random.default_rng(seed)
    for split in ("train", "val"):
        root = val_data if (split == "val" and val_data is not None) else data
        images = split_images(root, split)[:limit]
        if not images:
            raise SystemExit(f"no images in {root / split / 'images'}")
        det_img, det_lab = work / "det" / split / "images", work / "det" / split / "labels"
        det_img.mkdir(parents=True, exist_ok=True)
        det_lab.mkdir(parents=True, exist_ok=True)
        for i in range(len(CARD_CODES)):
            (work / "cls" / split / cls_folder(i)).mkdir(parents=True, exist_ok=True)
            if turn:
                (work / "cls" / split / turned_folder(i)).mkdir(parents=True, exist_ok=True)
        n_crops = crops_per_corner if split == "train" else 1
        jobs = []
        for image_path in images:
            # Draw the jitter for every image, done or not, so a resumed run makes the same crops.
            jitter = rng.random((256, n_crops, 4))
            if turn:  # drawn only then: a run without --cls-turn cuts the crops it always did
                jitter = np.concatenate([jitter, rng.random((256, n_crops, 2))], 2)
            if not (det_lab / (image_path.stem + ".txt")).exists():
                jobs.append((image_path, root / split / "labels" / (image_path.stem + ".txt"), jitter))
        one = partial(_prepare_image, work=work, split=split, settings=settings, turn=turn)
        if processes > 1 and len(jobs) > 1:
            import multiprocessing as mp

            with mp.get_context("spawn").Pool(processes) as pool:
                for _ in pool.imap_unordered(one, jobs, chunksize=8):
                    pass
        else:
            for job in jobs:
                one(job)
    write_detector_yaml(work / "det")


def _prepare_image(job: tuple[Path, Path, np.ndarray], work: Path, split: str, settings: RecognitionSettings,
                   turn: bool = False) -> None:
    """One scene's classifier crops, detector image link and single-class labels (written last)."""
    import cv2

    from companion.vision.detector import corner_crop

    image_path, label_src, jitter = job
    det_img, label_dst = work / "det" / split / "images", work / "det" / split / "labels" / (image_path.stem + ".txt")
    image = cv2.imread(str(image_path))
    if image is None:
        print(f"warning: unreadable image {image_path}, skipped", file=sys.stderr)
        return
    h, w = image.shape[:2]
    classes, boxes = read_labels(label_src, w, h)
    ups = _index_up_angles(label_src, len(classes)) if turn else None
    for k, (c, box) in enumerate(zip(classes, boxes)):
        for j in range(jitter.shape[1]):
            u = jitter[k % 256, j]
            if split == "train":  # detector boxes are a little off: teach the classifier that
                margin, shift, angle = crop_jitter(u, settings.crop_margin)
                if turn and u[4] < SPUN_SHARE:
                    angle = (u[5] - 0.5) * 360.0
            else:
                margin, shift, angle = settings.crop_margin, (0.0, 0.0), 0.0
            crop = corner_crop(image, box, margin, settings.classifier_size, shift, angle)
            folder = cls_folder(int(c))
            if ups is not None and lies_turned(ups[k], angle):
                folder = turned_folder(int(c))
            out = work / "cls" / split / folder / f"{image_path.stem}_{k}_{j}.jpg"
            cv2.imwrite(str(out), crop, [cv2.IMWRITE_JPEG_QUALITY, 95])
    link = det_img / image_path.name
    if not link.exists():
        os.symlink(image_path.resolve(), link)
    # written last: marks done
    label_dst.write_text(corner_labels(label_src.read_text() if label_src.exists() else ""))


def _index_up_angles(label_src: Path, n: int) -> list[float]:
    """Each label line's ``index_up_angle``, from the scene's truth file (its "labels" list holds the
    same lines in the same order, each with its corner's quad)."""
    truth_path = label_src.parent.parent / "truth" / (label_src.stem + ".json")
    labels = json.loads(truth_path.read_text()).get("labels", []) if truth_path.exists() else []
    if len(labels) != n or any("quad" not in lab for lab in labels):
        # (not SystemExit: raised in a pool worker, that would leave the pool waiting for its result)
        raise ValueError(f"--cls-turn needs {truth_path} with a quad for each of its {n} labels "
                         "(scenes rendered by this version of tools/make_dataset.py)")
    return [index_up_angle(lab["quad"], lab.get("which", "tl")) for lab in labels]


def corner_labels(text: str) -> str:
    """A YOLO label file's boxes, every one of the detector's single class "corner"."""
    lines = [f"0 {' '.join(parts[1:5])}" for parts in (ln.split() for ln in text.splitlines()) if len(parts) >= 5]
    return "\n".join(lines) + ("\n" if lines else "")


def write_detector_yaml(det: Path) -> Path:
    """The ultralytics dataset file of a one-class detector folder (train/ and val/), absolute path."""
    path = det / "data.yaml"
    path.write_text(f"path: {det.resolve()}\ntrain: train/images\nval: val/images\nnames:\n  0: corner\n")
    return path


def _negative_boxes(truth: dict, boxes: np.ndarray, per_image: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Boxes the size of the image's index corners lying on no index: one on the stock's back (when
    there is a stock), on the faces of pyramid cards (pips, pictures) and anywhere (table, hands)."""
    import cv2

    if len(boxes) == 0:
        return []
    # every index corner of the pyramid, seen or not (a mostly covered one still shows a bit)
    hidden = [c["box"] for row in truth.get("pyramid", []) for card in row for c in card.get("corners", [])]
    avoid = np.vstack([boxes, np.array(hidden, np.float32).reshape(-1, 4)])
    # centre and half-extent of each corner box grown to twice its size
    grown = np.hstack([(avoid[:, :2] + avoid[:, 2:]) / 2, avoid[:, 2:] - avoid[:, :2]])
    quads = [np.array(c["quad"], np.float32) for row in truth.get("pyramid", []) for c in row
             if c.get("card") and c.get("quad")]
    stock = truth.get("stock") or {}
    out: list[np.ndarray] = []
    for j in range(per_image):
        if j == 0 and stock.get("present") and stock.get("quad"):
            area = np.array(stock["quad"], np.float32)
        elif j < per_image - 1 and quads:
            area = quads[int(rng.integers(len(quads)))]
        else:
            area = np.array([[0, 0], [truth["width"], 0], [truth["width"], truth["height"]], [0, truth["height"]]],
                            np.float32)
        x1, y1 = area.min(0)
        x2, y2 = area.max(0)
        for _ in range(20):
            b = boxes[int(rng.integers(len(boxes)))]
            w, h = ((b[2:] - b[:2]) * rng.uniform(0.8, 1.25)).clip(4, None)
            c = rng.uniform([x1, y1], [x2, y2])
            if cv2.pointPolygonTest(area, (float(c[0]), float(c[1])), False) < 0:
                continue
            if (np.abs(c - grown[:, :2]) < grown[:, 2:]).all(1).any():  # near an index: not a negative
                continue
            out.append(np.array([c[0] - w / 2, c[1] - h / 2, c[0] + w / 2, c[1] + h / 2], np.float32))
            break
    return out


def prepare_negatives(data: Path, work: Path, settings: RecognitionSettings, per_image: int, seed: int,
                      limit: int | None, val_data: Path | None = None) -> None:
    """Background-class crops (``BACKGROUND_FOLDER``): ``per_image`` per scene, cut as the corners'
    are; resumable per image, and each image's boxes come from its own seeded generator."""
    import cv2

    from companion.vision.detector import corner_crop

    for split in ("train", "val"):
        root = val_data if (split == "val" and val_data is not None) else data
        folder = work / "cls" / split / BACKGROUND_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        done = {p.name.split("_n")[0] for p in folder.glob("*_n*.jpg")}
        for index, image_path in enumerate(split_images(root, split)[:limit]):
            truth_path = root / split / "truth" / (image_path.stem + ".json")
            if image_path.stem in done or not truth_path.exists():
                continue
            image = cv2.imread(str(image_path))
            if image is None:
                continue
            h, w = image.shape[:2]
            _, boxes = read_labels(root / split / "labels" / (image_path.stem + ".txt"), w, h)
            rng = np.random.default_rng([seed, index, split == "val"])
            for j, box in enumerate(_negative_boxes(json.loads(truth_path.read_text()), boxes, per_image, rng)):
                u = rng.random(4)
                margin = settings.crop_margin * (0.85 + 0.4 * u[0]) if split == "train" else settings.crop_margin
                crop = corner_crop(image, box, margin, settings.classifier_size, angle=(u[3] - 0.5) * 20)
                cv2.imwrite(str(folder / f"{image_path.stem}_n{j}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 95])


def parse_repeat(text: str) -> tuple[str, int]:
    """``--cls-repeat``'s "RANKS:N" (e.g. "JQK:2"): crops of cards of these ranks appear N times."""
    ranks, _, times = text.partition(":")
    if not ranks or not set(ranks) <= set("A23456789TJQK") or not times.isdigit() or int(times) < 1:
        raise ValueError(f"--cls-repeat wants RANKS:N such as 'JQK:2', not {text!r}")
    return ranks, int(times)


def filter_crops(data: Path, work: Path, min_px: float, sharp_only: bool, repeat: str = "") -> Path:
    """A classifier train folder of symlinks to the readable crops only (curriculum for short runs).

    Keeps crops whose corner box's shorter side is >= ``min_px`` in the frame and, with
    ``sharp_only``, whose scene has no blur; with ``repeat`` ("JQK:2") the kept crops of those ranks
    are linked N times (the courts are the classifier's most confused cards). Val stays complete.
    """
    ranks, times = parse_repeat(repeat) if repeat else ("", 1)
    out = work / f"cls_min{min_px:g}{'_sharp' if sharp_only else ''}{f'_x{ranks}{times}' if ranks else ''}"
    if (out / "train").exists():
        return out
    kept = total = 0
    for folder in (work / "cls" / "train").iterdir():  # every class, kept crops or not (turned ones too)
        if folder.is_dir() and folder.name != BACKGROUND_FOLDER:
            (out / "train" / folder.name).mkdir(parents=True, exist_ok=True)
    label_cache: dict[str, tuple[np.ndarray, bool, int, int]] = {}
    for crop in sorted((work / "cls" / "train").glob("*/*.jpg")):
        if crop.parent.name == BACKGROUND_FOLDER:  # no corner, no size: all kept
            (out / "train" / BACKGROUND_FOLDER).mkdir(exist_ok=True)
            os.symlink(crop.resolve(), out / "train" / BACKGROUND_FOLDER / crop.name)
            continue
        stem, k, _ = crop.stem.rsplit("_", 2)
        if stem not in label_cache:
            rows = [ln.split() for ln in (data / "train" / "labels" / f"{stem}.txt").read_text().splitlines() if ln.strip()]
            truth = data / "train" / "truth" / f"{stem}.json"
            meta = json.loads(truth.read_text()) if truth.exists() else {}
            cond = meta.get("conditions", {})
            label_cache[stem] = (np.array(rows, float).reshape(-1, 5), cond.get("blur", "none") in ("none", None),
                                 meta.get("width", 1280), meta.get("height", 720))
        rows, sharp, width, height = label_cache[stem]
        total += 1
        w, h = rows[int(k), 3] * width, rows[int(k), 4] * height  # YOLO labels are relative to the frame
        if min(w, h) >= min_px and (sharp or not sharp_only):
            copies = times if crop.parent.name.split("_")[1][0] in ranks else 1
            for c in range(copies):
                os.symlink(crop.resolve(), out / "train" / crop.parent.name / (f"{crop.stem}_x{c}.jpg" if c else crop.name))
            kept += 1
    os.symlink((work / "cls" / "val").resolve(), out / "val")
    print(f"[classifier] curriculum: {kept} of {total} train crops kept (min {min_px} px, sharp only {sharp_only}"
          f"{f'; ranks {ranks} linked {times} times' if ranks else ''})")
    return out


def detector_yaml(work: Path) -> Path:
    import ultralytics
    import yaml

    cfg = yaml.safe_load((Path(ultralytics.__file__).parent / "cfg/models/11/yolo11.yaml").read_text())
    cfg["nc"] = 1
    cfg["scales"] = {"n": [0.50, DETECTOR_WIDTH, 1024]}
    path = work / "yolo11n-corner.yaml"  # the name must say 'yolo11n': ultralytics reads the scale from it
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


# -- training --------------------------------------------------------------------------------
def _train(kind: str, work: Path, model_cfg: str | Path, **kwargs) -> Path:
    """Train (or resume) one ultralytics model into work/<kind>; returns best.pt."""
    from ultralytics import YOLO

    run = work / kind
    last, best = run / "weights" / "last.pt", run / "weights" / "best.pt"
    if (run / "done").exists() and best.exists():
        print(f"[{kind}] already trained: {best}")
        return best
    if last.exists():
        print(f"[{kind}] resuming from {last}")
        YOLO(str(last)).train(resume=True)
    else:
        YOLO(str(model_cfg)).train(project=str(work), name=kind, exist_ok=True, seed=0, deterministic=False,
                                   plots=False, verbose=False, **kwargs)
    (run / "done").write_text(time.strftime("%Y-%m-%d %H:%M:%S\n"))
    return best if best.exists() else last


def last_metrics(run: Path) -> dict[str, float]:
    import csv

    path = run / "results.csv"
    if not path.exists():
        return {}
    rows = list(csv.DictReader(path.open()))
    return {k.strip(): float(v) for k, v in rows[-1].items() if v.strip()} if rows else {}


# -- export ----------------------------------------------------------------------------------
def export(work: Path, out: Path, settings: RecognitionSettings, info: dict) -> None:
    from ultralytics import YOLO

    def weights(kind: str) -> str:  # best.pt, or last.pt of a run stopped early
        folder = work / kind / "weights"
        return str(folder / "best.pt" if (folder / "best.pt").exists() else folder / "last.pt")

    det, cls = YOLO(weights("detector")), YOLO(weights("classifier"))
    names = [cls.names[i] for i in range(len(cls.names))]
    background = names[-1:] == [BACKGROUND_FOLDER]
    if names[:len(names) - background] != [cls_folder(i) for i in range(len(CARD_CODES))]:
        raise SystemExit(f"classifier classes are not in deck order: {names[:5]}...")
    settings = replace(settings, background=background)
    # the net as built (its YAML's name), whether trained from a YAML or from another run's weights
    info["classifier_model"] = Path(str(cls.model.yaml.get("yaml_file", "yolov8n-cls.yaml"))).stem
    det_onnx = det.export(format="onnx", imgsz=list(settings.detector_size), opset=17, simplify=True,
                          dynamic=False, verbose=False)
    cls_onnx = cls.export(format="onnx", imgsz=settings.classifier_size, opset=17, simplify=True,
                          dynamic=True, verbose=False)
    # Re-read what the training runs recorded (stages may have run in separate processes).
    for kind in ("detector", "classifier"):
        metrics = last_metrics(work / kind)
        info[f"{kind}_metrics"] = metrics
        if "time" in metrics:
            info["stage_seconds"][kind] = metrics["time"]
            info[f"{kind}_epochs_done"] = int(metrics.get("epoch", 0))
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(det_onnx, out / DETECTOR_FILE)
    shutil.copyfile(cls_onnx, out / CLASSIFIER_FILE)
    (out / SETTINGS_FILE).write_text(settings.to_json())
    info["sizes_mb"] = {f: round((out / f).stat().st_size / 1e6, 2) for f in (DETECTOR_FILE, CLASSIFIER_FILE)}
    (work / "info.json").write_text(json.dumps(info, indent=2))
    write_model_card(out, info)
    print(f"[export] {out / DETECTOR_FILE} {out / CLASSIFIER_FILE} {out / SETTINGS_FILE}")


CARD_EVAL_BEGIN = "<!-- evaluation: written by tools/evaluate.py --card -->"
CARD_EVAL_END = "<!-- end of evaluation -->"


def write_model_card(out: Path, info: dict) -> None:
    card = out / "MODEL_CARD.md"
    evaluation = f"{CARD_EVAL_BEGIN}\n(not evaluated yet: python tools/evaluate.py --card)\n{CARD_EVAL_END}"
    if card.exists():
        old = card.read_text()
        if CARD_EVAL_BEGIN in old and CARD_EVAL_END in old:
            evaluation = old[old.index(CARD_EVAL_BEGIN):old.index(CARD_EVAL_END) + len(CARD_EVAL_END)]
    det, cls = info.get("detector_metrics", {}), info.get("classifier_metrics", {})
    s = info["settings"]
    minutes = {k: round(v / 60, 1) for k, v in info.get("stage_seconds", {}).items()}
    text = f"""# Card recognition model (two stages, ONNX)

Files: `{DETECTOR_FILE}` ({info['sizes_mb'][DETECTOR_FILE]} MB), `{CLASSIFIER_FILE}`
({info['sizes_mb'][CLASSIFIER_FILE]} MB), `{SETTINGS_FILE}` (input sizes, crop margin, thresholds).
Runs with ONNX Runtime + OpenCV (`companion.vision.detector.OnnxCardDetector`); torch is not needed.

## Design
1. **Corner detector**: YOLO11 with width multiple {DETECTOR_WIDTH} (half of yolo11n's), one class
   "index corner", input {s['detector_size'][1]}x{s['detector_size'][0]} (a 1280x720 frame letterboxed).
   The narrow net was measured about 3x faster than yolo11n in ONNX Runtime at the same input size
   (untrained exports, 1 thread, loaded machine: 34 vs 96 ms at 512x288, 62 vs 159 ms at 640x384),
   which is what lets a 512-640 px wide input (small cards still visible) fit the frame budget.
2. **Card classifier**: {info.get('classifier_model', 'yolov8n-cls')}, 52 classes in `CARD_CODES` order, on a {s['classifier_size']} px square crop
   of side {s['crop_margin']} x the corner box taken from the **full-resolution** frame (the glyphs are
   read at camera resolution, not at detector resolution). Top-4 probabilities give `alt_class_id`.
   Score of a detection = corner score x class probability.
Both are trained from scratch (ultralytics model YAMLs, no hub weights), offline, one CPU thread.

## Data
`{info.get('data', '?')}` ({info.get('train_images', '?')} train / {info.get('val_images', '?')} val scenes; val uses
held-out deck designs only). How it was made: see `{info.get('data', '?')}/README.txt`:

```
{info.get('data_readme', '').strip()[:1500]}
```

## Training
Command: `{info.get('command', '?')}`
Time (minutes, this 2-core CPU, one torch thread, machine shared): {json.dumps(minutes)}
Detector: {info.get('detector_epochs_done', '?')} epochs at imgsz {info.get('detector_imgsz', '?')}; classifier:
{info.get('classifier_epochs_done', '?')} epochs, {info.get('crops_per_corner', '?')} jittered crops per labelled corner.

Validation at the end of training (held-out decks):
- detector: precision {det.get('metrics/precision(B)', float('nan')):.4f}, recall {det.get('metrics/recall(B)', float('nan')):.4f},
  mAP50 {det.get('metrics/mAP50(B)', float('nan')):.4f}, mAP50-95 {det.get('metrics/mAP50-95(B)', float('nan')):.4f}
- classifier: top-1 {cls.get('metrics/accuracy_top1', float('nan')):.4f}, top-5 {cls.get('metrics/accuracy_top5', float('nan')):.4f}

## Evaluation (tools/evaluate.py)
{evaluation}
"""
    card.write_text(text)


# -- tiny smoke data ---------------------------------------------------------------------------
def write_tiny_dataset(root: Path, seed: int = 0, train: int = 8, val: int = 4) -> Path:
    """Throw-away scenes: white 'cards' with a drawn 'QH'-style index on noise, YOLO labels."""
    import cv2

    rng = np.random.default_rng(seed)
    names = {"train": train, "val": val}
    for split, count in names.items():
        (root / split / "images").mkdir(parents=True, exist_ok=True)
        (root / split / "labels").mkdir(parents=True, exist_ok=True)
        (root / split / "truth").mkdir(parents=True, exist_ok=True)
        k = 0
        for n in range(count):
            h, w = 240, 320
            img = rng.integers(0, 120, (h, w, 3), dtype=np.uint8)
            lines = []
            cards = []  # the truth's card quads: where --negatives finds faces without an index
            for r in range(3):
                for c in range(5):
                    x, y = 10 + c * 62, 10 + r * 76
                    cv2.rectangle(img, (x, y), (x + 52, y + 70), (235, 235, 235), -1)
                    idx = k % 52
                    k += 1
                    code = CARD_CODES[idx]
                    cards.append({"card": code, "quad": [[x, y], [x + 52, y], [x + 52, y + 70], [x, y + 70]]})
                    color = (0, 0, 200) if code[1] in "DH" else (20, 20, 20)
                    cv2.putText(img, code[0], (x + 3, y + 15), cv2.FONT_HERSHEY_SIMPLEX, 0.5, color, 2)
                    cv2.putText(img, code[1], (x + 3, y + 31), cv2.FONT_HERSHEY_SIMPLEX, 0.5, color, 2)
                    x1, y1, x2, y2 = x + 1, y + 2, x + 18, y + 34
                    lines.append(f"{idx} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} {(x2 - x1) / w:.6f} {(y2 - y1) / h:.6f}")
            name = f"{split}_{n:04d}"
            cv2.imwrite(str(root / split / "images" / f"{name}.jpg"), img)
            (root / split / "labels" / f"{name}.txt").write_text("\n".join(lines) + "\n")
            (root / split / "truth" / f"{name}.json").write_text(json.dumps(
                {"width": w, "height": h, "pyramid": [cards], "stock": {"present": False}}))
    return root


def _without_stages(argv: list[str]) -> list[str]:
    """The recipe command: the same arguments without --stages (the card shows the whole recipe)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--stages":
            skip = True
        elif not a.startswith("--stages="):
            out.append(a)
    return out


# -- main --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, help="dataset root with train/ and val/ (tools/make_dataset.py output)")
    p.add_argument("--name", default="v1", help="work folder runs/recognition/NAME")
    p.add_argument("--out", type=Path, help="where the ONNX files go (default models/; --tiny: the work folder)")
    p.add_argument("--stages", default=",".join(STAGES), help=f"comma list of {', '.join(STAGES)}")
    p.add_argument("--det-epochs", type=int, default=6)
    p.add_argument("--det-imgsz", type=int, default=640)
    p.add_argument("--det-batch", type=int, default=16)
    p.add_argument("--det-size", default="384x640", help="exported detector input HxW")
    p.add_argument("--cls-epochs", type=int, default=4)
    p.add_argument("--cls-imgsz", type=int, default=64)
    p.add_argument("--faint-conf", type=float, default=0.1,
                   help="exported setting: fainter corners (down to this) count when named surely; 0: never")
    p.add_argument("--multi-crop-below", type=float, default=0.9,
                   help="exported setting: corners named less sure than this are named again from two more crops; 0: never")
    p.add_argument("--cls-lr", type=float, default=0.002)
    p.add_argument("--cls-hue", type=float, default=0.015,
                   help="classifier colour jitter's hue range (0.5 turns hues all the way round: four-colour decks)")
    p.add_argument("--det-init", help="start the detector from these weights (e.g. an earlier run's last.pt)")
    p.add_argument("--det-lr", type=float, default=0.002)
    p.add_argument("--cls-min-px", type=float, default=0, help="train the classifier only on corners this big")
    p.add_argument("--cls-repeat", default="",
                   help="RANKS:N, e.g. JQK:2: the train crops of cards of these ranks count N times")
    p.add_argument("--cls-turn", action="store_true",
                   help="prepare: label each crop upright or turned (52 more classes; a quarter of train crops "
                        "cut at any angle); needs scenes whose truth gives each label's corner quad")
    p.add_argument("--cls-sharp-only", action="store_true", help="... and only on scenes without blur")
    p.add_argument("--cls-init", help="start the classifier from these weights (e.g. an earlier run's last.pt)")
    p.add_argument("--cls-model", default="yolov8n-cls.yaml",
                   help="the classifier's net when not started from --cls-init (an ultralytics model YAML, "
                        "e.g. yolov8s-cls.yaml: twice as wide, about 3x the CPU time a crop)")
    p.add_argument("--cls-batch", type=int, default=32, help="small batches: more updates per CPU second")
    p.add_argument("--det-cache", choices=("ram", "none"), default="ram",
                   help="keep the detector's resized train images in memory (no JPEG decoding each epoch)")
    p.add_argument("--det-val", type=int, default=0, help="validate the detector every epoch (1) or at the end (0)")
    p.add_argument("--crops", type=int, default=2, help="jittered classifier crops per train corner")
    p.add_argument("--negatives", type=int, default=0,
                   help="background-class crops (no index: stock back, card faces, table) per scene; 0: no such class")
    p.add_argument("--limit", type=int, help="use only the first N images of each split")
    p.add_argument("--val-data", type=Path, help="take the val split from this dataset root instead")
    p.add_argument("--workers", type=int, default=0, help="dataloader processes (0: stay on one core)")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--device", default="cpu",
                   help="torch device: cpu (the recipe) or a GPU index such as 0 (tools/device_train_detector.sh)")
    p.add_argument("--det-time", type=float,
                   help="train the detector for this many hours instead of a fixed epoch count (ultralytics' "
                        "time budget; --det-epochs is then only the first guess)")
    p.add_argument("--prepare-processes", type=int, default=1,
                   help="cut classifier crops in this many processes (the same crops either way)")
    p.add_argument("--cls-time", type=float,
                   help="classifier: hours to train, best epoch kept (ultralytics' time budget; "
                        "--cls-epochs is then only the first guess)")
    p.add_argument("--tiny", action="store_true", help="end-to-end smoke run on throw-away drawn data")
    p.add_argument("--work", type=Path, help="work folder (default runs/recognition/NAME or .../tiny)")
    p.add_argument("--serial", action="store_true",
                   help="train the classifier after the detector (default: both at once, one core each)")
    args = p.parse_args(argv)
    if args.cls_repeat:
        try:
            parse_repeat(args.cls_repeat)
        except ValueError as e:
            p.error(str(e))

    from tools import ultralytics_env

    ultralytics_env.setup(threads=args.threads)
    if args.tiny:
        work = (args.work or ultralytics_env.RUNS_DIR / "recognition" / "tiny").resolve()
        if "prepare" in args.stages:  # a fresh smoke run; a later stage (the classifier process) reuses it
            shutil.rmtree(work, ignore_errors=True)
            write_tiny_dataset(work / "data")
        data = work / "data"
        args.det_epochs, args.det_imgsz, args.det_batch, args.det_size = 1, 160, 4, "96x128"
        args.cls_epochs, args.cls_imgsz, args.crops, args.negatives = 1, 32, 1, 2
        out = args.out or work / "models"
    else:
        if args.data is None:
            p.error("--data is required (or --tiny)")
        data = args.data.resolve()
        work = (args.work or ultralytics_env.RUNS_DIR / "recognition" / args.name).resolve()
        out = args.out or REPO / "models"
    work.mkdir(parents=True, exist_ok=True)
    h, w = (int(v) for v in args.det_size.lower().split("x"))
    settings = RecognitionSettings(detector_size=(h, w), classifier_size=args.cls_imgsz,
                                   faint_conf=args.faint_conf if args.faint_conf > 0 else None,
                                   multi_crop_below=args.multi_crop_below if args.multi_crop_below > 0 else None)
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    bad = [s for s in stages if s not in STAGES]
    if bad:
        p.error(f"unknown stage(s) {bad}; choose from {list(STAGES)}")

    info_path = work / "info.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    info.setdefault("stage_seconds", {})
    readme = data / "README.txt"
    info.update(data=str(data.relative_to(REPO) if data.is_relative_to(REPO) else data),
                data_readme=readme.read_text() if readme.exists() else "",
                train_images=len(split_images(data, "train")[:args.limit]),
                val_images=len(split_images(args.val_data or data, "val")[:args.limit]),
                val_data=str(args.val_data or data),
                command="python tools/train.py " + " ".join(_without_stages(argv if argv is not None else sys.argv[1:])),
                detector_epochs=args.det_epochs, detector_imgsz=args.det_imgsz, classifier_epochs=args.cls_epochs,
                crops_per_corner=args.crops, settings=json.loads(settings.to_json()))

    def timed(stage: str, fn) -> None:
        t0 = time.time()
        fn()
        info["stage_seconds"][stage] = info["stage_seconds"].get(stage, 0) + time.time() - t0
        info_path.write_text(json.dumps(info, indent=2))

    # amp stays off: its start-up check loads hub weights (offline: fails), and these nets are tiny.
    common = dict(workers=args.workers, device=args.device, amp=False)
    if "prepare" in stages:
        timed("prepare", lambda: prepare(data, work, settings, args.crops, seed=0, limit=args.limit,
                                         val_data=args.val_data and args.val_data.resolve(),
                                         processes=args.prepare_processes, turn=args.cls_turn))
        if args.negatives > 0:
            timed("prepare", lambda: prepare_negatives(data, work, settings, args.negatives, seed=0, limit=args.limit,
                                                       val_data=args.val_data and args.val_data.resolve()))
    classifier_job = None
    if "detector" in stages and "classifier" in stages and not args.serial:
        # The two stages share nothing until export: one core each halves the recipe's wall time.
        classifier_job = start_classifier_process(argv if argv is not None else sys.argv[1:], work)
        stages.remove("classifier")
    if "detector" in stages:
        if not (work / "det" / "data.yaml").exists():  # a packed folder (tools/pack_detector_data.py) as det/
            write_detector_yaml(work / "det")
        timed("detector", lambda: _train(
            "detector", work, args.det_init or detector_yaml(work), data=str(work / "det" / "data.yaml"), epochs=args.det_epochs,
            imgsz=args.det_imgsz, batch=args.det_batch, warmup_epochs=min(1, args.det_epochs), degrees=0.0,
            close_mosaic=max(1, args.det_epochs // 4), patience=100, optimizer="AdamW", lr0=args.det_lr, val=bool(args.det_val),
            cache=False if args.det_cache == "none" else args.det_cache,
            **({"time": args.det_time} if args.det_time else {}), **common))
        info["detector_metrics"] = last_metrics(work / "detector")
    if "classifier" in stages:
        cls_data = work / "cls"
        if args.cls_min_px > 0 or args.cls_sharp_only or args.cls_repeat:
            cls_data = filter_crops(data, work, args.cls_min_px, args.cls_sharp_only, args.cls_repeat)
        timed("classifier", lambda: _train(
            "classifier", work, args.cls_init or args.cls_model, data=str(cls_data), epochs=args.cls_epochs,
            imgsz=args.cls_imgsz, batch=args.cls_batch, fliplr=0.0, scale=0.2, erasing=0.1, auto_augment=None,
            hsv_h=args.cls_hue,
            # 'auto' picks AdamW at lr 0.00018 for 52 classes: far too slow for a few epochs from scratch
            optimizer="AdamW", lr0=args.cls_lr, cache="ram", warmup_epochs=min(1, args.cls_epochs), val=True,
            **({"time": args.cls_time} if args.cls_time else {}), **common))
        info["classifier_metrics"] = last_metrics(work / "classifier")
    if classifier_job is not None:
        code = classifier_job.wait()
        info["classifier_metrics"] = last_metrics(work / "classifier")  # export re-reads the times too
        if code != 0:
            raise SystemExit(f"classifier stage failed (exit {code}); see {work / 'classifier.log'}")
    if "export" in stages:
        timed("export", lambda: export(work, out, settings, info))
    return 0


def start_classifier_process(argv: list[str], work: Path):
    """The classifier stage of the same recipe in a child process, logging to work/classifier.log."""
    import subprocess

    args = _without_stages(argv) + ["--stages", "classifier"]
    log = (work / "classifier.log").open("a")
    print(f"[classifier] training in a second process (log: {work / 'classifier.log'})")
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *args], stdout=log,
                            stderr=subprocess.STDOUT, cwd=REPO)


if __name__ == "__main__":
    sys.exit(main())
