"""Game records: undo/redo, reveal across the history, JSON files, the play command."""

from __future__ import annotations

import json
import random

import pytest

from companion.cli import main
from companion.errors import IllegalMoveError, InvalidMoveError
from companion.game import Deal, Game
from companion.moves import Move
from companion.rules import Rules


def test_undo_redo_and_branching():
    rules = Rules.preset("relaxed")
    game = Game(rules, Deal.random(rules, random.Random(11)))
    first = game.state
    game.play("draw")
    game.play("draw")
    assert game.can_undo and not game.can_redo
    game.undo()
    assert game.can_redo and len(game.moves) == 1
    game.play("draw")                                      # same move: the redo line survives
    game.undo()
    game.undo()
    assert game.state is first and not game.can_undo
    with pytest.raises(InvalidMoveError, match="nothing to undo"):
        game.undo()
    legal = [m for m in game.state.legal_moves() if m != Move.draw()]
    if legal:
        game.play(legal[0])                                # a different move drops the redo line
        assert not game.can_redo


def test_illegal_play_keeps_the_game():
    rules = Rules.preset("classic")
    game = Game(rules, Deal.random(rules, random.Random(3)))
    before = (game.state, game.moves)
    with pytest.raises(IllegalMoveError):
        game.play("recycle")
    assert (game.state, game.moves) == before


def test_save_and_load_atomically(tmp_path):
    rules = Rules.parse("relaxed,draw=3")
    rng = random.Random(5)
    game = Game(rules, Deal.random(rules, rng))
    for _ in range(15):
        moves = game.state.legal_moves()
        if not moves:
            break
        game.play(rng.choice(moves))
    game.undo()
    path = tmp_path / "game.json"
    game.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]   # no temporary left behind
    data = json.loads(path.read_text())
    assert data["rules"]["draw"] == 3 and data["moves"] == [str(m) for m in game.moves]
    loaded = Game.load(path)
    assert loaded.state == game.state and loaded.can_redo == game.can_redo
    loaded.redo()
    game.redo()
    assert loaded.state == game.state


def test_bad_record_names_the_move():
    rules = Rules.preset("relaxed")
    game = Game(rules, Deal.random(rules, random.Random(2)))
    data = game.to_json()
    data["moves"] = ["draw", "recycle"]
    with pytest.raises(InvalidMoveError, match="move 2 of the record"):
        Game.from_json(data)


def test_reveal_reaches_the_whole_history_and_the_record():
    rules = Rules.preset("relaxed")
    full = Deal.random(rules, random.Random(8))
    game = Game(rules, " ".join(str(full).split()[:28]))      # stock not seen yet
    game.reveal(full.stock[0])
    game.play("draw")
    game.reveal(full.stock[1])
    assert game.history[0].stock[:2] == full.stock[:2]
    assert game.state.waste[0] == (full.stock[0],) and game.state.stock[0] == full.stock[1]
    again = Game.from_json(game.to_json())
    assert again.state == game.state
    # learning a buried waste card through the state API
    game.play("draw")
    game.play("draw")
    state = game.state.reveal_waste(full.stock[2], 0, 0)
    game.learn(state)
    assert game.state.waste[0][-1] == full.stock[2]


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_play_command(capsys):
    rules = Rules.preset("relaxed")
    deal = Deal.random(rules, random.Random(1))
    code, out, err = run_cli(capsys, "play", "--rules", "relaxed", "--deal", str(deal), "--moves", "draw")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].strip() == str(deal.pyramid[0])          # the apex on top
    assert lines[6].split() == [str(c) for c in deal.pyramid[21:]]
    assert "waste (1): " + str(deal.stock[0]) in out and "moves: " in out and "score" in out
    code, out, err = run_cli(capsys, "play", "--rules", "relaxed", "--deal", str(deal), "--json",
                             "--moves", "draw draw")
    data = json.loads(out)
    assert data["waste"] == [[str(c) for c in deal.stock[:2]]] and data["result"] == "playing"


@pytest.mark.parametrize("argv,words", [
    (["--rules", "nope"], ["unknown rules preset 'nope'"]),
    (["--deal", "AS KS"], ["expected 52 cards, got 2"]),
    (["--moves", "recycle"], ["move 1", "recycle"]),
    (["--moves", "QQ+AS"], ["not a move"]),
])
def test_play_command_bad_input_exits_2(capsys, argv, words):
    options = {"--rules": "relaxed", "--deal": str(Deal.random(Rules.preset("relaxed"), random.Random(1)))}
    options[argv[0]] = argv[1]
    args = ["play"] + [x for kv in options.items() for x in kv]
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    for word in words:
        assert word in err


def test_play_command_save_load_and_interactive(capsys, tmp_path, monkeypatch):
    from companion.cli import play as play_cmd

    deal = Deal.random(Rules.preset("classic"), random.Random(4))
    path = tmp_path / "g.json"
    code, _, _ = run_cli(capsys, "play", "--rules", "classic", "--deal", str(deal), "--moves", "draw draw",
                         "--save", str(path))
    assert code == 0 and json.loads(path.read_text())["moves"] == ["draw", "draw"]
    code, out, _ = run_cli(capsys, "play", "--load", str(path), "--moves", "draw", "--json")
    assert json.loads(out)["moves"] == ["draw", "draw", "draw"]
    answers = iter(["draw", "QQ", "undo", "draw", "quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    game = Game(Rules.preset("classic"), deal)
    play_cmd._interactive(game)
    out = capsys.readouterr().out
    assert "not a move" in out and game.moves == (Move.draw(),)
