"""``pyramid-companion follow``: the JSON output shape, from a JSON-lines file of layouts."""

from __future__ import annotations

import json
import random

import pytest

from companion.cli import main
from companion.game import Deal, GameState
from companion.layout import SlotReading
from companion.playalong.script import layout_of
from companion.playalong.stream import layout_from_json, layout_to_json, read_layouts, write_layouts
from companion.rules import Rules


def scripted(tmp_path, preset="classic", seed=3, n=25, illegal=False):
    rules = Rules.preset(preset)
    deal = Deal.random(rules, random.Random(seed))
    state = GameState.initial(rules, deal)
    layouts = [layout_of(state, frame=0, stock_top="pile")]
    played = []
    rng = random.Random(seed)
    for i in range(n):
        moves = state.legal_moves()
        if not moves:
            break
        removals = [m for m in moves if m.kind == "remove"]
        m = rng.choice(removals) if removals else moves[-1]
        state = state.apply(m)
        played.append(str(m))
        layouts.append(layout_of(state, frame=10 * (i + 1), stock_top="pile"))
        if illegal and i == 3:
            # a covered card taken for a moment, then put back
            bad = layouts[-1].with_slot(0, 0, SlotReading.empty())
            layouts.append(type(bad)(bad.pyramid, bad.waste, bad.cells, bad.reserve, bad.stock_present,
                                     (), 10 * (i + 1) + 5))
            layouts.append(layout_of(state, frame=10 * (i + 1) + 7, stock_top="pile"))
    path = tmp_path / "game.jsonl"
    write_layouts(path, layouts)
    return path, deal, played, state


def test_layout_json_round_trip(tmp_path):
    path, deal, played, state = scripted(tmp_path, "standard", n=5)
    back = list(read_layouts(path))
    assert len(back) == 6
    for layout in back:
        again = layout_from_json(layout_to_json(layout))
        assert again == layout


@pytest.mark.parametrize("with_deal", [False, True])
def test_follow_layouts_json_shape(tmp_path, capsys, with_deal):
    path, deal, played, state = scripted(tmp_path, illegal=True)
    argv = ["follow", "--layouts", str(path), "--rules", "classic", "--json"]
    if with_deal:
        argv += ["--deal", " ".join(map(str, deal.pyramid))]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"moves", "events", "pyramid", "waste", "result"}
    assert out["moves"] == played
    assert [len(row) for row in out["pyramid"]] == list(range(1, 8))
    assert out["pyramid"] == [[None if c is None else str(c) for c in state.pyramid[r * (r + 1) // 2:(r + 1) * (r + 2) // 2]]
                              for r in range(7)]
    assert out["waste"] == [str(c) for c in state.waste[0]]
    assert out["result"] in ("won", "lost", "playing") and out["result"] == state.result
    for e in out["events"]:
        assert set(e) == {"frame", "kind", "text"}
        assert isinstance(e["frame"], int) and e["kind"] in ("move", "illegal", "check") and e["text"]
    illegal = [e for e in out["events"] if e["kind"] == "illegal"]
    assert len(illegal) == 1 and illegal[0]["frame"] == 45 and "covered" in illegal[0]["text"]


def test_follow_source_positional_jsonl(tmp_path, capsys):
    path, deal, played, state = scripted(tmp_path, "king-tut", n=10)
    assert main(["follow", str(path), "--rules", "king-tut", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["moves"] == played


def test_follow_unreadable_sources_exit_nonzero(tmp_path, capsys):
    assert main(["follow", str(tmp_path / "missing.mp4"), "--rules", "classic", "--json"]) == 2
    assert "missing.mp4" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pyramid": [["AS"]]}\n')
    assert main(["follow", "--layouts", str(bad), "--rules", "classic", "--json"]) == 2
    err = capsys.readouterr().err
    assert "frame 0" in err and "no stable view" in err  # the only layout: a 1-card pyramid
    bad.write_text('{"pyramid": [["AS"]]}\nnot json\n')
    assert main(["follow", "--layouts", str(bad), "--rules", "classic", "--json"]) == 2
    assert "line 2" in capsys.readouterr().err
    assert main(["follow", "--rules", "nope", "--layouts", str(bad)]) == 2


def test_follow_text_output(tmp_path, capsys):
    path, deal, played, state = scripted(tmp_path, n=6)
    assert main(["follow", "--layouts", str(path), "--rules", "classic"]) == 0
    out = capsys.readouterr().out
    assert "moves from" in out and "result:" in out


def test_follow_a_video_with_the_deal_tells_the_pipeline_each_cards_slot(tmp_path, monkeypatch):
    # ``follow SOURCE --deal``: the deal the person gave reaches the pipeline reading the frames
    # (``LayoutPipeline.know_deal``), as the app's confirmed deal does.
    cv2 = pytest.importorskip("cv2")
    np = pytest.importorskip("numpy")
    import companion.playalong.stream as stream
    from companion.vision.detections import Detections
    from companion.vision.pipeline import LayoutPipeline

    class Blind:
        def detect(self, image, angle=0.0):
            return Detections.empty()

    for k in range(3):
        cv2.imwrite(str(tmp_path / f"f{k}.png"), np.zeros((36, 64, 3), np.uint8))
    told = []
    monkeypatch.setattr(stream, "default_detector", lambda models=None: Blind())
    monkeypatch.setattr(LayoutPipeline, "know_deal", lambda self, pyramid: told.append(pyramid))
    deal = Deal.random(Rules.preset("classic"), random.Random(4))
    assert main(["follow", str(tmp_path), "--deal", " ".join(map(str, deal.pyramid))]) == 0
    assert told == [deal.pyramid]
