"""tools/evaluate.py bookkeeping: corner matching and the real-photo rank reading."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from companion.cards import CARD_CODES
from companion.vision.detections import Detections
from tools.evaluate import evaluate_real, iou_matrix, match


def test_iou_matrix():
    a = np.array([[0, 0, 10, 10]], float)
    b = np.array([[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30]], float)
    assert iou_matrix(a, b).round(3).tolist() == [[1.0, 0.333, 0.0]]
    assert iou_matrix(a, np.zeros((0, 4))).shape == (1, 0)


def test_match_is_one_to_one_by_score():
    gt = np.array([[0, 0, 10, 10], [100, 100, 110, 110]], float)
    det = np.array([[1, 1, 10, 10], [0, 0, 9, 9], [50, 50, 60, 60]], float)
    owner = match(gt, det, np.array([0.5, 0.9, 0.8]))
    assert owner.tolist() == [-1, 0, -1]  # the better-scoring overlap takes the corner


class FixedDetector:
    def __init__(self, det: Detections) -> None:
        self.det = det

    def detect(self, image):
        return self.det


def test_real_photo_rank_reading(tmp_path):
    import cv2

    cv2.imwrite(str(tmp_path / "a.jpg"), np.zeros((100, 100, 3), np.uint8))
    (tmp_path / "a.xml").write_text(
        "<annotation><filename>a.jpg</filename>"
        "<object><name>queen</name><bndbox><xmin>0</xmin><ymin>0</ymin><xmax>50</xmax><ymax>50</ymax></bndbox></object>"
        "<object><name>ace</name><bndbox><xmin>60</xmin><ymin>0</ymin><xmax>99</xmax><ymax>50</ymax></bndbox></object>"
        "<object><name>king</name><bndbox><xmin>0</xmin><ymin>60</ymin><xmax>50</xmax><ymax>99</ymax></bndbox></object>"
        "</annotation>")
    det = Detections(np.array([[5, 5, 15, 15], [7, 7, 17, 17], [70, 5, 80, 15]], np.float32),
                     np.array([CARD_CODES.index("QH"), CARD_CODES.index("KH"), CARD_CODES.index("2S")]),
                     np.array([0.9, 0.6, 0.8], np.float32))
    result = evaluate_real(FixedDetector(det), tmp_path, 0.25)
    # queen read right (best of two), ace misread, king not found
    assert result["cards"] == 3 and result["found"] == round(2 / 3, 4)
    assert result["rank_right_of_found"] == 0.5
    assert result["right_by_rank"] == {"A": "0/1", "K": "0/1", "Q": "1/1"}
    assert sorted(result["misreads"]) == ["A->2 x1", "K->none x1"]


def test_split_figures_by_corner_size_add_up(tmp_path):
    """evaluate_split on the committed samples with the shipped model: the per-size figures cover
    every visible card once."""
    import json
    import os

    from companion.vision.detector import OnnxCardDetector
    from tools.evaluate import SIZE_BUCKETS, evaluate_split, size_bucket

    assert [size_bucket(px) for px in (5, 12, 17.9, 18, 29, 30, 200)] == [
        "<12 px", "12-18 px", "12-18 px", "18-30 px", "18-30 px", ">=30 px", ">=30 px"]
    samples = Path(__file__).resolve().parents[1] / "datasets" / "samples"
    for kind in ("images", "labels", "truth"):
        (tmp_path / "data" / "val").mkdir(parents=True, exist_ok=True)
        os.symlink(samples / kind, tmp_path / "data" / "val" / kind)
    summary = evaluate_split(OnnxCardDetector(), tmp_path / "data", "val", tmp_path / "out", None, 0.25)
    sizes = summary["by_corner_px"]
    assert list(sizes) == list(SIZE_BUCKETS)
    assert sum(b["cards"] for b in sizes.values()) == summary["all"]["visible_cards"] > 0
    assert all(0 <= b["named_right"] <= b["found"] <= 1 for b in sizes.values())
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["by_corner_px"] == sizes


def test_split_read_any_way_reads_the_turned_table(tmp_path):
    """evaluate_split reads as `detect` does: on the committed detector samples (one table lies
    turned by about 90 degrees) the turned reading names more cards than one upright look."""
    import csv
    import os

    from companion.vision.detector import OnnxCardDetector
    from tools.evaluate import AnyWay, evaluate_split

    samples = Path(__file__).resolve().parents[1] / "datasets" / "samples" / "detector"
    (tmp_path / "data" / "val" / "images").mkdir(parents=True)
    (tmp_path / "data" / "val" / "labels").mkdir(parents=True)
    for image in samples.glob("*.jpg"):
        os.symlink(image, tmp_path / "data" / "val" / "images" / image.name)
        os.symlink(image.with_suffix(".txt"), tmp_path / "data" / "val" / "labels" / image.with_suffix(".txt").name)
    detector = OnnxCardDetector()
    upright = evaluate_split(detector, tmp_path / "data", "val", tmp_path / "up", None, 0.25)
    any_way = evaluate_split(AnyWay(detector), tmp_path / "data", "val", tmp_path / "any", None, 0.25)
    assert "read_turned" not in upright and any_way["read_turned"] >= 1
    # (the shipped nets name much of that table even upright: 93% of the samples' cards)
    assert any_way["all"]["named_right"] > upright["all"]["named_right"] + 0.05
    with (tmp_path / "any" / "per_image.csv").open() as f:
        turns = {row["image"]: int(row["turn_deg"]) for row in csv.DictReader(f)}
    assert turns["val_s12_000012.jpg"] in (90, -90) and turns["val_s12_000004.jpg"] == 0
