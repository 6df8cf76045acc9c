"""Focused tests of the rules engine: one hand-built deal per rule axis."""

from __future__ import annotations

import random

import pytest

from companion.cards import Card
from companion.errors import IllegalMoveError, InvalidDealError
from companion.game import Deal, GameState, geometry
from companion.moves import Move
from companion.rules import PRESETS, Rules


def C(code: str) -> Card:
    return Card.parse(code)


def pyr(**slots: str) -> str:
    """A 28-slot pyramid text with the named slots (``s21="AS"``) and ``*`` elsewhere."""
    cells = ["*"] * 28
    for name, code in slots.items():
        cells[int(name[1:])] = code
    return " ".join(cells)


def start(rules: str | Rules, pyramid: str = "", stock: str = "", reserve: str = "") -> GameState:
    r = Rules.parse(rules) if isinstance(rules, str) else rules
    return GameState.initial(r, Deal.build(r, pyramid=pyramid, stock=stock, reserve=reserve))


def play(state: GameState, moves: str) -> GameState:
    for m in moves.split():
        state = state.apply(m)
    return state


def illegal(state: GameState, move: str) -> str:
    with pytest.raises(IllegalMoveError) as info:
        state.apply(move)
    reason = state.why_illegal(move)
    assert reason == str(info.value)
    return reason


# --- deals --------------------------------------------------------------------------------

def test_deal_round_trip_and_parts():
    rules = Rules.preset("relaxed")
    deal = Deal.random(rules, random.Random(7))
    assert Deal.parse(str(deal), rules) == deal
    assert eval(repr(deal), {"Deal": Deal, "Rules": Rules}) == deal
    assert len(deal.pyramid) == 28 and len(deal.stock) == 24 and deal.reserve == ()
    assert deal.is_complete and deal.cards == deal.pyramid + deal.stock


@pytest.mark.parametrize("mutate,words", [
    (lambda t: t[:-1], ["expected 52 cards, got 51"]),
    (lambda t: t[:5] + [t[3]] + t[6:], ["duplicate card", "cards 4 and 6"]),
    (lambda t: t[:2] + ["1X"] + t[3:], ["card 3 of the deal", "'1X'"]),
    (lambda t: t[:27] + ["??"] + t[28:], ["card 28", "face up"]),
])
def test_deal_errors_name_the_offending_part(mutate, words):
    rules = Rules.preset("relaxed")
    tokens = str(Deal.random(rules, random.Random(1))).split()
    with pytest.raises(InvalidDealError) as info:
        Deal.parse(" ".join(mutate(tokens)), rules)
    for word in words:
        assert word in str(info.value)


def test_spanish_deal_rejects_queens_and_counts_48():
    rules = Rules.preset("spanish")
    deal = Deal.random(rules, random.Random(2))
    assert len(deal) == 48 and all(c.rank != 12 for c in deal.cards)
    tokens = str(deal).split()
    tokens[10] = "QS"
    with pytest.raises(InvalidDealError) as info:
        Deal.parse(" ".join(tokens), rules)
    assert "QS" in str(info.value) and "not in the 48-card deck" in str(info.value)
    with pytest.raises(InvalidDealError, match="expected 48 cards, got 52"):
        Deal.parse(str(Deal.random(Rules.preset("relaxed"), random.Random(1))), rules)


def test_pyramid_only_deal_leaves_the_stock_unknown():
    rules = Rules.preset("relaxed")
    full = Deal.random(rules, random.Random(3))
    deal = Deal.parse(" ".join(str(full).split()[:28]), rules)
    assert not deal.is_complete and deal.stock == (None,) * 24
    assert deal.unknown_cards() == frozenset(full.stock)
    assert Deal.parse(str(deal), rules) == deal


# --- geometry -------------------------------------------------------------------------------

def test_geometry_round_trip_and_covers():
    for s in range(28):
        assert geometry.slot(*geometry.row_col(s)) == s
    assert geometry.covers(0) == (1, 2)
    assert geometry.covers(15) == (21, 22)
    assert geometry.covers(21) == ()
    assert geometry.exposed(15, (1 << 21) | (1 << 22))
    assert not geometry.exposed(15, 1 << 21)


