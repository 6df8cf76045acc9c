"""``pyramid-companion recognize`` with the fake detector (scene truth instead of a model)."""

import json

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from companion.cli import main  # noqa: E402
from companion.vision.fake import synth_truth  # noqa: E402
from companion.vision.fusion import DEFAULT_QUORUM  # noqa: E402


@pytest.fixture
def scene(tmp_path):
    truth = synth_truth(np.random.default_rng(21), removed=4)
    (tmp_path / "t.json").write_text(json.dumps(truth))
    cv2.imwrite(str(tmp_path / "frame.png"), np.full((720, 1280, 3), 40, np.uint8))
    return tmp_path, truth


def test_json_output(scene, capsys):
    folder, truth = scene
    rc = main(["recognize", str(folder / "frame.png"), "--json", "--fake-truth", str(folder / "t.json")])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["pyramid"] == truth["pyramid_codes"]
    assert out["waste"] == [truth["waste"][0]["top"]]
    assert out["problems"] == []
    assert [len(r) for r in out["scores"]] == list(range(1, 8))
    assert all(0 < s <= 1 for row, codes in zip(out["scores"], out["pyramid"])
               for s, c in zip(row, codes) if c)


def test_text_output_and_rules(scene, capsys):
    folder, truth = scene
    rc = main(["recognize", str(folder / "frame.png"), "--rules", "relaxed",
               "--fake-truth", str(folder / "t.json")])
    text = capsys.readouterr().out
    assert rc == 0
    assert "row 7:" in text and f"waste: {truth['waste'][0]['top']}" in text
    assert truth["pyramid_codes"][0][0] in text.splitlines()[1]


def test_folder_of_frames_is_fused(scene, capsys):
    folder, truth = scene
    frames = folder / "frames"
    frames.mkdir()
    for i in range(20):
        cv2.imwrite(str(frames / f"{i:04d}.jpg"), np.full((72, 128, 3), 40, np.uint8))
    rc = main(["recognize", str(frames), "--json", "--fake-truth", str(folder / "t.json")])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["pyramid"] == truth["pyramid_codes"] and out["frame"] == DEFAULT_QUORUM - 1


def test_errors_exit_nonzero(scene, capsys, tmp_path):
    folder, _ = scene
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not a jpeg")
    assert main(["recognize", str(bad), "--fake-truth", str(folder / "t.json")]) == 2
    assert "cannot read image" in capsys.readouterr().err
    assert main(["recognize", str(tmp_path / "nope.png")]) == 2
    assert "no such file" in capsys.readouterr().err
    # A frame with no pyramid in it.
    empty = {"version": 1, "name": "empty", "width": 1280, "height": 720, "pyramid": [], "labels": []}
    (tmp_path / "empty.json").write_text(json.dumps(empty))
    assert main(["recognize", str(folder / "frame.png"), "--fake-truth", str(tmp_path / "empty.json")]) == 2
    assert "no pyramid found" in capsys.readouterr().err


def test_a_picture_is_read_as_a_still_and_frames_are_followed(scene, capsys, monkeypatch):
    """One image: the still's rules (no tracking; ``LayoutPipeline.follows`` off), as
    ``evaluate_layout.py`` measures them; a folder of frames is followed."""
    import companion.vision.pipeline as pipeline
    made = []

    class Spy(pipeline.LayoutPipeline):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self.follows)

    monkeypatch.setattr(pipeline, "LayoutPipeline", Spy)
    folder, _ = scene
    assert main(["recognize", str(folder / "frame.png"), "--json", "--fake-truth", str(folder / "t.json")]) == 0
    frames = folder / "frames"
    frames.mkdir()
    for i in range(3):
        cv2.imwrite(str(frames / f"{i:04d}.jpg"), np.full((72, 128, 3), 40, np.uint8))
    main(["recognize", str(frames), "--json", "--fake-truth", str(folder / "t.json")])
    capsys.readouterr()
    assert made == [False, True]
