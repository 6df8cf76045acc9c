"""An int8 copy of a recognition model folder, for a machine where the float model runs too slowly.

    python tools/quantize.py --out models-int8 [--models models] [--images data/synth_v2/train/images]
    PYRAMID_COMPANION_MODELS=models-int8 pyramid-companion app

Both ONNX networks are quantized statically with ONNX Runtime (int8 weights per channel, uint8
activations, QDQ format), calibrated on frames from ``--images`` (default: 60 rendered train scenes
picked with ``--seed``; any folder of table pictures will do): the detector on the frames
letterboxed as ``OnnxCardDetector`` feeds them, the classifier on crops of the corners the float
detector finds in them. The detector head's decoding (box distribution -> pixels, joined with the
class scores) stays float: one int8 range for pixel coordinates and 0-1 scores would flatten the
scores. Writes the two networks, the same ``recognition.json`` and a short model card into ``--out``.
Measured figures (speed and accuracy against the float model): models/MODEL_CARD.md, "Int8".
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.vision.model_files import (  # noqa: E402
    CLASSIFIER_FILE, DETECTOR_FILE, SETTINGS_FILE, RecognitionSettings, default_models_dir,
)

DEFAULT_IMAGES = REPO / "data" / "synth_v2" / "train" / "images"
#: The detector head's last block in the shipped YOLO11 graph: its nodes outside the two conv
#: branches (``cv2``: box distribution, ``cv3``: classes) decode the output and stay float.
HEAD = "/model.23/"
BATCH = 32


def calibration_images(folder: Path, count: int, seed: int) -> list[Path]:
    images = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    if not images:
        raise SystemExit(f"no images to calibrate on in {folder}")
    rng = np.random.default_rng(seed)
    return [images[i] for i in sorted(rng.choice(len(images), min(count, len(images)), replace=False))]


def calibration_inputs(models: Path, images: list[Path]) -> tuple[list[np.ndarray], Callable[[Path], list[np.ndarray]]]:
    """Detector inputs (one letterboxed frame each) and, for a classifier file, its input batches:
    the corners found, cropped at the size that classifier takes (``classifier_side``)."""
    import cv2
    import onnxruntime as ort

    from companion.vision.detector import (OnnxCardDetector, classifier_input, classifier_side, corner_crop,
                                           detector_input, letterbox)

    detector = OnnxCardDetector(models)
    st = detector.settings
    frames, corners = [], []
    for path in images:
        image = cv2.imread(str(path))
        if image is None:
            print(f"skipped {path}: not an image OpenCV can read", file=sys.stderr)
            continue
        canvas, _, _ = letterbox(image, st.detector_size)
        frames.append(detector_input(canvas))
        boxes, _ = detector.find_corners(image)
        if len(boxes):
            corners.append((image, boxes))
    if not frames or not corners:
        raise SystemExit("the calibration images show no card corners to calibrate the classifier on")

    def batches(classifier: Path) -> list[np.ndarray]:
        side = classifier_side(ort.InferenceSession(str(classifier), providers=["CPUExecutionProvider"]),
                               st.classifier_size)
        x = classifier_input(np.stack([corner_crop(image, b, st.crop_margin, side)
                                       for image, boxes in corners for b in boxes]))
        return [x[i:i + BATCH] for i in range(0, len(x), BATCH)]
    return frames, batches


def quantize(source: Path, target: Path, batches: list[np.ndarray], keep_float: bool) -> None:
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.name = onnx.load(str(source)).graph.input[0].name
            self.left = iter(batches)

        def get_next(self):
            batch = next(self.left, None)
            return None if batch is None else {self.name: batch}

    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / source.name
        quant_pre_process(str(source), str(prepared))
        exclude = []
        if keep_float:
            exclude = [n.name for n in onnx.load(str(prepared)).graph.node
                       if n.name.startswith(HEAD) and not n.name.startswith(HEAD + "cv")]
        quantize_static(str(prepared), str(target), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, nodes_to_exclude=exclude)


def _shown(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def write_card(out: Path, models: Path, images: list[Path], command: str) -> None:
    sizes = {name: (out / name).stat().st_size for name in (DETECTOR_FILE, CLASSIFIER_FILE)}
    (out / "MODEL_CARD.md").write_text(
        f"# Card recognition model, int8 copy\n\n"
        f"Quantized from `{_shown(models)}` (its MODEL_CARD.md describes the networks, data and training) by\n"
        f"`{command}`, calibrated on {len(images)} frames from `{_shown(images[0].parent)}`.\n"
        f"Sizes: {', '.join(f'{k} {v / 1e6:.1f} MB' for k, v in sizes.items())}.\n"
        f"Speed and accuracy against the float model: models/MODEL_CARD.md, section \"Int8\".\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="folder for the int8 model")
    p.add_argument("--models", type=Path, default=None, help="float model folder (default models/)")
    p.add_argument("--images", type=Path, default=DEFAULT_IMAGES, help="folder of frames to calibrate on")
    p.add_argument("--count", type=int, default=60, help="calibration frames (default 60)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    models = args.models or default_models_dir()
    try:
        import onnx  # noqa: F401  (ONNX Runtime's quantizer needs it; the app alone does not)
    except ImportError:
        raise SystemExit("tools/quantize.py needs the onnx package, part of the training set-up: "
                         "bash tools/setup_env.sh test (or pip install onnx)") from None
    if args.out.resolve() == models.resolve():
        p.error("--out must differ from the float model's folder")
    if not args.images.is_dir():
        p.error(f"--images {str(args.images)!r} is not a folder (make the dataset first, or name any folder of table pictures)")
    images = calibration_images(args.images, args.count, args.seed)
    frames, batches = calibration_inputs(models, images)
    args.out.mkdir(parents=True, exist_ok=True)
    quantize(models / DETECTOR_FILE, args.out / DETECTOR_FILE, frames, keep_float=True)
    settings = RecognitionSettings.load(models)
    # the first classifier, those averaged with it, and the net that tells which way indices stood
    names = [CLASSIFIER_FILE, *settings.extra_classifiers] + [n for n in (settings.turn_classifier,) if n is not None]
    crops = 0
    for name in names:
        inputs = batches(models / name)
        crops = max(crops, sum(len(c) for c in inputs))
        quantize(models / name, args.out / name, inputs, keep_float=False)
    shutil.copy(models / SETTINGS_FILE, args.out / SETTINGS_FILE)
    write_card(args.out, models, images, "python tools/quantize.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    print(f"int8 model in {args.out}: {len(frames)} frames, {crops} corner crops calibrated on")
    return 0


if __name__ == "__main__":
    sys.exit(main())
