"""tools/quantize.py: an int8 copy of the shipped model that loads and reads the samples."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")
pytest.importorskip("onnxruntime.quantization")
pytest.importorskip("onnx")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.vision.detector import OnnxCardDetector  # noqa: E402
from companion.vision.model_files import (  # noqa: E402
    CLASSIFIER_FILE, DETECTOR_FILE, SETTINGS_FILE, default_models_dir,
)
from tools import quantize  # noqa: E402

SAMPLES = REPO / "datasets" / "samples" / "detector"


def labelled_cards(image_path: Path) -> set[int]:
    return {int(line.split()[0]) for line in image_path.with_suffix(".txt").read_text().splitlines() if line.strip()}


@pytest.fixture(scope="module")
def int8_models(tmp_path_factory) -> Path:
    if not (default_models_dir() / DETECTOR_FILE).exists():
        pytest.skip("no shipped model")
    out = tmp_path_factory.mktemp("int8")
    assert quantize.main(["--out", str(out), "--images", str(SAMPLES), "--count", "3"]) == 0
    return out


def test_the_int8_copy_is_smaller_and_keeps_the_settings(int8_models):
    models = default_models_dir()
    for name in (DETECTOR_FILE, CLASSIFIER_FILE):
        assert (int8_models / name).stat().st_size < 0.6 * (models / name).stat().st_size
    assert (int8_models / SETTINGS_FILE).read_text() == (models / SETTINGS_FILE).read_text()
    card = (int8_models / "MODEL_CARD.md").read_text()
    assert "calibrated on 3 frames" in card and "datasets/samples/detector" in card


def test_the_int8_copy_reads_the_samples(int8_models):
    detector = OnnxCardDetector(int8_models)
    visible = named = false = 0
    images = sorted(SAMPLES.glob("*.jpg"))
    for path in images:
        det = detector.detect(cv2.imread(str(path)))
        reported = set(det[det.confidence >= 0.25].class_id.tolist())
        cards = labelled_cards(path)
        visible, named, false = visible + len(cards), named + len(cards & reported), false + len(reported - cards)
    # the same guard as the float model's (test_detector.py): its own figures are in the model card
    assert named / visible >= 0.6 and false <= len(images)
    # its corner scores follow the float model's: the detector head's decoding stayed float
    float_scores = OnnxCardDetector().find_corners(cv2.imread(str(images[0])))[1]
    int8_scores = detector.find_corners(cv2.imread(str(images[0])))[1]
    assert abs(int((int8_scores >= 0.25).sum()) - int((float_scores >= 0.25).sum())) <= 0.15 * (float_scores >= 0.25).sum()
    assert np.max(int8_scores) > 0.5


def test_bad_arguments_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        quantize.main(["--out", str(default_models_dir()), "--images", str(SAMPLES)])
    assert "must differ" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        quantize.main(["--out", str(tmp_path / "q"), "--images", str(tmp_path / "nowhere")])
    assert "nowhere" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SystemExit, match="no images"):
        quantize.main(["--out", str(tmp_path / "q"), "--images", str(empty)])
