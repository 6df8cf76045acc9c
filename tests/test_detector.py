"""The ONNX recognition runtime: model files, errors, pre/post-processing, the shipped model, `detect`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")
pytest.importorskip("onnxruntime")

from companion.cards import CARD_CODES  # noqa: E402
from companion.errors import CompanionError  # noqa: E402
from companion.vision.detections import Detections  # noqa: E402
from companion.vision.detector import (  # noqa: E402
    Detector, ModelFileError, OnnxCardDetector, classifier_input, corner_crop, letterbox, nms, zoom_region,
)
from companion.vision.model_files import (  # noqa: E402
    CLASSIFIER_FILE, DETECTOR_FILE, SETTINGS_FILE, RecognitionSettings, default_models_dir,
)
from companion.vision.quarter_turn import detect_any_way  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "datasets" / "samples" / "detector"


# -- errors ----------------------------------------------------------------------------------
def test_missing_folder_names_it(tmp_path):
    with pytest.raises(ModelFileError, match="does not exist") as err:
        OnnxCardDetector(tmp_path / "nowhere")
    assert "nowhere" in str(err.value)
    assert isinstance(err.value, CompanionError)


def test_missing_file_is_named(tmp_path):
    (tmp_path / DETECTOR_FILE).write_bytes(b"x")
    with pytest.raises(ModelFileError, match=CLASSIFIER_FILE):
        OnnxCardDetector(tmp_path)


def test_corrupt_file_gives_clear_error(tmp_path):
    (tmp_path / DETECTOR_FILE).write_bytes(b"this is not an onnx model")
    (tmp_path / CLASSIFIER_FILE).write_bytes(b"\x00\x01garbage")
    with pytest.raises(ModelFileError, match="cannot be loaded") as err:
        OnnxCardDetector(tmp_path)
    assert DETECTOR_FILE in str(err.value)


def test_settings_round_trip_and_bad_settings(tmp_path):
    s = RecognitionSettings(detector_size=(288, 512), classifier_size=80, crop_margin=1.4)
    assert RecognitionSettings.from_json(s.to_json()) == s
    with pytest.raises(ModelFileError, match="class_names"):
        RecognitionSettings.from_json(json.dumps({"class_names": list(reversed(CARD_CODES))}))
    with pytest.raises(ModelFileError, match="not valid"):
        RecognitionSettings.from_json("[1, 2")
    assert RecognitionSettings.load(tmp_path) == RecognitionSettings()  # no file: defaults
    s = RecognitionSettings(extra_classifiers=("card_classifier_b.onnx",))
    assert RecognitionSettings.from_json(s.to_json()) == s
    with pytest.raises(ModelFileError, match="extra_classifiers"):
        RecognitionSettings.from_json(json.dumps({"extra_classifiers": "card_classifier_b.onnx"}))
    with pytest.raises(ModelFileError, match="extra_classifiers"):
        RecognitionSettings.from_json(json.dumps({"extra_classifiers": ["../elsewhere.onnx"]}))
    s = RecognitionSettings(face_crop_scales=(0.9, 1.0))
    assert RecognitionSettings.from_json(s.to_json()) == s
    for bad in ([], [0.9, 0.0], 0.9, ["big"]):
        with pytest.raises(ModelFileError, match="face_crop_scales|not valid"):
            RecognitionSettings.from_json(json.dumps({"face_crop_scales": bad}))


def alike_classifier(side: float | None = None):
    """An ONNX classifier that names every crop alike, each of the 52 classes 1/52 (times the crop's
    height / ``side`` when given: only crops of that size sum to 1)."""
    from onnx import TensorProto, helper

    nodes = [helper.make_node("ReduceMean", ["images"], ["m"], axes=[1, 2, 3], keepdims=0),
             helper.make_node("Mul", ["m", "zero"], ["z"]),
             helper.make_node("Unsqueeze", ["z", "one"], ["z1"])]
    init = [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
            helper.make_tensor("one", TensorProto.INT64, [1], [1]),
            helper.make_tensor("uniform", TensorProto.FLOAT, [1, 52], [1 / 52] * 52)]
    if side is None:
        nodes.append(helper.make_node("Add", ["z1", "uniform"], ["output0"]))
    else:
        nodes += [helper.make_node("Shape", ["images"], ["shape"]),
                  helper.make_node("Gather", ["shape", "two"], ["h"]),
                  helper.make_node("Cast", ["h"], ["hf"], to=TensorProto.FLOAT),
                  helper.make_node("Div", ["hf", "side"], ["ratio"]),
                  helper.make_node("Mul", ["uniform", "ratio"], ["scaled"]),
                  helper.make_node("Add", ["z1", "scaled"], ["output0"])]
        init += [helper.make_tensor("two", TensorProto.INT64, [], [2]),
                 helper.make_tensor("side", TensorProto.FLOAT, [], [float(side)])]
    graph = helper.make_graph(
        nodes, "alike", [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, ["batch", 52])], initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what this ONNX Runtime reads
    return model


def test_extra_classifiers_are_averaged_with_the_first_and_a_missing_one_is_named(tmp_path):
    import shutil

    for name in (DETECTOR_FILE, CLASSIFIER_FILE):
        shutil.copyfile(default_models_dir() / name, tmp_path / name)
    single = OnnxCardDetector(tmp_path)
    # a second classifier that names every crop alike: the ensemble's names are the mean of both
    onnx = pytest.importorskip("onnx")
    model = alike_classifier()
    onnx.save(model, tmp_path / "flat.onnx")
    (tmp_path / SETTINGS_FILE).write_text(RecognitionSettings(extra_classifiers=("flat.onnx",)).to_json())
    both = OnnxCardDetector(tmp_path)
    image = cv2.imread(str(next(SAMPLES.glob("*.jpg"))))
    boxes = np.array([[100, 100, 130, 140], [10, 10, 40, 60]], np.float32)
    want = (single.classify(image, boxes) + 1 / 52) / 2
    assert np.allclose(both.classify(image, boxes), want, atol=1e-6)
    # a copy whose one classifier is about to change (tools/learn_deck.py) leaves the others behind
    from companion.vision.model_files import copy_with_first_classifier

    copy_with_first_classifier(tmp_path, tmp_path / "copy")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == sorted([CLASSIFIER_FILE, DETECTOR_FILE, SETTINGS_FILE])
    assert RecognitionSettings.load(tmp_path / "copy").extra_classifiers == ()
    (tmp_path / "flat.onnx").unlink()
    with pytest.raises(ModelFileError, match="flat.onnx"):
        OnnxCardDetector(tmp_path)


def test_a_classifier_exported_at_its_own_size_is_fed_crops_of_that_size(tmp_path):
    import shutil

    for name in (DETECTOR_FILE, CLASSIFIER_FILE):
        shutil.copyfile(default_models_dir() / name, tmp_path / name)
    single = OnnxCardDetector(tmp_path)
    onnx = pytest.importorskip("onnx")
    from onnx import helper

    # names every crop alike, each class 1/52 times (the crop's height / 96): only 96 px crops sum to 1
    model = alike_classifier(side=96)
    onnx.save(model, tmp_path / "plain.onnx")  # no size said: fed the settings' classifier_size
    helper.set_model_props(model, {"imgsz": "[96, 96]"})  # as ultralytics' export writes it
    onnx.save(model, tmp_path / "sized.onnx")
    image = cv2.imread(str(next(SAMPLES.glob("*.jpg"))))
    boxes = np.array([[100, 100, 130, 140], [10, 10, 40, 60]], np.float32)
    first = single.classify(image, boxes)
    for name, side in (("sized.onnx", 96), ("plain.onnx", 64)):
        (tmp_path / SETTINGS_FILE).write_text(RecognitionSettings(extra_classifiers=(name,)).to_json())
        both = OnnxCardDetector(tmp_path)
        assert np.allclose(both.classify(image, boxes), (first + side / 96 / 52) / 2, atol=1e-6), name


# -- pre/post-processing -----------------------------------------------------------------------
def test_letterbox_keeps_aspect_and_centres():
    image = np.zeros((720, 1280, 3), np.uint8)
    canvas, r, (left, top) = letterbox(image, (384, 640))
    assert canvas.shape == (384, 640, 3) and r == pytest.approx(0.5)
    assert left == 0 and top == 12
    assert (canvas[:top] == 114).all() and (canvas[top:top + 360] == 0).all()


def test_nms_keeps_best_of_overlaps():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60]], np.float32)
    keep = nms(boxes, np.array([0.5, 0.9, 0.7], np.float32), 0.5)
    assert keep.tolist() == [1, 2]


def test_corner_crop_centres_the_box():
    image = np.zeros((200, 300, 3), np.uint8)
    image[90:110, 140:160] = 255  # a 20 px white square
    crop = corner_crop(image, np.array([140, 90, 160, 110]), margin=2.0, size=40)
    assert crop.shape == (40, 40, 3)
    assert crop[20, 20].min() == 255 and crop[2, 2].max() == 0  # box in the middle, margin dark
    assert crop[10:30, 10:30].mean() > 200


# -- the shipped model ---------------------------------------------------------------------------
def shipped() -> Path:
    folder = default_models_dir()
    if not (folder / DETECTOR_FILE).exists():
        pytest.skip(f"no shipped model in {folder} yet (python tools/train.py --data data/synth_v1)")
    return folder


def sample_images() -> list[Path]:
    return sorted(SAMPLES.glob("*.jpg"))


def read_labels(path: Path, w: int, h: int):
    rows = np.array([line.split() for line in path.read_text().split("\n") if line.strip()], float)
    cx, cy, bw, bh = rows[:, 1] * w, rows[:, 2] * h, rows[:, 3] * w, rows[:, 4] * h
    return rows[:, 0].astype(int), np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], 1)


@pytest.fixture(scope="module")
def detector():
    return OnnxCardDetector(shipped())


def test_shipped_model_is_a_detector(detector):
    assert isinstance(detector, Detector)
    assert "OnnxCardDetector(" in repr(detector)
    for name in (DETECTOR_FILE, CLASSIFIER_FILE, SETTINGS_FILE):
        size = (detector.models_dir / name).stat().st_size
        assert size < 15_000_000, f"{name} is {size / 1e6:.1f} MB: weights in models/ must stay small"


def test_shipped_model_reads_the_samples(detector):
    images = sample_images()
    assert images, f"no sample images in {SAMPLES}"
    visible = named = false = 0
    for path in images:
        image = cv2.imread(str(path))
        classes, boxes = read_labels(path.with_suffix(".txt"), image.shape[1], image.shape[0])
        det = detector.detect(image)
        det = det[det.confidence >= 0.25]
        assert det.alt_class_id is not None and det.alt_class_id.shape == (len(det), 3)
        assert (det.xyxy[:, :2] >= 0).all() and (det.xyxy[:, 2] <= image.shape[1]).all()
        cards = set(classes.tolist())
        reported = set(det.class_id.tolist())
        visible += len(cards)
        named += len(cards & reported)
        false += len(reported - cards)
    # A regression guard at the shipped model's level (s2 detector + r2 classifier: 52 of 83
    # named, no false card; the 90-degree turned sample reads few). The floors are
    # measured by tools/evaluate.py and recorded in models/MODEL_CARD.md, not asserted here.
    assert named / visible >= 0.6, f"named {named} of {visible} visible cards"
    assert false <= len(images), f"{false} false cards on {len(images)} images"


def test_a_table_turned_a_quarter_is_read_any_way(detector):
    # the sample whose table lies turned by about 90 degrees: upright, the model names fewer of its
    # cards (r4's detector 16 or so of 29, ft3's 21), turned all but a few
    path = SAMPLES / "val_s12_000012.jpg"
    image = cv2.imread(str(path))
    classes, boxes = read_labels(path.with_suffix(".txt"), image.shape[1], image.shape[0])
    cards = set(classes.tolist())
    upright = detector.detect(image)
    upright = upright[upright.confidence >= 0.25]
    dets, k = detect_any_way(detector, image)
    dets = dets[dets.confidence >= 0.25]
    assert k != 0
    named = cards & set(dets.class_id.tolist())
    assert len(named) >= 0.9 * len(cards) and len(named) >= len(cards & set(upright.class_id.tolist())) + 5
    # in the image's own pixels: each card named right lies on one of its labelled corners
    for c in named:
        ours = dets.xyxy[dets.class_id == c]
        theirs = boxes[classes == c]
        x1 = np.maximum(ours[:, None, 0], theirs[None, :, 0])
        x2 = np.minimum(ours[:, None, 2], theirs[None, :, 2])
        y1 = np.maximum(ours[:, None, 1], theirs[None, :, 1])
        y2 = np.minimum(ours[:, None, 3], theirs[None, :, 3])
        assert ((x2 > x1) & (y2 > y1)).any(), CARD_CODES[c]
    # an upright table read surely is read once, as it is
    upright_sample = cv2.imread(str(SAMPLES / "val_s12_000004.jpg"))
    assert detect_any_way(detector, upright_sample)[1] == 0


def test_blank_frame_gives_no_cards(detector):
    det = detector.detect(np.full((720, 1280, 3), 90, np.uint8))
    assert len(det) <= 1


def test_detect_rejects_non_images(detector):
    with pytest.raises(ValueError, match="shape"):
        detector.detect(np.zeros((10, 10), np.uint8))


# -- the command -------------------------------------------------------------------------------
def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "companion", "detect", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def test_detect_json_on_a_sample():
    shipped()
    image = sample_images()[0]
    result = cli(str(image), "--json")
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)
    assert items and all(set(i) == {"card", "box", "score"} and i["card"] in CARD_CODES for i in items)
    assert all(len(i["box"]) == 4 and 0 <= i["score"] <= 1 for i in items)


def test_detect_reads_a_turned_table_unless_told_upright():
    shipped()
    path = SAMPLES / "val_s12_000012.jpg"
    classes, _ = read_labels(path.with_suffix(".txt"), *cv2.imread(str(path)).shape[1::-1])
    cards = {CARD_CODES[c] for c in classes}
    named = {}
    for flags in ((), ("--upright",)):
        result = cli(str(path), "--json", *flags)
        assert result.returncode == 0, result.stderr
        named[flags] = cards & {i["card"] for i in json.loads(result.stdout)}
    assert len(named[()]) >= 0.8 * len(cards) > len(named[("--upright",)])


def test_detect_unreadable_input_and_missing_model(tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_text("not a picture")
    result = cli(str(bad), "--json")
    assert result.returncode == 2 and "bad.jpg" in result.stderr and "cannot be read" in result.stderr
    result = cli(str(tmp_path / "missing.png"))
    assert result.returncode == 2 and "does not exist" in result.stderr
    image = tmp_path / "blank.png"
    cv2.imwrite(str(image), np.zeros((20, 20, 3), np.uint8))
    result = cli(str(image), "--models", str(tmp_path / "no-models"))
    assert result.returncode == 2 and "no-models" in result.stderr


def test_detections_json_shape():
    det = Detections(np.array([[1, 2, 3, 4]], np.float32), np.array([CARD_CODES.index("QH")]),
                     np.array([0.97], np.float32))
    assert det.to_json() == [{"card": "QH", "box": [1.0, 2.0, 3.0, 4.0], "score": 0.97}]


def test_zoom_region_only_for_small_cards():
    # corners of ~45 px cards (longer side ~17 px) in a 1280x720 frame: 22 px cards at the input
    small = np.array([[600 + 30 * i, 300, 612 + 30 * i, 317] for i in range(6)], np.float32)
    region = zoom_region(small, (720, 1280), (384, 640))
    assert region is not None
    x1, y1, x2, y2 = region
    assert x1 <= 600 - 17 and x2 >= 762 + 17 and y1 <= 300 - 17 and y2 >= 317 + 17  # corners + margin
    assert abs((x2 - x1) / (y2 - y1) - 640 / 384) < 0.02  # the detector's aspect: no letterbox waste
    assert min(384 / (y2 - y1), 640 / (x2 - x1)) >= 1.3 * 0.5  # at least 1.3x the first pass
    # the same table in a 4x bigger frame is just as small at the input
    assert zoom_region(small * 4, (720 * 4, 1280 * 4), (384, 640)) is not None
    assert zoom_region(small * 3, (720, 1280), (384, 640)) is None  # ~135 px cards: seen well
    assert zoom_region(small[:1], (720, 1280), (384, 640)) is None  # one corner: nothing to frame


def test_zoom_reads_a_table_far_from_the_camera(detector):
    # A sample scene shrunk into a bigger frame (a camera farther away): cards ~20 px wide at the
    # detector's input are mostly missed by one pass; the enlarged second look finds them.
    path = SAMPLES / "val_s12_000024.jpg"
    image = cv2.imread(str(path))
    classes, _ = read_labels(path.with_suffix(".txt"), image.shape[1], image.shape[0])
    small = cv2.resize(image, None, fx=0.35, fy=0.35, interpolation=cv2.INTER_AREA)
    frame = np.full((720, 1280, 3), 60, np.uint8)
    frame[200:200 + small.shape[0], 300:300 + small.shape[1]] = small
    cards = set(classes.tolist())

    def named(zoom: bool) -> int:
        det = OnnxCardDetector(detector.models_dir, zoom=zoom).detect(frame)
        return len(cards & set(det[det.confidence >= 0.25].class_id.tolist()))

    once, twice = named(False), named(True)
    # (s2: 2x the cards with the zoom; r4, trained with close-ups, read 18 of 25 alone at 0.4 of
    # the size, 25 with it; ft3 reads all 25 alone at 0.4, and 18 of 25 alone at 0.35, 25 with it)
    assert twice >= max(once + 3, 0.8 * len(cards)), (once, twice, len(cards))


def test_tracking_a_video_looks_only_at_the_zoomed_region(detector):
    path = SAMPLES / "val_s12_000024.jpg"
    image = cv2.imread(str(path))
    small = cv2.resize(image, None, fx=0.4, fy=0.4, interpolation=cv2.INTER_AREA)
    frame = np.full((720, 1280, 3), 60, np.uint8)
    frame[200:200 + small.shape[0], 300:300 + small.shape[1]] = small
    # (faint corners off: the whole frame's faint reads of its small cards are not the point here)
    tracker = OnnxCardDetector(detector.models_dir, track=True, faint_conf=0)
    passes = []
    inner = tracker._corners_in
    tracker._corners_in = lambda image: (passes.append(image.shape[:2]), inner(image))[1]
    first = tracker.detect(frame)
    assert len(passes) == 2 and passes[0] == (720, 1280)  # whole frame, then the region
    passes.clear()
    again = tracker.detect(frame)
    assert len(passes) == 1 and passes[0] != (720, 1280)  # the region only
    both, region_only = set(first.class_id.tolist()), set(again.class_id.tolist())
    assert len(both & region_only) >= 0.9 * len(both), (both, region_only)
    passes.clear()
    tracker.detect(np.full((720, 1280, 3), 60, np.uint8))  # the table gone: look at it all again
    assert (720, 1280) in passes


def test_a_turned_copy_read_aside_leaves_the_video_tracking_alone(detector):
    # (companion.vision.quarter_turn reads a frame turned by a quarter turn with aside())
    path = SAMPLES / "val_s12_000024.jpg"
    small = cv2.resize(cv2.imread(str(path)), None, fx=0.4, fy=0.4, interpolation=cv2.INTER_AREA)
    frame = np.full((720, 1280, 3), 60, np.uint8)
    frame[200:200 + small.shape[0], 300:300 + small.shape[1]] = small
    tracker = OnnxCardDetector(detector.models_dir, track=True, faint_conf=0)
    tracker.detect(frame)
    region = tracker._region
    assert region is not None
    with tracker.aside():
        turned = np.ascontiguousarray(np.rot90(frame, 2))  # the same size: a region would fit it
        assert len(tracker.detect(turned)) > 0
        assert tracker._region is not None and tracker._region != region
    assert tracker._region == region and tracker._corner_memo[0] is frame
    passes = []
    inner = tracker._corners_in
    tracker._corners_in = lambda image: (passes.append(image.shape[:2]), inner(image))[1]
    tracker.detect(frame)
    assert len(passes) == 1 and passes[0] != (720, 1280)  # still tracking the frame's region only


def test_naming_the_same_frame_again_turned_reuses_its_corners(detector):
    image = cv2.imread(str(SAMPLES / "val_s12_000024.jpg"))
    det = OnnxCardDetector(detector.models_dir)
    passes = []
    inner = det._corners_in
    det._corners_in = lambda im: (passes.append(1), inner(im))[1]
    upright = det.detect(image)
    n = len(passes)
    turned = det.detect(image, angle=90.0)
    assert len(passes) == n  # no detector pass: only the classifier ran again
    assert len(turned) <= len(upright) and not np.array_equal(turned.class_id, upright.class_id)
    det.detect(image.copy(), angle=90.0)  # another frame: its own corners
    assert len(passes) > n


def test_faint_corners_count_only_when_named_surely(detector):
    from dataclasses import replace

    plain = OnnxCardDetector(detector.models_dir, faint_conf=0)
    assert plain.settings.faint_conf is None and plain.floor_conf == plain.settings.detector_conf
    corner = np.array([0.15, 0.15, 0.3, 0.6, 0.9], np.float32)
    name = np.array([0.9, 0.5, 0.85, 0.9, 0.3], np.float32)
    score, counts = plain._scores(corner, name)
    assert np.allclose(score, corner * name) and counts.tolist() == [False, False, True, True, True]
    faint = OnnxCardDetector(detector.models_dir, faint_conf=0.1)
    faint.settings = replace(faint.settings, faint_name=0.8)
    assert faint.floor_conf == pytest.approx(0.1)
    score, counts = faint._scores(corner, name)
    # a faint corner named surely counts, scored in the band the pipeline asks to check
    assert counts.tolist() == [True, False, True, True, True]
    assert score[0] == pytest.approx(0.9 * np.sqrt(0.15)) and 0.25 <= score[0] < 0.5
    # a surer corner never scores lower than a fainter one named as surely
    assert score[2] == pytest.approx(0.85 * np.sqrt(0.3)) and score[2] > 0.85 * 0.3
    # reads at or above the check band keep corner x name; unsure names are never lifted
    assert score[3] == pytest.approx(0.9 * 0.6) and score[4] == pytest.approx(0.9 * 0.3)
    assert score[1] == pytest.approx(0.15 * 0.5)


def test_faint_corners_setting_round_trips_and_is_off_by_default(tmp_path):
    assert RecognitionSettings().faint_conf is None
    s = RecognitionSettings(faint_conf=0.1, faint_name=0.75)
    assert RecognitionSettings.from_json(s.to_json()) == s


def test_faint_corners_surely_named_find_more_cards(detector):
    # A hard sample (small, blurred cards), blurred more: the sure corners miss some of its 29
    # cards, the faint ones surely named add some and no false card. (r4's detector named 3 of
    # the sample as it is, and 7 with the faint corners; ft3 names 21 either way, and blurred
    # with sigma 1.5, 18 and 19.)
    path = SAMPLES / "val_s12_000012.jpg"
    image = cv2.GaussianBlur(cv2.imread(str(path)), (0, 0), 1.5)
    classes, _ = read_labels(path.with_suffix(".txt"), image.shape[1], image.shape[0])
    cards = set(classes.tolist())
    found = {}
    for faint in (0, 0.1):
        det = OnnxCardDetector(detector.models_dir, faint_conf=faint).detect(image)
        found[faint] = set(det[det.confidence >= 0.25].class_id.tolist())
    assert found[0] <= found[0.1]
    assert len(found[0.1] & cards) > len(found[0] & cards)
    assert len(found[0.1] - cards) <= len(found[0] - cards)


def test_multi_crop_setting_round_trips_and_is_off_by_default():
    assert RecognitionSettings().multi_crop_below is None
    s = RecognitionSettings(multi_crop_below=0.9, multi_crop_margins=(1.1, 1.5))
    assert RecognitionSettings.from_json(s.to_json()) == s


def test_unsure_sure_corners_are_named_again_from_two_more_crops(detector):
    image = cv2.imread(str(SAMPLES / "val_s12_000012.jpg"))
    once = OnnxCardDetector(detector.models_dir, multi_crop_below=0)
    again = OnnxCardDetector(detector.models_dir, multi_crop_below=0.9)
    boxes, corner = once.find_corners(image)
    first = once.classify(image, boxes)
    probs = again.classify(image, boxes, corner_scores=corner)
    chosen = (first.max(1) < 0.9) & (corner >= again.settings.detector_conf)
    assert chosen.any() and (~chosen).any()  # the sample has both kinds
    # corners named surely, and faint corners, keep their one reading
    assert np.array_equal(probs[~chosen], first[~chosen])
    # the others: the normalised geometric mean of the crops at 1.3x, 1.15x and 1.45x the box
    st = again.settings
    logs = [np.log(first[chosen] + 1e-6)]
    for margin in st.multi_crop_margins:  # (each crop named by every classifier of the model, averaged)
        logs.append(np.log(again._name_crops(image, boxes[chosen], (margin,), 0.0)[0] + 1e-6))
    mean = np.exp(np.mean(logs, 0))
    assert np.allclose(probs[chosen], mean / mean.sum(1, keepdims=True), atol=1e-5)
    assert np.allclose(probs.sum(1), 1, atol=1e-4)
    # without corner scores every unsure name is read again
    assert not np.array_equal(again.classify(image, boxes)[first.max(1) < 0.9], first[first.max(1) < 0.9])


def test_following_a_game_names_each_corner_from_one_crop(detector):
    # the follower was tuned on one-crop names and measured worse with multi-crop ones
    from companion.playalong.stream import default_detector
    from companion.vision.detector import load_detector
    assert detector.settings.multi_crop_below is not None  # stills: detect, recognize IMAGE
    assert load_detector(detector.models_dir).settings.multi_crop_below is None
    assert default_detector(str(detector.models_dir)).settings.multi_crop_below is None


def test_bench_times_one_crop_and_three_crop_naming_and_restores_the_settings(detector):
    sys.path.insert(0, str(REPO))
    from tools.bench_inference import bench, load_frames

    frames = load_frames(SAMPLES, 2)
    before = detector.settings
    assert before.multi_crop_below  # the shipped model names a still's unsure corners again
    out = bench(detector, frames, runs=2)
    assert detector.settings == before
    assert 0 <= out["corners_named_again_per_frame"] <= out["corners_per_frame"]
    assert out["classifier_30_corners_median_ms"] > 0 and out["classifier_30_corners_all_named_again_median_ms"] > 0


def test_index_probabilities_are_those_detect_named_with(detector):
    image = cv2.imread(str(SAMPLES / "val_s12_000024.jpg"))
    det = OnnxCardDetector(detector.models_dir)
    upright = det.detect(image)
    turned = det.detect(image, angle=90.0)
    calls = []
    inner = det.classify
    det.classify = lambda *a, **k: (calls.append(1), inner(*a, **k))[1]
    for dets, angle in ((upright, 0.0), (turned, 90.0)):
        probs = det.index_probs(image, dets.xyxy, angle)
        assert calls == []  # remembered from detect, per angle
        assert (probs.argmax(1) == dets.class_id).all()
        assert np.allclose(probs.sum(1), 1.0, atol=1e-3)
    other = image.copy()  # another frame: named now, as detect would name it at once
    probs = det.index_probs(other, upright.xyxy[:3], 0.0)
    assert calls == [1] and probs.shape == (3, 52)


def test_a_net_that_tells_the_turn_names_each_card_from_both_of_its_classes():
    from companion.vision.detector import fold_turned

    rng = np.random.default_rng(0)
    plain = rng.dirichlet(np.ones(52), 3).astype(np.float32)
    assert fold_turned(plain, 52)[1] is None and fold_turned(plain, 52)[0] is plain
    out = rng.dirichlet(np.ones(104), 3).astype(np.float32)  # 52 upright, then 52 turned
    probs, upright = fold_turned(out, 52)
    assert probs.shape == (3, 52) and np.allclose(probs, out[:, :52] + out[:, 52:])
    assert np.allclose(upright, out[:, :52].sum(1))
    # with a background class (sorted between the upright and the turned cards) it stays a class
    bg = rng.dirichlet(np.ones(105), 2).astype(np.float32)
    probs, upright = fold_turned(bg, 53)
    assert probs.shape == (2, 53) and np.allclose(probs[:, 52], bg[:, 52])
    assert np.allclose(probs[:, :52], bg[:, :52] + bg[:, 53:])
    assert np.allclose(upright, bg[:, :52].sum(1) / (bg[:, :52].sum(1) + bg[:, 53:].sum(1)))
    with pytest.raises(ValueError, match="70 outputs"):
        fold_turned(np.zeros((1, 70), np.float32), 52)


def test_detections_keep_which_way_their_indices_stood():
    from companion.vision.reread import concat

    boxes = np.array([[0, 0, 10, 10], [20, 0, 30, 10]], np.float32)
    told = Detections(boxes, np.array([1, 2]), np.array([0.9, 0.8], np.float32), upright=np.array([0.9, 0.1], np.float32))
    assert told[1:].upright.tolist() == pytest.approx([0.1])
    both = concat(told, Detections(boxes[:1], np.array([3]), np.array([0.7], np.float32)))
    assert both.upright[:2].tolist() == pytest.approx([0.9, 0.1]) and np.isnan(both.upright[2])
    assert concat(told[:1], told[1:]).upright.tolist() == pytest.approx([0.9, 0.1])
    with pytest.raises(ValueError, match="upright"):
        Detections(boxes, np.array([1, 2]), np.array([0.9, 0.8], np.float32), upright=np.array([0.5], np.float32))


def test_the_shipped_nets_tell_the_turn_and_a_turn_net_alone_is_skipped_once_tracked(tmp_path):
    # models/card_classifier_96.onnx names each index and tells which way it stood (the way round of
    # a layout found from the frame alone), in every frame; a net run only to tell the turn
    # (turn_classifier) is not asked once a layout is tracked: its turn is known
    import shutil

    import cv2

    from companion.vision.detector import OnnxCardDetector
    from companion.vision.pipeline import LayoutPipeline

    image = cv2.imread(str(REPO / "datasets" / "samples" / "images" / "val_s900_000001.jpg"))
    shipped = RecognitionSettings.load(REPO / "models")
    assert shipped.turn_classifier is None and shipped.extra_classifiers
    for name in (DETECTOR_FILE, CLASSIFIER_FILE, shipped.extra_classifiers[0]):
        shutil.copyfile(REPO / "models" / name, tmp_path / name)
    settings = json.loads((REPO / "models" / SETTINGS_FILE).read_text())
    settings.update(extra_classifiers=[], turn_classifier=shipped.extra_classifiers[0], face_below_px=None)
    (tmp_path / SETTINGS_FILE).write_text(json.dumps(settings))
    for folder, told_when_tracked in ((REPO / "models", True), (tmp_path, False)):
        detector = OnnxCardDetector(folder, multi_crop_below=0)
        pipe = LayoutPipeline(detector, track=True)
        first = pipe.process(image, 0)
        assert first.ok and first.detections.upright is not None and len(first.slot_upright) == 28
        # first indices stand upright in their crops (this table lies upright)
        told = [u for u in first.slot_upright if u == u]
        assert len(told) >= 20 and sum(u > 0.5 for u in told) >= 0.9 * len(told)
        later = pipe.process(image, 1)
        assert later.fit is not None and later.fit.tracked
        assert (later.detections.upright is not None) == told_when_tracked, folder
        assert pipe.process(image, 2).layout.to_json()["pyramid"] == first.layout.to_json()["pyramid"]
        still = LayoutPipeline(detector, track=False)
        assert still.process(image).detections.upright is not None


def test_the_two_index_classifiers_share_both_cores_and_name_as_in_one_batch():
    """The first net runs here while the second names the tail of its batch on the worker thread;
    this thread then names the head (``_head_share``: both finish together). A net names each crop
    the same however its batch is split, so the names are those of whole batches."""
    import threading

    from companion.vision.detector import _head_share

    assert _head_share(64, [96], 40) == 11   # (96^2 - 64^2) * 40 / (2 * 96^2)
    assert _head_share(64, [], 40) == 0 and _head_share(96, [64], 40) == 0
    assert _head_share(32, [96, 96, 96], 10) == 10  # never more than the batch

    class Net:
        def __init__(self, seed):
            self.w = np.random.default_rng(seed).random((3 * 8 * 8, 52)).astype(np.float32)
            self.calls = []

        def run(self, _, feeds):
            x = next(iter(feeds.values()))
            self.calls.append((len(x), threading.current_thread() is threading.main_thread()))
            z = np.stack([row @ self.w for row in x[:, :, :8, :8].reshape(len(x), -1)])  # row by row
            e = np.exp(z - z.max(1, keepdims=True))
            return [e / e.sum(1, keepdims=True)]

    det = OnnxCardDetector(shipped())
    first, second = Net(1), Net(2)
    det._cls, det._extra_cls = first, [(second, "x", 96)]
    image = np.random.default_rng(0).integers(0, 255, (200, 300, 3), np.uint8)
    boxes = np.array([[10 + 6 * k, 20, 24 + 6 * k, 40] for k in range(20)], np.float32)
    probs, _ = det._name_crops(image, boxes, (1.3,), 0.0, tell_turn=False)
    head = _head_share(det.settings.classifier_size, [96], 20)
    assert 0 < head < 20
    assert sorted(second.calls) == sorted([(head, True), (20 - head, False)])
    crops = {side: classifier_input(np.stack([corner_crop(image, b, 1.3, side) for b in boxes])) for side in (64, 96)}
    whole = (first.run(None, {"x": crops[det.settings.classifier_size]})[0] + second.run(None, {"x": crops[96]})[0]) / 2
    assert np.array_equal(probs, whole[:, :52])


def test_the_corner_finder_runs_on_both_cores_without_spinning():
    """Nothing else of a frame runs while the corners are found: two threads, which leave the cores
    when done (spinning ones hold a core the frame's Python work needs)."""
    from companion.vision.detector import FINDER_THREADS

    det = OnnxCardDetector(shipped())
    finder, namer = det._det.get_session_options(), det._cls.get_session_options()
    assert finder.intra_op_num_threads == FINDER_THREADS == 2 and namer.intra_op_num_threads == 1
    assert finder.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_faces_are_named_from_crops_of_each_size_set_their_readings_averaged():
    """``face_crop_scales``: each card's face cut at every size given (``face_read.face_crop``'s
    ``scale``) and its readings averaged; the shipped face net names crops at 0.9 of the size it was
    first read at (rendered val, first indices at their true boxes: face alone 85.7 -> 89.0%)."""
    from dataclasses import replace

    from companion.vision.face_read import face_crop

    det = OnnxCardDetector(shipped())
    if det._face is None:
        pytest.skip("no face classifier shipped")
    assert det.settings.face_crop_scales == (0.9,)
    image = cv2.imread(str(sample_images()[0]))
    boxes = np.array([[300, 200, 318, 230], [520, 260, 536, 288]], np.float32)

    def net(scale):
        crops = np.stack([face_crop(image, b, det.settings.classifier_size, 20.0, scale) for b in boxes])
        return det._face.run(None, {det._face_input: classifier_input(crops)})[0][:, :52]

    np.testing.assert_allclose(det.name_faces(image, boxes, 20.0), net(0.9), atol=1e-6)
    det.settings = replace(det.settings, face_crop_scales=(0.9, 1.0))
    np.testing.assert_allclose(det.name_faces(image, boxes, 20.0), (net(0.9) + net(1.0)) / 2, atol=1e-6)
    assert not np.allclose(net(0.9), net(1.0), atol=1e-3)  # (the sizes do read differently)
