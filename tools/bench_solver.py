"""Benchmark the exact solver: per preset, N seeded random deals, one at a time on one core.

    python tools/bench_solver.py --presets relaxed classic standard strict --deals 1000
    python tools/bench_solver.py --presets relaxed --deals 1000 --optimal --budget 5

Prints per preset: won/lost/unknown, median/p90/p99/max seconds, states, and the
peak resident memory of the process (resource.getrusage). ``--json PATH`` also
writes the figures (and the slowest deals) to a file.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.rules import Rules  # noqa: E402
from companion.solver import backend_name, replay, solve  # noqa: E402
from companion.solver.deals import random_deal  # noqa: E402


def quantile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def bench(preset: str, deals: int, seed: int, budget: float, optimal: bool, check: bool) -> dict:
    rules = Rules.preset(preset)
    times, states, verdicts, slow, steps = [], [], {"won": 0, "lost": 0, "unknown": 0}, [], []
    for i in range(deals):
        deal = random_deal(rules, random.Random(f"{seed}-{i}"))
        sol = solve(rules, deal, budget_seconds=budget, optimal=optimal)
        times.append(sol.seconds)
        states.append(sol.states)
        verdicts[{True: "won", False: "lost", None: "unknown"}[sol.solvable]] += 1
        if sol.solvable:
            steps.append(len(sol.moves))
            if check and not replay(rules, deal, sol.moves).is_won():
                raise SystemExit(f"{preset} deal {i}: the solution does not replay to a win")
        slow.append((sol.seconds, i, sol.solvable))
        if (i + 1) % 100 == 0:
            print(f"  {preset}: {i + 1}/{deals}", file=sys.stderr, flush=True)
    times.sort()
    slow.sort(reverse=True)
    return {
        "preset": preset, "deals": deals, "seed": seed, "optimal": optimal, "budget_s": budget,
        "backend": backend_name(), **verdicts,
        "median_ms": 1000 * statistics.median(times), "p90_ms": 1000 * quantile(times, 0.9),
        "p99_ms": 1000 * quantile(times, 0.99), "max_ms": 1000 * times[-1],
        "mean_states": statistics.mean(states), "max_states": max(states),
        "mean_steps": statistics.mean(steps) if steps else None,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "slowest": [{"deal": i, "seconds": round(t, 3), "solvable": s} for t, i, s in slow[:5]],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", nargs="+", default=["relaxed", "classic", "standard", "strict"])
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=float, default=10.0, help="seconds per deal")
    ap.add_argument("--optimal", action="store_true", help="shortest wins (A*)")
    ap.add_argument("--no-check", action="store_true", help="skip replaying every solution")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    rows = []
    print(f"backend {backend_name()}, {args.deals} deals per preset, seed {args.seed}, "
          f"budget {args.budget:g} s{', optimal' if args.optimal else ''}")
    print(f"{'preset':10} {'won':>5} {'lost':>5} {'unk':>4} {'median ms':>10} {'p90 ms':>8} "
          f"{'p99 ms':>8} {'max ms':>8} {'states max':>11} {'peak MB':>8}")
    for preset in args.presets:
        t0 = time.time()
        r = bench(preset, args.deals, args.seed, args.budget, args.optimal, not args.no_check)
        r["wall_s"] = time.time() - t0
        rows.append(r)
        print(f"{preset:10} {r['won']:5} {r['lost']:5} {r['unknown']:4} {r['median_ms']:10.2f} "
              f"{r['p90_ms']:8.1f} {r['p99_ms']:8.1f} {r['max_ms']:8.0f} {r['max_states']:11} "
              f"{r['peak_rss_mb']:8.0f}", flush=True)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
