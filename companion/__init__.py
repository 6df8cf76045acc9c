"""Pyramid Companion: play Pyramid solitaire with a real deck on a real table."""

from companion.cards import CARD_CODES, DECK, Card
from companion.errors import (CompanionError, IllegalMoveError, InvalidCardError, InvalidDealError,
                              InvalidLayoutError, InvalidMoveError, InvalidRulesError)
from companion.moves import Move
from companion.rules import PRESETS, Rules

__version__ = "0.1.0"

__all__ = [
    "CARD_CODES", "DECK", "Card", "CompanionError", "IllegalMoveError", "InvalidCardError",
    "InvalidDealError", "InvalidLayoutError", "InvalidMoveError", "InvalidRulesError", "Move",
    "PRESETS", "Rules",
]
