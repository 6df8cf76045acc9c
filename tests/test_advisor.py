"""Hidden-stock advisor, loss reasons and the solve/advise/stats command line."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from companion.cards import Card, format_cards
from companion.cli import main
from companion.game import Deal, GameState
from companion.rules import Rules
from companion.solver import solve
from companion.solver.advisor import rank_moves, wilson
from companion.solver.deals import random_deal
from companion.solver.play import play_hidden
from companion.solver.reasons import explain


def hidden_state(rules: Rules, cards, known_stock: int = 0) -> GameState:
    n = rules.pyramid_size + rules.reserve
    seen = list(cards[: n + known_stock]) + [None] * (len(cards) - n - known_stock)
    return GameState.initial(rules, Deal(rules, seen))


def test_wilson_interval():
    lo, hi = wilson(50, 100)
    assert lo < 0.5 < hi and abs((lo + hi) / 2 - 0.5) < 1e-9
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("preset", ["relaxed", "strict", "classic"])
def test_known_stock_ranking_is_exact(preset):
    rules = Rules.preset(preset)
    for i in range(6):
        rng = random.Random(f"adv{i}")
        cards = random_deal(rules, rng)
        state = GameState.initial(rules, Deal(rules, cards))
        for _ in range(rng.randint(0, 25)):  # somewhere into the game
            if state.is_won() or not state.legal_moves():
                break
            state = state.apply(rng.choice(state.legal_moves()))
        if state.is_won():
            continue
        ranking = rank_moves(state, random.Random(0))
        assert ranking.hidden == 0 and ranking.samples == 1
        root = solve(rules, state)
        for est in ranking.moves:
            after = solve(rules, state.apply(est.move))
            assert est.wins == int(bool(after.solvable)), est
            assert est.throws_win == (bool(root.solvable) and not after.solvable)
        assert (ranking.winnable == 1) == bool(root.solvable)


def test_fresh_deal_samples_and_seed():
    rules = Rules.preset("relaxed")
    cards = random_deal(rules, random.Random(11))
    state = hidden_state(rules, cards)
    a = rank_moves(state, random.Random(5), budget_seconds=0.0, min_samples=60, max_samples=60)
    b = rank_moves(state, random.Random(5), budget_seconds=0.0, min_samples=60, max_samples=60)
    assert a.hidden == rules.stock_size
    assert [(str(e.move), e.wins) for e in a.moves] == [(str(e.move), e.wins) for e in b.moves]
    assert {e.move for e in a.moves} == set(state.legal_moves())
    if a.note:  # the layout itself is blocked: proven for every order
        assert all(e.wins == 0 for e in a.moves)
    else:
        assert a.samples == 60
        wins = [e.wins for e in a.moves]
        assert wins == sorted(wins, reverse=True)
        for e in a.moves:
            lo, hi = e.interval
            assert lo <= e.win_probability <= hi


def test_hidden_game_is_played_on_the_real_deal():
    rules = Rules.preset("relaxed")
    for i in range(3):
        cards = random_deal(rules, random.Random(f"play{i}"))
        res = play_hidden(rules, cards, random.Random(i), budget_seconds=0.0, min_samples=8)
        if res.won:
            assert solve(rules, cards).solvable is True


def test_reason_names_the_blocking_card():
    rules = Rules.preset("relaxed")
    two, jacks = Card.parse("2C"), [Card.parse(f"J{s}") for s in "CDHS"]
    rest = [c for c in rules.deck_cards() if c is not two and c not in jacks]
    # slot (3,1) = index 7 lies on (2,0), (2,1), (1,0), (1,1): the jacks go there
    pyramid = [rest.pop(), jacks[0], jacks[1], jacks[2], jacks[3], rest.pop(), rest.pop(), two]
    pyramid += [rest.pop() for _ in range(28 - len(pyramid))]
    cards = pyramid + rest
    assert solve(rules, cards).solvable is False
    assert "2C covers all four jacks" in explain(rules, cards)


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_json_replays(capsys):
    rules = Rules.preset("relaxed")
    cards = random_deal(rules, random.Random(1))
    code, out, _ = run_cli(capsys, "solve", "--rules", "relaxed", "--deal", format_cards(cards), "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"solvable", "moves", "states", "seconds"}
    if data["solvable"]:
        state = GameState.initial(rules, Deal(rules, cards))
        for m in data["moves"]:
            state = state.apply(m)
        assert state.is_won()


@pytest.mark.parametrize("change,needle", [
    (lambda t: t[:51], "51"),
    (lambda t: [t[0]] + t[:51], "duplicate"),
    (lambda t: ["ZZ"] + t[1:], "ZZ"),
])
def test_solve_bad_deal_exits_2(capsys, change, needle):
    tokens = format_cards(random_deal(Rules.preset("classic"), random.Random(2))).split()
    code, out, err = run_cli(capsys, "solve", "--rules", "classic", "--deal", " ".join(change(tokens)), "--json")
    assert code == 2 and out == ""
    assert needle in err and len(err.strip().splitlines()) == 1


def test_unknown_preset_exits_2(capsys):
    deal = format_cards(random_deal(Rules.preset("classic"), random.Random(2)))
    code, _, err = run_cli(capsys, "solve", "--rules", "nosuch", "--deal", deal)
    assert code == 2 and "nosuch" in err


def test_python_m_companion_solve():
    deal = format_cards(random_deal(Rules.preset("relaxed"), random.Random(4)))
    out = subprocess.run([sys.executable, "-m", "companion", "solve", "--rules", "relaxed", "--deal", deal,
                          "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["solvable"] in (True, False)


def test_advise_and_stats_commands(capsys):
    rules = Rules.preset("relaxed")
    pyramid = format_cards(random_deal(rules, random.Random(3))[:28])
    code, out, _ = run_cli(capsys, "advise", "--rules", "relaxed", "--deal", pyramid, "--json",
                           "--samples", "20", "--budget-seconds", "0")
    assert code == 0 and json.loads(out)["hidden"] == 24
    code, out, _ = run_cli(capsys, "stats", "--rules", "relaxed", "--deals", "12", "--workers", "1", "--json",
                           "--advisor", "--advisor-games", "2", "--advisor-samples", "5")
    data = json.loads(out)
    assert code == 0 and data["deals"] == 12 and 0 <= data["ci95"][0] <= data["ci95"][1] <= 1
    assert data["advisor"]["games"] == 2


def test_sample_cap_fits_the_floor_into_the_limit():
    from companion.solver.advisor import MIN_SAMPLE_STATES, _sample_cap
    assert _sample_cap(10_000, 0, 0.0, 0.22, 200) == 10_000          # nothing measured yet
    assert _sample_cap(10_000, 10**6, 0.1, None, 100) == 10_000      # no limit
    assert _sample_cap(10_000, 10**6, 0.1, 0.22, 0) == 10_000        # floor already met
    # 10 M states/s, 0.12 s left for 200 samples: 6,000 states each
    assert _sample_cap(10_000, 10**6, 0.1, 0.22, 200) == 6_000
    assert _sample_cap(10_000, 10**6, 0.1, 0.22, 10) == 10_000       # fits at the full cap
    assert _sample_cap(10_000, 10**6, 0.3, 0.22, 50) == MIN_SAMPLE_STATES  # past the limit


def test_limit_keeps_the_floor_and_unlimited_matches_full_cap():
    rules = Rules.preset("strict")
    state = hidden_state(rules, random_deal(rules, random.Random("1-0")))
    kw = dict(budget_seconds=0.0, min_samples=40, max_samples=40)
    tight = rank_moves(state, random.Random(3), limit_seconds=0.0, **kw)
    assert tight.samples == 40 or tight.note  # the floor is kept, at a smaller cap
    full = rank_moves(state, random.Random(3), limit_seconds=None, **kw)
    full2 = rank_moves(state, random.Random(3), limit_seconds=None, **kw)
    assert [(e.move, e.wins) for e in full.moves] == [(e.move, e.wins) for e in full2.moves]
    if not full.note:  # a smaller cap can only turn wins into unknowns (counted as losses)
        assert tight.winnable <= full.winnable and tight.unknown >= full.unknown


def test_single_move_takes_the_root_verdict():
    from companion.solver.advisor import _verdicts
    from companion.solver.engine_bridge import position_from_engine
    rules = Rules.preset("relaxed")
    checked = 0
    for i in range(30):
        rng = random.Random(f"one{i}")
        state = GameState.initial(rules, Deal(rules, random_deal(rules, rng)))
        for _ in range(40):  # walk to positions with a single legal move
            legal = state.legal_moves()
            if state.is_won() or not legal:
                break
            if len(legal) == 1:
                (verdict,), _ = _verdicts(position_from_engine(rules, state), legal, 200_000)
                after = solve(rules, state.apply(legal[0]), max_states=200_000).solvable
                assert verdict == after, (i, str(legal[0]))
                checked += 1
            state = state.apply(rng.choice(legal))
    assert checked >= 5
