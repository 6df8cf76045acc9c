"""How much ``tools/learn_deck.py`` helps: learn an unseen deck from a few of its deals, read the rest.

    python tools/evaluate_learning.py --data data/synth_v2 --decks aisleriot/neoclassical_4_color \
        --deals 6 [--csv learning.csv]

For each held-out (val) deck: the first ``--deals`` scenes of that deck stand for deals the person
confirmed: their pyramid and waste corners are saved as samples the way the app saves them
(``deck_samples.save_samples``, the rendered corner boxes standing for the reads' boxes); the
classifier is fine-tuned on them (``learn_deck.learn``); then every pyramid and waste corner of
the deck's *other* scenes is named from one crop by the shipped and the learned classifier
(right / all, and by corner size), and so are the corners of a sample of the other val decks'
scenes (what the learned model forgets); the deck's other scenes are also read as stills by the
whole pipeline (slots right, deals exact). ``--check`` holds the last learned scene out as
``learn_deck.py`` does and says whether its check would have kept the model. One CSV row per deck.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.cards import Card  # noqa: E402
from companion.vision.deck_samples import ConfirmedFrame, CornerSample, load_samples, save_samples  # noqa: E402
from tools.evaluate import write_rows  # noqa: E402

PLACES = ("pyramid", "waste")
SIZES = (("<12", 0, 12), ("12-18", 12, 18), (">=18", 18, 1e9))


def scenes_of(val: Path) -> dict[str, list[Path]]:
    """Val truth files by deck, in name order."""
    out: dict[str, list[Path]] = {}
    for f in sorted((val / "truth").glob("*.json")):
        out.setdefault(json.loads(f.read_text())["deck"], []).append(f)
    return out


def corners(truth_file: Path) -> tuple[Path, list[dict]]:
    t = json.loads(truth_file.read_text())
    image = truth_file.parent.parent / "images" / (truth_file.stem + ".jpg")
    return image, [lab for lab in t["labels"] if lab["where"].startswith(PLACES)]


def as_frame(truth_file: Path) -> ConfirmedFrame:
    """A rendered scene as a confirmed frame: its picture, rules and pyramid."""
    t = json.loads(truth_file.read_text())
    rules = "classic" + (f",rows={t['rows']}" if t.get("rows", 7) != 7 else "")
    rules += (",inverted=true" if t.get("inverted") else "") + (
        ",waste_piles=3,draw=3" if len(t.get("waste", [])) == 3 else "")
    pyramid = tuple(tuple(None if c is None else Card.parse(c) for c in row) for row in t["pyramid_codes"])
    return ConfirmedFrame(truth_file.parent.parent / "images" / (truth_file.stem + ".jpg"), rules, pyramid,
                          truth_file.stem)


def save_deals(files: list[Path], folder: Path) -> list[CornerSample]:
    """The scenes' corners saved as samples, one confirmation (time stamp) per scene."""
    import cv2

    for k, f in enumerate(files):
        image_path, labs = corners(f)
        image = cv2.imread(str(image_path))
        save_samples(folder, image, [(lab["where"], Card.parse(lab["card"]), lab["box"]) for lab in labs],
                     source=f.stem, now=1.7e9 + 60 * k)
    return load_samples(folder)


def name_scenes(models: Path, files: list[Path]) -> dict[str, tuple[int, int]]:
    """(right, all) of the scenes' corners named from one crop, overall and by corner size."""
    import cv2

    from companion.vision.detector import OnnxCardDetector

    det = OnnxCardDetector(models, multi_crop_below=0)
    tally = {k: [0, 0] for k in ["all"] + [s[0] for s in SIZES]}
    for f in files:
        image_path, labs = corners(f)
        if not labs:
            continue
        probs = det.classify(cv2.imread(str(image_path)), np.array([lab["box"] for lab in labs], np.float32))
        for lab, p in zip(labs, probs):
            ok = int(np.argmax(p)) == lab["cls"]
            side = min(lab["box"][2] - lab["box"][0], lab["box"][3] - lab["box"][1])
            for key in ["all"] + [name for name, lo, hi in SIZES if lo <= side < hi]:
                tally[key][0] += ok
                tally[key][1] += 1
    return {k: (v[0], v[1]) for k, v in tally.items()}


def pct(t: tuple[int, int]) -> str:
    return f"{100 * t[0] / t[1]:.1f}" if t[1] else "-"


