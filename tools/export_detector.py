#!/usr/bin/env python3
"""Export a detector and/or classifier checkpoint into a model folder that keeps every other file of
a base folder.

    python tools/export_detector.py runs/device/ft/detector/weights/best.pt --out runs/device/ft/models
    python tools/export_detector.py --classifier runs/device3/classifier/weights/best.pt --out runs/cand/cls3
    python tools/export_detector.py --extra-classifier models/candidates/classifier-gpu-c4.pt --out M
    python tools/export_detector.py --turn-classifier runs/s34/nt/classifier/weights/best.pt --out M

Copies the files of ``--base`` (default ``models/``: classifiers, ``recognition.json``, the model card) into
``--out`` and replaces its ``corner_detector.onnx`` with the checkpoint exported at the input size
the base folder's ``recognition.json`` names, as ``tools/train.py``'s export stage does (with
``--classifier``, ``card_classifier.onnx`` likewise, batch size left free; with ``--extra-classifier``,
a second index classifier whose probabilities are averaged with the first's: ``--extra-name`` in the
folder, named in ``recognition.json``'s ``extra_classifiers``; with ``--turn-classifier``, a net
trained with ``tools/train.py --cls-turn`` that only tells which way each index stood,
``card_classifier_t.onnx``, ``turn_classifier``; these two keep the input size they were trained
at, the crops fed to them cut at that size). Used to
measure a detector trained elsewhere (``tools/device_train_detector.sh``) against the shipped one
with the same classifiers (``PYRAMID_COMPANION_MODELS=OUT`` or ``--models OUT`` in the evaluation
tools).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The file ``--turn-classifier`` writes.
TURN_FILE = "card_classifier_t.onnx"
sys.path.insert(0, str(REPO))

from companion.vision.model_files import (  # noqa: E402
    CLASSIFIER_FILE, DETECTOR_FILE, SETTINGS_FILE, RecognitionSettings,
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("weights", type=Path, nargs="?", help="ultralytics detector checkpoint (.pt)")
    p.add_argument("--classifier", type=Path, help="ultralytics classifier checkpoint (.pt)")
    p.add_argument("--extra-classifier", type=Path, help="classifier checkpoint (.pt) averaged with the first")
    p.add_argument("--extra-name", default="card_classifier_b.onnx", help="its file in the model folder")
    p.add_argument("--turn-classifier", type=Path,
                   help="checkpoint trained with train.py --cls-turn, run beside the others only to tell which "
                        f"way each index stood ({TURN_FILE}, recognition.json's turn_classifier)")
    p.add_argument("--base", type=Path, default=REPO / "models", help="model folder to copy (default models/)")
    p.add_argument("--out", type=Path, required=True, help="new model folder")
    args = p.parse_args(argv)
    if all(a is None for a in (args.weights, args.classifier, args.extra_classifier, args.turn_classifier)):
        p.error("give a detector checkpoint, --classifier, --extra-classifier, --turn-classifier, or several")
    if "/" in args.extra_name or not args.extra_name.endswith(".onnx") or args.extra_name == CLASSIFIER_FILE:
        p.error(f"--extra-name {args.extra_name!r}: a new .onnx file name in the folder")
    for path in (args.weights, args.classifier, args.extra_classifier, args.turn_classifier):
        if path is not None and not path.is_file():
            p.error(f"no checkpoint at {path}")
    if not (args.base / SETTINGS_FILE).is_file():
        p.error(f"{args.base} is not a model folder (no {SETTINGS_FILE})")
    if args.out.resolve() == args.base.resolve():
        p.error("--out must differ from --base")

    from tools.ultralytics_env import setup

    setup()
    from ultralytics import YOLO

    settings = RecognitionSettings.from_json((args.base / SETTINGS_FILE).read_text())
    jobs = [(args.weights, DETECTOR_FILE, dict(imgsz=list(settings.detector_size), dynamic=False)),
            (args.classifier, CLASSIFIER_FILE, dict(imgsz=settings.classifier_size, dynamic=True)),
            (args.extra_classifier, args.extra_name, dict(imgsz=settings.classifier_size, dynamic=True)),
            (args.turn_classifier, TURN_FILE, dict(imgsz=settings.classifier_size, dynamic=True))]
    with tempfile.TemporaryDirectory() as tmp:  # ultralytics writes the .onnx beside the weights it reads
        args.out.mkdir(parents=True, exist_ok=True)
        for path in args.base.iterdir():  # a model folder is flat (models/candidates/ stays behind)
            if path.is_file():
                shutil.copyfile(path, args.out / path.name)
        for source, name, opts in jobs:
            if source is None:
                continue
            weights = Path(tmp) / name.replace(".onnx", ".pt")
            shutil.copyfile(source, weights)
            model = YOLO(str(weights))
            if name not in (DETECTOR_FILE, CLASSIFIER_FILE):
                # a net beside the first is fed crops of the size it was trained on (its input's height)
                opts = dict(opts, imgsz=int((model.ckpt or {}).get("train_args", {}).get("imgsz", opts["imgsz"])))
            onnx_path = model.export(format="onnx", opset=17, simplify=True, verbose=False, **opts)
            shutil.copyfile(onnx_path, args.out / name)
            print(f"{args.out / name} from {source}")
        if args.extra_classifier is not None and args.extra_name not in settings.extra_classifiers:
            settings = replace(settings, extra_classifiers=settings.extra_classifiers + (args.extra_name,))
            (args.out / SETTINGS_FILE).write_text(settings.to_json())
        if args.turn_classifier is not None:
            settings = replace(settings, turn_classifier=TURN_FILE)
            (args.out / SETTINGS_FILE).write_text(settings.to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
