"""Card recognition: ``Detector`` protocol and the two-stage ONNX Runtime implementation.

Stage 1 finds card *index corners* (one class) in the whole frame, letterboxed to a modest
size; stage 2 names each corner from a square crop taken from the full-resolution frame
(52 classes, ``CARD_CODES`` order). Reading the small rank/suit glyphs at full resolution is
what lets a cheap detector input size work. Needs numpy, OpenCV and ONNX Runtime, not torch.

Bottom-row and loose cards show two corners and come back twice (same card, two boxes);
mapping corners to slots is the layout stage's job.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Protocol, runtime_checkable

import cv2
import numpy as np

from companion.cards import CARD_CODES
from companion.vision.detections import Detections
from companion.vision.face_read import face_crop
from companion.vision.model_files import (
    FACE_FILE,
    ModelFileError,
    SETTINGS_FILE,
    RecognitionSettings,
    default_models_dir,
    model_paths,
)

TOP_K = 4  # best class + three runner-ups (alt_class_id has 3 columns)


@runtime_checkable
class Detector(Protocol):
    def detect(self, image_bgr: np.ndarray) -> Detections: ...


def letterbox(image: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, float, tuple[float, float]]:
    """Resize keeping aspect into ``size`` (h, w), pad grey (114) centred, as ultralytics does."""
    h, w = image.shape[:2]
    out_h, out_w = size
    r = min(out_h / h, out_w / w)
    new_w, new_h = int(round(w * r)), int(round(h * r))
    resized = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_LINEAR) if (new_w, new_h) != (w, h) else image
    pad_x, pad_y = (out_w - new_w) / 2, (out_h - new_h) / 2
    top, left = int(round(pad_y - 0.1)), int(round(pad_x - 0.1))
    canvas = np.full((out_h, out_w, 3), 114, np.uint8)
    canvas[top:top + new_h, left:left + new_w] = resized
    return canvas, r, (left, top)


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    """Greedy non-maximum suppression; indices kept, best first."""
    order = np.argsort(-scores)
    areas = np.clip(boxes[:, 2] - boxes[:, 0], 0, None) * np.clip(boxes[:, 3] - boxes[:, 1], 0, None)
    keep = []
    while order.size:
        i = order[0]
        keep.append(i)
        rest = order[1:]
        xx1 = np.maximum(boxes[i, 0], boxes[rest, 0])
        yy1 = np.maximum(boxes[i, 1], boxes[rest, 1])
        xx2 = np.minimum(boxes[i, 2], boxes[rest, 2])
        yy2 = np.minimum(boxes[i, 3], boxes[rest, 3])
        inter = np.clip(xx2 - xx1, 0, None) * np.clip(yy2 - yy1, 0, None)
        order = rest[inter / np.maximum(areas[i] + areas[rest] - inter, 1e-9) <= iou]
    return np.asarray(keep, np.int64)


def detector_input(canvas_bgr: np.ndarray) -> np.ndarray:
    """The detector network's input (1, 3, H, W) float RGB 0..1 from a letterboxed BGR canvas."""
    return np.ascontiguousarray(canvas_bgr[:, :, ::-1].transpose(2, 0, 1))[None].astype(np.float32) / 255.0


def classifier_input(crops_bgr: np.ndarray) -> np.ndarray:
    """The classifier network's input (N, 3, S, S) float RGB 0..1 from stacked BGR corner crops."""
    return np.ascontiguousarray(crops_bgr[..., ::-1].transpose(0, 3, 1, 2)).astype(np.float32) / 255.0


def classifier_side(session, default: int) -> int:
    """The square crop side a classifier takes: its input's fixed height, else the size it was
    exported at (ultralytics writes ``imgsz`` into the file's metadata), else ``default``."""
    side = session.get_inputs()[0].shape[2]
    if isinstance(side, int) and side > 0:
        return side
    found = re.findall(r"\d+", session.get_modelmeta().custom_metadata_map.get("imgsz", ""))
    return int(found[0]) if found and int(found[0]) > 0 else default