def main(argv: list[str] | None = None) -> int:
    from tools.learn_deck import by_deal, layout_right, learn

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=REPO / "data" / "synth_v2")
    p.add_argument("--decks", default="", help="comma list of val decks (default: every SVG deck with enough scenes)")
    p.add_argument("--deals", type=int, default=6, help="scenes of the deck learned from")
    p.add_argument("--others", type=int, default=40, help="scenes of other decks named to see what is forgotten")
    p.add_argument("--models", type=Path, default=REPO / "models")
    p.add_argument("--work", type=Path, default=REPO / "runs" / "evaluate-learning")
    p.add_argument("--replay", type=Path, nargs="*", default=())
    p.add_argument("--replay-scenes", type=int, default=80)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--reps", type=int, default=8)
    p.add_argument("--all-layers", action="store_true", help="train every layer, not only the head")
    p.add_argument("--check", action="store_true",
                   help="hold the last learned deal out and say what learn_deck.py's check would decide")
    p.add_argument("--csv", type=Path)
    args = p.parse_args(argv)
    val = args.data / "val"
    by_deck = scenes_of(val)
    decks = [d for d in args.decks.split(",") if d] or [d for d, f in by_deck.items()
                                                        if not d.startswith("proc/") and len(f) >= args.deals + 10]
    from tools.learn_deck import render_replay

    # one replay set for every deck (rendered once)
    replay = list(args.replay) or ([render_replay(args.work, args.replay_scenes, 0)] if args.replay_scenes > 0 else [])
    rows = []
    for deck in decks:
        files = by_deck.get(deck)
        if not files or len(files) <= args.deals:
            print(f"error: deck {deck!r} has {len(files or [])} val scenes, need more than {args.deals}",
                  file=sys.stderr)
            return 2
        learn_files, test_files = files[:args.deals], files[args.deals:]
        other_files = [f for d, fs in sorted(by_deck.items()) if d != deck for f in fs]
        other_files = other_files[::max(1, len(other_files) // args.others)][:args.others]
        work = args.work / deck.replace("/", "_")
        samples_dir = work / "samples"
        shutil.rmtree(samples_dir, ignore_errors=True)
        samples = save_deals(learn_files, samples_dir)
        check, check_frames = None, []
        if args.check:  # as learn_deck.py does: the last deal held out, the model judged on it
            deals = by_deal(samples)
            samples, check, check_frames = [s for d in deals[:-1] for s in d], deals[-1], [as_frame(learn_files[-1])]
        info = learn(samples, args.models, work / "model", work, replay=replay, replay_scenes=0, reps=args.reps,
                     epochs=args.epochs, lr=args.lr, head_only=not args.all_layers, check=check,
                     check_frames=check_frames)
        before, after = name_scenes(args.models, test_files), name_scenes(work / "model", test_files)
        frames = [as_frame(f) for f in test_files]
        lay_before, lay_after = layout_right(args.models, frames), layout_right(work / "model", frames)
        o_before, o_after = name_scenes(args.models, other_files), name_scenes(work / "model", other_files)
        verdict = ""
        if check:
            c, lay = info["check"], info["check_layout"]
            worse = c["after"] < c["before"] or lay["after"] < lay["before"]
            verdict = (f"{'refused' if worse else 'kept'} (held-out deal: corners {c['before']} -> {c['after']} "
                       f"of {c['corners']}, slots {lay['before']} -> {lay['after']} of {lay['slots']})")
        row = {"deck": deck, "deals_learned": len(learn_files) - bool(check), "check": verdict,
               "samples": len(samples),
               "train_seconds": info["seconds"], "test_scenes": len(test_files), "test_corners": before["all"][1],
               "named_before": pct(before["all"]), "named_after": pct(after["all"])}
        for name, _, _ in SIZES:
            row[f"before {name}"], row[f"after {name}"] = pct(before[name]), pct(after[name])
        row["other_decks_before"], row["other_decks_after"] = pct(o_before["all"]), pct(o_after["all"])
        row["slots_right_before"], row["slots_right_after"] = pct(lay_before[:2]), pct(lay_after[:2])
        row["deals_exact_before"], row["deals_exact_after"] = lay_before[2], lay_after[2]
        rows.append(row)
        print(f"{deck}: {len(samples)} corners from {row['deals_learned']} deals learned in {info['seconds']} s; "
              f"its other {len(test_files)} scenes ({before['all'][1]} corners) named {row['named_before']}% -> "
              f"{row['named_after']}% (<12 px {row['before <12']} -> {row['after <12']}, 12-18 "
              f"{row['before 12-18']} -> {row['after 12-18']}, >=18 {row['before >=18']} -> {row['after >=18']}); "
              f"other decks {row['other_decks_before']}% -> {row['other_decks_after']}%; read as stills: slots "
              f"right {row['slots_right_before']}% -> {row['slots_right_after']}%, deals exact "
              f"{lay_before[2]} -> {lay_after[2]} of {len(frames)}" + (f"; learn_deck.py would have {verdict}"
                                                                         if verdict else ""), flush=True)
    if args.csv and rows:
        write_rows(args.csv, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
