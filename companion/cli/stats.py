"""``pyramid-companion stats``: how many random deals can be won, with a 95% interval.

    pyramid-companion stats --rules relaxed --deals 1000 --seed 1 [--advisor]

Deal ``i`` is the shuffle of ``random.Random(f"{seed}-{i}")``, the same deals
``tools/bench_solver.py`` uses. Runs on every core (``--workers``) with a
progress bar on stderr. ``--advisor`` also plays ``--advisor-games`` of those
deals with the hidden-stock advisor, which sees only what a player sees.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable, Iterable


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("stats", help="solvable share of random deals (and the advisor's win rate)",
                              description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="classic")
    p.add_argument("--deals", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget-seconds", type=float, default=10.0, help="per deal (default 10)")
    p.add_argument("--workers", type=int, default=0, help="processes (default: every core)")
    p.add_argument("--advisor", action="store_true", help="also play games with the hidden-stock advisor")
    p.add_argument("--advisor-games", type=int, default=0, help="default: min(deals, 200)")
    p.add_argument("--advisor-samples", type=int, default=30, help="sampled orders per decision")
    p.add_argument("--advisor-budget", type=float, default=0.05, help="seconds per decision")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.set_defaults(run=run)


def _progress(label: str, done: int, total: int, start: float) -> None:
    if not sys.stderr.isatty() and done not in (total,) and done % max(1, total // 20):
        return
    width = 30
    filled = width * done // max(total, 1)
    rate = done / max(time.time() - start, 1e-9)
    sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
                     f"{rate:6.1f}/s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _run_pool(fn: Callable, jobs: list, workers: int, label: str) -> list:
    import multiprocessing as mp
    out: list[Any] = []
    start = time.time()
    _progress(label, 0, len(jobs), start)
    if workers <= 1:
        results: Iterable = map(fn, jobs)
        pool = None
    else:
        pool = mp.get_context("fork" if hasattr(os, "fork") else "spawn").Pool(workers)
        results = pool.imap_unordered(fn, jobs, chunksize=max(1, min(16, len(jobs) // (workers * 8) or 1)))
    try:
        for r in results:
            out.append(r)
            _progress(label, len(out), len(jobs), start)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return out


def run(args: argparse.Namespace) -> int:
    from companion.rules import Rules
    from companion.solver.advisor import wilson
    from companion.solver.play import advisor_job, solve_job

    rules = Rules.parse(args.rules)  # errors (exit 2) before any work starts
    if args.deals < 1:
        from companion.errors import CompanionError
        raise CompanionError(f"--deals must be at least 1, got {args.deals}")
    workers = args.workers or os.cpu_count() or 1
    jobs = [(args.rules, args.seed, i, args.budget_seconds) for i in range(args.deals)]
    t0 = time.time()
    results = _run_pool(solve_job, jobs, workers, "solving")
    wall = time.time() - t0
    won = sum(1 for r in results if r[1] is True)
    unknown = sum(1 for r in results if r[1] is None)
    decided = len(results) - unknown
    times = sorted(r[2] for r in results)
    lo, hi = wilson(won, decided)
    report: dict[str, Any] = {
        "rules": rules.name, "deals": len(results), "seed": args.seed, "solvable": won,
        "unknown": unknown, "share": won / decided if decided else None, "ci95": [lo, hi],
        "median_ms": 1000 * times[len(times) // 2], "mean_ms": 1000 * sum(times) / len(times),
        "max_ms": 1000 * times[-1], "wall_s": wall, "workers": workers,
    }
    if args.advisor:
        n = args.advisor_games or min(args.deals, 200)
        ajobs = [(args.rules, args.seed, i, args.advisor_budget, args.advisor_samples) for i in range(n)]
        t1 = time.time()
        played = _run_pool(advisor_job, ajobs, workers, "advisor games")
        awon = sum(1 for r in played if r[1])
        alo, ahi = wilson(awon, len(played))
        solvable_of = {r[0]: r[1] for r in results}
        both = [r for r in played if solvable_of.get(r[0]) is True]
        report["advisor"] = {
            "games": len(played), "won": awon, "share": awon / len(played), "ci95": [alo, ahi],
            "won_of_solvable": (sum(1 for r in both if r[1]) / len(both)) if both else None,
            "samples_per_decision": args.advisor_samples, "budget_s_per_decision": args.advisor_budget,
            "seconds_per_game": sum(r[2] for r in played) / len(played), "wall_s": time.time() - t1,
        }
    if args.json:
        print(json.dumps(report))
        return 0
    share = "n/a" if report["share"] is None else f"{100 * report['share']:.1f}%"
    print(f"{rules.name}: {won} of {decided} deals winnable = {share} "
          f"(95% CI {100 * lo:.1f}-{100 * hi:.1f}%)" + (f", {unknown} unknown" if unknown else ""))
    print(f"time per deal: median {report['median_ms']:.2f} ms, mean {report['mean_ms']:.2f} ms, "
          f"max {report['max_ms']:.0f} ms; {wall:.1f} s on {workers} workers")
    if args.advisor:
        a = report["advisor"]
        extra = "" if a["won_of_solvable"] is None else f"; {100 * a['won_of_solvable']:.1f}% of the winnable ones"
        print(f"hidden-stock advisor: won {a['won']} of {a['games']} games = {100 * a['share']:.1f}% "
              f"(95% CI {100 * a['ci95'][0]:.1f}-{100 * a['ci95'][1]:.1f}%){extra}; "
              f"{a['samples_per_decision']} samples/decision, {a['seconds_per_game']:.2f} s per game")
    return 0