def fold_turned(out: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray | None]:
    """A classifier's outputs as (N, ``classes``) probabilities and how likely each index stood
    upright in its crop. A net trained with ``tools/train.py --cls-turn`` has 52 more outputs: each
    card's index lying turned (after the upright cards and any background class); a card is named
    from both of its classes. Other nets tell nothing of the turn (None)."""
    if out.shape[-1] == classes:
        return out, None
    n = len(CARD_CODES)
    if out.shape[-1] != classes + n:
        raise ValueError(f"a classifier with {out.shape[-1]} outputs: expected {classes} or {classes + n}")
    up, rest, turned = out[:, :n], out[:, n:classes], out[:, classes:]
    up_mass, turned_mass = up.sum(1), turned.sum(1)
    upright = up_mass / np.maximum(up_mass + turned_mass, 1e-9)
    return np.concatenate([up + turned, rest], 1), upright.astype(np.float32)


def corner_crop(image_bgr: np.ndarray, box: np.ndarray, margin: float, size: int,
                shift: tuple[float, float] = (0.0, 0.0), angle: float = 0.0) -> np.ndarray:
    """Square crop of side ``margin * max(w, h)`` around ``box``, resized to ``size`` (BGR).

    Training builds its classifier crops with this same function (plus ``shift``/``angle``
    jitter), so inference sees crops made exactly the same way.
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1, 1.0) * margin
    cx, cy = (x1 + x2) / 2 + shift[0] * side, (y1 + y2) / 2 + shift[1] * side
    s = size / side
    m = cv2.getRotationMatrix2D((cx, cy), angle, s)
    m[0, 2] += size / 2 - cx
    m[1, 2] += size / 2 - cy
    interp = cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(image_bgr, m, (size, size), flags=interp, borderMode=cv2.BORDER_REPLICATE)


# Card width at the detector input below which a second, enlarged pass pays off, and the width
# that pass aims for. Measured on rendered val scenes (r2): corners found 9-21% under 25 px,
# 45-66% at 25-35 px, 80-85% from 35 px up.
ZOOM_BELOW_PX = 40.0
ZOOM_TARGET_PX = 60.0
TRACK_FULL_EVERY = 10  # frames between looks at the whole frame while tracking a region
#: A faint corner surely named scores under this: the pipeline asks the person to check it
#: (``companion.vision.pipeline.LOW_SCORE``).
FAINT_SCORE_CAP = 0.49
#: ``multi_crop_below`` while following a game (the app, ``follow``): 0, every corner named from one
#: crop. Its frames are fused over time, and the play-along follower, tuned on one-crop names,
#: measured worse with multi-crop names (8 rendered 1280x720 games: 141 -> 118 of 160 moves).
FOLLOW_MULTI_CROP = 0.0
#: ``face_below_px`` while following a game: 0, no card named from its face. The follower was tuned on
#: index names; with face names the bundled demo games went from 2 of 2 to 1 of 2 followed in order.
FOLLOW_FACE_BELOW_PX = 0.0
CARD_PER_CORNER = 2.6  # card width / longer side of its index-corner box (rendered labels, median)


def zoom_region(boxes: np.ndarray, image_hw: tuple[int, int],
                detector_hw: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """The part of the image worth a second, enlarged detector pass, or None.

    Estimates the card width from the corners found, and when cards are small at the
    detector's input, returns the region around all corners (plus a card's margin for
    the ones missed at the edges), grown to the detector's aspect and to a size that
    brings cards to ``ZOOM_TARGET_PX``. None when that would not enlarge by at least 1.3x.
    """
    if len(boxes) < 2:
        return None
    h, w = image_hw
    dh, dw = detector_hw
    scale = min(dh / h, dw / w)
    sides = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    card = CARD_PER_CORNER * float(np.median(sides))
    if card * scale >= ZOOM_BELOW_PX:
        return None
    target = min(ZOOM_TARGET_PX / max(card, 1.0), 2.5)  # pixels of input per image pixel
    margin = 1.2 * card
    x1, y1 = boxes[:, 0].min() - margin, boxes[:, 1].min() - margin
    x2, y2 = boxes[:, 2].max() + margin, boxes[:, 3].max() + margin
    # grow to the detector's aspect and to the size that gives ``target``, never past the image
    need_w = max(x2 - x1, (y2 - y1) * dw / dh, dw / target)
    need_h = need_w * dh / dw
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    need_w, need_h = min(need_w, w), min(need_h, h)
    x1 = int(round(min(max(cx - need_w / 2, 0), w - need_w)))
    y1 = int(round(min(max(cy - need_h / 2, 0), h - need_h)))
    x2, y2 = int(round(x1 + need_w)), int(round(y1 + need_h))
    if min(dh / (y2 - y1), dw / (x2 - x1)) < 1.3 * scale:
        return None
    return x1, y1, x2, y2


def _head_share(own_side: int, side_sides: list[int], n: int) -> int:
    """How many of ``n`` crops the calling thread names with the first net run on the worker
    thread (nets of ``side_sides`` px inputs there), after its own net (``own_side`` px), so that
    both threads finish together: a net's time grows with its input's pixels."""
    if not side_sides:
        return 0
    load = sum(side ** 2 for side in side_sides) - own_side ** 2
    return int(np.clip(round(load * n / (2 * side_sides[0] ** 2)), 0, n))


#: The corner finder runs alone (nothing else of the frame runs meanwhile): on two threads, both
#: cores (synth_v2 stills, ``evaluate_layout.py`` run back to back: median 58.3 / 59.6 ms with one
#: thread, 55.9 / 54.6 ms with two; outputs the same).
FINDER_THREADS = 2

def _session(path: Path, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # (threads that spin after a run hold a core the frame's own Python work needs)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # ORT raises its own exception types for unreadable models
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelFileError(f"model file {str(path)!r} cannot be loaded (corrupt or not ONNX?): {first}") from None


class OnnxCardDetector:
    """``OnnxCardDetector(models_dir).detect(frame_bgr) -> Detections`` with top-3 alternatives.

    ``threads``: ONNX Runtime intra-op threads of each net (default 1: the machine is shared with the
    UI; the corner finder, which runs alone in a frame, takes at least ``FINDER_THREADS``).
    ``min_score``: drop detections whose combined score (corner x name) is lower;
    ``detector_conf``: sure-corner threshold, ``faint_conf``: faint-corner threshold,
    ``multi_crop_below``: name sureness under which a corner is read again (see ``classify``);
    ``face_below_px``: first index boxes under this are named from the card's face too (``name_faces``,
    needs ``face_classifier.onnx``); defaults: the ones saved in recognition.json, 0 turns the last three off;
    ``zoom``: look again, enlarged, at a table whose cards are small in the frame (see ``find_corners``);
    ``track``: the frames are a video: keep looking at the enlarged region (one pass, not two).
    Off by default everywhere: a card put down outside the region (the first card turned onto an
    empty waste) goes unseen until the next whole-frame look, which cost the bundled demo a draw.
    """

    #: ``detect(image, angle=...)`` names corners with their crops turned (see ``LayoutPipeline``).
    names_turned = True

    def __init__(self, models_dir: str | os.PathLike | None = None, threads: int = 1,
                 min_score: float = 0.0, detector_conf: float | None = None, zoom: bool = True,
                 track: bool = False, faint_conf: float | None = None,
                 multi_crop_below: float | None = None, face_below_px: float | None = None) -> None:
        folder = Path(models_dir) if models_dir is not None else default_models_dir()
        det_path, cls_path = model_paths(folder)
        self.models_dir = folder
        self.settings = RecognitionSettings.load(folder)
        if detector_conf is not None:  # override the corner threshold saved with the model
            self.settings = replace(self.settings, detector_conf=detector_conf)
        if faint_conf is not None:
            self.settings = replace(self.settings, faint_conf=faint_conf if faint_conf > 0 else None)
        if multi_crop_below is not None:
            self.settings = replace(self.settings, multi_crop_below=multi_crop_below if multi_crop_below > 0 else None)
        if face_below_px is not None:
            self.settings = replace(self.settings, face_below_px=face_below_px if face_below_px > 0 else None)
        st = self.settings
        #: The faintest corner looked at (named, and kept if named surely).
        self.floor_conf = st.detector_conf if st.faint_conf is None else min(st.faint_conf, st.detector_conf)
        self.min_score = min_score
        self.zoom = zoom
        self.track = track
        self._region: tuple | None = None  # (region, frame size, corners found there) while tracking
        #: The last image's corners (image, boxes, scores): naming it again at another angle
        #: costs only the classifier. Held by identity: a frame is not changed after it is read.
        self._corner_memo: tuple | None = None
        #: The last image's names, per angle they were named at: {angle: (boxes, probabilities)}.
        self._probs_memo: tuple | None = None
        self._since_full = 0
        self._det = _session(det_path, max(threads, FINDER_THREADS))
        self._cls = _session(cls_path, threads)
        self._det_input = self._det.get_inputs()[0].name
        self._cls_input = self._cls.get_inputs()[0].name
        shape = self._det.get_inputs()[0].shape
        if len(shape) != 4 or any(isinstance(d, int) and d != s for d, s in zip(shape[2:], self.settings.detector_size)):
            raise ModelFileError(f"{det_path}: input shape {shape} does not match the settings' "
                                 f"detector_size {list(self.settings.detector_size)}")
        def check_classes(path: Path, session) -> None:
            out = session.get_outputs()[0].shape
            # (a net that tells which way an index lies has one more class per card: ``fold_turned``)
            if out[-1] not in (st.classifier_classes, st.classifier_classes + len(CARD_CODES)):
                raise ModelFileError(f"{path}: {out[-1]} classes, expected {st.classifier_classes}")

        check_classes(cls_path, self._cls)
        #: The classifiers averaged with the first (``extra_classifiers``): (session, input name, crop
        #: side: a net exported at its own fixed input size is fed crops cut at that size).
        self._extra_cls: list[tuple] = []
        self._side: ThreadPoolExecutor | None = None  # runs them beside the first, made when first needed
        for name in st.extra_classifiers:
            path = folder / name
            if not path.is_file():
                raise ModelFileError(f"{path}: missing (named in {SETTINGS_FILE}'s extra_classifiers)")
            session = _session(path, threads)
            check_classes(path, session)
            self._extra_cls.append((session, session.get_inputs()[0].name, classifier_side(session, st.classifier_size)))
        #: The net that tells only which way each index stood (``turn_classifier``): as an extra one.
        self._turn_cls: tuple | None = None
        #: Whether it is run (``LayoutPipeline.process`` turns it off while a layout is tracked).
        self.tell_turn = True
        if st.turn_classifier is not None:
            path = folder / st.turn_classifier
            if not path.is_file():
                raise ModelFileError(f"{path}: missing (named in {SETTINGS_FILE}'s turn_classifier)")
            session = _session(path, threads)
            if session.get_outputs()[0].shape[-1] != st.classifier_classes + len(CARD_CODES):
                raise ModelFileError(f"{path}: does not tell which way an index lies "
                                     f"({st.classifier_classes + len(CARD_CODES)} classes expected)")
            self._turn_cls = (session, session.get_inputs()[0].name, classifier_side(session, st.classifier_size))
        # The face classifier is optional: without it (or with face_below_px unset) no face is read.
        self._face = None
        face_path = folder / FACE_FILE
        if st.face_below_px is not None and face_path.is_file():
            self._face = _session(face_path, threads)
            self._face_input = self._face.get_inputs()[0].name
            if self._face.get_outputs()[0].shape[-1] < len(st.class_names):
                raise ModelFileError(f"{face_path}: fewer than {len(st.class_names)} classes")

    @contextmanager
    def aside(self) -> Iterator["OnnxCardDetector"]:
        """Reads of another picture (the frame turned) that leave a video's tracking alone."""
        saved = (self._region, self._since_full, self._corner_memo, self._probs_memo)
        self._region = None
        try:
            yield self
        finally:
            self._region, self._since_full, self._corner_memo, self._probs_memo = saved

    def __repr__(self) -> str:
        return f"OnnxCardDetector({str(self.models_dir)!r})"

    # -- stage 1 -------------------------------------------------------------------------
    def _corners_in(self, image_bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One detector pass over ``image_bgr`` letterboxed to the detector input."""
        st = self.settings
        canvas, r, (left, top) = letterbox(image_bgr, st.detector_size)
        x = detector_input(canvas)
        pred = self._det.run(None, {self._det_input: x})[0][0]  # (4 + classes, anchors)
        scores = pred[4:].max(0)
        keep = scores >= self.floor_conf
        if not keep.any():
            return np.zeros((0, 4), np.float32), np.zeros((0,), np.float32)
        cx, cy, w, h = pred[:4, keep]
        scores = scores[keep]
        boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1)
        kept = nms(boxes, scores, st.nms_iou)[:300]
        boxes, scores = boxes[kept], scores[kept]
        boxes -= np.array([left, top, left, top], np.float32)
        boxes /= r
        hh, ww = image_bgr.shape[:2]
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, ww)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, hh)
        return boxes.astype(np.float32), scores.astype(np.float32)

    def find_corners(self, image_bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Corner boxes (N, 4) in image pixels and their scores (N,).

        When the cards come out small at the detector's input (a far camera, a big frame), a
        second pass looks again at the region around the corners found, enlarged: corners of
        cards under ~35 px wide at the detector input are mostly missed, above ~40 px mostly found.
        With ``track`` (a video), later frames look only at that region, and at the whole frame
        again every ``TRACK_FULL_EVERY`` frames or when the region shows half the corners it did.
        """
        hw = image_bgr.shape[:2]
        if self.track and self._region is not None and self._region[1] == hw and self._since_full < TRACK_FULL_EVERY:
            self._since_full += 1
            region, _, found = self._region
            boxes, scores = self._region_pass(image_bgr, region)
            if 2 * self._sure(scores) >= found:
                return boxes, scores
        self._region, self._since_full = None, 0
        boxes, scores = self._corners_in(image_bgr)
        # where to look again follows the sure corners (a faint one is as often no corner)
        sure = scores >= self.settings.detector_conf
        region = zoom_region(boxes[sure], hw, self.settings.detector_size) if self.zoom else None
        if region is None:
            return boxes, scores
        more, more_scores = self._region_pass(image_bgr, region)
        if self.track:
            self._region = (region, hw, self._sure(more_scores))
        boxes, scores = np.concatenate([more, boxes]), np.concatenate([more_scores, scores])
        kept = nms(boxes, scores, self.settings.nms_iou)[:300]
        return boxes[kept], scores[kept]

    def _sure(self, scores: np.ndarray) -> int:
        return int((scores >= self.settings.detector_conf).sum())

    def _region_pass(self, image_bgr: np.ndarray, region: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
        x1, y1, x2, y2 = region
        boxes, scores = self._corners_in(image_bgr[y1:y2, x1:x2])
        return boxes + np.array([x1, y1, x1, y1], np.float32), scores

    def _scores(self, corner: np.ndarray, name: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each read's score, and whether it counts at all.

        A read's score is corner x name. A corner named at least ``faint_name`` sure scores at least
        name x sqrt(corner), kept under ``FAINT_SCORE_CAP``: the classifier's sure name is evidence
        that a card's index lies there. On real photos the detector scores corners lower than on
        rendered ones (the best corner of a real card: median 0.50, rendered 0.63), and such reads
        are as often right as those already in that band (rendered val: corner 0.10-0.17 named
        >= 0.8: 68% right, 0.17-0.25: 80%; corner x name 0.25-0.35: 63%, 0.35-0.5: 77%).
        A corner under ``detector_conf`` that is not named surely does not count.
        """
        st = self.settings
        score = corner * name
        if st.faint_conf is None:
            return score, corner >= st.detector_conf
        sure_name = name >= st.faint_name
        lifted = np.minimum(name * np.sqrt(corner), FAINT_SCORE_CAP)
        score = np.where(sure_name, np.maximum(score, lifted), score)
        return score, (corner >= st.detector_conf) | sure_name

    # -- stage 2 -------------------------------------------------------------------------
    def classify(self, image_bgr: np.ndarray, boxes: np.ndarray, angle: float = 0.0,
                 corner_scores: np.ndarray | None = None) -> np.ndarray:
        """Class probabilities (N, 52) for the corners in ``boxes``; ``angle`` (degrees) turns each
        crop first: the layout's turn in the image, so that the indices stand upright. Corners named
        less than ``multi_crop_below`` sure are named again (``_name_again``); with ``corner_scores``,
        only the sure corners among them (a faint corner counts only when named surely at once)."""
        return self._classify(image_bgr, boxes, angle, corner_scores, tell_turn=False)[0]

    def _classify(self, image_bgr: np.ndarray, boxes: np.ndarray, angle: float = 0.0,
                  corner_scores: np.ndarray | None = None,
                  tell_turn: bool | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """``classify``'s probabilities and how likely each index stood upright in its one crop
        (None: no classifier tells, ``fold_turned``; the turn net runs when ``tell_turn``, by
        default ``self.tell_turn``)."""
        st = self.settings
        if len(boxes) == 0:
            return np.zeros((0, len(st.class_names)), np.float32), None
        tell = self.tell_turn if tell_turn is None else tell_turn
        probs, upright = self._name_crops(image_bgr, boxes, (st.crop_margin,), angle, tell)
        unsure = self.to_name_again(probs, corner_scores)
        if len(unsure):
            probs[unsure] = self._name_again(image_bgr, boxes[unsure], probs[unsure], angle)
        # (a background class's share stays out: a crop of no index names no card surely)
        return probs[:, :len(st.class_names)], upright

    @property
    def face_below_px(self) -> float | None:
        """First index boxes under this (longer side, px) are named from the card's face too; None
        when this model has no face classifier."""
        return self.settings.face_below_px if self._face is not None else None

    @property
    def face_weight(self) -> float:
        """The face reading's weight against the index reading's (``face_read.fused_names``)."""
        return self.settings.face_weight

    def name_faces(self, image_bgr: np.ndarray, boxes: np.ndarray, angle: float = 0.0) -> np.ndarray:
        """Class probabilities (N, 52) of the cards whose first index corners are ``boxes``, each
        named from its face crop (``face_read.face_crop``) turned by ``angle``."""
        st = self.settings
        if self._face is None or len(boxes) == 0:
            return np.zeros((len(boxes), len(st.class_names)), np.float32)
        # (one batch: each box's crop at every scale, box by box)
        crops = np.stack([face_crop(image_bgr, b, st.classifier_size, angle, scale)
                          for b in boxes for scale in st.face_crop_scales])
        probs = self._face.run(None, {self._face_input: classifier_input(crops)})[0][:, :len(st.class_names)]
        return probs.reshape(len(boxes), len(st.face_crop_scales), -1).mean(1)

    def index_probs(self, image_bgr: np.ndarray, boxes: np.ndarray, angle: float = 0.0) -> np.ndarray:
        """Class probabilities (N, 52) of the corners ``boxes`` named at ``angle``: those ``detect``
        gave this image's boxes at that angle, the others named now (``classify``)."""
        out = np.zeros((len(boxes), len(self.settings.class_names)), np.float32)
        known = self._probs_memo[1].get(float(angle)) if (
            self._probs_memo is not None and self._probs_memo[0] is image_bgr) else None
        missing = []
        for k, box in enumerate(np.asarray(boxes, np.float32)):
            at = np.flatnonzero((known[0] == box).all(1)) if known is not None and len(known[0]) else []
            if len(at):
                out[k] = known[1][at[0]]
            else:
                missing.append(k)
        if missing:
            out[missing] = self.classify(image_bgr, np.asarray(boxes, np.float32)[missing], angle)
        return out

    def to_name_again(self, probs: np.ndarray, corner_scores: np.ndarray | None = None) -> np.ndarray:
        """Indices of the corners whose one-crop names (``probs``) are read again from three crops:
        named less than ``multi_crop_below`` sure and, with ``corner_scores``, found surely."""
        st = self.settings
        if st.multi_crop_below is None:
            return np.zeros(0, np.int64)
        unsure = probs.max(1) < st.multi_crop_below
        if corner_scores is not None:
            unsure &= corner_scores >= st.detector_conf
        return np.flatnonzero(unsure)

    def _name_crops(self, image_bgr: np.ndarray, boxes: np.ndarray, margins: tuple[float, ...],
                    angle: float, tell_turn: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Classifier outputs for crops of every box at each margin in turn (one batch, one call),
        and how likely each index stood upright (the mean of the nets that tell; None: none does,
        or ``tell_turn`` is off and the turn net is not run)."""
        st = self.settings
        inputs: dict[int, np.ndarray] = {}

        def batch(side: int) -> np.ndarray:  # the crops cut once for each input size asked
            if side not in inputs:
                inputs[side] = classifier_input(np.stack([corner_crop(image_bgr, b, m, side, angle=angle)
                                                          for m in margins for b in boxes]))
            return inputs[side]
        # An ensemble: the mean of the members' probabilities. The others run on a worker thread
        # meanwhile (ONNX Runtime lets go of the GIL), and this thread, done with the first net, runs
        # the head of the second one's batch: the two cores share the work (a net's outputs are the
        # same however its batch is split).
        runner = self._side_runner()
        jobs = [(session, name, batch(side)) for session, name, side in self._extra_cls]
        turn_job = (None if self._turn_cls is None or not tell_turn
                    else (self._turn_cls[0], self._turn_cls[1], batch(self._turn_cls[2])))
        head = 0 if not jobs else _head_share(
            st.classifier_size, [x.shape[-1] for _, _, x in jobs + ([turn_job] if turn_job else [])],
            len(boxes) * len(margins))
        tail = None
        if jobs and head < len(jobs[0][2]):
            session, name, x = jobs[0]
            tail = runner.submit(session.run, None, {name: x[head:]})
        others = [runner.submit(session.run, None, {name: x}) for session, name, x in jobs[1:]]
        turn = None if turn_job is None else runner.submit(turn_job[0].run, None, {turn_job[1]: turn_job[2]})
        outs = [fold_turned(self._cls.run(None, {self._cls_input: batch(st.classifier_size)})[0],
                            st.classifier_classes)]
        if jobs:
            session, name, x = jobs[0]
            parts = ([session.run(None, {name: x[:head]})[0]] if head else []) + (
                [tail.result()[0]] if tail is not None else [])
            outs.append(fold_turned(np.concatenate(parts), st.classifier_classes))
        outs += [fold_turned(other.result()[0], st.classifier_classes) for other in others]
        probs = sum(p for p, _ in outs) / len(outs)
        ups = [u for _, u in outs if u is not None]
        if turn is not None:  # its say on the turn alone
            ups = [fold_turned(turn.result()[0], st.classifier_classes)[1]]
        return probs, (sum(ups) / len(ups)) if ups else None

    def _side_runner(self) -> ThreadPoolExecutor:
        if self._side is None:
            # (one worker a net beside the first: the turn net need not wait for the second)
            workers = max(1, len(self._extra_cls) + (self._turn_cls is not None))
            self._side = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="classifier")
        return self._side

    def _name_again(self, image_bgr: np.ndarray, boxes: np.ndarray, first: np.ndarray, angle: float) -> np.ndarray:
        """Unsure names read again from tighter and looser crops: the geometric mean of the readings.

        A corner box a few pixels off, or an index near the crop's edge, misleads one crop more than
        three. Measured on rendered val corners (shipped r5 classifier; sure corners named under 0.9
        sure, 28% of them): named right 85.2% -> 86.3% of all matched sure corners; crops of 1.15x and
        1.45x the box beside the usual 1.3x did as well as shifted crops and better than turned ones.
        """
        more = self._name_crops(image_bgr, boxes, self.settings.multi_crop_margins, angle, tell_turn=False)[0]
        logs = np.log(np.concatenate([first, more]) + 1e-6).reshape(-1, *first.shape)
        mean = logs.mean(0)
        probs = np.exp(mean - mean.max(1, keepdims=True))
        return (probs / probs.sum(1, keepdims=True)).astype(np.float32)

    def detect(self, image_bgr: np.ndarray, angle: float = 0.0) -> Detections:
        """Corners found and named. ``angle``: the layout's turn in the image (degrees, as
        ``LayoutPipeline`` measures it from its lattice fit); the crops are turned back before
        they are named. The image just read, asked again at an angle, reuses its corners."""
        if not isinstance(image_bgr, np.ndarray) or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
            shape = getattr(image_bgr, "shape", type(image_bgr).__name__)
            raise ValueError(f"detect() needs a BGR image of shape (H, W, 3), got {shape}")
        if image_bgr.dtype != np.uint8:
            raise ValueError(f"detect() needs a uint8 image, got {image_bgr.dtype}")
        if angle and self._corner_memo is not None and self._corner_memo[0] is image_bgr:
            boxes, det_scores = self._corner_memo[1:]
        else:
            boxes, det_scores = self.find_corners(image_bgr)
            self._corner_memo = (image_bgr, boxes, det_scores)
        if len(boxes) == 0:
            return Detections.empty()
        probs, upright = self._classify(image_bgr, boxes, angle, det_scores)
        top = np.argsort(-probs, axis=1)[:, :TOP_K]
        top_p = np.take_along_axis(probs, top, 1)
        score, counts = self._scores(det_scores, top_p[:, 0])
        keep = counts & (score >= self.min_score)
        if self._probs_memo is None or self._probs_memo[0] is not image_bgr:
            self._probs_memo = (image_bgr, {})
        self._probs_memo[1][float(angle)] = (boxes[keep], probs[keep])
        return Detections(
            boxes[keep], top[keep, 0].astype(np.int64), score[keep].astype(np.float32),
            top[keep, 1:].astype(np.int64), top_p[keep, 1:].astype(np.float32),
            None if upright is None else upright[keep])


def load_detector(models_dir: str | os.PathLike | None = None, threads: int = 1,
                  track: bool = False) -> OnnxCardDetector:
    """The shipped (or ``$PYRAMID_COMPANION_MODELS``) recognition model for following a game from a
    video's frames (``track``: keep looking at the enlarged region): each corner named from one crop
    (``FOLLOW_MULTI_CROP``), no card from its face (``FOLLOW_FACE_BELOW_PX``)."""
    return OnnxCardDetector(models_dir, threads=threads, track=track, multi_crop_below=FOLLOW_MULTI_CROP,
                            face_below_px=FOLLOW_FACE_BELOW_PX)


__all__ = ["Detector", "OnnxCardDetector", "ModelFileError", "load_detector", "classifier_input", "classifier_side",
           "corner_crop", "detector_input", "letterbox", "zoom_region"]
