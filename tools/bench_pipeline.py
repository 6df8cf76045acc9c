"""Time the non-detector part of recognition per 1280x720 frame (slot mapping, checks, fusion).

    python tools/bench_pipeline.py [--frames 300] [--with-model]

Detections come from the fake detector (realistic noise, hands crossing now and
then) so only the pipeline is timed; ``--with-model`` also times the ONNX
detector on a rendered frame when ``models/`` has one. Prints median / p90 ms
for: a video frame (tracking from the last frame's fit), a single image (fit
searched from scratch) and the fusion step.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from companion.vision.fake import Noise, detections_from_truth, hand_path, synth_truth  # noqa: E402
from companion.vision.fusion import LayoutFuser  # noqa: E402
from companion.vision.pipeline import LayoutPipeline  # noqa: E402


def stats(ts: list[float]) -> str:
    a = np.array(ts) * 1000
    return f"median {np.median(a):6.2f} ms   p90 {np.percentile(a, 90):6.2f} ms   max {a.max():6.2f} ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--with-model", action="store_true")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    deals = [synth_truth(rng, removed=int(rng.integers(0, 12)) if k % 2 else 0) for k in range(10)]
    per = max(args.frames // len(deals), 1)
    video, fusion, single = [], [], []
    video_cpu, single_cpu = [], []
    for truth in deals:
        hands = hand_path(rng, truth, per // 3)
        noises = [Noise.realistic()] * (per - len(hands)) + [Noise(0.08, 0.01, 0.005, 0.3, hands=(h,))
                                                              for h in hands]
        dets = [detections_from_truth(truth, n, rng) for n in noises]
        pipe = LayoutPipeline()
        fuser = LayoutFuser(pipeline=pipe)
        for f, d in enumerate(dets):
            c0, t0 = time.process_time(), time.perf_counter()
            reading = pipe.read(d, f, (1280, 720))
            t1 = time.perf_counter()
            video_cpu.append(time.process_time() - c0)
            fuser.update(reading, f)
            t2 = time.perf_counter()
            video.append(t1 - t0)
            fusion.append(t2 - t1)
        for d in dets[: max(per // 5, 1)]:
            c0, t0 = time.process_time(), time.perf_counter()
            LayoutPipeline(track=False).read(d, -1, (1280, 720))
            single.append(time.perf_counter() - t0)
            single_cpu.append(time.process_time() - c0)
    print(f"pipeline without detector, {len(video)} frames of 1280x720 scenes (fake detections), 1 thread")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  (wall clock, and CPU time of this process: the machine's load average was {load:.1f})")
    print(f"  video frame (tracking):   {stats(video)}")
    print(f"                 CPU time:  {stats(video_cpu)}")
    print(f"  single image (search):    {stats(single)}")
    print(f"                 CPU time:  {stats(single_cpu)}")
    print(f"  fusion update:            {stats(fusion)}")
    if args.with_model:
        try:
            from companion.vision.detector import FOLLOW_MULTI_CROP, OnnxCardDetector
            det = OnnxCardDetector(multi_crop_below=FOLLOW_MULTI_CROP)  # as while following a game
        except Exception as exc:  # no model yet: say so, do not fail the benchmark
            print(f"  detector: not available ({exc})")
            return 0
        image = (np.random.default_rng(0).random((720, 1280, 3)) * 255).astype(np.uint8)
        ts = []
        for _ in range(20):
            t0 = time.perf_counter()
            det.detect(image)
            ts.append(time.perf_counter() - t0)
        print(f"  detector (ONNX):          {stats(ts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
