"""Make ultralytics run offline on this CPU-only machine; call ``setup()`` before importing it.

Two things (see ../shared/platform-notes.md):

1. Offline: ``YOLO_OFFLINE=1``, ``YOLO_AUTOINSTALL=false``, settings (and the Arial fonts its
   plots want, copied from DejaVu so nothing is downloaded) in ``cache/ultralytics/`` inside the
   repo (git-ignored), telemetry sync off.
2. torchvision compatibility: the only torchvision 0.28 wheel is a CUDA build whose ``_C.so``
   does not load with the CPU torch, and then ``import torchvision`` dies on
   ``operator torchvision::nms does not exist``. When (and only when) loading ``_C.so`` fails,
   register pure-PyTorch ``torchvision::nms``/``qnms`` kernels with ``torch.library`` before
   torchvision is imported. With a working torchvision this step does nothing.

Also sets torch to one thread unless told otherwise: two threads on a busy 2-core machine made
training 13-16x slower.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG_DIR = REPO / "cache" / "ultralytics"
RUNS_DIR = REPO / "runs"
_FONTS = {
    "Arial.ttf": "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "Arial.Unicode.ttf": "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
}
_done = False
#: True when the pure-PyTorch nms replacement was registered (torchvision's own ops did not load).
nms_shim_installed = False


def setup(threads: int | None = 1) -> None:
    """Idempotent. ``threads``: torch intra-op threads (None leaves torch's default)."""
    global _done
    if _done:
        return
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "false"
    os.environ.setdefault("YOLO_VERBOSE", "true")
    os.environ["YOLO_CONFIG_DIR"] = str(CONFIG_DIR)
    CONFIG_DIR.mkdir(parents=True, exist_ok=True)
    for name, source in _FONTS.items():
        target = CONFIG_DIR / name
        if not target.exists() and Path(source).exists():
            shutil.copyfile(source, target)
    import torch

    if threads is not None:
        torch.set_num_threads(threads)
    _install_nms_if_needed(torch)
    from ultralytics.utils import SETTINGS

    SETTINGS.update(sync=False)
    _done = True


def _torchvision_ops_load(torch) -> bool:
    """Whether torchvision's compiled ops load (without importing torchvision itself)."""
    if "torchvision" in sys.modules:
        return True  # already imported: nothing we can (or need to) change
    import importlib.util

    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return True  # no torchvision at all: nothing to patch
    folder = spec.submodule_search_locations[0]
    libs = glob.glob(os.path.join(folder, "_C.so")) + glob.glob(os.path.join(folder, "_C*.pyd"))
    if not libs:
        return False
    try:
        torch.ops.load_library(libs[0])
        return True
    except (ImportError, OSError, RuntimeError):
        return False


def _install_nms_if_needed(torch) -> None:
    global nms_shim_installed
    if _torchvision_ops_load(torch):
        return
    lib = torch.library.Library("torchvision", "DEF")  # noqa: kept alive in module global below
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    impl = torch.library.Library("torchvision", "IMPL", "CPU")
    impl.impl("nms", _nms)
    impl.impl("qnms", _nms)
    _LIBS.extend([lib, impl])
    nms_shim_installed = True
    # torchvision.ops.nms refuses to run when its extension did not load; nms now exists, so
    # tell it so (the other compiled ops stay missing and fail with torch's own message).
    import torchvision.extension

    torchvision.extension._has_ops = lambda: True


_LIBS: list = []  # torch.library registrations live as long as these objects


def _nms(boxes, scores, iou_threshold: float):
    """Greedy NMS in plain torch (same result as torchvision's kernel): kept indices, best first."""
    import torch

    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.long, device=boxes.device)
    boxes = boxes.float()
    order = torch.argsort(scores, descending=True)
    x1, y1, x2, y2 = boxes.unbind(1)
    areas = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
    keep = []
    # Classic greedy loop: one vectorised IoU row per kept box (never an N x N matrix: an
    # untrained model at conf 0.001 hands over tens of thousands of boxes).
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        rest = order[1:]
        xx1 = torch.maximum(x1[i], x1[rest])
        yy1 = torch.maximum(y1[i], y1[rest])
        xx2 = torch.minimum(x2[i], x2[rest])
        yy2 = torch.minimum(y2[i], y2[rest])
        inter = (xx2 - xx1).clamp(min=0) * (yy2 - yy1).clamp(min=0)
        iou = inter / (areas[i] + areas[rest] - inter).clamp(min=1e-9)
        order = rest[iou <= iou_threshold]
    return torch.stack(keep).to(torch.long)

if __name__ == "__main__":
    setup()
    import torchvision
    from torchvision.ops import nms
    import torch

    b = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]], dtype=torch.float32)
    print("torchvision", torchvision.__version__, "nms shim:", nms_shim_installed,
          "nms ->", nms(b, torch.tensor([0.9, 0.8, 0.7]), 0.5).tolist())
