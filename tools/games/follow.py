"""Follow a rendered game the way ``pyramid-companion follow`` does, and score it against its truth.

Frames -> detections (the real ONNX detector on the pixels, or the fake detector fed by the frame's
labels) -> ``LayoutPipeline.read`` -> ``LayoutFuser`` (``LayoutFuser.for_fps``: one second of frames
at the game's fps, quorum 2/3; the frames it skipped go with each layout) -> ``FollowStart`` /
``Follower`` (without the deal: started on the first stable layout, the deal as recognised, stock
unknown; ``finish()`` at the end of the stream). Times are kept apart: recognition (detector +
pipeline) and following (fuser + follower), so "following adds N ms per frame" is measured on its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from companion.rules import Rules
from tools.games.render import load_game


def fake_detections(rec: dict, size: tuple[int, int], rng: np.random.Generator, card_w: float) -> Any:
    """What a decent detector finds in a frame: its labels with jitter, misses, misreads, false boxes;
    corners near the hand are garbled more often and motion blur makes misses likelier."""
    from companion.vision.fake import Hand, Noise, detections_from_truth
    truth = {"labels": [{"cls": c, "box": b} for c, *b in rec["labels"]], "width": size[0], "height": size[1]}
    blur = float(rec.get("blur", 0.0))
    hands: tuple = ()
    if rec.get("hand"):
        hands = (Hand(rec["hand"][0], rec["hand"][1], card_w * 0.3, garble_margin=3.0, garble_rate=0.3),)
    noise = Noise(jitter=0.08, miss=0.01 + 0.02 * min(blur, 5.0), misread=0.005,
                  false_boxes=0.1 + (0.2 if hands else 0.0), hands=hands)
    return detections_from_truth(truth, noise, rng)


@dataclass
class FollowRun:
    follower: Any = None
    frames: int = 0
    #: Each frame's recognition time (seconds): the floor is per frame, and frames read before a
    #: layout is tracked cost several looks.
    recognise_each: list[float] = field(default_factory=list)
    follow_s: float = 0.0
    stable: int = 0
    #: The first layout the fuser accepted: the deal as the camera first read it.
    first_layout: Any = None
    detector: str = "fake"
    errors: list[str] = field(default_factory=list)

    @property
    def recognise_s(self) -> float:
        return float(sum(self.recognise_each))

    @property
    def moves(self) -> list[str]:
        return [str(m) for m in self.follower.moves] if self.follower is not None else []

    @property
    def events(self) -> list[Any]:
        return list(self.follower.events) if self.follower is not None else []


def follow_game(folder: str | Path, *, detector: Any = None, seed: int = 0, k: Optional[int] = None,
                known_deal: bool = False, checked_deal: bool = False,
                on_layout: Optional[Callable[[int, Any], None]] = None, log: Optional[list] = None,
                readings: Optional[Sequence[Any]] = None, keep_readings: Optional[list] = None) -> FollowRun:
    """Follow one rendered game. ``detector``: an object with ``detect(image)`` run on the frames
    (needs the video), or None for the fake detector fed by the labels. ``known_deal``: start from
    the whole deal (``follow --deal`` with all 52 cards), else from the first stable layout;
    ``checked_deal``: as the app starts, from the first stable layout with the slots it flags checked
    by the person (``checked_deal_text``), the stock unknown; with either deal the pipeline knows
    each card's slot (``LayoutPipeline.know_deal``), as in the app and ``follow --deal``. ``k``:
    the fuser's window (default one second at the game's fps, ``LayoutFuser.for_fps``). ``log``: the
    calls made on the ``FollowStart`` are appended to it (``tools.games.replay``). ``keep_readings``:
    each frame's pipeline reading is appended to it; ``readings``: such readings are used instead of
    reading the frames (the detector and video unused; ``tools.games.replay.replay_frames``)."""
    from companion.errors import CompanionError
    from companion.game import Deal
    from companion.playalong.start import FollowStart
    from companion.vision.fusion import LayoutFuser
    from companion.vision.pipeline import LayoutPipeline

    truth, records = load_game(folder)
    rules = Rules.parse(truth["rules"])
    size = tuple(truth["size"])
    fps = float(truth.get("fps") or 30.0)
    pipeline = LayoutPipeline(detector, rules)
    fuser = (LayoutFuser(k, max(2, -(-2 * k // 3)), rules=rules, pipeline=pipeline) if k
             else LayoutFuser.for_fps(fps, rules=rules, pipeline=pipeline))
    skipped = 0
    note = log.append if log is not None else (lambda call: None)

    def new_start(deal: Optional[str]) -> FollowStart:
        note(("new", deal, fps))
        return FollowStart(rules, deal, fps=fps)

    start = new_start(truth["deal"] if known_deal else None)
    if known_deal:  # the deal as the person gave it: the pipeline knows each card's slot
        pipeline.know_deal(Deal.parse(truth["deal"], rules).pyramid)
    rng = np.random.default_rng([seed, truth["seed"]])
    run = FollowRun(detector="fake (fed by the truth labels)" if detector is None else repr(detector))
    images: Iterable[Any] = [None] * len(records)
    if readings is not None and len(readings) != len(records):
        raise ValueError(f"{len(readings)} readings kept for a game of {len(records)} frames")
    if detector is not None and readings is None:
        from companion.vision.sources import open_source
        images = (img for _, img in open_source(str(Path(folder) / truth["video"])))
    for f, (rec, image) in enumerate(zip(records, images)):
        t0 = time.perf_counter()
        if readings is not None:
            reading = readings[f]
        elif detector is None:
            reading = pipeline.read(fake_detections(rec, size, rng, truth.get("card_width_px", 60.0)), frame=f)
        else:  # the app's and the follow command's path: with the second looks (companion.vision.second_look)
            reading = pipeline.process(image, frame=f)
        t1 = time.perf_counter()
        if keep_readings is not None:
            keep_readings.append(reading)
        before = fuser.skipped
        layout = fuser.update(reading, frame=f)
        skipped += fuser.skipped - before
        if layout is not None:
            # frames the fuser could not use since the last change (a hand over the table): the
            # Follower believes hidden draws only after such a gap (as ``follow`` feeds it)
            layout = replace(layout, extra={**(layout.extra or {}), "skipped": skipped})
            skipped = 0
            run.stable += 1
            if run.first_layout is None:
                run.first_layout = layout
                if checked_deal:
                    try:
                        text = checked_deal_text(truth, layout)
                        start = new_start(text)
                        pipeline.know_deal(Deal.parse(text, rules).pyramid)  # as the app does
                    except CompanionError as exc:  # followed from the layouts, as without
                        run.errors.append(f"frame {f}: the checked deal: {exc}")
                        note(("error", run.errors[-1]))
            if on_layout is not None:
                on_layout(f, layout)
            note(("feed", f, layout))
            try:
                start.feed(layout)
            except CompanionError as exc:
                run.errors.append(f"frame {f}: {exc}")
        else:
            if log is not None:
                log.append(("tick", f, dict(fuser.last_seen)))
            start.tick(f, fuser.last_seen)
        t2 = time.perf_counter()
        run.recognise_each.append(t1 - t0)
        run.follow_s += t2 - t1
        run.frames += 1
    t0 = time.perf_counter()
    note(("finish",))
    start.finish()  # the stream ended: a waiting explanation or lone removal is settled
    run.follow_s += time.perf_counter() - t0
    run.follower = start.follower
    run.errors += start.errors
    return run


def matched_in_order(want: list[str], got: list[str]) -> int:
    """Moves recorded right and in the right order: the longest common subsequence of the truth
    and the record (a phantom move or a missed one costs one, a wrong order of two moves one)."""
    prev = [0] * (len(got) + 1)
    for a in want:
        cur = [0]
        for j, b in enumerate(got):
            cur.append(prev[j] + 1 if a == b else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _correction_and_truth(truth: dict, layout: Any) -> tuple[Any, dict]:
    """The app's correction session on ``layout`` (Qt-free: the app's own rules), and each pyramid
    place's true card at the deal."""
    from companion.app.correction import CorrectionSession
    from companion.game import Deal, GameState
    rules = Rules.parse(truth["rules"])
    session = CorrectionSession(rules, layout)
    cards = GameState.initial(rules, Deal.parse(truth["deal"], rules)).pyramid
    return session, dict(zip(session.places(), cards))  # both in deal order