def test_inverted_covering():
    assert geometry.covers(0, inverted=True) == ()
    assert geometry.covers(1, inverted=True) == (0,)
    assert geometry.covers(4, inverted=True) == (1, 2)
    assert geometry.covers(3, inverted=True) == (1,)       # row ends lie under one card
    state = start("triangle", pyr(s0="KS", s1="QH", s2="AD"))
    assert state.available() & set(state.deal.pyramid) == {C("KS")}  # only the lone card is open
    assert illegal(state, "QH+AD") == "QH+AD: QH is covered by KS; AD is covered by KS"
    state = state.apply("KS")
    assert {C("QH"), C("AD")} <= state.available()
    state = state.apply("QH+AD")
    assert state.exposed_mask == 0b111000                   # slots 3..5: the whole third row


def test_six_rows():
    rules = Rules.preset("small")
    assert rules.pyramid_size == 21 and rules.stock_size == 31
    state = GameState.initial(rules, Deal.random(rules, random.Random(4)))
    assert len(state.pyramid) == 21 and len(state.stock) == 31
    assert state.exposed_mask == sum(1 << s for s in range(15, 21))


# --- moves and reasons ----------------------------------------------------------------------

def test_initial_classic_only_waste_top_plays():
    state = start("classic", pyr(s21="QH"), stock="AS 5D")
    assert C("AS") not in state.available()                  # stock top face down in classic
    reason = illegal(state, "QH+AS")
    assert reason == "QH+AS: AS is on top of the stock, which does not play under these rules (draw it first)"
    state = state.apply("draw")
    assert state.waste == ((C("AS"),),) and C("AS") in state.available()
    assert Move.parse("QH+AS") in state.legal_moves()
    state = state.apply("as+qh")
    assert state.pyramid[21] is None and {C("QH"), C("AS")} <= state.removed


def test_covered_and_sum_reasons():
    state = start("relaxed", pyr(s0="QH", s1="7C", s2="2D", s21="AS", s22="5S"))
    assert illegal(state, "QH+AS") == "QH+AS: QH is covered by 7C and 2D"
    assert illegal(state, "AS+5S").startswith("5S+AS do not make 13 (5 + 1 = 6)")
    assert "only a card worth 13" in illegal(state, "5S")
    assert illegal(state, "recycle") == "recycle: the stock still holds 24 cards"


def test_king_alone_and_pair_in_either_order():
    state = start("relaxed", pyr(s21="KD", s22="9H", s23="4C"))
    moves = state.legal_moves()
    assert Move.parse("KD") in moves and Move.parse("4C+9H") in moves
    assert state.apply("9H+4C") == state.apply("4C+9H")


def test_stock_waste_pairs_axis():
    relaxed = play(start("relaxed", stock="QH AS"), "draw")      # waste QH, stock top AS
    assert relaxed.stock[0] == C("AS") and relaxed.waste[0][-1] == C("QH")
    assert Move.parse("QH+AS") in relaxed.legal_moves()
    after = relaxed.apply("QH+AS")
    assert after.waste == ((),) and len(after.stock) == 22
    no_pairs = play(start("relaxed,stock_waste_pairs=false", stock="QH AS"), "draw")
    assert illegal(no_pairs, "QH+AS") == (
        "QH+AS: two cards from outside the pyramid never pair under these rules")


def test_tuts_tomb_pairs_a_card_with_its_only_cover():
    layout = pyr(s15="QH", s21="KS", s22="AS")
    tut = play(start("tuts-tomb", layout), "KS")
    assert Move.parse("QH+AS") in tut.legal_moves()
    after = tut.apply("QH+AS")
    assert after.pyramid[15] is None and after.pyramid[22] is None
    plain = play(start("classic", layout), "KS")
    assert illegal(plain, "QH+AS") == "QH+AS: QH is covered by AS"
    # with both covers still there the quirk does not apply
    both = start("tuts-tomb", pyr(s15="QH", s22="AS"))
    assert "QH is covered by" in illegal(both, "QH+AS")


def test_draw_three_with_short_stock_and_recycle_order():
    state = start("king-tut,rows=6")                          # 31 stock cards: last draw takes 1
    order = state.stock
    for _ in range(10):
        state = state.apply("draw")
    assert len(state.stock) == 1 and state.waste[0] == order[:30]
    assert state.available() & set(order) == {order[29]}       # only the waste top plays
    state = state.apply("draw")
    assert state.stock == () and state.waste[0][-1] == order[30]
    state = state.apply("recycle")
    assert state.stock == order and state.pass_number == 2 and state.recycles_left is None


