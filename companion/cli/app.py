"""``pyramid-companion app`` (also: no command at all) opens the desktop app."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser("app", help="open the desktop app (the default)",
                              description="Open the Pyramid Companion window.")
    p.add_argument("--source", help="camera index (0, 1, ...), a video file, an image, a folder of frames, "
                                    "or 'demo' (default: the last one used; first run: camera 0, else the demo)")
    p.add_argument("--rules", help="rules preset, e.g. classic, relaxed, 'relaxed,draw=3' (default: last used)")
    p.add_argument("--manual", action="store_true", help="no camera: enter the deal and click moves")
    p.add_argument("--models", help="recognition model folder (default: models/, or $PYRAMID_COMPANION_MODELS), "
                                    "e.g. the one tools/learn_deck.py wrote for your deck")
    p.add_argument("--data-dir", help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from companion.rules import Rules

    if args.rules:
        Rules.parse(args.rules)  # bad presets exit 2 before any window opens
    if args.models:
        import os

        from companion.vision.model_files import ENV_VAR, model_paths

        model_paths(args.models)  # a missing or incomplete folder exits 2 with what is missing
        os.environ[ENV_VAR] = str(Path(args.models).resolve())
    from companion.app.main import run_app

    return run_app(source=args.source, rules=args.rules, manual=True if args.manual else None,
                   data_dir=Path(args.data_dir) if args.data_dir else None)
