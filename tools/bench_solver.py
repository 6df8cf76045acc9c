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
    cpus: list[float] = []  # CPU seconds: less distorted than wall time on a shared machine
    not_proven = 0  # --optimal: wins whose shortness was not proven within the budget
    for i in range(deals):
        deal = random_deal(rules, random.Random(f"{seed}-{i}"))
        cpu0 = time.process_time()
        sol = solve(rules, deal, budget_seconds=budget, optimal=optimal)
        cpus.append(time.process_time() - cpu0)
        times.append(sol.seconds)
        states.append(sol.states)
        verdicts[{True: "won", False: "lost", None: "unknown"}[sol.solvable]] += 1
        if sol.solvable:
            steps.append(len(sol.moves))
            if optimal and not sol.optimal:
                not_proven += 1
            if check and not replay(rules, deal, sol.moves).is_won():
                raise SystemExit(f"{preset} deal {i}: the solution does not replay to a win")
        slow.append((sol.seconds, i, sol.solvable))
        if (i + 1) % 100 == 0:
            print(f"  {preset}: {i + 1}/{deals}", file=sys.stderr, flush=True)
    times.sort()
    cpus.sort()
    slow.sort(reverse=True)
    return {
        "preset": preset, "deals": deals, "seed": seed, "optimal": optimal, "budget_s": budget,
        "backend": backend_name(), **verdicts,
        "median_ms": 1000 * statistics.median(times), "p90_ms": 1000 * quantile(times, 0.9),
        "p99_ms": 1000 * quantile(times, 0.99), "max_ms": 1000 * times[-1],
        "cpu_median_ms": 1000 * statistics.median(cpus), "cpu_p99_ms": 1000 * quantile(cpus, 0.99),
        "cpu_max_ms": 1000 * cpus[-1],
        "mean_states": statistics.mean(states), "max_states": max(states),
        "mean_steps": statistics.mean(steps) if steps else None,
        "not_proven_shortest": not_proven if optimal else None,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "slowest": [{"deal": i, "seconds": round(t, 3), "solvable": s} for t, i, s in slow[:5]],
    }


def bench_advisor(preset: str, deals: int, seed: int, budget: float, samples: int) -> dict:
    """Advice on fresh deals with the whole stock hidden: time and sampled orders."""
    from companion.game import Deal, GameState
    from companion.solver.advisor import rank_moves
    rules = Rules.preset(preset)
    walls, cpus, counts = [], [], []
    for i in range(deals):
        cards = random_deal(rules, random.Random(f"{seed}-{i}"))
        n = rules.pyramid_size + rules.reserve
        state = GameState.initial(rules, Deal(rules, list(cards[:n]) + [None] * (len(cards) - n)))
        cpu0, t0 = time.process_time(), time.perf_counter()
        ranking = rank_moves(state, random.Random(i), budget_seconds=budget, min_samples=samples)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - cpu0)
        counts.append(ranking.samples if not ranking.note else samples)  # a proven loss needs one
    walls.sort()
    cpus.sort()
    return {"preset": preset, "deals": deals, "budget_s": budget, "min_samples": samples,
            "median_ms": 1000 * statistics.median(walls), "max_ms": 1000 * walls[-1],
            "cpu_median_ms": 1000 * statistics.median(cpus), "cpu_max_ms": 1000 * cpus[-1],
            "min_sampled": min(counts), "median_sampled": statistics.median(counts)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", nargs="+", default=["relaxed", "classic", "standard", "strict"])
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=float, default=10.0, help="seconds per deal")
    ap.add_argument("--optimal", action="store_true", help="shortest wins (A*)")
    ap.add_argument("--no-check", action="store_true", help="skip replaying every solution")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--advisor", action="store_true",
                    help="time hidden-stock advice on fresh deals instead (budget 0.2 s, 200 samples)")
    args = ap.parse_args()
    if args.advisor:
        print(f"advice on fresh deals, stock hidden, {args.deals} deals, seed {args.seed}")
        for preset in args.presets:
            r = bench_advisor(preset, args.deals, args.seed, 0.2, 200)
            print(f"{preset:10} wall ms median {r['median_ms']:.0f} max {r['max_ms']:.0f}; cpu ms median "
                  f"{r['cpu_median_ms']:.0f} max {r['cpu_max_ms']:.0f}; sampled orders min {r['min_sampled']} "
                  f"median {r['median_sampled']:.0f}", flush=True)
        return 0
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
              f"{r['peak_rss_mb']:8.0f}   cpu ms median {r['cpu_median_ms']:.2f} p99 {r['cpu_p99_ms']:.1f} "
              f"max {r['cpu_max_ms']:.0f}" + (f"  not proven shortest: {r['not_proven_shortest']}"
                                              if args.optimal else ""), flush=True)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
