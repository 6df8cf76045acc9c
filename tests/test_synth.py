"""Synthetic data generator: valid labels, truth that matches them, reproducibility, deck split."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from companion.cards import CARD_CODES  # noqa: E402
from tools.synth import writer  # noqa: E402
from tools.synth.scene import render_scene  # noqa: E402


@pytest.fixture(autouse=True)
def procedural_only(monkeypatch):
    """Scenes use procedural decks here: SVG renders take seconds per deck (tested separately)."""
    monkeypatch.setattr(writer, "pick_deck",
                        lambda rng, split, *_: writer.proc_deck(split, int(rng.integers(3))))


def _generate(out: Path, split: str, seed: int, n: int) -> None:
    writer.write_yaml(out)
    for i in range(n):
        writer.generate_one(out, split, seed, i, crops=2)


def _read_labels(path: Path) -> list[tuple[int, float, float, float, float]]:
    rows = []
    for line in path.read_text().splitlines():
        parts = line.split()
        assert len(parts) == 5, f"bad label line {line!r} in {path}"
        rows.append((int(parts[0]), *map(float, parts[1:])))
    return rows


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    mp = pytest.MonkeyPatch()
    mp.setattr(writer, "pick_deck", lambda rng, split, *_: writer.proc_deck(split, int(rng.integers(3))))
    _generate(out, "train", 11, 4)
    _generate(out, "val", 12, 1)
    mp.undo()
    return out


def test_labels_are_valid_yolo_boxes(dataset):
    files = sorted((dataset / "train" / "labels").glob("*.txt"))
    assert len(files) == 4
    total = 0
    for f in files:
        rows = _read_labels(f)
        total += len(rows)
        counts = Counter(r[0] for r in rows)
        for cls, cx, cy, w, h in rows:
            assert 0 <= cls < 52
            assert 0 < w <= 1 and 0 < h <= 1
            assert -1e-6 <= cx - w / 2 and cx + w / 2 <= 1 + 1e-6
            assert -1e-6 <= cy - h / 2 and cy + h / 2 <= 1 + 1e-6
        # a card appears at most twice: its two index corners
        assert max(counts.values(), default=0) <= 2, f"{f.name}: {counts.most_common(3)}"
    assert total > 15  # scenes do contain cards


def test_truth_matches_labels(dataset):
    for f in sorted((dataset / "train" / "truth").glob("*.json")):
        t = json.loads(f.read_text())
        img = cv2.imread(str(dataset / "train" / "images" / t["image"]))
        assert img.shape[:2] == (t["height"], t["width"])
        rows = _read_labels(dataset / "train" / "labels" / f"{t['name']}.txt")
        assert len(rows) == len(t["labels"])
        w, h = t["width"], t["height"]
        for (cls, cx, cy, bw, bh), lab in zip(rows, t["labels"]):
            assert cls == CARD_CODES.index(lab["card"]) == lab["cls"]
            x1, y1, x2, y2 = lab["box"]
            assert abs(cx * w - (x1 + x2) / 2) < 0.01 and abs(bw * w - (x2 - x1)) < 0.01
            assert abs(cy * h - (y1 + y2) / 2) < 0.01 and abs(bh * h - (y2 - y1)) < 0.01
        # the two corners of one card are different corners
        seen = Counter((lab["card"], lab["which"]) for lab in t["labels"])
        assert max(seen.values(), default=0) == 1
        # pyramid shape, unique cards on the table, labelled cards are the visible corners in the truth
        assert [len(r) for r in t["pyramid_codes"]] == list(range(1, t["rows"] + 1))
        on_table = [c for r in t["pyramid_codes"] for c in r if c] + \
                   [c for p in t["waste"] for c in p["cards"]] + [x["card"] for x in t["loose"]]
        assert len(on_table) == len(set(on_table))
        visible = {(c, k["which"]) for r in t["pyramid"] for s in r for k in s["corners"] if k["visible"]
                   for c in [s["card"]]}
        visible |= {(x["card"], k["which"]) for x in t["loose"] for k in x["corners"] if k["visible"]}
        for lab in t["labels"]:
            if lab["where"].startswith(("pyramid", "loose")):
                assert (lab["card"], lab["which"]) in visible
        for r in t["pyramid"]:
            for s in r:
                assert len(s["quad"]) == 4
                if s["card"] is None:
                    assert s["corners"] == []
        assert {"tilt_deg", "light", "blur", "hands", "partial", "hard"} <= set(t["conditions"])


def test_bottom_row_shows_both_corners_when_uncovered(dataset):
    both = 0
    for f in sorted((dataset / "train" / "truth").glob("*.json")):
        t = json.loads(f.read_text())
        for s in t["pyramid"][-1]:
            vis = {k["which"] for k in s["corners"] if k["visible"]}
            both += vis == {"tl", "br"}
        # upper rows never show their bottom-right corner when the row below is complete and overlapping
        if t["conditions"]["row_step"] < 0.6 and not t["conditions"]["partial"]:
            for r in t["pyramid"][:-1]:
                for s in r:
                    assert not any(k["visible"] for k in s["corners"] if k["which"] == "br")
    assert both > 0


def test_same_seed_same_bytes_and_resume(dataset, tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "pick_deck", lambda rng, split, *_: writer.proc_deck(split, int(rng.integers(3))))
    # regenerate scenes 2 and 3 alone (other order, fresh folder): identical files
    for i in (3, 2):
        writer.generate_one(tmp_path, "train", 11, i, crops=2)
    for i in (2, 3):
        name = writer.scene_name("train", 11, i)
        for sub, ext in (("images", "jpg"), ("labels", "txt"), ("truth", "json")):
            a = (dataset / "train" / sub / f"{name}.{ext}").read_bytes()
            b = (tmp_path / "train" / sub / f"{name}.{ext}").read_bytes()
            assert a == b, f"{sub}/{name}.{ext} differs"
    assert writer.generate_one(tmp_path, "train", 11, 3) == "skip"
    other = writer.scene_name("train", 12, 3)
    writer.generate_one(tmp_path, "train", 12, 3, crops=0)
    assert (tmp_path / "train" / "images" / f"{other}.jpg").read_bytes() != \
        (dataset / "train" / "images" / f"{writer.scene_name('train', 11, 3)}.jpg").read_bytes()


def test_classification_crops_and_yaml(dataset):
    cls_root = dataset / "cls"
    assert sorted(p.name for p in (cls_root / "train").iterdir()) == sorted(CARD_CODES)
    crops = list((cls_root / "train").rglob("*.jpg"))
    assert crops
    img = cv2.imread(str(crops[0]))
    assert img.shape[0] == img.shape[1] >= 64
    text = (dataset / "dataset.yaml").read_text()
    lines = dict(ln.split(": ", 1) for ln in text.splitlines() if ": " in ln and not ln.startswith(" "))
    assert Path(lines["train"]).is_absolute() and Path(lines["val"]).is_absolute()
    assert Path(lines["train"]).exists()
    assert "  51: KS" in text and "  0: AC" in text


def test_deck_split_has_no_overlap():
    cfg = writer.deck_config()
    train = {d for fam in cfg["train"].values() for d in fam}
    val = {d for fam in cfg["val"].values() for d in fam}
    assert train and val and not train & val
    assert not set(cfg["train"]) & set(cfg["val"])
    assert not train & set(cfg["excluded"]) and not val & set(cfg["excluded"])
    proc = cfg["procedural"]
    assert not set(proc["train_fonts"]) & set(proc["val_fonts"])
    # procedural decks of the two splits come from different seeds and fonts
    a, b = writer.proc_deck("train", 0), writer.proc_deck("val", 0)
    assert a.name != b.name and not np.array_equal(a.faces["QH"], b.faces["QH"])


@pytest.mark.skipif(shutil.which("rsvg-convert") is None or not Path("/usr/share/aisleriot/cards/anglo.svgz").exists(),
                    reason="card art packages not installed (gnome-cards-data, librsvg2-bin)")
def test_svg_deck_elements_and_render(tmp_path):
    from tools.synth import art
    ids = art.element_ids("aisleriot/anglo")
    assert set(CARD_CODES) <= set(ids) and "BACK" in ids
    png = art.render_card("aisleriot/anglo", "7S", tmp_path / "7S.png")
    img = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    assert img.shape[1] == art.ART_WIDTH and 1.3 < img.shape[0] / img.shape[1] < 1.7
    with pytest.raises(art.ArtError):
        art.deck_file("nowhere/anglo")


def test_spec_and_shared_geometry_render_frames_of_one_table():
    deck = writer.proc_deck("val", 2)
    pyramid = [[CARD_CODES[r * (r + 1) // 2 + i] for i in range(r + 1)] for r in range(7)]
    full = {"pyramid": pyramid, "waste": [["KS"]], "stock": 5, "loose": []}
    played = {"pyramid": [row[:] for row in pyramid], "waste": [["KS", "QS"]], "stock": 4, "loose": []}
    played["pyramid"][6][0] = played["pyramid"][6][1] = None
    a = render_scene(np.random.default_rng(1), deck, spec=full, geometry=np.random.default_rng(77))
    b = render_scene(np.random.default_rng(2), deck, spec=played, geometry=np.random.default_rng(77))
    assert a.truth["pyramid_codes"] == pyramid and b.truth["pyramid_codes"][6][:2] == [None, None]
    for ra, rb in zip(a.truth["pyramid"], b.truth["pyramid"]):
        for sa, sb in zip(ra, rb):
            assert sa["quad"] == sb["quad"]  # empty slots stay where the card was, nothing shifts
    assert b.truth["waste"][0]["top"] == "QS"
    removed = {pyramid[6][0], pyramid[6][1]}
    assert not any(lab["card"] in removed for lab in b.labels)
    assert {lab["card"] for lab in b.labels} <= {c for r in pyramid for c in r if c} | {"KS", "QS"}
    with pytest.raises(ValueError, match="twice"):
        render_scene(np.random.default_rng(1), deck, spec={**full, "waste": [["AC"]]})
    with pytest.raises(ValueError, match="rows"):
        render_scene(np.random.default_rng(1), deck, spec={**full, "pyramid": [["AC", "2C"]]})


def test_committed_samples_are_consistent():
    root = Path(__file__).resolve().parents[1] / "datasets" / "samples"
    truths = sorted((root / "truth").glob("*.json"))
    assert truths, "datasets/samples has no scenes"
    for f in truths:
        t = json.loads(f.read_text())
        img = cv2.imread(str(root / "images" / t["image"]))
        assert img is not None and img.shape[:2] == (t["height"], t["width"])
        rows = _read_labels(root / "labels" / f"{t['name']}.txt")
        assert [r[0] for r in rows] == [lab["cls"] for lab in t["labels"]]
        assert t["split"] == "val" and t["deck"] not in {
            d for fam in writer.deck_config()["train"].values() for d in fam}


def test_variant_layouts_inverted_face_down_reserve_cells():
    from tools.synth.deal import covering, face_down_slots, random_spec
    seen = set()
    deck = writer.proc_deck("train", 2)
    for k in range(40):
        spec = random_spec(np.random.default_rng(k), np.random.default_rng(1000 + k), 1.0)
        kind = ("inverted" if spec["form"] == "inverted" else "face_down" if spec.get("face_down_rows")
                else "reserve" if spec.get("reserve") else "cells")
        if kind in seen:
            continue
        seen.add(kind)
        # removals are legal-looking: no removed slot is still covered by a card
        rows = spec["pyramid"]
        for r, row in enumerate(rows):
            for i, code in enumerate(row):
                if code is None:
                    assert all(rows[a][b] is None for a, b in covering(spec["form"], len(rows), r, i))
        res = render_scene(np.random.default_rng(k), deck, spec=spec)
        t = res.truth
        assert t["form"] == spec["form"] and t["conditions"]["variant"] == kind
        labelled = {lab["card"] for lab in res.labels}
        for r, i in face_down_slots(spec):
            assert t["pyramid"][r][i].get("face_down") and rows[r][i] not in labelled
        for part in ("reserve", "cells"):
            if spec.get(part):
                assert [x["card"] for x in t[part]] == spec[part]
                assert all(len(x["quad"]) == 4 for x in t[part])
    assert seen == {"inverted", "face_down", "reserve", "cells"}


def _make_dataset_tool():
    """tools/make_dataset.py as a module (a script, not part of a package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_dataset", Path(__file__).resolve().parents[1]
                                                  / "tools" / "make_dataset.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_make_dataset_cli_procedural_only(tmp_path, capsys, monkeypatch):
    monkeypatch.undo()  # the real deck choice, restricted to procedural faces by --decks proc
    mod = _make_dataset_tool()
    out = tmp_path / "ds"
    assert mod.main(["--seed", "3", "--count", "2", "--split", "val", "--out", str(out), "--decks", "proc",
                     "--crops", "1", "--hard-share", "1"]) == 0
    names = sorted(p.name for p in (out / "val" / "images").iterdir())
    assert names == ["val_s3_000000.jpg", "val_s3_000001.jpg"]
    for n in names:
        t = json.loads((out / "val" / "truth" / n.replace(".jpg", ".json")).read_text())
        assert t["deck"].startswith("proc/val-") and t["conditions"]["hard_mix"]
    readme = (out / "README.txt").read_text()
    assert "FINISHED" in readme and "--decks proc" in readme
    assert (out / "dataset.yaml").exists()
    # resuming renders nothing new
    assert mod.main(["--seed", "3", "--count", "2", "--split", "val", "--out", str(out), "--decks", "proc"]) == 0
    assert "0 scenes rendered, 2 skipped" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        mod.main(["--seed", "3", "--count", "1", "--split", "val", "--out", str(out), "--decks", "anglo"])
    with pytest.raises(SystemExit):  # the wide-lettered procedural decks are train-only
        mod.main(["--seed", "3", "--count", "1", "--split", "val", "--out", str(out), "--decks", "proc-wide"])


def test_stats_check_finds_no_problems_and_catches_a_bad_label(dataset, tmp_path):
    from tools.synth.stats import check, summarize
    assert check(dataset, "train") == [] and check(dataset, "val") == []
    s = summarize(dataset, "train")
    assert s["scenes"] == 4 and s["labels"] > 0 and sum(s["conditions"]["light"].values()) == 4
    bad = tmp_path / "bad"
    shutil.copytree(dataset / "val", bad / "val")
    label = next((bad / "val" / "labels").glob("*.txt"))
    lines = label.read_text().splitlines()
    cls = int(lines[0].split()[0])
    lines[0] = " ".join([str((cls + 1) % 52)] + lines[0].split()[1:])
    label.write_text("\n".join(lines) + "\n")
    assert any("class" in p for p in check(bad, "val"))


# ------------------------------------------------------------------------------ procedural decks
def _fresh_proc_deck(split: str, k: int):
    """A procedural deck built anew (no cache) from its seed."""
    from tools.synth.procedural import make_deck
    rng = np.random.default_rng([writer.PROC_SEED, writer.SPLIT_CODE[split], k])
    return make_deck(rng, writer.proc_source(split), name=f"proc/{split}-{k}")


def test_procedural_deck_is_reproducible_from_its_seed():
    a, b = _fresh_proc_deck("train", 5), _fresh_proc_deck("train", 5)
    assert a.index_box == b.index_box and np.array_equal(a.back, b.back)
    # faces are drawn on first use: the order of use must not matter
    for code in ("QH", "TC", "2S", "AD"):
        assert np.array_equal(a.faces[code], b.faces[code])
    for code in reversed(CARD_CODES):
        b.faces[code]
    assert all(np.array_equal(a.faces[c], b.faces[c]) for c in CARD_CODES)
    assert len(a.faces) == 52 and a.faces["KS"].shape[2] == 4 and 1.3 < a.aspect < 1.6
    c = _fresh_proc_deck("train", 6)
    assert c.index_box != a.index_box or not np.array_equal(c.faces["QH"], a.faces["QH"])


def test_procedural_train_and_val_share_no_font_and_no_shape_parameter():
    from tools.synth import procedural
    cfg = writer.deck_config()["procedural"]
    train = set(cfg["train_fonts"]) | set(cfg["train_suit_fonts"])
    val = set(cfg["val_fonts"]) | set(cfg["val_suit_fonts"])
    assert train and val and not train & val
    assert writer.proc_deck_count("train") >= 100 and writer.proc_deck_count("val") >= 20
    src = {s: writer.proc_source(s) for s in ("train", "val")}
    assert src["train"].band == "train" and src["val"].band == "val"
    for s in src.values():
        if procedural.available_fonts(s.rank_fonts):  # fonts-* packages installed
            assert procedural.available_fonts(s.suit_fonts)
            assert all(procedural.has_suit_glyphs(f) for f in procedural.available_fonts(s.suit_fonts))
    rng = np.random.default_rng(0)
    for name, (lo, hi) in procedural.SHAPE_RANGES.items():
        a, b = lo + procedural.VAL_BAND[0] * (hi - lo), lo + procedural.VAL_BAND[1] * (hi - lo)
        tr = [procedural.shape_param(rng, name, "train") for _ in range(200)]
        va = [procedural.shape_param(rng, name, "val") for _ in range(50)]
        assert all(lo <= v <= hi and not a < v < b for v in tr), name
        assert all(a <= v <= b for v in va), name
    with pytest.raises(ValueError, match="band"):
        procedural.ProcSource((), (), "test")


def test_wide_procedural_decks_are_train_only_and_share_no_val_font(monkeypatch):
    import re
    monkeypatch.undo()  # the real deck choice
    cfg = writer.deck_config()["procedural"]
    wide = set(cfg["wide_train_fonts"])
    assert len(wide) >= 50 and not wide & (set(cfg["val_fonts"]) | set(cfg["val_suit_fonts"]))
    # nor a clone of a val font: Liberation = Croscore (Arimo/Tinos/Cousine), Noto Sans ~ Open Sans,
    # URW Bookman = TeX Gyre Bonum
    assert not [f for f in wide if re.search("(?i)liberation|noto|bookman|bonum|arimo|tinos|cousine|opensans", f)]
    src = writer.proc_source("train", wide=True)
    assert set(src.rank_fonts) == set(cfg["train_fonts"]) | wide and src.band == "train"
    assert src.suit_fonts == writer.proc_source("train").suit_fonts
    plain, wide_deck = writer.proc_deck("train", 3), writer.proc_deck("train", 3, wide=True)
    assert wide_deck.name == "proc-wide/train-3" and plain.name == "proc/train-3"
    assert not np.array_equal(plain.faces["QH"], wide_deck.faces["QH"])
    with pytest.raises(ValueError, match="train-only"):
        writer.proc_source("val", wide=True)
    rng = np.random.default_rng(0)
    assert writer.pick_deck(rng, "train", ("proc-wide",)).name.startswith("proc-wide/train-")
    with pytest.raises(ValueError, match="train-only"):
        writer.pick_deck(rng, "val", ("proc-wide",))


def _ink_components_cross_box(face: np.ndarray, box: tuple) -> tuple[bool, list]:
    """(box holds ink, components of ink that touch the box but stick out of it)."""
    h, w = face.shape[:2]
    paper = face[h // 2, 4, :3].astype(int)
    ink = (np.abs(face[:, :, :3].astype(int) - paper).max(2) > 60) & (face[:, :, 3] > 0)
    x1, y1, x2, y2 = int(box[0] * w), int(box[1] * h), int(np.ceil(box[2] * w)), int(np.ceil(box[3] * h))
    n, lab, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    inside = set(np.unique(lab[y1:y2, x1:x2])) - {0}
    inside = {k for k in inside if stats[k][2] < 0.8 * w}  # not the card's outline
    out = [stats[k].tolist() for k in inside
           if stats[k][0] < x1 or stats[k][1] < y1 or stats[k][0] + stats[k][2] > x2 or stats[k][1] + stats[k][3] > y2]
    return bool(inside), out


@pytest.mark.parametrize("split", ["train", "val"])
def test_procedural_corner_boxes_hold_the_index(split):
    rng = np.random.default_rng(7)
    for k in rng.choice(writer.proc_deck_count(split), 6, replace=False):
        deck = _fresh_proc_deck(split, int(k))
        for code in rng.choice(CARD_CODES, 6, replace=False):
            face = deck.faces[str(code)]
            for which, f in (("top-left", face), ("bottom-right", face[::-1, ::-1])):
                holds, out = _ink_components_cross_box(f, deck.index_box)
                assert holds, f"{deck.name} {code}: no ink in the {which} index box"
                assert not out, f"{deck.name} {code}: ink crosses the {which} index box {deck.index_box}: {out}"


def test_close_up_scenes_show_big_corners_of_part_of_the_layout():
    deck = writer.proc_deck("train", 1)
    far = [render_scene(np.random.default_rng(k), deck) for k in range(6)]
    near = [render_scene(np.random.default_rng(k), deck, close_up=True) for k in range(6)]
    def corner_px(res):
        w = res.truth["width"]
        return np.median([(lab["box"][3] - lab["box"][1]) * 1280 / w for lab in res.labels])
    for res in near:
        c = res.truth["conditions"]
        assert c["close_up"] and c["partial_view"]
        assert c["card_width_px"] * 1280 / res.truth["width"] >= 100
        assert res.labels, "a close-up always shows some cards"
    assert not any(res.truth["conditions"]["close_up"] for res in far)
    # index corners twice the size of the whole-table view's, at least
    assert np.median([corner_px(r) for r in near]) > 2 * np.median([corner_px(r) for r in far])


def test_background_crops_lie_on_the_stock_and_faces_never_on_an_index(dataset):
    """``tools/train.py --negatives``: the classifier's no-index class is cut where no index lies."""
    from tools.train import _negative_boxes, read_labels

    stock_hits = 0
    for truth_path in sorted((dataset / "train" / "truth").glob("*.json")):
        truth = json.loads(truth_path.read_text())
        _, boxes = read_labels(dataset / "train" / "labels" / (truth_path.stem + ".txt"),
                               truth["width"], truth["height"])
        negatives = _negative_boxes(truth, boxes, 4, np.random.default_rng(0))
        assert 1 <= len(negatives) <= 4
        for box in negatives:
            c = (box[:2] + box[2:]) / 2
            inside = (boxes[:, :2] <= c).all(1) & (c <= boxes[:, 2:]).all(1)
            assert not inside.any(), (truth_path.name, box)
        stock = truth.get("stock") or {}
        if stock.get("present") and stock.get("quad"):
            c = (negatives[0][:2] + negatives[0][2:]) / 2
            assert cv2.pointPolygonTest(np.array(stock["quad"], np.float32), (float(c[0]), float(c[1])), False) >= 0
            stock_hits += 1
    assert stock_hits > 0


def test_a_table_cleared_of_every_card_renders_with_hands_over_it():
    # A won game leaves nothing on the table; a hand drawn over it once crashed the generator
    # (make_dataset.py --seed 31 stopped at about scene 1,550 of 2,400).
    deck = writer.proc_deck("train", 0)
    empty = {"pyramid": [[None] * (r + 1) for r in range(7)], "waste": [], "stock": 0, "loose": []}
    with_hands = 0
    for seed in range(12):
        res = render_scene(np.random.default_rng(seed), deck, spec=empty, hard=True)
        assert res.labels == [] and res.truth["pyramid_codes"] == empty["pyramid"]
        with_hands += bool(res.truth["hands"])
    assert with_hands == 0  # no card for a hand to reach for: no hand drawn


def test_assets_packed_for_a_machine_without_the_decks_render_the_same_cards(tmp_path, monkeypatch):
    # tools/pack_synth_assets.py: card faces and fonts travel to a GPU machine without the Debian decks
    import importlib.util

    import tools.pack_synth_assets as assets
    from tools.synth import art, procedural

    deck = procedural.make_deck(np.random.default_rng(5), writer.proc_source("train"), "aisleriot/fake")
    folder = tmp_path / "cache" / "aisleriot__fake"
    folder.mkdir(parents=True)
    for code, face in deck.faces.items():
        cv2.imwrite(str(folder / f"{code}.png"), face)
    (folder / "meta.json").write_text(json.dumps({"index_box": list(deck.index_box), "complete": True}))
    monkeypatch.setattr(art, "CACHE_DIR", tmp_path / "cache")

    def no_svg(name):
        raise AssertionError(f"the SVG of {name} was read")

    monkeypatch.setattr(art, "element_ids", no_svg)
    decks, fonts, size = assets.pack(tmp_path / "assets.tgz", decks=["aisleriot/fake"])
    assert decks == 1 and fonts >= 1 and size > 0
    faces, unpacked_fonts = assets.unpack(tmp_path / "assets.tgz", tmp_path / "there")
    assert (faces, unpacked_fonts) == (52, fonts)
    source = procedural.font_path(procedural.FALLBACK_FONT)
    if importlib.util.find_spec("fontTools"):  # cut to the glyphs the decks draw
        assert (tmp_path / "there" / "fonts" / source.name).stat().st_size < source.stat().st_size / 3
    loaded = art.load_svg_deck("aisleriot/fake", tmp_path / "there" / "cardart")  # no SVG, no rsvg-convert
    assert loaded.back is None and loaded.index_box == pytest.approx(deck.index_box)
    for code in ("AS", "TD", "KH"):
        a, b = loaded.faces[code].astype(int), deck.faces[code].astype(int)
        assert a.shape == b.shape and np.abs(a - b).mean() < 3  # WebP q92: close, not equal
    # a lower quality packs smaller (room in a device call), still the same faces roughly
    _, _, smaller = assets.pack(tmp_path / "assets-q60.tgz", decks=["aisleriot/fake"], quality=60)
    assert smaller < size
    # the fonts found there first draw the same rank
    stem = procedural.FALLBACK_FONT
    here = procedural.text_mask(stem, "10", 48)
    monkeypatch.setattr(procedural, "FONT_DIRS", [tmp_path / "there" / "fonts"])
    for cached in (procedural.font_path, procedural._font, procedural.text_mask):
        cached.cache_clear()
    try:
        assert str(procedural.font_path(stem)).startswith(str(tmp_path / "there"))
        assert np.array_equal(procedural.text_mask(stem, "10", 48), here)
    finally:
        monkeypatch.undo()
        for cached in (procedural.font_path, procedural._font, procedural.text_mask):
            cached.cache_clear()


def test_make_dataset_stops_at_its_time_limit_with_whole_scenes(tmp_path, capsys):
    mod = _make_dataset_tool()
    out = tmp_path / "ds"
    assert mod.main(["--seed", "3", "--count", "40", "--split", "train", "--out", str(out), "--decks", "proc",
                     "--crops", "0", "--time-limit", "0"]) == 0
    assert "(time limit reached)" in capsys.readouterr().out
    images = sorted((out / "train" / "images").iterdir())
    assert 1 <= len(images) < 40
    assert all((out / "train" / "labels" / f"{p.stem}.txt").exists() for p in images)  # whole scenes only
    assert "IN PROGRESS" in (out / "README.txt").read_text()
