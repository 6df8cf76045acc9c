"""Tiny end-to-end training run, offline: train both stages 1 epoch, export, load with ORT, detect."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.train, pytest.mark.slow]


def test_nms_shim_matches_numpy_nms():
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(REPO))
    from companion.vision.detector import nms
    from tools.ultralytics_env import _nms

    rng = np.random.default_rng(1)
    xy = rng.uniform(0, 100, (200, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(5, 30, (200, 2))], 1).astype(np.float32)
    scores = rng.uniform(0, 1, 200).astype(np.float32)
    for iou in (0.3, 0.5, 0.7):
        ours = _nms(torch.from_numpy(boxes), torch.from_numpy(scores), iou).numpy()
        assert ours.tolist() == nms(boxes, scores, iou).tolist()


def test_tiny_training_end_to_end(tmp_path):
    pytest.importorskip("ultralytics")
    work = tmp_path / "tiny"
    env = dict(os.environ, OMP_NUM_THREADS="1", YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false")
    result = subprocess.run([sys.executable, "tools/train.py", "--tiny", "--work", str(work)], cwd=REPO,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    models = work / "models"
    from companion.vision.detector import OnnxCardDetector
    from companion.vision.model_files import RecognitionSettings

    assert RecognitionSettings.load(models).detector_size == (96, 128)
    assert (models / "MODEL_CARD.md").read_text().startswith("# Card recognition model")
    detector = OnnxCardDetector(models)
    import cv2

    image = cv2.imread(str(next((work / "data" / "val" / "images").glob("*.jpg"))))
    det = detector.detect(image)  # one epoch finds little; the pipeline must run and keep its shapes
    assert det.xyxy.shape == (len(det), 4) and det.class_id.dtype == np.int64
    # the tiny run trains the background class too (--negatives): 53 outputs, the cards' 52 given
    assert RecognitionSettings.load(models).background
    assert len(list((work / "cls" / "train" / "52_none").glob("*.jpg"))) > 0
    probs = detector.classify(image, np.array([[1, 2, 19, 34]], np.float32))
    assert probs.shape == (1, 52) and 0 < float(probs.sum()) <= 1 + 1e-3


def test_checkpoints_rebuilt_from_the_shipped_onnx_compute_the_same_and_fine_tune(tmp_path):
    # tools/weights_from_onnx.py refuses to write a checkpoint that computes otherwise than the
    # ONNX file (and checks it loaded back); a fine-tune from it must take every weight over.
    pytest.importorskip("ultralytics")
    import re

    env = dict(os.environ, OMP_NUM_THREADS="1", YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false")
    out = tmp_path / "from-onnx"
    result = subprocess.run([sys.executable, "tools/weights_from_onnx.py", "--out", str(out), "--limit", "64"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for kind in ("classifier", "detector"):
        assert (out / f"{kind}.pt").exists()
        assert re.search(rf"\[{kind}\] wrote .*loaded back: largest difference", result.stdout)
    result = subprocess.run([sys.executable, "tools/train.py", "--tiny", "--work", str(tmp_path / "ft"),
                             "--det-init", str(out / "detector.pt"), "--stages", "prepare,detector"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    moved = re.search(r"Transferred (\d+)/(\d+) items", result.stdout + result.stderr)
    assert moved and moved.group(1) == moved.group(2) and int(moved.group(1)) > 100
    assert (tmp_path / "ft" / "detector" / "weights" / "last.pt").exists()


def test_learning_a_deck_from_confirmed_corners_writes_a_model_that_loads(tmp_path):
    # tools/learn_deck.py end to end, tiny: three "confirmed deals" (corners of committed sample
    # scenes, saved as the app saves them), the last one held out and named by both models.
    pytest.importorskip("ultralytics")
    import json

    import cv2

    from companion.cards import Card
    from companion.vision.deck_samples import save_frame, save_samples
    from companion.vision.detector import OnnxCardDetector

    samples = tmp_path / "deck-samples"
    scenes = [f for f in sorted((REPO / "datasets" / "samples" / "truth").glob("*.json"))
              if json.loads(f.read_text())["rows"] == 7 and len(json.loads(f.read_text())["waste"]) <= 1][:3]
    for k, truth_file in enumerate(scenes):
        truth = json.loads(truth_file.read_text())
        image = cv2.imread(str(REPO / "datasets" / "samples" / "images" / (truth_file.stem + ".jpg")))
        corners = [(lab["where"], Card.parse(lab["card"]), lab["box"]) for lab in truth["labels"]
                   if lab["where"].startswith("pyramid")]
        assert save_samples(samples, image, corners, now=1.7e9 + 60 * k) > 5
        pyramid = [[None if c is None else Card.parse(c) for c in row] for row in truth["pyramid_codes"]]
        save_frame(samples, image, "classic", pyramid, now=1.7e9 + 60 * k)
    env = dict(os.environ, OMP_NUM_THREADS="1", YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false")
    out = tmp_path / "learned"
    result = subprocess.run([sys.executable, "tools/learn_deck.py", "--samples", str(samples), "--out", str(out),
                             "--work", str(tmp_path / "work"), "--replay-scenes", "0", "--epochs", "1",
                             "--reps", "2", "--keep-worse"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    info = json.loads((out / "learned.json").read_text())
    held_out = len([1 for lab in json.loads(scenes[2].read_text())["labels"] if lab["where"].startswith("pyramid")])
    assert info["check"]["corners"] == held_out and info["samples"] > 10
    assert info["check_layout"]["frames"] == 1 and info["check_layout"]["slots"] == 28
    assert 0 <= info["check_layout"]["after"] <= 28 and "its frame:" in result.stdout
    assert f"{info['check']['after']} after" in (out / "MODEL_CARD.md").read_text()
    assert (out / "corner_detector.onnx").read_bytes() == (REPO / "models" / "corner_detector.onnx").read_bytes()
    assert (out / "card_classifier.onnx").read_bytes() != (REPO / "models" / "card_classifier.onnx").read_bytes()
    from companion.vision.model_files import RecognitionSettings

    # the shipped extra classifiers stay behind: averaged in, they would undo what was learned
    extras = RecognitionSettings.load(REPO / "models").extra_classifiers
    assert RecognitionSettings.load(out).extra_classifiers == () and not any((out / n).exists() for n in extras)
    image = cv2.imread(str(REPO / "datasets" / "samples" / "images" / (scenes[2].stem + ".jpg")))
    probs = OnnxCardDetector(out).classify(image, np.array([[10, 10, 30, 40]], np.float32))
    assert probs.shape == (1, 52) and abs(float(probs.sum()) - 1) < 1e-3


def test_learning_without_samples_says_where_it_looked(tmp_path):
    result = subprocess.run([sys.executable, "tools/learn_deck.py", "--samples", str(tmp_path / "none")],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "no samples in" in result.stderr and "none" in result.stderr
    # samples listed but their pictures gone (or corrupt): said, nothing trained
    from companion.cards import Card
    from companion.vision.deck_samples import save_samples

    folder = tmp_path / "deck-samples"
    save_samples(folder, np.full((100, 100, 3), 200, np.uint8), [("r1s1", Card.parse("QH"), [10, 10, 30, 40])])
    for png in folder.glob("*.png"):
        png.write_bytes(b"not a picture")
    result = subprocess.run([sys.executable, "tools/learn_deck.py", "--samples", str(folder)],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "1 of 1 sample pictures are missing or unreadable" in result.stderr
    assert "no readable sample pictures" in result.stderr


def test_detector_data_packed_for_a_gpu_machine_trains_two_ways_and_exports(tmp_path):
    # tools/pack_detector_data.py -> tools/device_train_detector.sh (DEVICE=cpu) -> tools/export_detector.py
    pytest.importorskip("ultralytics")
    import tarfile

    import cv2

    sys.path.insert(0, str(REPO))
    from tools.train import write_tiny_dataset

    data = write_tiny_dataset(tmp_path / "data", train=6, val=2)  # 320x240 scenes
    env = dict(os.environ, OMP_NUM_THREADS="1", YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false")
    packed = tmp_path / "packed"
    result = subprocess.run([sys.executable, "tools/pack_detector_data.py", "--train", str(data), "--val", str(data),
                             "--out", str(packed), "--width", "160"], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    images = sorted((packed / "train" / "images").glob("*.webp"))
    assert len(images) == 6 and cv2.imread(str(images[0])).shape[:2] == (120, 160)
    source = (data / "train" / "labels" / f"{images[0].stem}.txt").read_text().split()
    packed_rows = (packed / "train" / "labels" / f"{images[0].stem}.txt").read_text().split()
    assert packed_rows[0] == "0" and packed_rows[1:5] == source[1:5]  # one class, same relative box
    assert {r for r in packed_rows[::5]} == {"0"}
    # the budget stops adding train scenes: two images' worth keeps two
    budget = sum(p.stat().st_size for p in images[:2]) / 2**20
    small = subprocess.run([sys.executable, "tools/pack_detector_data.py", "--train", str(data), "--val", str(data),
                            "--out", str(tmp_path / "small"), "--width", "160", "--budget-mb", f"{budget + 1e-6}"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert small.returncode == 0 and len(list((tmp_path / "small" / "train" / "images").glob("*"))) == 2

    from ultralytics import YOLO

    from tools.train import detector_yaml

    init = tmp_path / "init.pt"
    YOLO(str(detector_yaml(tmp_path))).save(str(init))
    out = tmp_path / "out"
    run = subprocess.run(["bash", "tools/device_train_detector.sh", str(packed), "0.0003", str(out), f"ft={init}",
                          "scratch=scratch"],
                         cwd=REPO, env=dict(env, PYTHON=sys.executable, DEVICE="cpu", IMGSZ="64", BATCH="2", WORK=str(tmp_path / "work")),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + (out / "ft.log").read_text()[-2000:]
    with tarfile.open(out / "results.tar") as tar:
        names = set(tar.getnames())
        tar.extractall(tmp_path / "results")
    assert {"ft/detector/weights/best.pt", "scratch/detector/weights/best.pt"} <= names
    assert not any("/det/" in n for n in names)  # the packed images stay behind
    models = tmp_path / "models"
    export = subprocess.run([sys.executable, "tools/export_detector.py", str(tmp_path / "results/ft/detector/weights/best.pt"),
                             "--out", str(models)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stdout[-2000:] + export.stderr[-2000:]
    from companion.vision.detector import OnnxCardDetector

    det = OnnxCardDetector(models).detect(cv2.imread(str(data / "val" / "images" / "val_0000.jpg")))
    assert det.xyxy.shape == (len(det), 4)
    assert (models / "card_classifier.onnx").read_bytes() == (REPO / "models" / "card_classifier.onnx").read_bytes()
    assert not list((tmp_path / "results/ft/detector/weights").glob("*.onnx"))  # nothing written beside the input


def test_candidate_checkpoints_are_the_shipped_networks():
    # models/candidates/: GPU-trained detectors (one class) and index classifiers (the 52 cards in
    # deck order), each named in the folder's card
    pytest.importorskip("ultralytics")
    sys.path.insert(0, str(REPO))
    from tools.ultralytics_env import setup

    setup()
    import torch
    from ultralytics import YOLO

    from companion.cards import CARD_CODES
    from tools.train import cls_folder, turned_folder

    folder = REPO / "models" / "candidates"
    card = (folder / "MODEL_CARD.md").read_text()
    weights = sorted(folder.glob("*.pt"))
    assert {p.name.split("-")[0] for p in weights} == {"detector", "classifier"}
    for path in weights:
        assert path.name in card
        model = YOLO(str(path))
        net = model.model.float().eval()
        if path.name.startswith("detector-"):
            assert model.task == "detect" and model.names == {0: "corner"}
            out = net(torch.zeros(1, 3, 384, 640))
            assert out[0].shape == (1, 5, 5040)  # 4 box values + 1 class score at 3 strides
        else:
            # (class folders sort in deck order: "00_AC", "01_2C", ...; a net trained with the turn as
            # a label, on crops of its own size, has each card's turned class after them)
            classes = [cls_folder(i) for i in range(len(CARD_CODES))]
            if len(model.names) > len(CARD_CODES):
                classes += [turned_folder(i) for i in range(len(CARD_CODES))]
            assert model.task == "classify" and [model.names[i] for i in range(len(model.names))] == classes
            side = int(model.ckpt["train_args"]["imgsz"])
            assert side in (64, 96) and f"{side} px" in card
            out = net(torch.zeros(2, 3, side, side))
            probs = out[0] if isinstance(out, tuple) else out  # (eval: probabilities and logits)
            assert probs.shape == (2, len(classes)) and torch.allclose(probs.sum(1), torch.ones(2))


def test_prepare_cuts_the_same_crops_in_several_processes(tmp_path):
    # train.py --prepare-processes: a lent machine's cores cut the crops; the jitter is drawn in order
    sys.path.insert(0, str(REPO))
    from companion.vision.model_files import RecognitionSettings
    from tools.train import prepare, write_tiny_dataset

    data = write_tiny_dataset(tmp_path / "data", train=5, val=2)
    settings = RecognitionSettings(detector_size=(96, 128), classifier_size=32)
    prepare(data, tmp_path / "one", settings, 2, seed=0, limit=None)
    prepare(data, tmp_path / "two", settings, 2, seed=0, limit=None, processes=2)
    crops = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one" / "cls").rglob("*.jpg"))
    assert len(crops) > 10
    assert crops == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two" / "cls").rglob("*.jpg"))
    assert all((tmp_path / "one" / c).read_bytes() == (tmp_path / "two" / c).read_bytes() for c in crops)
    labels = sorted((tmp_path / "two" / "det" / "train" / "labels").glob("*.txt"))
    assert len(labels) == 5 and {row.split()[0] for p in labels for row in p.read_text().splitlines()} == {"0"}


def test_court_crops_repeated_in_the_classifier_train_folder(tmp_path):
    # train.py --cls-repeat JQK:2: each kept crop of a jack, queen or king is linked twice, the rest once
    sys.path.insert(0, str(REPO))
    from companion.vision.model_files import RecognitionSettings
    from tools.train import filter_crops, parse_repeat, prepare, write_tiny_dataset

    data = write_tiny_dataset(tmp_path / "data", train=5, val=2)
    prepare(data, tmp_path / "w", RecognitionSettings(detector_size=(96, 128), classifier_size=32), 1, seed=0, limit=None)
    plain = filter_crops(data, tmp_path / "w", 0, False)
    twice = filter_crops(data, tmp_path / "w", 0, False, "JQK:2")
    assert twice.name == "cls_min0_xJQK2" and (twice / "val").resolve() == (tmp_path / "w" / "cls" / "val").resolve()

    def counts(root: Path) -> dict[str, int]:
        return {d.name: len(list(d.glob("*.jpg"))) for d in (root / "train").iterdir()}
    before, after = counts(plain), counts(twice)
    assert sum(before.values()) > 10
    courts = [k for k in before if k.split("_")[1][0] in "JQK"]
    assert any(before[k] for k in courts)
    assert after == {k: n * (2 if k in courts else 1) for k, n in before.items()}
    for bad in ("JQK", "XQ:2", "JQK:0", ":2"):
        with pytest.raises(ValueError, match="RANKS:N"):
            parse_repeat(bad)


def _device_round(tmp_path, extra_env: dict[str, str] | None = None, detector: bool = True):
    """tools/device_train_round.sh on the CPU (procedural decks only): (completed process, out folder)."""
    pytest.importorskip("ultralytics")
    sys.path.insert(0, str(REPO))
    from tools.pack_synth_assets import pack
    from tools.train import detector_yaml
    from tools.ultralytics_env import setup

    setup()
    from ultralytics import YOLO

    pack(tmp_path / "assets.tgz", decks=[])  # fonts only: procedural decks need no SVG art
    YOLO(str(detector_yaml(tmp_path))).save(str(tmp_path / "det.pt"))
    YOLO("yolov8n-cls.yaml").save(str(tmp_path / "cls.pt"))
    env = dict(os.environ, OMP_NUM_THREADS="1", YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false", PYTHON=sys.executable,
               DEVICE="cpu", DECKS="proc", VAL_COUNT="2", DET_IMGSZ="64", DET_BATCH="2", CLS_BATCH="8",
               WORK=str(tmp_path / "work"), **(extra_env or {}))
    out = tmp_path / "out"
    run = subprocess.run(["bash", "tools/device_train_round.sh", str(tmp_path / "assets.tgz"), "3", "0.0003", str(out),
                          str(tmp_path / "det.pt") if detector else "-", str(tmp_path / "cls.pt")],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    return run, out


def test_round_on_a_gpu_machine_renders_its_own_scenes_and_trains_both_stages(tmp_path):
    # tools/pack_synth_assets.py -> tools/device_train_round.sh (DEVICE=cpu, procedural decks only)
    # -> tools/export_detector.py --classifier
    import tarfile

    import cv2

    run, out = _device_round(tmp_path)
    env = dict(os.environ, OMP_NUM_THREADS="1", YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false")
    from companion.vision.model_files import copy_with_first_classifier

    copy_with_first_classifier(REPO / "models", tmp_path / "base")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    log = (out / "data.txt").read_text()
    assert "rendered" in log and "time limit reached" in log
    with tarfile.open(out / "results.tar") as tar:
        names = set(tar.getnames())
        tar.extractall(tmp_path / "results")
    assert {"detector/weights/best.pt", "classifier/weights/best.pt"} <= names
    assert not any(n.endswith(".jpg") for n in names)  # the scenes and crops stay there
    models = tmp_path / "models"
    export = subprocess.run([sys.executable, "tools/export_detector.py", str(tmp_path / "results/detector/weights/best.pt"),
                             "--classifier", str(tmp_path / "results/classifier/weights/best.pt"), "--out", str(models),
                             "--base", str(tmp_path / "base")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stdout[-2000:] + export.stderr[-2000:]
    from companion.vision.detector import OnnxCardDetector
    from companion.vision.model_files import RecognitionSettings

    detector = OnnxCardDetector(models)
    image = cv2.imread(str(next((tmp_path / "work" / "data" / "val" / "images").glob("*.jpg"))))
    assert detector.detect(image).xyxy.shape[1] == 4
    box = np.array([[10, 10, 40, 60]], np.float32)
    probs = detector.classify(image, box)
    assert probs.shape == (1, 52)
    assert (models / "card_classifier.onnx").read_bytes() != (REPO / "models" / "card_classifier.onnx").read_bytes()
    # the same checkpoint as a second, averaged classifier beside the shipped one (an ensemble)
    both = tmp_path / "both"
    export = subprocess.run([sys.executable, "tools/export_detector.py", "--base", str(tmp_path / "base"), "--out",
                             str(both), "--extra-classifier", str(tmp_path / "results/classifier/weights/best.pt")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stdout[-2000:] + export.stderr[-2000:]
    assert RecognitionSettings.load(both).extra_classifiers == ("card_classifier_b.onnx",)
    def one_crop(folder):  # (a still's unsure corner is named again from more crops: not a plain mean)
        return OnnxCardDetector(folder, multi_crop_below=0).classify(image, box)

    assert np.allclose(one_crop(both), (one_crop(tmp_path / "base") + one_crop(models)) / 2, atol=1e-5)


def test_face_round_on_a_gpu_machine_cuts_faces_on_every_core_and_trains(tmp_path):
    # tools/device_train_face.sh (DEVICE=cpu, procedural decks only) -> train_face.py --stages export
    import tarfile

    import onnxruntime as ort

    pytest.importorskip("ultralytics")
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "tools"))
    from tools.pack_synth_assets import pack
    from tools.ultralytics_env import setup
    from train_face import make_crops

    setup()
    from ultralytics import YOLO

    pack(tmp_path / "assets.tgz", decks=[])
    YOLO("yolov8n-cls.yaml").save(str(tmp_path / "face.pt"))
    env = dict(os.environ, OMP_NUM_THREADS="1", YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false", PYTHON=sys.executable,
               DEVICE="cpu", DECKS="proc", VAL_COUNT="2", BATCH="8", WORK=str(tmp_path / "work"))
    out = tmp_path / "out"
    run = subprocess.run(["bash", "tools/device_train_face.sh", str(tmp_path / "assets.tgz"), "3", "0.0003", str(out),
                          str(tmp_path / "face.pt")], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    log = (out / "data.txt").read_text()
    assert "time limit reached" in log and "val crops of held-out decks" in log
    assert int(log.split("[crops] ")[1].split()[0]) > 0
    with tarfile.open(out / "results.tar") as tar:
        assert set(tar.getnames()) >= {"train/weights/best.pt", "train/results.csv"}
        assert not any(n.endswith((".jpg", "last.pt")) for n in tar.getnames())  # what a call brings back
        tar.extractall(tmp_path / "back")
    # the crops cut on every core are the ones one process cuts
    data = tmp_path / "work" / "data"
    make_crops([data], None, tmp_path / "one", processes=1)
    make_crops([data], None, tmp_path / "two", processes=2)
    one = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one" / "crops" / "train").rglob("*.jpg"))
    assert len(one) > 5
    assert one == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two" / "crops" / "train").rglob("*.jpg"))
    assert all((tmp_path / "one" / c).read_bytes() == (tmp_path / "two" / c).read_bytes() for c in one)
    # the best epoch brought back exports to a face net of the runtime's shape
    export = subprocess.run([sys.executable, "tools/train_face.py", "--data", str(data), "--work", str(tmp_path / "back"),
                             "--stages", "export"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stdout[-2000:] + export.stderr[-2000:]
    session = ort.InferenceSession(str(tmp_path / "back" / "face_classifier.onnx"))
    probs = session.run(None, {session.get_inputs()[0].name: np.zeros((2, 3, 64, 64), np.float32)})[0]
    assert probs.shape == (2, 52)


def test_round_trains_classifier_variants_side_by_side_on_the_same_crops(tmp_path):
    # CLS_VARIANTS, no detector ("-"): one results-NAME.tar per variant, each with its own options
    # (the second a wider net from its YAML, not from the round's classifier checkpoint)
    import tarfile

    import yaml

    variants = "base: hue:--cls-hue=0.5,--cls-min-px=0,--cls-init=,--cls-model=yolov8s-cls.yaml"
    run, out = _device_round(tmp_path, {"CLS_VARIANTS": variants}, detector=False)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert not (out / "results.tar").exists()
    args = {}
    for name in ("base", "hue"):
        with tarfile.open(out / f"results-{name}.tar") as tar:
            assert "classifier/weights/best.pt" in tar.getnames()
            assert "classifier/weights/last.pt" not in tar.getnames()  # one weight file comes back
            args[name] = yaml.safe_load(tar.extractfile("classifier/args.yaml"))
    assert (args["base"]["hsv_h"], args["hue"]["hsv_h"]) == (0.015, 0.5)
    assert args["base"]["model"].endswith("cls.pt") and args["hue"]["model"] == "yolov8s-cls.yaml"
    assert args["base"]["data"].endswith("cls_min12") and args["hue"]["data"].endswith("cls-hue/cls")


def test_round_with_turn_labels_trains_a_net_that_tells_which_way_indices_lie(tmp_path):
    # PREPARE_ARGS=--cls-turn: crops of turned indices in their own classes; exported beside the
    # shipped classifier, it names the 52 cards as before and tells the detections' upright share
    import tarfile

    import cv2

    run, out = _device_round(tmp_path, {"CLS_VARIANTS": "t:", "PREPARE_ARGS": "--cls-turn"}, detector=False)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    work = tmp_path / "work" / "run" / "cls" / "train"
    assert any(work.glob("t*/*.jpg")) and any(work.glob("0*/*.jpg"))
    with tarfile.open(out / "results-t.tar") as tar:
        tar.extractall(tmp_path / "results")
    from companion.vision.detector import OnnxCardDetector
    from companion.vision.model_files import copy_with_first_classifier

    from dataclasses import replace

    from companion.vision.model_files import SETTINGS_FILE, RecognitionSettings

    copy_with_first_classifier(REPO / "models", tmp_path / "base")
    base_settings = RecognitionSettings.load(tmp_path / "base")  # r5 alone, no turn net
    (tmp_path / "base" / SETTINGS_FILE).write_text(replace(base_settings, turn_classifier=None).to_json())
    env = dict(os.environ, OMP_NUM_THREADS="1", YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false")
    both = tmp_path / "both"
    export = subprocess.run([sys.executable, "tools/export_detector.py", "--base", str(tmp_path / "base"), "--out",
                             str(both), "--extra-classifier", str(tmp_path / "results/classifier/weights/best.pt")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stdout[-2000:] + export.stderr[-2000:]
    image = cv2.imread(str(REPO / "datasets" / "samples" / "images" / "val_s900_000001.jpg"))
    detector = OnnxCardDetector(both)
    assert detector.classify(image, np.array([[10, 10, 40, 60]], np.float32)).shape == (1, 52)
    dets = detector.detect(image)
    assert len(dets) and dets.upright is not None and ((dets.upright >= 0) & (dets.upright <= 1)).all()
    assert OnnxCardDetector(tmp_path / "base").detect(image).upright is None  # r5 does not tell
    # run beside the shipped classifier only to tell the turn: the names are the shipped one's
    beside = tmp_path / "beside"
    export = subprocess.run([sys.executable, "tools/export_detector.py", "--base", str(tmp_path / "base"), "--out",
                             str(beside), "--turn-classifier", str(tmp_path / "results/classifier/weights/best.pt")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stdout[-2000:] + export.stderr[-2000:]
    told, plain = OnnxCardDetector(beside).detect(image), OnnxCardDetector(tmp_path / "base").detect(image)
    assert told.class_id.tolist() == plain.class_id.tolist() and np.allclose(told.confidence, plain.confidence)
    assert told.upright is not None and len(told.upright) == len(told)


def test_an_index_stands_upright_when_its_crop_is_turned_by_its_card_s_angle():
    sys.path.insert(0, str(REPO))
    from tools.train import index_up_angle, lies_turned

    quad = [[10, 10], [20, 10], [20, 25], [10, 25]]  # TL, TR, BR, BL of an upright corner
    assert index_up_angle(quad, "tl") == pytest.approx(0.0)
    assert abs(index_up_angle(quad, "br")) == pytest.approx(180.0)  # a card's second index
    # the card's top edge facing left in the picture: the angle orientation.layout_angle gives such a layout
    turned = [[10, 25], [10, 15], [25, 15], [25, 25]]
    assert index_up_angle(turned, "tl") == pytest.approx(-90.0)
    from companion.vision.orientation import layout_angle
    assert layout_angle(np.array([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]])) == pytest.approx(-90.0)  # down: +x
    assert not lies_turned(-90.0, -90.0) and not lies_turned(-90.0, -10.0) and lies_turned(-90.0, 10.0)
    assert lies_turned(180.0, 0.0) and not lies_turned(-170.0, 175.0)


def test_turn_labels_need_each_label_s_quad(tmp_path):
    # train.py --cls-turn on scenes whose truth gives no corner quads (older renders) says so and
    # which file, rather than guessing a turn
    sys.path.insert(0, str(REPO))
    from companion.vision.model_files import RecognitionSettings
    from tools.train import prepare, write_tiny_dataset

    data = write_tiny_dataset(tmp_path / "data", train=2, val=1)
    settings = RecognitionSettings(detector_size=(96, 128), classifier_size=32)
    with pytest.raises(ValueError, match="--cls-turn needs .*truth"):
        prepare(data, tmp_path / "run", settings, 1, seed=0, limit=None, turn=True)
    prepare(data, tmp_path / "plain", settings, 1, seed=0, limit=None)  # without it, as before