def deal_checks(truth: dict, layout: Any) -> dict:
    """The deal as first read (``FollowRun.first_layout``) against the truth, and what the app's
    correction asks the person to check in it before the game starts (``CorrectionSession.flags``):
    wrong slots, slots flagged, wrong slots not flagged (silent). None each without a layout."""
    if layout is None:
        return {"deal_wrong": None, "deal_flagged": None, "deal_silent": None}
    session, want = _correction_and_truth(truth, layout)
    wrong = {p for p, card in want.items() if session.card_at(p) is not card}
    flagged = {p for p in want if session.flags(p).needs_check}
    return {"deal_wrong": len(wrong), "deal_flagged": len(flagged), "deal_silent": len(wrong - flagged)}


def checked_deal_text(truth: dict, layout: Any) -> str:
    """The deal the app would start from (``CorrectionSession.deal_text``) once the person corrects
    every slot it flags that is wrong, and each slot a correction is refused for (the card is
    already at another slot: "correct that one first"); an unflagged misread stays. The stock is
    unknown (``??``)."""
    session, want = _correction_and_truth(truth, layout)
    todo = [p for p in want if session.flags(p).needs_check and session.card_at(p) is not want[p]]
    for place in todo:
        session.clear(place)
    while todo:
        place = todo.pop(0)
        other = session.where(want[place], besides=place)
        if other is not None:
            session.clear(other)
            todo.append(other)
        session.set(place, want[place])
    return session.deal_text()


