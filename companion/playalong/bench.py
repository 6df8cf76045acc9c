"""Benchmark: follow simulated games and print accuracy and cost figures.

``python -m companion.playalong.bench --games 100 --presets classic,standard``

Each game is played at random (removals preferred) on a random deal; after each
move the table is shown to the follower as a perfect eye would (``script.layout_of``)
with probability ``--seen`` (else the next view also hides this move, as a hand
over the table would: its frames count as skipped by the stream, a real gap), and every ``--illegal-every``-th view an illegal removal
(a pair not making the sum, or a covered card) is shown, then put back. Between
stable changes ``--still`` unchanged frames are fed, as a camera at 30 frames/s
would. Printed per preset: games whose moves were all recovered in order, the
same moves in another order of independent moves, games with a phantom move
(a recorded move never played), illegal removals reported / shown, and the cost
per frame (all frames, and the frames with a change).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from dataclasses import replace
from typing import Any

from companion.game import Deal, GameState
from companion.layout import SlotReading
from companion.playalong.follower import Follower
from companion.playalong.script import layout_of
from companion.rules import Rules


def _illegal_view(state: Any, rules: Rules, layout: Any, rng: random.Random) -> Any:
    """The layout with an illegal removal: two open pyramid cards not making the sum, or a covered card."""
    opened = [s for s, c in enumerate(state.pyramid) if c is not None and state.exposed_mask >> s & 1]
    pairs = [(a, b) for i, a in enumerate(opened) for b in opened[i + 1:]
             if not rules.pairs(state.pyramid[a], state.pyramid[b])]
    covered = [s for s, c in enumerate(state.pyramid)
               if c is not None and not state.exposed_mask >> s & 1 and state.visible(s)]
    if pairs and (not covered or rng.random() < 0.5):
        gone = set(rng.choice(pairs))
    elif covered:
        gone = {rng.choice(covered)}
    else:
        return None
    rows, i = [], 0
    for r, row in enumerate(layout.pyramid):
        rows.append(tuple(SlotReading.empty() if i + k in gone else s for k, s in enumerate(row)))
        i += len(row)
    return replace(layout, pyramid=tuple(rows))


def run_game(rules: Rules, seed: int, *, seen: float, illegal_every: int, still: int,
             max_moves: int = 150) -> dict[str, Any]:
    rng = random.Random(seed)
    deal = Deal.random(rules, rng)
    truth = GameState.initial(rules, deal)
    follower = Follower(rules, Deal.from_cards(rules, deal.pyramid, deal.reserve))
    frame = 0
    blocked = 0  # frames a hand hid the table (moves not seen on their own), told with the next view
    times: list[float] = []
    change_times: list[float] = []

    def show(layout: Any, changed: bool = True) -> list:
        nonlocal frame, blocked
        events = []
        for k in range(still if changed else 1):
            frame += 1
            layout = replace(layout, frame=frame, extra={**layout.extra, "skipped": blocked})
            blocked = 0
            t = time.perf_counter()
            events += follower.feed(layout)
            dt = time.perf_counter() - t
            times.append(dt)
            if k == 0 and changed:
                change_times.append(dt)
        return events

    show(layout_of(truth, stock_top="pile"))
    played = []
    illegal_shown = illegal_reported = 0
    views = 0
    for _ in range(max_moves):
        moves = truth.legal_moves()
        if not moves:
            break
        removals = [m for m in moves if m.kind not in ("draw", "recycle")]
        m = rng.choice(removals) if removals and rng.random() < 0.7 else rng.choice(moves)
        truth = truth.apply(m)
        played.append(m)
        if rng.random() >= seen:
            frame += 2 * still  # the stream skips the frames with a hand over the table
            blocked += 2 * still
            continue
        layout = layout_of(truth, stock_top="pile")
        views += 1
        if illegal_every and views % illegal_every == 0:
            bad = _illegal_view(truth, rules, layout, rng)
            if bad is not None:
                show(layout)
                illegal_shown += 1
                events = show(bad)
                illegal_reported += any(e.kind == "illegal" for e in events)
        show(layout)
    show(layout_of(truth, stock_top="pile"))
    follower.finish()
    got = [str(m) for m in follower.moves]
    want = [str(m) for m in played]
    phantom = bool(Counter(got) - Counter(want))
    return {
        "exact": got == want,
        "same_set": Counter(got) == Counter(want) and follower.state.key() == truth.key(),
        "phantom": phantom,
        "illegal_shown": illegal_shown,
        "illegal_reported": illegal_reported,
        "played": want,
        "recorded": got,
        "times": times,
        "change_times": change_times,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presets", default="classic,standard,king-tut,apophis,ancient-egypt,giza")
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seen", type=float, default=1.0, help="chance that a move is seen on its own")
    ap.add_argument("--illegal-every", type=int, default=10, help="show an illegal removal every N views (0: never)")
    ap.add_argument("--still", type=int, default=20, help="unchanged frames fed per stable view")
    args = ap.parse_args(argv)
    print(f"games per preset {args.games}, moves seen alone {args.seen:.0%}, "
          f"illegal removal every {args.illegal_every} views, {args.still} frames per view")
    print(f"{'preset':14s} {'in order':>9s} {'same set':>9s} {'phantom':>8s} {'illegal':>10s} "
          f"{'ms/frame':>9s} {'change mean':>12s} {'p99':>7s} {'max':>7s}")
    for name in args.presets.split(","):
        rules = Rules.preset(name)
        rows = [run_game(rules, args.seed + g, seen=args.seen, illegal_every=args.illegal_every,
                         still=args.still) for g in range(args.games)]
        times = [t for r in rows for t in r["times"]]
        ch = sorted(t for r in rows for t in r["change_times"])
        p99 = ch[min(len(ch) - 1, int(0.99 * len(ch)))] if ch else 0.0
        print(f"{name:14s} {sum(r['exact'] for r in rows):>9d} {sum(r['same_set'] for r in rows):>9d} "
              f"{sum(r['phantom'] for r in rows):>8d} "
              f"{sum(r['illegal_reported'] for r in rows):>4d}/{sum(r['illegal_shown'] for r in rows):<5d} "
              f"{1000 * statistics.fmean(times):>9.3f} {1000 * statistics.fmean(ch):>12.2f} "
              f"{1000 * p99:>7.1f} {1000 * max(ch):>7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
