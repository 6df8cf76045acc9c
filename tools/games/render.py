"""Render one whole game into a folder: frames (video or JPEG folder), per-frame labels, truth.

Folder layout (``OUT/<name>/``)::

    truth.json      game truth (below)
    labels.jsonl    one line per frame: {"f": i, "labels": [[cls, x1, y1, x2, y2], ...],
                    "hand": [x, y] | null, "blur": px}   (what the fake detector is fed)
    game.mp4        the frames (``--video mp4``, MPEG-4 part 2), or game.avi (MJPG), or
    frames/NNNNNN.jpg  (``--video jpg``); nothing with ``--video none`` (truth only)

``truth.json``: ``{"version": 1, "name", "rules", "seed", "deal" (all 52 codes, stock in draw order),
"deck", "size": [w, h], "fps", "frames": n, "hold": still frames after a step,
"moves": [{"move": "QH+AS", "frames": [first, last]}], "illegal": [{"cards": "9S+8S", "kind":
"not13"|"lone"|"covered", "reason", "frames": [first, last], "off_frames": [first, last] (the
cards are off the table: from the last one lifted to the hand coming back), "after_moves": k}], "result",
"video": file or folder name or null, "person": what the person does after an illegal removal}``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any, Iterator, Optional

import numpy as np

from tools.games.frames import GameCamera, shake_matrix
from tools.games.script import Script, make_script
from tools.games.timeline import Planner

TRUTH_VERSION = 1
PERSON = "puts the cards back where they were after an illegal removal"


def frame_effects(seed: int, n: int, fps: float, compact: bool = False
                  ) -> Iterator[tuple[float, float, float, float, float, float]]:
    """Per frame: shake dx, dy, angle, light gain, blur px, blur angle. A slow wander with a bump
    (the table nudged) now and then, and light drifting over tens of seconds. ``compact``: whole-pixel
    shake and light changing in steps (frames that repeat compress far better in a video file)."""
    rng = np.random.default_rng([seed, 99])
    dx = dy = ang = 0.0
    bump = 0
    phase = rng.uniform(0, 2 * math.pi)
    period = rng.uniform(15, 40) * fps
    for f in range(n):
        px, py = dx, dy
        dx = 0.9 * dx + rng.normal(0, 0.4)
        dy = 0.9 * dy + rng.normal(0, 0.4)
        ang = 0.95 * ang + rng.normal(0, 0.03)
        if bump == 0 and rng.random() < 0.004:
            bump = int(rng.integers(2, 5))
        if bump:
            dx += rng.normal(0, 4)
            dy += rng.normal(0, 4)
            bump -= 1
        speed = math.hypot(dx - px, dy - py)
        gain = 1 + 0.12 * math.sin(phase + 2 * math.pi * f / period)
        if compact:
            still = not bump and speed < 3
            gain = round(gain * 25) / 25
            yield ((0.0, 0.0, 0.0, gain, 0.0, 0.0) if still else
                   (round(dx), round(dy), 0.0, gain, speed * 1.2, math.degrees(math.atan2(dy - py, dx - px))))
            continue
        yield dx, dy, ang, gain, speed * 1.2, math.degrees(math.atan2(dy - py, dx - px))


def render_game(out: Path, seed: int, rules: str = "classic", *, video: str = "mp4", fps: float = 10.0,
                hold: int = 12, max_moves: Optional[int] = None, deck: Optional[str] = None,
                script: Optional[Script] = None, compact: bool = False,
                size: tuple[int, int] = (960, 540), **script_kw: Any) -> dict:
    """Render game ``seed`` into ``out`` (written to ``out.partial`` then renamed: resumable).
    ``compact``: a video small enough to commit (no per-frame sensor noise, shake in whole pixels)."""
    import cv2
    if (out / "truth.json").exists():
        return json.loads((out / "truth.json").read_text())
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    script = script or make_script(rules, seed, max_moves=max_moves, **script_kw)
    plan = Planner(script, fps=fps, hold=hold, seed=seed).build()
    cam = GameCamera(seed, deck=deck, size=size, pixels=video != "none")
    w, h = cam.size
    writer = None
    video_name: Optional[str] = None
    if video in ("mp4", "avi"):
        video_name = f"game.{video}"
        fourcc = cv2.VideoWriter_fourcc(*("mp4v" if video == "mp4" else "MJPG"))
        writer = cv2.VideoWriter(str(tmp / video_name), fourcc, fps, (w, h))
        if not writer.isOpened():
            raise RuntimeError(f"OpenCV cannot write {video} video here")
    elif video == "jpg":
        video_name = "frames"
        (tmp / "frames").mkdir()
    elif video != "none":
        raise ValueError(f"unknown video kind {video!r} (mp4, avi, jpg, none)")
    noise_rng = np.random.default_rng([seed, 5])
    rng_tilt = np.random.default_rng([seed, 6]).normal(0, 0.08, 2)
    with open(tmp / "labels.jsonl", "w") as lab:
        for f, (fp, fx) in enumerate(zip(plan.frames, frame_effects(seed, len(plan.frames), fps, compact))):
            dx, dy, ang, gain, blur, blur_ang = fx
            table = cam.table(fp.spec)
            shake = shake_matrix(dx, dy, ang, (w / 2, h / 2))
            hand = None
            target = None
            if fp.hand is not None:
                colour, alpha, target = cam.hand(fp.hand, fp.hand_seed, table)
                hand = (colour, alpha)
            labels = cam.labels(table, None if hand is None else hand[1], shake)
            if target is not None:
                target = [round(float(shake[0, 0] * target[0] + shake[0, 1] * target[1] + shake[0, 2]), 1),
                          round(float(shake[1, 0] * target[0] + shake[1, 1] * target[1] + shake[1, 2]), 1)]
            lab.write(json.dumps({"f": f, "labels": labels, "hand": target, "blur": round(blur, 2)}) + "\n")
            if video_name is None:
                continue
            img = cam.image(table, hand, shake, gain, tuple(rng_tilt), blur, blur_ang, noise_rng,
                            noise=0.0 if compact else 2.0)
            if writer is not None:
                writer.write(img)
            else:
                cv2.imwrite(str(tmp / "frames" / f"{f:06d}.jpg"), img, [cv2.IMWRITE_JPEG_QUALITY, 80])
    if writer is not None:
        writer.release()
    truth = {
        "version": TRUTH_VERSION, "name": out.name, "rules": script.rules.name, "seed": seed,
        "deal": str(script.deal), "deck": cam.deck_name, "size": [w, h], "fps": fps,
        "frames": len(plan.frames), "hold": hold, "moves": plan.moves, "illegal": plan.illegal,
        "result": script.final.result, "video": video_name, "person": PERSON,
        "card_width_px": round(cam.card_w, 1), "camera": cam.cam,
    }
    (tmp / "truth.json").write_text(json.dumps(truth, indent=1))
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return truth


def load_game(folder: str | os.PathLike) -> tuple[dict, list[dict]]:
    """``(truth, per-frame label records)`` of a rendered game folder."""
    folder = Path(folder)
    try:
        truth = json.loads((folder / "truth.json").read_text())
        frames = [json.loads(line) for line in (folder / "labels.jsonl").read_text().splitlines() if line]
    except (OSError, ValueError) as exc:
        raise ValueError(f"{str(folder)!r} is not a rendered game folder: {exc}") from None
    return truth, frames
