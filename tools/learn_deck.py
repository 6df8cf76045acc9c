"""Fine-tune the card classifier on your own deck: the corners saved when you confirmed deals.

    python tools/learn_deck.py --samples DIR                 # writes DIR/../learned-model
    bash run-app.sh --models DIR/../learned-model

The app saves the index corners of every deal you confirm in ``<app data>/deck-samples`` (the
status bar says where; ``companion/vision/deck_samples.py``). Each is a picture of *your* deck
named by you. Steps (a few minutes on a 2-core CPU for a handful of deals):

1. a trainable classifier rebuilt from the ONNX model in ``--models`` (``weights_from_onnx``);
2. training crops: each sample ``--reps`` times with the training jitter (size, shift, turn),
   plus replay crops of rendered scenes (``--replay`` dataset roots; by default ``--replay-scenes``
   scenes of procedurally drawn decks rendered into the work folder) so the cards your deals did
   not show, and other decks, are not forgotten;
3. ``--epochs`` of training at ``--lr``, then export to ONNX;
4. ``--out``: a copy of ``--models`` with the new classifier, and a section in its model card;
5. a check: with samples from 3 or more deals, the last deal is held out of training; both models
   name its corners (one crop each) and read its frame as a still (pyramid slots right). When the
   learned model does worse on either, nothing is written (``--keep-worse`` writes it anyway);
   ``--use-all`` trains on every deal instead and checks nothing.

Needs the ``train`` extra (torch, ultralytics). Measured figures: ``tools/evaluate_learning.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.vision.deck_samples import ConfirmedFrame, CornerSample, load_frames, load_samples  # noqa: E402
from companion.vision.model_files import (  # noqa: E402
    CLASSIFIER_FILE, RecognitionSettings, copy_with_first_classifier, model_paths,
)

CARD_SECTION = "## Learned from your deck"


def jitter(rng: np.random.Generator, margin: float) -> tuple[float, tuple[float, float], float]:
    """Crop margin, shift and turn as ``tools/train.py`` draws them for training crops."""
    from tools.train import crop_jitter

    return crop_jitter(rng.random(4), margin)


def sample_crops(samples: Sequence[CornerSample], folder: Path, reps: int, settings: RecognitionSettings,
                 rng: np.random.Generator, prefix: str = "s") -> int:
    """``reps`` jittered classifier crops of each sample, in class folders under ``folder``."""
    import cv2

    from companion.vision.detector import corner_crop
    from tools.train import cls_folder

    n = 0
    for k, s in enumerate(samples):
        image = s.image()
        for j in range(reps):
            margin, shift, angle = jitter(rng, settings.crop_margin) if reps > 1 else (settings.crop_margin, (0, 0), 0)
            crop = corner_crop(image, np.array(s.box), margin, settings.classifier_size, shift, angle)
            out = folder / cls_folder(s.card.index) / f"{prefix}{k:05d}_{j}.png"
            out.parent.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(out), crop)
            n += 1
    return n


def replay_crops(roots: Sequence[Path], folder: Path, settings: RecognitionSettings, rng: np.random.Generator,
                 wanted: dict[int, int]) -> int:
    """``wanted[c]`` jittered crops of class ``c`` from the labelled corners of the rendered train
    scenes under ``roots`` (each corner used in turn, again with new jitter when a class needs more)."""
    import cv2

    from companion.vision.detector import corner_crop
    from tools.train import cls_folder, read_labels

    corners: dict[int, list[tuple[Path, np.ndarray]]] = {}
    for root in roots:
        for image_path in sorted((root / "train" / "images").glob("*.jpg")):
            label = root / "train" / "labels" / (image_path.stem + ".txt")
            # (YOLO labels are relative: the image size comes when the image is read)
            for c, box in zip(*read_labels(label, 1, 1)):
                corners.setdefault(int(c), []).append((image_path, box))
    plan: dict[Path, list[tuple[int, np.ndarray, int]]] = {}
    for c, n in wanted.items():
        have = corners.get(c, [])
        for k in range(n if have else 0):
            path, box = have[k % len(have)]
            plan.setdefault(path, []).append((c, box, k))
    made = 0
    for path, todo in sorted(plan.items()):
        image = cv2.imread(str(path))
        if image is None:
            continue
        h, w = image.shape[:2]
        for c, box, k in todo:
            margin, shift, angle = jitter(rng, settings.crop_margin)
            out = folder / cls_folder(c) / f"r_{path.stem}_{k}.jpg"
            out.parent.mkdir(parents=True, exist_ok=True)
            crop = corner_crop(image, box * np.array([w, h, w, h], np.float32), margin, settings.classifier_size,
                               shift, angle)
            cv2.imwrite(str(out), crop, [cv2.IMWRITE_JPEG_QUALITY, 95])
            made += 1
    return made


def balanced_replay(sample_counts: dict[int, int], classes: int, replay_per_class: int) -> dict[int, int]:
    """Replay crops per class so that every class ends with as many training crops (samples and
    replay): the cards the deals showed would otherwise be favoured over the others."""
    top = max(sample_counts.values(), default=0) + replay_per_class
    return {c: top - sample_counts.get(c, 0) for c in range(classes)}


def render_replay(work: Path, scenes: int, seed: int) -> Path:
    """``scenes`` rendered scenes of procedurally drawn decks (no card art needed; resumable)."""
    from tools.make_dataset import main as make_dataset

    root = work / "replay"
    have = len(list((root / "train" / "images").glob("*.jpg"))) if (root / "train").exists() else 0
    if have < scenes:
        make_dataset(["--seed", str(seed), "--count", str(scenes), "--split", "train", "--out", str(root),
                      "--decks", "proc", "--workers", "1"])
    return root


def named_right(models: Path, samples: Sequence[CornerSample]) -> tuple[int, int]:
    """How many ``samples`` the classifier in ``models`` names right from one crop (the follower's way)."""
    from companion.vision.detector import OnnxCardDetector

    det = OnnxCardDetector(models, multi_crop_below=0)
    right = 0
    for s in samples:
        probs = det.classify(s.image(), np.array([s.box], np.float32))
        right += int(np.argmax(probs[0])) == s.card.index
    return right, len(samples)


def layout_right(models: Path, frames: Sequence[ConfirmedFrame]) -> tuple[int, int, int]:
    """Pyramid slots read right, all slots, and frames read exactly, of the confirmed ``frames``,
    each read as a still (the pipeline and the model in ``models``, as ``recognize`` reads a picture)."""
    from companion.rules import Rules
    from companion.vision.detector import OnnxCardDetector
    from companion.vision.pipeline import LayoutPipeline

    det = OnnxCardDetector(models)
    right = total = exact = 0
    for f in frames:
        image = f.image()
        wrong = 0
        reading = LayoutPipeline(det, rules=Rules.parse(f.rules), track=False).read_image(image, det.detect(image))
        got = [] if reading.layout is None else [[s.card for s in row] for row in reading.layout.pyramid]
        for r, row in enumerate(f.pyramid):
            for i, card in enumerate(row):
                ok = r < len(got) and i < len(got[r]) and got[r][i] == card
                total += 1
                right += ok
                wrong += not ok
        exact += wrong == 0
    return right, total, exact


def by_deal(samples: Sequence[CornerSample]) -> list[list[CornerSample]]:
    """Samples grouped by the confirmation that saved them (its time stamp), in order."""
    deals: dict[str, list[CornerSample]] = {}
    for s in samples:
        deals.setdefault(s.saved, []).append(s)
    return [deals[k] for k in sorted(deals)]


def learn(samples: Sequence[CornerSample], models: Path, out: Path, work: Path, *, replay: Sequence[Path] = (),
          replay_scenes: int = 80, replay_per_class: int = 40, reps: int = 8, epochs: int = 3, lr: float = 5e-4,
          batch: int = 32, seed: int = 0, check: Optional[Sequence[CornerSample]] = None,
          check_frames: Sequence[ConfirmedFrame] = (), head_only: bool = True) -> dict:
    """Fine-tune ``models``' classifier on ``samples``; write the model folder ``out``. Returns figures."""
    from tools.ultralytics_env import setup

    setup(threads=2)
    from ultralytics import YOLO

    from companion.vision.detector import classifier_input, corner_crop
    from tools.train import cls_folder
    from tools.weights_from_onnx import rebuild

    if not samples:
        raise SystemExit("no samples to learn from")
    t0 = time.time()
    # (ultralytics puts a relative project folder under its own runs folder)
    models, out, work = Path(models).resolve(), Path(out).resolve(), Path(work).resolve()
    rng = np.random.default_rng(seed)
    model_paths(models)  # a clear message when the base model is missing
    settings = RecognitionSettings.load(models)
    data = work / "data"
    shutil.rmtree(data, ignore_errors=True)
    n_samples = sample_crops(samples, data / "train", reps, settings, rng)
    roots = list(replay) or ([render_replay(work, replay_scenes, seed)] if replay_scenes > 0 else [])
    counts: dict[int, int] = {}
    for sample in samples:
        counts[sample.card.index] = counts.get(sample.card.index, 0) + reps
    n_replay = replay_crops(roots, data / "train", settings, rng,
                            balanced_replay(counts, len(settings.class_names), replay_per_class)) if roots else 0
    # ultralytics wants every class folder and a val split; the check (or the samples) stands in.
    sample_crops(check or samples[:52], data / "val", 1, settings, rng, prefix="v")
    for i in range(settings.classifier_classes):
        for split in ("train", "val"):
            (data / split / cls_folder(i)).mkdir(parents=True, exist_ok=True)
    calib = np.stack([classifier_input(corner_crop(s.image(), np.array(s.box), settings.crop_margin,
                                                   settings.classifier_size)[None])[0]
                      for s in list(samples)[:512]])
    start = rebuild("classifier", models, work, [], len(calib), inputs=calib)
    run = work / "classifier"
    shutil.rmtree(run, ignore_errors=True)
    model = YOLO(str(start))
    # Only the head learns by default: the features stay the shipped ones (and so do their batch
    # norms, which drift on a few hundred crops: measured, a run at learning rate ~0 named 3.6
    # points fewer corners of the deck it saw).
    freeze = len(model.model.model) - 1 if head_only else None
    model.train(
        freeze=freeze, data=str(data), epochs=epochs, imgsz=settings.classifier_size, batch=batch, fliplr=0.0,
        scale=0.2, erasing=0.1, auto_augment=None, optimizer="AdamW", lr0=lr, warmup_epochs=0, val=False,
        project=str(work), name="classifier", exist_ok=True, seed=seed, deterministic=False, plots=False,
        verbose=False, workers=0, device="cpu", amp=False)
    onnx = YOLO(str(run / "weights" / "last.pt")).export(
        format="onnx", imgsz=settings.classifier_size, opset=17, simplify=True, dynamic=True, verbose=False)
    if out.exists():
        shutil.rmtree(out)
    # GPU-trained checkpoints stay behind, and so do the base's extra classifiers: averaged with the
    # one fine-tuned here, they would pull its names of this deck back to the base's.
    copy_with_first_classifier(models, out)
    shutil.copyfile(onnx, out / CLASSIFIER_FILE)
    info = {"samples": len(samples), "sample_crops": n_samples, "replay_crops": n_replay,
            "head_only": head_only, "epochs": epochs, "lr": lr, "seconds": round(time.time() - t0), "base": str(models)}
    if check:
        before, n = named_right(models, check)
        after, _ = named_right(out, check)
        info["check"] = {"corners": n, "before": before, "after": after}
    if check_frames:
        before, n, _ = layout_right(models, check_frames)
        after, _, _ = layout_right(out, check_frames)
        info["check_layout"] = {"frames": len(check_frames), "slots": n, "before": before, "after": after}
    write_card(out, info)
    (out / "learned.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


def write_card(out: Path, info: dict) -> None:
    card = out / "MODEL_CARD.md"
    text = card.read_text() if card.exists() else ""
    text = text.split(CARD_SECTION)[0].rstrip()
    lines = [f"{CARD_SECTION} ({time.strftime('%d %b %Y')})",
             f"The classifier of `{info['base']}` ({'its head' if info.get('head_only') else 'all layers'}) "
             f"trained {info['epochs']} more epochs (lr {info['lr']}) on "
             f"{info['samples']} corners of your deck ({info['sample_crops']} jittered crops) and "
             f"{info['replay_crops']} replay crops of rendered scenes, in {info['seconds']} s "
             "(`tools/learn_deck.py`). The detector is unchanged."]
    if "check" in info:
        c = info["check"]
        lines.append(f"Held-out deal ({c['corners']} corners, one crop each): named right "
                     f"{c['before']} before, {c['after']} after.")
    if "check_layout" in info:
        c = info["check_layout"]
        lines.append(f"Its frame read as a still ({c['slots']} pyramid slots): right {c['before']} before, "
                     f"{c['after']} after.")
    card.write_text((text + "\n\n" if text else "") + "\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--samples", type=Path, required=True, help="folder the app saved your deck's corners in")
    p.add_argument("--models", type=Path, default=REPO / "models", help="model to start from (default models/)")
    p.add_argument("--out", type=Path, help="model folder to write (default: SAMPLES/../learned-model)")
    p.add_argument("--work", type=Path, help="training folder (default runs/learn-deck)")
    p.add_argument("--replay", type=Path, nargs="*", default=(),
                   help="dataset roots (make_dataset.py output) whose train scenes are replayed")
    p.add_argument("--replay-scenes", type=int, default=80,
                   help="without --replay: procedural-deck scenes rendered to replay (0: none)")
    p.add_argument("--reps", type=int, default=8, help="jittered crops per sample")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--all-layers", action="store_true", help="train every layer, not only the head")
    p.add_argument("--use-all", action="store_true", help="train on every deal (no held-out check)")
    p.add_argument("--keep-worse", action="store_true",
                   help="write the model even when it names the held-out deal worse than --models")
    args = p.parse_args(argv)
    import cv2

    try:
        samples = load_samples(args.samples)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    readable = [s for s in samples if cv2.imread(str(s.path)) is not None]
    if len(readable) < len(samples):
        print(f"warning: {len(samples) - len(readable)} of {len(samples)} sample pictures are missing or "
              "unreadable: learning from the others", file=sys.stderr)
        samples = readable
    if not samples:
        print(f"error: no readable sample pictures in {str(args.samples)!r}", file=sys.stderr)
        return 2
    deals = by_deal(samples)
    check, check_frames = None, []
    if len(deals) >= 3 and not args.use_all:
        check = deals[-1]
        samples = [s for d in deals[:-1] for s in d]
        stamp = check[0].saved
        try:
            check_frames = [f for f in load_frames(args.samples)
                            if f.stamp == stamp and cv2.imread(str(f.path)) is not None]
        except ValueError as exc:  # the corners still check the model
            print(f"warning: {exc}", file=sys.stderr)
    out = args.out or args.samples.resolve().parent / "learned-model"
    work = args.work or REPO / "runs" / "learn-deck"
    print(f"{len(samples)} corners from {len(deals) - (check is not None)} deal(s)"
          + (f"; deal {len(deals)} ({len(check)} corners) held out to check" if check else ""))
    # Written beside --out first: a model learned before stays until the new one is kept.
    staging = out.parent / (out.name + ".new")
    info = learn(samples, args.models, staging, work, replay=args.replay, replay_scenes=args.replay_scenes,
                 reps=args.reps, epochs=args.epochs, lr=args.lr, check=check, check_frames=check_frames,
                 head_only=not args.all_layers)
    if "check" in info:
        c, lay = info["check"], info.get("check_layout")
        print(f"held-out deal: {c['before']} of {c['corners']} corners named right before, {c['after']} after"
              + (f"; its frame: {lay['before']} of {lay['slots']} slots right before, {lay['after']} after"
                 if lay else ""))
        # Worse on either count is worse: a model naming more corners can still read fewer slots
        # (measured on a rendered four-colour deck: corners +7 points, slots -5).
        if (c["after"] < c["before"] or (lay and lay["after"] < lay["before"])) and not args.keep_worse:
            shutil.rmtree(staging)
            print(f"not written: the learned model names the held-out deal worse than {args.models} "
                  "(keep using it; confirm more deals and try again, or --keep-worse)", file=sys.stderr)
            return 3
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    print(f"wrote {out} in {info['seconds']} s; use it: bash run-app.sh --models '{out}' "
          f"(or PYRAMID_COMPANION_MODELS='{out}')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
