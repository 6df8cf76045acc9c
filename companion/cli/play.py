"""``pyramid-companion play``: replay moves on a deal and print the position.

    pyramid-companion play --rules relaxed --deal "CODES..." --moves "KD QH+AS draw"

Without ``--moves`` on a terminal it asks for moves one at a time (``undo``,
``redo``, ``quit``). Bad input exits 2 with a one-line message.
"""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("play", help="replay moves on a deal and show the position",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rules", default="classic", help="rules preset, e.g. relaxed or 'relaxed,draw=3'")
    p.add_argument("--deal", help="the deal: card codes, pyramid from the apex, then reserve, then stock")
    p.add_argument("--seed", type=int, help="play a random deal from this seed instead of --deal")
    p.add_argument("--moves", help="moves to replay, separated by spaces: draw recycle KD QH+AS QH>cell")
    p.add_argument("--load", help="a saved game record (JSON) instead of --rules/--deal")
    p.add_argument("--save", help="write the game record (JSON) here after the moves")
    p.add_argument("--json", action="store_true", help="print the position as JSON")
    p.add_argument("--score", default=None, help="scoring system to show (default: the rules' own)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import random

    from companion.errors import InvalidDealError, InvalidMoveError
    from companion.game import Deal, Game
    from companion.rules import Rules

    if args.load:
        game = Game.load(args.load)
    else:
        rules = Rules.parse(args.rules)
        if args.deal is not None:
            deal = Deal.parse(args.deal, rules)
        elif args.seed is not None:
            deal = Deal.random(rules, random.Random(args.seed))
        else:
            raise InvalidDealError("give --deal \"CODES...\", --seed N or --load FILE")
        game = Game(rules, deal)
    if args.moves:
        for i, text in enumerate(args.moves.replace(",", " ").split()):
            try:
                game.play(text)
            except ValueError as exc:
                raise InvalidMoveError(f"move {i + 1}: {exc}") from None
    elif sys.stdin.isatty() and sys.stdout.isatty() and not args.json:
        _interactive(game)
    if args.save:
        game.save(args.save)
    if args.json:
        import json
        print(json.dumps(position_json(game, args.score)))
    else:
        print(describe(game, args.score))
    return 0


def describe(game, system: str | None = None) -> str:
    from companion.game import scoring
    from companion.game.render import render_state

    state = game.state
    text = render_state(state)
    if system:
        text += f"\nscore ({system}): {scoring.score(game, system)}"
    return text


def position_json(game, system: str | None = None) -> dict:
    from companion.game import scoring

    s = game.state
    code = lambda c: None if c is None else str(c)  # noqa: E731
    return {
        "rules": s.rules.name,
        "moves": [str(m) for m in game.moves],
        "pyramid": [code(c) for c in s.pyramid],
        "stock": [code(c) for c in s.stock],
        "waste": [[code(c) for c in pile] for pile in s.waste],
        "cells": [code(c) for c in s.cells],
        "reserve": [code(c) for c in s.reserve],
        "pass": s.pass_number,
        "recycles_left": s.recycles_left,
        "legal_moves": [str(m) for m in s.legal_moves()],
        "result": s.result,
        "score": scoring.score(game, system),
    }


def _interactive(game) -> None:
    from companion.game.render import render_state

    print(render_state(game.state))
    while game.state.result == "playing":
        try:
            text = input("move (undo, redo, quit)> ").strip()
        except EOFError:
            print()
            return
        if text in ("q", "quit", "exit"):
            return
        try:
            if text == "undo":
                game.undo()
            elif text == "redo":
                game.redo()
            elif text:
                game.play(text)
        except ValueError as exc:
            print(f"  {exc}")
            continue
        print(render_state(game.state))