def test_three_waste_piles():
    state = start("apophis", stock="QH AS 5C 8D 7H")
    state = state.apply("draw")
    assert state.waste == ((C("QH"),), (C("AS"),), (C("5C"),))
    assert {C("QH"), C("AS"), C("5C")} <= state.available()
    assert Move.parse("QH+AS") in state.legal_moves()        # waste tops pair with each other
    state = state.apply("QH+AS").apply("draw")
    assert state.waste == ((C("8D"),), (C("7H"),), (C("5C"), state.waste[2][-1]))
    while state.stock:
        state = state.apply("draw")
    cards = [c for pile in state.waste for c in pile]
    state = state.apply("recycle")
    original = [c for c in Deal.build(state.rules, stock="QH AS 5C 8D 7H").stock if c in cards]
    assert list(state.stock) == original                       # the deal's order, minus removed


def test_free_cell():
    state = start("ancient-egypt", pyr(s21="QH", s15="8C"), stock="AS")
    state = state.apply("QH>cell")
    assert state.cells == (C("QH"),) and state.pyramid[21] is None
    assert C("QH") in state.available()
    assert illegal(state, "JC>cell") == "JC>cell: every free cell is full"
    state = state.apply("draw")
    assert Move.parse("QH+AS") in state.legal_moves()
    state = state.apply("QH+AS")
    assert state.cells == (None,)
    assert "no free cells" in illegal(start("relaxed", pyr(s21="QH")), "QH>cell")


def test_card_in_cell_does_not_clear_the_pyramid():
    won, moves = _clear_pyramid(Rules.preset("relaxed"))
    rules = Rules.parse("relaxed,free_cells=1")
    state = GameState.initial(rules, won.deal)
    for move in moves[:-1]:
        state = state.apply(move)
    last = moves[-1]
    parked = next(c for c in last.cards if c in state.deal.pyramid)
    state = state.apply(f"{parked}>cell")
    assert not state.is_won() and not state.pyramid_cleared() and state.cleared_pass == 0
    state = state.apply(last)                               # the parked card plays from its cell
    assert state.is_won() and state.cleared_pass == state.pass_number and state.cells == (None,)


@pytest.mark.parametrize("preset,recycles", [("strict", 0), ("standard", 2), ("classic", None)])
def test_recycle_limits(preset, recycles):
    state = start(preset)
    for done in range(3):
        while state.stock:
            state = state.apply("draw")
        if recycles is not None and done >= recycles:
            assert "no passes left" in illegal(state, "recycle")
            assert state.recycles_left == 0
            assert state.result == "lost" or state.legal_moves()
            return
        state = state.apply("recycle")
        assert state.pass_number == done + 2
    assert recycles is None and state.recycles_left is None


def test_spanish_sums_twelve():
    state = start("spanish", " ".join(["*"] * 21) + " KD JH AS 5S 7D 6C 4H")
    moves = state.legal_moves()
    assert Move.parse("KD") in moves                          # the Spanish king is worth 12
    assert Move.parse("JH+AS") in moves and Move.parse("5S+7D") in moves
    assert illegal(state, "6C+7D").startswith("7D+6C do not make 12")


def test_face_down_rows_and_reveal():
    rules = Rules.preset("thirteen")
    deal = Deal.random(rules, random.Random(5))
    state = GameState.initial(rules, deal)
    assert [state.visible(s) for s in range(28)] == [False] * 21 + [True] * 7
    # a face-down card not known yet ('??') becomes visible once both cards on it are gone
    partial = start(rules, pyr(s15="??", s21="KS", s22="KH"))
    hidden = sorted(partial.unseen())[0]
    assert len(partial.unseen()) == 1 and not partial.visible(15)
    exposed = play(partial, "KS KH")
    assert exposed.visible(15) and exposed.pyramid[15] is None
    assert hidden not in exposed.available() and exposed.result == "playing"
    seen = exposed.reveal(hidden, slot=15)
    assert seen.pyramid[15] == hidden and hidden in seen.available()
    assert not seen.unseen() and seen.key() == exposed.key()


def test_reveal_stock_cards():
    rules = Rules.preset("relaxed")
    full = Deal.random(rules, random.Random(6))
    state = GameState.initial(rules, Deal.parse(" ".join(str(full).split()[:28]), rules))
    assert state.stock[0] is None and len(state.unseen()) == 24
    assert Move.draw() in state.legal_moves()
    state = state.reveal(full.stock[0])
    assert state.stock[0] == full.stock[0] and len(state.unseen()) == 23
    with pytest.raises(IllegalMoveError, match="already known"):
        state.reveal(full.stock[0])
    state = state.apply("draw")
    assert state.waste[0] == (full.stock[0],) and state.stock[0] is None


