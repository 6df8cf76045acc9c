"""``pyramid-companion solve``: decide a fully known deal and print a winning plan.

    pyramid-companion solve --rules relaxed --deal "CODES..." --json
    -> {"solvable": true|false|null, "moves": [...] or null, "states": int, "seconds": float}
"""

from __future__ import annotations

import argparse
import json


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("solve", help="solve a fully known deal (exact)",
                              description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="classic", help="preset, optionally with overrides: 'relaxed,passes=2'")
    p.add_argument("--deal", required=True, help="card codes: pyramid from the apex, reserve, then the stock")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--budget-seconds", type=float, default=10.0, help="give up after this long (default 10)")
    p.add_argument("--optimal", action="store_true", help="shortest win (draws, recycles and removals)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from companion.errors import InvalidDealError
    from companion.game import Deal
    from companion.rules import Rules
    from companion.solver import solve

    rules = Rules.parse(args.rules)
    deal = Deal.parse(args.deal, rules)
    if any(c is None for c in deal.cards):
        missing = sum(c is None for c in deal.cards)
        raise InvalidDealError(f"the deal has {missing} unknown cards (??): solve needs all {rules.deck} "
                               "(use 'advise' for a hidden stock)")
    sol = solve(rules, deal, budget_seconds=args.budget_seconds, optimal=args.optimal)
    if args.json:
        print(json.dumps(sol.to_json()))
        return 0
    print(_readable(rules, deal, sol))
    return 0


def _readable(rules, deal, sol) -> str:
    lines = [f"rules {rules.name}: searched {sol.states:,} positions in {sol.seconds:.3f} s"]
    if sol.solvable is None:
        lines.append(f"unknown: {sol.note}")
    elif sol.solvable:
        kind = "shortest win" if sol.optimal else "a win"
        lines.append(f"winnable: {kind} in {len(sol.moves)} steps")
        for i, move in enumerate(sol.moves, 1):
            lines.append(f"{i:4}. {move}")
    else:
        from companion.solver.reasons import explain
        lines.append("not winnable:")
        lines.extend(f"  - {r}" for r in explain(rules, deal, sol))
    return "\n".join(lines)
