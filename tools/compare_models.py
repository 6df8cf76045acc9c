#!/usr/bin/env python3
"""Measure model folders side by side with every evaluation tool, one table at the end.

    python tools/compare_models.py models runs/device2/ft2/models \
        --val data/synth_v2 data/synth_val64 --games datasets/games data/games/e2e data/games/e2e8

Deciding whether a new model ships takes every figure at once: corners named and found on rendered
held-out decks (``evaluate.py``), the real photos (``--real``: rank right of all), stills read into
layouts (``evaluate_layout.py``: slots right, deals exact, at most one slot wrong, waste top) and
followed games (``evaluate_follow.py``: games recovered in order, moves recorded, phantom moves,
illegal removals reported, spurious illegal events). Each tool runs as a subprocess with
``PYRAMID_COMPANION_MODELS`` set to the folder; their own outputs (per-image and per-scene CSVs,
per-game JSON) are kept under ``--out/<folder name>/``. A run that already left its output there is
not repeated (delete the folder to measure again). Prints a Markdown table: one row per figure, one
column per model folder.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REAL = REPO.parent / "shared" / "datasets" / "real-photos-ranks"


def _run(args: list[str], models: Path, log: Path) -> None:
    env = dict(os.environ, PYRAMID_COMPANION_MODELS=str(models.resolve()), OMP_NUM_THREADS="1")
    with log.open("w") as out:
        code = subprocess.run([sys.executable, *args], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    if code != 0:
        raise SystemExit(f"{' '.join(args)} failed (exit {code}); see {log}")


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def rendered(models: Path, data: Path, work: Path) -> dict[str, str]:
    out = work / f"eval_{data.name}"
    if not (out / "summary.json").exists():
        out.mkdir(parents=True, exist_ok=True)
        _run(["tools/evaluate.py", "--data", str(data), "--split", "val", "--models", str(models), "--out", str(out),
              "--real", ""], models, work / f"eval_{data.name}.log")
    s = json.loads((out / "summary.json").read_text())
    a, h = s["all"], s.get("hard", {})
    return {f"{data.name}: named / found / false per image": f"{_pct(a['named_right'])} / {_pct(a['found'])} / "
                                                             f"{a['false_cards_per_image']:.3f}",
            f"{data.name}: hard named": _pct(h["named_right"]) if h else "-"}


def real(models: Path, folder: Path, work: Path) -> dict[str, str]:
    log = work / f"real_{folder.name}.log"
    if not log.exists() or "real photos:" not in log.read_text():
        _run(["tools/evaluate.py", "--models", str(models), "--real", str(folder), "--out", str(work / f"real_{folder.name}")],
             models, log)
    line = next(ln for ln in log.read_text().splitlines() if ln.startswith("real photos:"))
    r = json.loads(line.split(":", 1)[1])
    return {f"real photos {folder.name} ({r['cards']}): found / rank right of all":
            f"{_pct(r['found'])} / {_pct(r['rank_right_of_all'])}"}


def layouts(models: Path, data: Path, work: Path) -> dict[str, str]:
    table = work / f"layout_{data.name}.csv"
    if not table.exists():
        _run(["tools/evaluate_layout.py", "--truth", str(data / "val" / "truth"), "--detector", "onnx",
              "--csv", str(table)], models, work / f"layout_{data.name}.log")
    rows = list(csv.DictReader(table.open()))
    slots = sum(int(r["slots"]) for r in rows)
    wrong = [int(r["wrong"]) for r in rows]
    waste = sum(r["waste_top_right"] == "True" for r in rows)
    n = max(1, len(rows))
    return {f"{data.name} layouts ({len(rows)}): slots / exact / <=1 wrong / waste top":
            f"{_pct(1 - sum(wrong) / max(1, slots))} / {_pct(sum(w == 0 for w in wrong) / n)} / "
            f"{_pct(sum(w <= 1 for w in wrong) / n)} / {_pct(waste / n)}"}


def games(models: Path, folder: Path, work: Path) -> dict[str, str]:
    result = work / f"follow_{folder.name}.json"
    if not result.exists():
        _run(["tools/evaluate_follow.py", str(folder), "--detector", "onnx", "--json", str(result)], models,
             work / f"follow_{folder.name}.log")
    rows = json.loads(result.read_text())
    return {f"{folder.name} ({len(rows)} games): in order / moves / phantom / illegal reported / spurious":
            f"{sum(r['all_in_order'] for r in rows)} / {sum(r['recorded'] for r in rows)} of "
            f"{sum(r['moves'] for r in rows)} / {sum(r['phantom'] for r in rows)} / "
            f"{sum(r['illegal_reported'] for r in rows)} of {sum(r['illegal'] for r in rows)} / "
            f"{sum(r['spurious_illegal'] for r in rows)}"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", type=Path, nargs="+", help="model folders (models/, tools/export_detector.py output)")
    p.add_argument("--val", type=Path, nargs="*", default=[REPO / "data" / "synth_v2"],
                   help="rendered datasets with a val split (tools/make_dataset.py)")
    p.add_argument("--real", type=Path, nargs="*", default=[REAL / "test", REAL / "train"],
                   help="real photo folders (rank labels)")
    p.add_argument("--games", type=Path, nargs="*", default=[REPO / "datasets" / "games"],
                   help="folders of rendered games (tools/render_games.py)")
    p.add_argument("--no-layout", action="store_true", help="skip evaluate_layout.py (the slowest)")
    p.add_argument("--out", type=Path, default=REPO / "out" / "compare")
    args = p.parse_args(argv)
    for m in args.models:
        if not (m / "recognition.json").is_file():
            p.error(f"{m} is not a model folder (no recognition.json)")
    columns: list[dict[str, str]] = []
    for m in args.models:
        # one work folder per model folder, named after its path (a second run reuses what is there)
        work = args.out / str(m).strip("/").replace("/", "_").replace(".", "_")
        work.mkdir(parents=True, exist_ok=True)
        figures: dict[str, str] = {}
        for data in args.val:
            figures |= rendered(m, data, work)
        for folder in args.real:
            if folder.is_dir():
                figures |= real(m, folder, work)
        if not args.no_layout:
            for data in args.val:
                figures |= layouts(m, data, work)
        for folder in args.games:
            figures |= games(m, folder, work)
        columns.append(figures)
        print(f"measured {m}", file=sys.stderr, flush=True)
    rows = list(dict.fromkeys(k for c in columns for k in c))
    print("| figure | " + " | ".join(str(m) for m in args.models) + " |")
    print("|---|" + "---|" * len(args.models))
    for row in rows:
        print(f"| {row} | " + " | ".join(c.get(row, "-") for c in columns) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
