"""From a game script to a frame plan: which table lies there and where the hand is, frame by frame.

The person's routine for each step (frame counts at ``fps``; ``hold`` frames of a still table after
every step so the recognition's voting window settles):

* removal: the hand reaches in from a frame edge to the first card, lifts it, moves to the second
  (a pair), lifts it, and leaves; the table then stays still;
* draw: hand to the stock, lifts the top card, turns it onto the waste, leaves;
* recycle: hand to the waste, picks the pile up, puts it face down where the stock lies, leaves;
* illegal removal: the cards are lifted as for a removal, the table stays still for ``hold`` frames
  (long enough to be seen and reported), then the hand puts the cards back and the table is the
  recorded position again.

Frame ranges in the truth run from the first frame of the hand reaching in to the last still frame.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Optional

from companion.cards import Card
from companion.moves import DRAW, RECYCLE
from tools.games.script import ILLEGAL, Script, Step, table_spec

# Places a hand goes to, in the renderer's names: ("slot", r, i), ("stock",), ("waste",)
Place = tuple


@dataclass(frozen=True)
class FramePlan:
    spec: dict                         # the scene spec on the table (tools.synth format)
    hand: Optional[tuple[Place, Place, float]] = None  # moving from place A to B, t in 0..1; None: no hand
    hand_seed: int = 0                 # one hand shape per step
    pause: bool = False


def _place_of(state: Any, card: Card) -> Place:
    for s, c in enumerate(state.pyramid):
        if c is card:
            r = 0
            while (r + 1) * (r + 2) // 2 <= s:
                r += 1
            return ("slot", r, s - r * (r + 1) // 2)
    return ("waste",)


def _edge(place: Place) -> Place:
    return ("edge",) + tuple(place)


class Planner:
    """Turns a script into frames. ``hold``: still frames after each step (>= the fuser's quorum)."""

    def __init__(self, script: Script, *, fps: float = 10.0, hold: int = 12, seed: int = 0,
                 pause_p: float = 0.1) -> None:
        self.script = script
        self.fps = fps
        self.hold = hold
        self.rng = random.Random(seed)
        self.pause_p = pause_p
        self.frames: list[FramePlan] = []
        self.moves: list[dict] = []
        self.illegal: list[dict] = []

    # --- building blocks ----------------------------------------------------------------
    def _n(self, lo: float, hi: float) -> int:
        """A duration given in seconds, as a frame count (at least 1)."""
        return max(1, round(self.rng.uniform(lo, hi) * self.fps))

    def _still(self, spec: dict, extra: int = 0) -> None:
        n = self.hold + self.rng.randint(0, 4) + extra
        if self.rng.random() < self.pause_p:  # the person thinks a while
            n += self._n(1.0, 3.0)
        self.frames += [FramePlan(spec, pause=True)] * n

    def _move_hand(self, spec: dict, a: Place, b: Place, n: int, seed: int) -> None:
        for k in range(n):
            self.frames.append(FramePlan(spec, (a, b, (k + 1) / n), seed))

    def _stay(self, spec: dict, p: Place, n: int, seed: int) -> None:
        self.frames += [FramePlan(spec, (p, p, 1.0), seed)] * n

    # --- steps ------------------------------------------------------------------------------
    def build(self) -> "Planner":
        script = self.script
        first = table_spec(script.steps[0].before if script.steps else script.final)
        self._still(first, extra=self.hold)  # the deal, still, before anything happens
        for k, step in enumerate(script.steps):
            start = len(self.frames)
            self._step(step, k + 1)
            rng_frames = [start, len(self.frames) - 1]
            if step.kind == ILLEGAL:
                self.illegal.append({"cards": step.text, "kind": step.illegal_kind, "reason": step.reason,
                                     "frames": rng_frames, "off_frames": self.off_frames,
                                     "after_moves": len(self.moves)})
            else:
                self.moves.append({"move": step.text, "frames": rng_frames})
        return self

    def _step(self, step: Step, seed: int) -> None:
        before, after = step.before, step.after
        spec0, spec1 = table_spec(before), table_spec(after)
        if step.text == DRAW:
            self._move_hand(spec0, ("edge", "stock"), ("stock",), self._n(0.4, 0.8), seed)
            self._stay(spec0, ("stock",), self._n(0.1, 0.3), seed)
            self._move_hand(spec1, ("stock",), ("waste",), self._n(0.2, 0.4), seed)
            self._move_hand(spec1, ("waste",), ("edge", "waste"), self._n(0.3, 0.7), seed)
            self._still(spec1)
            return
        if step.text == RECYCLE:
            mid = dict(spec0, waste=[[]])
            self._move_hand(spec0, ("edge", "waste"), ("waste",), self._n(0.4, 0.8), seed)
            self._stay(spec0, ("waste",), self._n(0.1, 0.3), seed)
            self._move_hand(mid, ("waste",), ("stock",), self._n(0.2, 0.4), seed)
            self._move_hand(spec1, ("stock",), ("edge", "stock"), self._n(0.3, 0.7), seed)
            self._still(spec1)
            return
        cards = step.cards
        places = [_place_of(before, c) for c in cards]
        taken: tuple[Card, ...] = ()
        spec = spec0
        prev = _edge(places[0])
        for c, p in zip(cards, places):
            self._move_hand(spec, prev, p, self._n(0.3, 0.7) if prev[0] == "edge" else self._n(0.2, 0.4), seed)
            self._stay(spec, p, self._n(0.1, 0.2), seed)
            taken += (c,)
            spec = table_spec(before, taken=taken)
            prev = p
        off = len(self.frames)  # every card of the step is off the table from here
        self._move_hand(spec, prev, _edge(prev), self._n(0.3, 0.7), seed)
        if step.kind != ILLEGAL:
            self._still(spec1)
            return
        # the cards stay off long enough to be reported, then go back where they were
        self._still(spec, extra=self.hold // 2)
        self.off_frames = [off, len(self.frames) - 1]
        back = seed + 10_000
        prev = _edge(places[-1])
        for p in reversed(places):
            self._move_hand(spec, prev, p, self._n(0.3, 0.6), back)
            taken = taken[:-1]
            spec = table_spec(before, taken=taken)
            prev = p
        self._move_hand(spec0, prev, _edge(prev), self._n(0.3, 0.6), back)
        self._still(spec0)
