"""Record a followed game's stable layouts, and replay them through the current follower.

Following a rendered whole game with the ONNX model takes one to two minutes of recognition; the
follower itself well under a second. ``evaluate_follow.py --record DIR`` keeps, per game, the calls
``follow_game`` made on its ``FollowStart`` (the deal, each stable layout, each tick with the fuser's
sightings, the end) with the run's recognition figures in ``DIR/<game>.pkl``; ``--replay DIR`` runs
them through the follower code as it is now. The figures come back to the move as long as the
recognition and fusion code is unchanged (a change there wants a new recording). The pickles are
local caches (git-ignored folders), never files from elsewhere.

``--record-frames DIR`` keeps every frame's pipeline reading instead (about 10 MB a game), and
``--replay-frames DIR`` runs them through the current fuser and follower (``replay_frames``), for a
fusion change in seconds rather than a quarter of an hour of recognition per ten games. Exact while
the recognition code is unchanged; after a fusion change the figures are a close estimate only: the
pipeline reads each frame knowing the accepted layout (``LayoutPipeline.expected``), which the
replayed fuser may accept at other frames.
"""

from __future__ import annotations

import pickle
import time
from pathlib import Path
from typing import Any

from companion.errors import CompanionError
from companion.rules import Rules
from tools.games.follow import FollowRun

FORMAT = 1
FRAMES_FORMAT = "frames-1"


def save_recording(path: Path, calls: list, run: FollowRun, deal_mode: str) -> None:
    """Write the calls of one followed game (``follow_game(..., log=calls)``) and its run's figures."""
    _save(path, {"format": FORMAT, "deal": deal_mode, "calls": calls, "frames": run.frames,
                 "recognise_each": run.recognise_each, "first_layout": run.first_layout,
                 "detector": run.detector, "stable": run.stable})


def _save(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(record, fh, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)  # a run cut short leaves no half-written recording


def _load(path: Path, fmt: Any, what: str) -> dict[str, Any]:
    with open(path, "rb") as fh:
        record = pickle.load(fh)  # noqa: S301 - a cache this tool wrote
    if not isinstance(record, dict) or record.get("format") != fmt:
        raise ValueError(f"{str(path)!r} is not a {what} of format {fmt!r}: record it again")
    return record


def load_recording(path: Path) -> dict[str, Any]:
    return _load(path, FORMAT, "follow recording")


def replay(record: dict[str, Any], rules: Rules) -> FollowRun:
    """The recorded calls made on a new ``FollowStart``: the run as the current follower makes it."""
    from companion.playalong.start import FollowStart
    run = FollowRun(frames=record["frames"], recognise_each=list(record["recognise_each"]),
                    first_layout=record["first_layout"], detector=record["detector"], stable=record["stable"])
    start = None
    t0 = time.perf_counter()
    for call in record["calls"]:
        kind = call[0]
        if kind == "new":
            start = FollowStart(rules, call[1], fps=call[2])
        elif kind == "error":
            run.errors.append(call[1])
        elif kind == "feed":
            try:
                start.feed(call[2])
            except CompanionError as exc:
                run.errors.append(f"frame {call[1]}: {exc}")
        elif kind == "tick":
            start.tick(call[1], call[2])
        elif kind == "finish":
            start.finish()
    run.follow_s = time.perf_counter() - t0
    if start is not None:
        run.follower = start.follower
        run.errors += start.errors
    return run


def save_frames(path: Path, readings: list, run: FollowRun, deal_mode: str) -> None:
    """Write each frame's reading of one followed game (``follow_game(..., keep_readings=...)``)."""
    _save(path, {"format": FRAMES_FORMAT, "deal": deal_mode, "readings": readings,
                 "recognise_each": run.recognise_each, "detector": run.detector})


def load_frames(path: Path) -> dict[str, Any]:
    return _load(path, FRAMES_FORMAT, "frame recording")


def replay_frames(record: dict[str, Any], folder: Path) -> FollowRun:
    """The kept readings of the game in ``folder`` through the current fuser and follower."""
    from tools.games.follow import follow_game
    run = follow_game(folder, known_deal=record["deal"] == "known", checked_deal=record["deal"] == "checked",
                      readings=record["readings"])
    run.recognise_each = list(record["recognise_each"])
    run.detector = record["detector"]
    return run
