"""``pyramid-companion advise``: rank the legal moves when the stock is (partly) hidden.

    pyramid-companion advise --rules relaxed --deal "28 pyramid cards [known stock or ?? ...]"

The deal text lists the pyramid (and reserve), then the stock in draw order with
``??`` for cards not seen yet; the pyramid alone means the whole stock is hidden.
``--moves`` plays moves first (naming each card drawn with ``--seen``).
"""

from __future__ import annotations

import argparse
import json


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("advise", help="rank moves by win probability (hidden stock)",
                              description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="classic")
    p.add_argument("--deal", required=True, help="pyramid cards, then known stock cards or ??")
    p.add_argument("--moves", default="", help="moves already played, e.g. 'KD draw QH+AS'")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget-seconds", type=float, default=0.2)
    p.add_argument("--samples", type=int, default=200, help="at least this many sampled orders")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import random

    from companion.game import Deal, GameState
    from companion.moves import Move
    from companion.rules import Rules
    from companion.solver.advisor import rank_moves

    rules = Rules.parse(args.rules)
    state = GameState.initial(rules, Deal.parse(args.deal, rules))
    for text in args.moves.split():
        state = state.apply(Move.parse(text))
    ranking = rank_moves(state, random.Random(args.seed), budget_seconds=args.budget_seconds,
                         min_samples=args.samples)
    if args.json:
        print(json.dumps({
            "samples": ranking.samples, "hidden": ranking.hidden, "seconds": round(ranking.seconds, 4),
            "win_probability": ranking.win_probability, "unknown": ranking.unknown,
            "moves": [{"move": str(e.move), "win_probability": e.win_probability,
                       "interval": list(e.interval), "throws_win": e.throws_win} for e in ranking.moves],
        }))
        return 0
    print(f"{ranking.hidden} hidden cards, {ranking.samples} sampled orders in {ranking.seconds:.3f} s; "
          f"position wins in {100 * ranking.win_probability:.1f}% of them"
          + (f" ({ranking.note})" if ranking.note else ""))
    for est in ranking.moves:
        print(f"  {est}")
    if not ranking.moves:
        print(f"  no legal move ({state.result})")
    return 0
