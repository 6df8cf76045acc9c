"""Trainable ultralytics checkpoints rebuilt from the shipped ONNX weights, to fine-tune from them.

    python tools/weights_from_onnx.py                        # models/ -> runs/recognition/from-onnx/
    python tools/weights_from_onnx.py --models M --out DIR --images data/synth_v2/val/images

Why: the shipped model grew through a ~6-hour training chain (``tools/recipe_shipped.sh``) and only
its ONNX export is kept in git. A fine-tune (``tools/train.py --cls-init DIR/classifier.pt`` or
``--det-init DIR/detector.pt``) needs an ultralytics ``.pt``; this rebuilds one in a minute instead.

How: ONNX export folds each convolution's batch norm into the convolution (weight and bias). The
rebuilt network takes the folded weight and gets its batch norm back, calibrated so that the
network computes what the ONNX model computes *both* in eval mode (exactly: running statistics)
and in train mode on images like the calibration ones (batch statistics): per channel, the
folded convolution's output without bias has mean m and standard deviation s on the calibration
inputs; the norm gets running mean m, running variance s^2 - eps, scale s and shift m + bias.
Un-folded with scale 1 and shift = bias instead, the first training batch would normalise every
layer afresh and start far from the shipped model.

Prints the largest difference between the rebuilt checkpoint (eval mode) and the ONNX model on the
calibration inputs, and refuses to write when it is not small. Needs torch and ultralytics (the
``train`` extra).
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tools.ultralytics_env import setup as ultralytics_setup  # noqa: E402

#: Largest tolerated |rebuilt - ONNX| over the outputs (class probabilities; detector boxes in
#: input pixels and scores), float32 rounding of a different summation order aside.
MAX_DIFF = {"classifier": 1e-3, "detector": 0.05}


def onnx_weights(path: Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The initializers (name -> array) and metadata of an ONNX file."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return weights, {p.key: p.value for p in model.metadata_props}


def build(kind: str, meta: dict[str, str], work: Path):
    """A fresh ultralytics network of the shipped architecture (from the export's metadata)."""
    from ultralytics.nn.tasks import ClassificationModel, DetectionModel

    names = ast.literal_eval(meta["names"])
    if kind == "classifier":
        model = ClassificationModel("yolov8n-cls.yaml", nc=len(names), verbose=False)
    else:
        from tools.train import detector_yaml

        work.mkdir(parents=True, exist_ok=True)
        model = DetectionModel(str(detector_yaml(work)), nc=len(names), verbose=False)
    model.names = names
    return model


def load_folded(model, weights: dict[str, np.ndarray]):
    """``model`` fused (batch norms folded, as exported) with the ONNX weights loaded by name."""
    import torch

    model.fuse(verbose=False)
    state = model.state_dict()
    missing = [k for k, v in state.items() if k not in weights and v.dtype.is_floating_point]
    if missing:
        raise SystemExit(f"the ONNX file lacks {len(missing)} weights of this architecture, e.g. {missing[:3]}")
    bad = [k for k in state if k in weights and tuple(state[k].shape) != weights[k].shape]
    if bad:
        raise SystemExit(f"shapes differ from the ONNX weights: {bad[:3]}")
    model.load_state_dict({k: torch.from_numpy(weights[k].copy()) if k in weights else v
                           for k, v in state.items()})
    return model.eval()


def calibrate(folded, fresh, inputs: np.ndarray):
    """Copy the folded weights into ``fresh`` (not fused) with batch norms that reproduce them."""
    import torch
    from ultralytics.nn.modules.conv import Conv

    stats: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    hooks = []
    for name, module in folded.named_modules():
        if isinstance(module, Conv):
            def hook(_m, _inp, out, name=name, bias=module.conv.bias):
                y = (out - bias.view(1, -1, 1, 1)).transpose(0, 1).flatten(1).double()
                stats[name] = (y.mean(1), y.std(1))
            hooks.append(module.conv.register_forward_hook(hook))
    with torch.no_grad():
        folded(torch.from_numpy(inputs))
    for h in hooks:
        h.remove()
    # every weight the two networks share by name and shape (convolution weights, the heads'
    # plain convolutions and linear layer); the folded biases go into the batch norms below
    want = fresh.state_dict()
    fresh.load_state_dict({k: v for k, v in folded.state_dict().items()
                           if k in want and want[k].shape == v.shape}, strict=False)
    folded_modules = dict(folded.named_modules())
    with torch.no_grad():
        for name, module in fresh.named_modules():
            if isinstance(module, Conv) and hasattr(module, "bn"):
                mean, std = stats[name]
                eps = module.bn.eps
                var = torch.clamp(std ** 2, min=2 * eps) - eps
                module.bn.running_mean.copy_(mean.float())
                module.bn.running_var.copy_(var.float())
                module.bn.weight.copy_(torch.sqrt(var + eps).float())
                module.bn.bias.copy_((mean + folded_modules[name].conv.bias.double()).float())
    return fresh.eval()


def calibration_inputs(kind: str, models: Path, images: list[Path], limit: int) -> np.ndarray:
    """Network inputs like the ones the model reads: corner crops (classifier) or letterboxed
    frames (detector) of ``images``, made the way ``OnnxCardDetector`` makes them."""
    import cv2

    from companion.vision.detector import OnnxCardDetector, classifier_input, corner_crop, detector_input, letterbox

    det = OnnxCardDetector(models, zoom=False)
    st = det.settings
    out = []
    for path in images:
        image = cv2.imread(str(path))
        if image is None:
            continue
        if kind == "detector":
            out.append(detector_input(letterbox(image, st.detector_size)[0])[0])
        else:
            boxes, _ = det.find_corners(image)
            out += [classifier_input(corner_crop(image, b, st.crop_margin, st.classifier_size)[None])[0]
                    for b in boxes]
        if len(out) >= limit:
            break
    if not out:
        raise SystemExit("no calibration input: give --images a folder of table pictures")
    return np.stack(out[:limit]).astype(np.float32)


def max_difference(kind: str, model, onnx_path: Path, inputs: np.ndarray) -> float:
    import onnxruntime as ort
    import torch

    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    worst = 0.0
    batch = 1 if kind == "detector" else 64  # the detector export has a fixed batch of 1
    for i in range(0, len(inputs), batch):
        x = inputs[i:i + batch]
        want = session.run(None, {name: x})[0]
        with torch.no_grad():
            got = model(torch.from_numpy(x))
        got = (got[0] if isinstance(got, (list, tuple)) else got).numpy()
        worst = max(worst, float(np.abs(got[..., :want.shape[-1]] - want).max()))
    return worst


def save(model, meta: dict[str, str], path: Path) -> None:
    """An ultralytics checkpoint (what ``YOLO(path)`` and ``train.py --*-init`` load)."""
    import copy
    from datetime import datetime

    import torch

    task = meta.get("task", "detect")
    model = copy.deepcopy(model).float()
    model.args = {"task": task, "imgsz": ast.literal_eval(meta.get("imgsz", "640"))}
    model.task = task
    torch.save({"model": model, "ema": None, "updates": 0, "optimizer": None, "epoch": -1,
                "train_args": {"task": task}, "date": datetime.now().isoformat(),
                "version": meta.get("version", ""), "license": meta.get("license", "")}, path)


def rebuild(kind: str, models: Path, out: Path, images: list[Path], limit: int,
            inputs: np.ndarray | None = None) -> Path:
    """Write ``out/<kind>.pt``; calibrated on ``inputs`` (network inputs) or, without them, on
    inputs made from ``images``."""
    import torch

    from companion.vision.model_files import model_paths

    torch.manual_seed(0)
    det_path, cls_path = model_paths(models)
    onnx_path = cls_path if kind == "classifier" else det_path
    weights, meta = onnx_weights(onnx_path)
    folded = load_folded(build(kind, meta, out), weights)
    if inputs is None:
        inputs = calibration_inputs(kind, models, images, limit)
    diff_folded = max_difference(kind, folded, onnx_path, inputs)
    model = calibrate(folded, build(kind, meta, out), inputs)
    diff = max_difference(kind, model, onnx_path, inputs)
    print(f"[{kind}] {len(inputs)} calibration inputs; largest |torch - ONNX|: folded {diff_folded:.2e}, "
          f"rebuilt {diff:.2e}")
    if diff > MAX_DIFF[kind]:
        raise SystemExit(f"[{kind}] the rebuilt network differs from {onnx_path} by {diff:.3g}: not written")
    path = out / f"{kind}.pt"
    save(model, meta, path)
    from ultralytics import YOLO

    again = max_difference(kind, YOLO(str(path)).model.float().eval(), onnx_path, inputs)
    if again > MAX_DIFF[kind]:
        path.unlink()
        raise SystemExit(f"[{kind}] {path} loaded back differs from {onnx_path} by {again:.3g}: removed")
    print(f"[{kind}] wrote {path} (loaded back: largest difference {again:.2e})")
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", type=Path, default=REPO / "models", help="folder of the ONNX model (default models/)")
    p.add_argument("--out", type=Path, default=REPO / "runs" / "recognition" / "from-onnx")
    p.add_argument("--images", type=Path, default=REPO / "datasets" / "samples",
                   help="folder of table pictures for calibration (searched recursively for .jpg/.png)")
    p.add_argument("--limit", type=int, default=512, help="calibration inputs at most (classifier crops)")
    p.add_argument("--only", choices=["classifier", "detector"], help="rebuild one stage only")
    args = p.parse_args(argv)
    ultralytics_setup(threads=2)
    images = sorted(q for q in args.images.rglob("*") if q.suffix.lower() in (".jpg", ".jpeg", ".png"))
    args.out.mkdir(parents=True, exist_ok=True)
    for kind in ([args.only] if args.only else ["classifier", "detector"]):
        rebuild(kind, args.models, args.out, images, args.limit if kind == "classifier" else min(args.limit, 16))
    return 0


if __name__ == "__main__":
    sys.exit(main())
