"""tools/evaluate.py bookkeeping: corner matching and the real-photo rank reading."""

from __future__ import annotations

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
