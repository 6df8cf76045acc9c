"""tools/compare_models.py: every evaluation tool run on a model folder, one table of figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _compare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "tools/compare_models.py", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600)


def test_shipped_model_measured_on_samples_and_a_game_and_reused(tmp_path):
    pytest.importorskip("onnxruntime")
    data = tmp_path / "samples"
    (data / "val").mkdir(parents=True)
    for kind in ("images", "labels", "truth"):
        (data / "val" / kind).symlink_to(REPO / "datasets" / "samples" / kind)
    out = tmp_path / "out"
    args = ["models", "--val", str(data), "--real", "--games", "datasets/games/g00008", "--out", str(out)]
    first = _compare(*args)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    table = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[1].rstrip(" |")
             for line in first.stdout.splitlines() if line.startswith("| ") and " | " in line}
    assert table["figure"] == "models"
    named, found, false = table["samples: named / found / false per image"].split(" / ")
    assert named.endswith("%") and 0 < float(named[:-1]) <= float(found[:-1]) <= 100 and float(false) >= 0
    assert "samples layouts (6): slots / exact / <=1 wrong / waste top" in table
    in_order, moves = table["g00008 (1 games): in order / moves / phantom / illegal reported / spurious"].split(" / ")[:2]
    assert in_order in ("0", "1") and moves.endswith("of 8")
    # a second run reads what the first left (nothing measured again)
    logs = sorted(out.rglob("*.log"))
    stamps = [p.stat().st_mtime_ns for p in logs]
    second = _compare(*args)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert [p.stat().st_mtime_ns for p in logs] == stamps


def test_a_folder_without_a_model_is_refused(tmp_path):
    result = _compare(str(tmp_path), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "not a model folder" in result.stderr
