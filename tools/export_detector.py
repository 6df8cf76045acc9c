#!/usr/bin/env python3
"""Export one detector checkpoint into a model folder that keeps every other file of a base folder.

    python tools/export_detector.py runs/device/ft/detector/weights/best.pt --out runs/device/ft/models

Copies the files of ``--base`` (default ``models/``: classifiers, ``recognition.json``, the model card) into
``--out`` and replaces its ``corner_detector.onnx`` with the checkpoint exported at the input size
the base folder's ``recognition.json`` names, as ``tools/train.py``'s export stage does. Used to
measure a detector trained elsewhere (``tools/device_train_detector.sh``) against the shipped one
with the same classifiers (``PYRAMID_COMPANION_MODELS=OUT`` or ``--models OUT`` in the evaluation
tools).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.vision.model_files import DETECTOR_FILE, SETTINGS_FILE, RecognitionSettings  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("weights", type=Path, help="ultralytics detector checkpoint (.pt)")
    p.add_argument("--base", type=Path, default=REPO / "models", help="model folder to copy (default models/)")
    p.add_argument("--out", type=Path, required=True, help="new model folder")
    args = p.parse_args(argv)
    if not args.weights.is_file():
        p.error(f"no checkpoint at {args.weights}")
    if not (args.base / SETTINGS_FILE).is_file():
        p.error(f"{args.base} is not a model folder (no {SETTINGS_FILE})")
    if args.out.resolve() == args.base.resolve():
        p.error("--out must differ from --base")

    from tools.ultralytics_env import setup

    setup()
    from ultralytics import YOLO

    settings = RecognitionSettings.from_json((args.base / SETTINGS_FILE).read_text())
    with tempfile.TemporaryDirectory() as tmp:  # ultralytics writes the .onnx beside the weights it reads
        weights = Path(tmp) / "detector.pt"
        shutil.copyfile(args.weights, weights)
        onnx_path = YOLO(str(weights)).export(format="onnx", imgsz=list(settings.detector_size), opset=17,
                                              simplify=True, dynamic=False, verbose=False)
        args.out.mkdir(parents=True, exist_ok=True)
        for path in args.base.iterdir():  # a model folder is flat (models/candidates/ stays behind)
            if path.is_file():
                shutil.copyfile(path, args.out / path.name)
        shutil.copyfile(onnx_path, args.out / DETECTOR_FILE)
    print(f"{args.out / DETECTOR_FILE} from {args.weights} ({settings.detector_size[1]}x{settings.detector_size[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
