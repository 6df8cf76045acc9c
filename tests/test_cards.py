import pytest

from companion.cards import CARD_CODES, DECK, Card, check_unique, parse_cards
from companion.errors import InvalidCardError, InvalidDealError
from companion.moves import Move
from companion.errors import InvalidMoveError
from companion.rules import PRESETS, Rules
from companion.errors import InvalidRulesError


@pytest.mark.parametrize("text,code", [
    ("QH", "QH"), ("10D", "TD"), ("td", "TD"), ("q♥", "QH"), ("A♠", "AS"), ("1c", "AC"), (" 7s ", "7S"),
])
def test_card_parse_forms(text, code):
    assert str(Card.parse(text)) == code


def test_card_round_trip_and_repr():
    for card in DECK:
        assert Card.parse(str(card)) is card
        assert eval(repr(card)) is card
    assert len(set(DECK)) == 52
    assert CARD_CODES[Card.parse("QH").index] == "QH"


@pytest.mark.parametrize("bad", ["", "Q", "1X", "11H", "ZZ", "QHH", "0S"])
def test_card_parse_errors_quote_input(bad):
    with pytest.raises(InvalidCardError) as info:
        Card.parse(bad)
    assert repr(bad) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_parse_cards_names_position_and_duplicates():
    with pytest.raises(InvalidDealError, match="card 2"):
        parse_cards("QH XX")
    with pytest.raises(InvalidDealError, match="duplicate card QH"):
        check_unique(parse_cards("QH AS QH"))


def test_moves_parse_print():
    assert str(Move.parse("as+qh")) == "QH+AS"
    assert Move.parse("QH+AS") == Move.parse("AS+QH")
    assert str(Move.parse("10h + 3c")) == "TH+3C"
    assert str(Move.parse("KD")) == "KD"
    assert Move.parse("draw") is Move.draw()
    assert str(Move.parse("Recycle")) == "recycle"
    assert str(Move.parse("QH>cell")) == "QH>cell"
    assert eval(repr(Move.parse("QH+AS"))) == Move.parse("QH+AS")
    assert Move.parse("QH+AS") in {Move.parse("AS+QH")}
    for bad in ["QH+", "QH+QH", "XX", "QH>pile", "a+b+c"]:
        with pytest.raises(InvalidMoveError):
            Move.parse(bad)


def test_presets_and_parse():
    assert Rules.preset("relaxed").win == "pyramid"
    assert Rules.preset("standard").passes == 3 and Rules.preset("strict").passes == 1
    assert Rules.preset("classic").passes is None and not Rules.preset("classic").stock_playable
    r = Rules.parse("relaxed,draw=3,passes=unlimited")
    assert r.draw == 3 and r.passes is None
    with pytest.raises(InvalidRulesError, match="'nope'"):
        Rules.preset("nope")
    with pytest.raises(InvalidRulesError):
        Rules.parse("relaxed,draw=2")
    for name, rules in PRESETS.items():
        assert rules.name == name
        assert len(rules.deck_cards()) == rules.deck
        assert Rules.from_dict(rules.to_dict()) == rules


def test_spanish_values():
    spanish = Rules.preset("spanish")
    king = Card.parse("KS")
    assert spanish.is_king(king) and spanish.pairs(Card.parse("JS"), Card.parse("AC"))
    assert Card.parse("QS") not in spanish.deck_cards()