def test_reserve_row_and_giza_piles():
    state = start("reserve", pyr(s21="QH"), reserve="AS 2C JD")
    moves = state.legal_moves()
    assert Move.parse("QH+AS") in moves and Move.parse("JD+2C") in moves   # reserve cards pair too
    state = state.apply("JD+2C")
    assert state.reserve[:3] == (C("AS"), None, None)
    giza = start("giza", reserve=" ".join(["*"] * 8 + ["QH"] + ["*"] * 7 + ["AS"]))
    assert giza.stock == () and C("QH") not in giza.available()
    assert "reserve pile under" in illegal(giza, "QH+AS")
    assert C("AS") in giza.available()


def test_won_and_strict_versus_relaxed():
    relaxed, game_moves = _clear_pyramid(Rules.preset("relaxed"))
    assert relaxed.result == "won" and relaxed.is_won() and relaxed.legal_moves() == []
    strict_rules = Rules.preset("standard")
    state = GameState.initial(strict_rules, relaxed.deal)
    for m in game_moves:
        state = state.apply(m)
    assert state.pyramid_cleared()
    assert state.is_won() == (state.cards_left() == 0)


def _clear_pyramid(rules: Rules) -> tuple[GameState, list[Move]]:
    """Greedy playouts on seeded deals until one clears the pyramid."""
    for seed in range(500):
        rng = random.Random(seed)
        state = GameState.initial(rules, Deal.random(rules, rng))
        moves: list[Move] = []
        while state.result == "playing":
            legal = state.legal_moves()
            removals = [m for m in legal if m.is_removal]
            move = rng.choice(removals or legal)
            state = state.apply(move)
            moves.append(move)
        if state.result == "won":
            return state, moves
    raise AssertionError("no seed cleared the pyramid")


def test_every_preset_has_a_working_initial_state():
    for name, rules in PRESETS.items():
        state = GameState.initial(rules, Deal.random(rules, random.Random(9)))
        assert state.result == "playing", name
        assert state.legal_moves(), name
        assert str(state)


def test_states_are_read_only_and_hashable():
    state = start("relaxed")
    with pytest.raises(AttributeError):
        state.pyramid = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.result = "won"  # type: ignore[misc]
    assert len({state, state.apply("draw"), start("relaxed")}) == 2


def test_reveal_at_a_place():
    rules = Rules.parse("king-tut")
    full = Deal.random(rules, random.Random(12))
    state = GameState.initial(rules, Deal.parse(" ".join(str(full).split()[:28]), rules))
    state = state.apply("draw")                       # three unknown cards onto the waste
    assert state.waste[0] == (None, None, None)
    seen = state.reveal_waste(full.stock[1], 0, 1)    # the middle card of the fan
    assert seen.waste[0] == (None, full.stock[1], None)
    seen = seen.reveal_stock(full.stock[5], 2)        # stock: positions 3, 4, 5 -> depth 2
    assert seen.stock[2] == full.stock[5]
    with pytest.raises(IllegalMoveError, match="already known"):
        seen.reveal_stock(full.stock[6], 2)
    assert seen.key() == state.key() and seen.result == "playing"


def test_unknown_stock_is_never_called_lost():
    rules = Rules.preset("classic")
    full = Deal.random(rules, random.Random(13))
    state = GameState.initial(rules, Deal.parse(" ".join(str(full).split()[:28]), rules))
    for _ in range(24):
        state = state.apply("draw")
    assert state.result == "playing"                  # the unknown waste cards may still pair


def test_fill_unknown_samples_the_unseen_cards():
    rules = Rules.preset("thirteen")
    full = Deal.random(rules, random.Random(14))
    tokens = str(full).split()
    tokens[3] = "??"
    for i in range(28, 52):
        tokens[i] = "??"
    state = GameState.initial(rules, Deal.parse(" ".join(tokens), rules)).apply("draw")
    sample = state.fill_unknown(random.Random(1))
    assert sample.deal.is_complete and sample.key() == state.key() and not sample.unseen()
    assert sorted(c for c in sample.deal.cards) == sorted(rules.deck_cards())
    assert {sample.deal.cards[3], *sample.deal.stock} == set(state.unseen())
    assert GameState.initial(rules, full).fill_unknown(random.Random(2)).deal == full