def score(truth: dict, run: FollowRun, slack: Optional[int] = None) -> dict:
    """Compare a run with the truth: moves in order, phantom moves, illegal removals reported."""
    want = [m["move"] for m in truth["moves"]]
    got = run.moves
    extra = list(got)
    for m in want:  # multiset difference: recorded moves the person never made
        if m in extra:
            extra.remove(m)
    slack = slack if slack is not None else int(truth.get("hold", 12)) * 3
    illegal_frames = [e.frame for e in run.events if e.kind == "illegal"]
    reported = reported_any = 0
    for ill in truth["illegal"]:  # reported while the cards are off the table (not when put back)
        a, b = ill.get("off_frames", ill["frames"])
        if any(a <= f <= b for f in illegal_frames):
            reported += 1
        if any(ill["frames"][0] <= f <= ill["frames"][1] + slack for f in illegal_frames):
            reported_any += 1  # ... or when put back, at the latest a few seconds later
    spurious = sum(1 for f in illegal_frames
                   if not any(i["frames"][0] <= f <= i["frames"][1] + slack for i in truth["illegal"]))
    k = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    first_wrong = None if got == want else k
    left = None
    if first_wrong is not None:  # how far the game was: pyramid cards still in place at that move
        from companion.game import Deal, GameState
        rules = Rules.parse(truth["rules"])
        state = GameState.initial(rules, Deal.parse(truth["deal"], rules))
        for m in want[:k]:
            state = state.apply(m)
        left = sum(c is not None for c in state.pyramid)
    return {"name": truth.get("name", ""), "moves": len(want), "first_wrong": first_wrong, "pyramid_left": left,
            "recorded": len(got), "matched": matched_in_order(want, got), "all_in_order": got == want,
            "phantom": len(extra), "phantom_draws": extra.count("draw"), "phantom_moves": extra[:5],
            "illegal": len(truth["illegal"]),
            "illegal_reported": reported, "illegal_reported_any": reported_any, "spurious_illegal": spurious,
            "checks": sum(1 for e in run.events if e.kind == "check"), "frames": run.frames,
            "recognise_ms": 1000 * run.recognise_s / max(1, run.frames),
            "recognise_frame_ms": [round(1000 * t, 2) for t in run.recognise_each],
            "follow_ms": 1000 * run.follow_s / max(1, run.frames), "errors": run.errors[:3],
            **deal_checks(truth, run.first_layout)}
