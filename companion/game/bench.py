"""Engine speed figures: ``python -m companion.game.bench [--rules relaxed] [--games 200]``.

Collects positions from random playouts, then times, on fresh (uncached) states, move
generation, ``apply`` of every legal move, and ``key``. Prints CPU microseconds per call (best of
``--repeat`` runs, single thread).
"""

from __future__ import annotations

import argparse
import random
import time

from companion.game import Deal, GameState
from companion.rules import Rules


def positions(rules: Rules, games: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        state = GameState.initial(rules, Deal.random(rules, rng))
        for _ in range(60):
            moves = state.legal_moves()
            if not moves:
                break
            out.append(state)
            state = state.apply(rng.choice(moves))
    return out


def fresh(states: list[GameState]) -> list[GameState]:
    return [GameState._make(s._ctx, s._k, s._empty, s._exp, s._stock, s._waste, s._cells, s._res,
                            s._gone, s._recycles, s._cleared_pass) for s in states]


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="relaxed")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    rules = Rules.parse(args.rules)
    states = positions(rules, args.games, args.seed)
    moves = [(s, s.legal_moves()) for s in states]
    n_moves = sum(len(m) for _, m in moves)

    def gen():
        for s in fresh(states):
            s.legal_moves()

    def make():
        fresh(states)

    def play():
        for s, ms in moves:
            for m in ms:
                s._play(m)

    def apply_checked():
        for s, ms in moves:
            for m in ms:
                s.apply(m)

    def keys():
        for s in fresh(states):
            s.key()

    t_make = best(make, args.repeat)
    t_gen = best(gen, args.repeat) - t_make
    t_play = best(play, args.repeat)
    t_apply = best(apply_checked, args.repeat)
    t_key = best(keys, args.repeat) - t_make
    n = len(states)
    print(f"rules {rules.name}: {n} positions, {n_moves / n:.1f} legal moves each")
    print(f"legal_moves (uncached): {t_gen / n * 1e6:.2f} us")
    print(f"apply (unchecked _play): {t_play / n_moves * 1e6:.2f} us per move")
    print(f"apply (public, checked): {t_apply / n_moves * 1e6:.2f} us per move")
    print(f"key (uncached): {t_key / n * 1e6:.2f} us")
    print(f"legal_moves + apply all: {(t_gen + t_apply) / n * 1e6:.2f} us per position")


if __name__ == "__main__":
    main()
