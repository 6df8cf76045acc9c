"""Rendered whole games: scripts are real games, timelines match them, committed samples are followed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.game import Deal, GameState
from companion.moves import Move
from companion.rules import Rules
from tools.games.script import ILLEGAL, MOVE, illegal_attempt, make_script, physical_ok, table_spec
from tools.games.timeline import Planner

GAMES = Path(__file__).resolve().parents[1] / "datasets" / "games"
SAMPLES = sorted(d for d in GAMES.iterdir() if (d / "truth.json").exists()) if GAMES.is_dir() else []


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_script_is_a_won_game_with_really_illegal_attempts(seed):
    script = make_script("classic", seed, p_illegal=0.2)
    rules = Rules.preset("classic")
    state = GameState.initial(rules, Deal.parse(str(script.deal), rules))
    illegal = 0
    for step in script.steps:
        assert step.before == state
        if step.kind == ILLEGAL:
            illegal += 1
            assert state.why_illegal(Move.parse(step.text)) is not None, step.text
            assert step.after == state and step.reason
            # only cards the camera can see are taken
            assert all(c in state.available() for c in step.cards)
        else:
            assert step.kind == MOVE
            state = state.apply(step.text)  # raises when the line is not legal
            assert step.after == state
    assert state.result == "won"
    assert 1 <= illegal <= 3
    assert script.to_json()["moves"] == [s.text for s in script.steps if s.kind == MOVE]


def test_short_script_stops_and_keeps_its_illegal_attempt():
    script = make_script("classic", 5, max_moves=8)
    assert len(script.moves) == 8
    assert any(s.kind == ILLEGAL for s in script.steps)
    assert script.final.result == "playing"


def test_rules_the_renderer_cannot_lay_out_are_refused():
    assert physical_ok(Rules.preset("classic")) is None
    assert "stock" in physical_ok(Rules.preset("standard"))
    with pytest.raises(ValueError, match="king-tut"):
        make_script("king-tut", 0)


def test_illegal_attempt_names_the_rules_reason():
    import random
    rules = Rules.preset("classic")
    state = GameState.initial(rules, Deal.random(rules, random.Random(3)))
    text, kind, reason = illegal_attempt(state, random.Random(0))
    assert not state.is_legal(Move.parse(text)) and reason == state.why_illegal(Move.parse(text))


def test_timeline_frames_follow_the_script():
    script = make_script("classic", 4, max_moves=10)
    plan = Planner(script, fps=10, hold=8, seed=4).build()
    assert [m["move"] for m in plan.moves] == script.moves
    ranges = [m["frames"] for m in plan.moves] + [i["frames"] for i in plan.illegal]
    ranges.sort()
    for (a, b), (c, _) in zip(ranges, ranges[1:]):
        assert a <= b < c  # steps do not overlap
    assert ranges[-1][1] == len(plan.frames) - 1
    # the last frames are the final table, still
    assert plan.frames[-1].spec == table_spec(script.final) and plan.frames[-1].hand is None
    for ill in plan.illegal:  # while the cards are off, the table misses them; then they are back
        a, b = ill["off_frames"]
        cards = ill["cards"].split("+")
        shown = json.dumps(plan.frames[a].spec)
        assert not any(f'"{c}"' in shown for c in cards)
        assert all(f'"{c}"' in json.dumps(plan.frames[ill["frames"][1]].spec) for c in cards)


def test_game_frames_truth_only_render(tmp_path):
    pytest.importorskip("cv2")
    from tools.games.render import load_game, render_game
    try:
        truth = render_game(tmp_path / "g", 3, "classic", video="none", max_moves=4, hold=8)
    except Exception as exc:  # card art packages missing on this machine
        pytest.skip(f"card art unavailable: {exc}")
    truth2, frames = load_game(tmp_path / "g")
    assert truth2 == truth and len(frames) == truth["frames"]
    first = frames[0]["labels"]
    # the still deal shows 28 pyramid cards: each one's top-left index at least
    assert len({lab[0] for lab in first}) >= 28
    hands = [f for f in frames if f["hand"]]
    assert hands and all(len(f["labels"]) <= len(first) + 2 for f in hands)


@pytest.mark.skipif(not SAMPLES, reason="no committed sample games")
@pytest.mark.parametrize("folder", SAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("known_deal", [True, False], ids=["deal", "no-deal"])
def test_committed_sample_followed_end_to_end(folder, known_deal):
    """The fake detector reads each frame's truth labels (with noise), the real pipeline, fuser and
    follower do the rest; the whole deal is given as with ``follow --deal``, or the first stable
    layout is the deal as recognised."""
    from tools.games.follow import follow_game, score
    truth = json.loads((folder / "truth.json").read_text())
    assert (folder / truth["video"]).is_file()
    run = follow_game(folder, known_deal=known_deal)
    s = score(truth, run)
    assert run.moves == [m["move"] for m in truth["moves"]]
    assert s["phantom"] == 0
    assert s["illegal_reported"] == s["illegal"] >= 1
    assert len(s["recognise_frame_ms"]) == s["frames"] == len(run.recognise_each) > 0  # the per-frame floor's figures


def test_moves_matched_in_order_counts_the_longest_common_run():
    from tools.games.follow import matched_in_order
    want = ["QS+AH", "7D+6D", "KS", "draw", "draw"]
    assert matched_in_order(want, want) == 5
    assert matched_in_order(want, ["7D+6D", "KS", "QS+AH", "draw", "draw"]) == 4  # one move out of order
    assert matched_in_order(want, ["QS+AH", "7D+6D", "KS", "draw"]) == 4  # a draw missed
    assert matched_in_order(want, ["QS+AH", "JH+2D", "7D+6D", "KS", "draw", "draw"]) == 5  # a phantom move
    assert matched_in_order(want, []) == 0


def test_deal_checks_count_what_the_person_is_asked_to_check():
    """The deal as first read against the truth: a misread with a close runner-up is flagged, a sure
    misread is silent, a slot with no card read is flagged."""
    from companion.layout import SlotReading, TableLayout
    from tools.games.follow import deal_checks
    rules = Rules.parse("classic")
    deal = " ".join(str(c) for c in rules.deck_cards())
    cards = list(GameState.initial(rules, Deal.parse(deal, rules)).pyramid)
    assert deal_checks({"rules": "classic", "deal": deal}, None)["deal_wrong"] is None
    flat = [SlotReading(c, 0.95, ((c, 0.95),)) for c in cards]
    never = [c for c in rules.deck_cards() if c not in cards]
    flat[3] = SlotReading(never[0], 0.9, ((never[0], 0.9), (cards[3], 0.4)))  # misread, truth a close second
    flat[5] = SlotReading(never[1], 0.9, ((never[1], 0.9),))                  # misread surely: silent
    flat[9] = SlotReading.empty(0.0)                                         # no card read
    rows, k = [], 0
    for r in range(rules.rows):
        rows.append(tuple(flat[k:k + r + 1]))
        k += r + 1
    got = deal_checks({"rules": "classic", "deal": deal}, TableLayout(tuple(rows)))
    assert got == {"deal_wrong": 3, "deal_flagged": 2, "deal_silent": 1}


def test_checked_deal_corrects_what_the_app_flags_and_what_it_refuses():
    """The person corrects each flagged wrong slot; a correction refused because the card is read
    at another slot corrects that slot too; an unflagged misread stays; the stock is unknown."""
    from companion.layout import SlotReading, TableLayout
    from tools.games.follow import checked_deal_text
    rules = Rules.parse("classic")
    deal = " ".join(str(c) for c in rules.deck_cards())
    cards = list(GameState.initial(rules, Deal.parse(deal, rules)).pyramid)
    never = [c for c in rules.deck_cards() if c not in cards]
    flat = [SlotReading(c, 0.95, ((c, 0.95),)) for c in cards]
    flat[3] = SlotReading(never[0], 0.9, ((never[0], 0.9), (cards[3], 0.4)))  # flagged: corrected
    flat[5] = SlotReading(never[1], 0.9, ((never[1], 0.9),))                  # silent: stays
    flat[9] = SlotReading.empty(0.0)                                         # flagged: filled in
    flat[12] = SlotReading(cards[20], 0.3, ((cards[20], 0.3),))               # flagged, its card ...
    flat[20] = SlotReading(cards[12], 0.95, ((cards[12], 0.95),))             # ... read surely here
    rows, k = [], 0
    for r in range(rules.rows):
        rows.append(tuple(flat[k:k + r + 1]))
        k += r + 1
    text = checked_deal_text({"rules": "classic", "deal": deal}, TableLayout(tuple(rows))).split()
    want = [str(c) for c in cards]
    want[5] = str(never[1])
    assert text[:28] == want and text[28:] == ["??"] * rules.stock_size


@pytest.mark.skipif(not SAMPLES, reason="no committed sample games")
def test_a_recorded_game_replays_to_the_same_record(tmp_path):
    """``evaluate_follow.py --record`` then ``--replay``: the stable layouts kept, run through the
    follower again, give the same moves, events and figures as following the video did."""
    from tools.games.follow import follow_game, score
    from tools.games.replay import load_recording, replay, save_recording
    folder = SAMPLES[0]
    truth = json.loads((folder / "truth.json").read_text())
    calls: list = []
    run = follow_game(folder, checked_deal=True, log=calls)
    assert [c[0] for c in calls][:1] == ["new"] and calls[-1] == ("finish",)
    assert any(c[0] == "feed" for c in calls) and any(c[0] == "tick" for c in calls)
    save_recording(tmp_path / "g.pkl", calls, run, "checked")
    again = replay(load_recording(tmp_path / "g.pkl"), Rules.parse(truth["rules"]))
    assert again.moves == run.moves and [(e.frame, e.kind, e.text) for e in again.events] == [
        (e.frame, e.kind, e.text) for e in run.events]
    a, b = score(truth, run), score(truth, again)
    for d in (a, b):
        d.pop("follow_ms")
    assert a == b


def test_evaluate_follow_replays_what_it_recorded(tmp_path, capsys):
    from tools import evaluate_follow
    if not SAMPLES:
        pytest.skip("no committed sample games")
    folder = SAMPLES[0]
    assert evaluate_follow.main([str(folder), "--detector", "fake", "--record", str(tmp_path / "rec")]) == 0
    followed = capsys.readouterr().out
    assert evaluate_follow.main([str(folder), "--replay", str(tmp_path / "rec")]) == 0
    replayed = capsys.readouterr().out
    line = next(x for x in followed.splitlines() if x.startswith("every move recovered"))
    assert line in replayed.splitlines()
    assert evaluate_follow.main([str(folder), "--replay", str(tmp_path / "rec"), "--deal", "checked"]) == 2
    assert "was recorded with --deal layout" in capsys.readouterr().err
    assert evaluate_follow.main([str(folder), "--replay", str(tmp_path / "none")]) == 2
    assert "no recording" in capsys.readouterr().err


def test_evaluate_follow_replays_the_frames_it_recorded(tmp_path, capsys):
    """``--record-frames`` then ``--replay-frames``: every frame's reading kept, run through the fuser
    and follower again, gives the same figures; a fuser changed meanwhile would give its own."""
    from tools import evaluate_follow
    from tools.games.follow import follow_game
    from tools.games.replay import load_frames, replay_frames
    if not SAMPLES:
        pytest.skip("no committed sample games")
    folder = SAMPLES[0]
    assert evaluate_follow.main([str(folder), "--detector", "fake", "--deal", "checked",
                                 "--record-frames", str(tmp_path / "frames")]) == 0
    followed = capsys.readouterr().out
    assert evaluate_follow.main([str(folder), "--deal", "checked", "--replay-frames", str(tmp_path / "frames")]) == 0
    replayed = capsys.readouterr().out
    for start in ("every move recovered", "games with a phantom", "illegal removals", "deal as first"):
        line = next(x for x in followed.splitlines() if x.startswith(start))
        assert line in replayed.splitlines()
    record = load_frames(tmp_path / "frames" / f"{folder.name}.pkl")
    run = replay_frames(record, folder)
    assert run.frames == len(record["readings"]) and run.recognise_each == record["recognise_each"]
    assert run.moves
    # the kept readings are what is replayed: the first frame's reading throughout is a table
    # nobody touched
    still = dict(record, readings=[record["readings"][0]] * len(record["readings"]))
    assert replay_frames(still, folder).moves == []
    with pytest.raises(ValueError, match="readings kept for a game of"):
        follow_game(folder, readings=record["readings"][:-1])
    assert evaluate_follow.main([str(folder), "--deal", "layout", "--replay-frames", str(tmp_path / "frames")]) == 2
    assert "was recorded with --deal checked" in capsys.readouterr().err


def test_score_counts_phantom_moves_and_how_many_are_draws():
    from types import SimpleNamespace
    from tools.games.follow import FollowRun, score
    rules = Rules.parse("classic")
    deal = " ".join(str(c) for c in rules.deck_cards())
    truth = {"rules": "classic", "deal": deal, "illegal": [], "hold": 10,
             "moves": [{"move": m, "frames": [i, i + 1]} for i, m in enumerate(["draw", "draw"])]}
    moves = [Move.draw()] * 4 + [Move.parse("KS")]
    run = FollowRun(follower=SimpleNamespace(moves=moves, events=[]), frames=10, recognise_each=[0.01] * 10)
    s = score(truth, run)
    assert (s["matched"], s["phantom"], s["phantom_draws"]) == (2, 3, 2)
