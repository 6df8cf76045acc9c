"""Command line: ``pyramid-companion [COMMAND] ...``; no command opens the app.

Each command lives in its own module of this package with two functions:
``register(subparsers)`` adds its parser (cheap: no heavy imports at module
level) and ``run(args) -> int`` does the work. Input errors of the rules core
(``CompanionError``) become a one-line message and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from companion.errors import CompanionError

#: Command modules, in the order ``--help`` lists them.
COMMANDS = ("solve", "advise", "stats", "play", "detect", "recognize", "follow", "app")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyramid-companion",
        description="Pyramid solitaire companion: rules engine, solver, recognition and play-along.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"companion.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"companion.cli.{name}":
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not args_list or (args_list[0].startswith("-") and args_list[0] not in ("-h", "--help")):
        args_list = ["app"] + args_list  # the app is the default command, options and all
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except CompanionError as exc:
        print(f"pyramid-companion {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
