"""Corners of the person's deck kept as samples: saved, read back, cropped again the same."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cv2")

from companion.cards import Card  # noqa: E402
from companion.vision.deck_samples import MAX_SIDE, SampleError, load_samples, save_samples  # noqa: E402
from companion.vision.detector import corner_crop  # noqa: E402


def noise(h=360, w=640, seed=1):
    """Smooth random texture (a picture's detail is a few pixels wide; pure noise resamples badly)."""
    import cv2

    a = cv2.GaussianBlur(np.random.default_rng(seed).random((h, w, 3)).astype(np.float32), (0, 0), 2.0)
    a = (a - a.min()) / (a.max() - a.min())
    return (a * 255).astype(np.uint8)


def test_saved_corners_crop_again_as_the_frame_does(tmp_path):
    image = noise()
    corners = [("r1s1", Card.parse("QH"), [100, 100, 112, 120]), ("waste", Card.parse("2C"), (300.5, 50, 340, 110.2))]
    assert save_samples(tmp_path, image, corners, source="camera:0") == 2
    samples = load_samples(tmp_path)
    assert [(s.where, str(s.card)) for s in samples] == [("r1s1", "QH"), ("waste", "2C")]
    for s, (_, _, box) in zip(samples, corners):
        want = corner_crop(image, np.array(box, float), 1.3, 64).astype(float)
        assert np.abs(corner_crop(s.image(), np.array(s.box), 1.3, 64) - want).mean() < 2
        # and not by chance: the same crop 3 px off differs a lot on noise
        assert np.abs(corner_crop(s.image(), np.array(s.box) + 3, 1.3, 64) - want).mean() > 12


def test_large_corners_are_kept_smaller_and_bad_boxes_skipped(tmp_path):
    image = noise(720, 1280)
    big = [500, 200, 620, 380]  # 180 px tall: a 360 px square scaled to MAX_SIDE
    corners = [("r1s1", Card.parse("AS"), big), ("r2s1", Card.parse("KD"), [10, 10, 13, 30]),  # too small
               ("r2s2", Card.parse("KH"), [1300, 10, 1320, 40]),  # outside the picture
               ("r3s1", Card.parse("5D"), [np.nan, 0, 10, 10])]
    assert save_samples(tmp_path, image, corners) == 1
    (s,) = load_samples(tmp_path)
    assert s.image().shape == (MAX_SIDE, MAX_SIDE, 3)
    want = corner_crop(image, np.array(big, float), 1.3, 64).astype(float)
    assert np.abs(corner_crop(s.image(), np.array(s.box), 1.3, 64) - want).mean() < 5
    assert np.abs(corner_crop(image, np.array(big, float) + 10, 1.3, 64) - want).mean() > 12


def test_a_second_confirmation_appends_and_bad_input_says_what(tmp_path):
    with pytest.raises(SampleError, match="no samples"):
        load_samples(tmp_path)
    with pytest.raises(SampleError, match="no picture"):
        save_samples(tmp_path, None, [])
    image = noise()
    save_samples(tmp_path, image, [("r1s1", Card.parse("QH"), [100, 100, 112, 120])], now=1.7e9)
    save_samples(tmp_path, image, [("r1s1", Card.parse("JH"), [100, 100, 112, 120])], now=1.7e9 + 60)
    assert [str(s.card) for s in load_samples(tmp_path)] == ["QH", "JH"]
    with (tmp_path / "samples.jsonl").open("a") as f:
        f.write('{"file": "x.png", "card": "1Z", "box": [0, 0, 1, 1]}\n')
    with pytest.raises(SampleError, match="samples.jsonl:3.*1Z"):
        load_samples(tmp_path)


def test_a_confirmed_frame_keeps_its_deal_and_reads_back(tmp_path):
    from companion.vision.deck_samples import load_frames, save_frame

    assert load_frames(tmp_path) == []
    image = noise()
    pyramid = [[Card.parse("QH")], [None, Card.parse("2C")]]
    path = save_frame(tmp_path, image, "relaxed,draw=3", pyramid, now=1.7e9)
    (kept,) = load_frames(tmp_path)
    assert kept.path == path and kept.rules == "relaxed,draw=3" and kept.stamp == path.stem
    assert kept.pyramid == ((Card.parse("QH"),), (None, Card.parse("2C")))
    assert np.abs(kept.image().astype(float) - image).mean() < 6  # JPEG, quality 92 (another picture: ~33)
    with (tmp_path / "frames.jsonl").open("a") as f:
        f.write('{"file": "frames/x.jpg", "rules": "classic", "pyramid": [["QQ"]], "saved": "x"}\n')
    with pytest.raises(SampleError, match="frames.jsonl:2.*QQ"):
        load_frames(tmp_path)
