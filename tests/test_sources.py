"""Frame sources: image folder, video file written here, single image, camera that vanishes, errors."""

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from companion.errors import CompanionError  # noqa: E402
from companion.vision.sources import (  # noqa: E402
    CameraSource, FrameSourceError, ImageFolderSource, ImageSource, VideoFileSource, open_source)


def frame(i, w=160, h=90):
    img = np.zeros((h, w, 3), np.uint8)
    img[:, :, 1] = 20 * i
    cv2.putText(img, str(i), (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (255, 255, 255), 2)
    return img


def test_image_folder_in_name_order(tmp_path):
    for i in (2, 0, 1):
        cv2.imwrite(str(tmp_path / f"f{i:03d}.png"), frame(i))
    (tmp_path / "notes.txt").write_text("not an image")
    with open_source(tmp_path) as src:
        assert isinstance(src, ImageFolderSource) and len(src) == 3
        got = [(n, int(img[0, 0, 1])) for n, img in src]
    assert got == [(0, 0), (1, 20), (2, 40)]


def test_unreadable_image_in_folder(tmp_path):
    cv2.imwrite(str(tmp_path / "a.png"), frame(0))
    (tmp_path / "b.png").write_bytes(b"garbage")
    with pytest.raises(FrameSourceError, match="b.png"):
        list(ImageFolderSource(tmp_path))
    src = ImageFolderSource(tmp_path, skip_unreadable=True)
    assert len(list(src)) == 1 and src.skipped[0].name == "b.png"


def test_empty_folder_and_missing_paths(tmp_path):
    with pytest.raises(FrameSourceError, match="no images"):
        ImageFolderSource(tmp_path)
    with pytest.raises(FrameSourceError, match="no such"):
        open_source(tmp_path / "missing.mp4")
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\x00\x01")
    with pytest.raises(CompanionError, match="cannot read image"):
        ImageSource(bad)


def test_video_file(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (160, 90))
    assert writer.isOpened()
    for i in range(6):
        writer.write(frame(i))
    writer.release()
    with open_source(path) as src:
        assert isinstance(src, VideoFileSource)
        frames = list(src)
    assert [n for n, _ in frames] == list(range(6))
    assert frames[0][1].shape == (90, 160, 3)
    # Frame 3 is brighter in green than frame 1 (order kept).
    assert frames[3][1][5, 5, 1] > frames[1][1][5, 5, 1]


def test_unreadable_video(tmp_path):
    path = tmp_path / "broken.mp4"
    path.write_bytes(b"this is not a video" * 10)
    with pytest.raises(FrameSourceError, match="broken.mp4"):
        VideoFileSource(path)


class FlakyCapture:
    """A camera that gives three frames and then is unplugged."""

    def __init__(self):
        self.n = 0

    def isOpened(self):
        return True

    def get(self, prop):
        return 30.0

    def read(self):
        self.n += 1
        return (True, frame(self.n)) if self.n <= 3 else (False, None)

    def release(self):
        pass


def test_camera_that_vanishes():
    cam = CameraSource(0, capture=FlakyCapture(), max_failures=5)
    got = []
    with pytest.raises(FrameSourceError, match="camera 0 stopped delivering frames"):
        for n, _ in cam:
            got.append(n)
    assert got == [0, 1, 2]


def test_camera_that_cannot_open():
    class Closed(FlakyCapture):
        def isOpened(self):
            return False
    with pytest.raises(FrameSourceError, match="cannot open camera 7"):
        CameraSource(7, capture=Closed())
