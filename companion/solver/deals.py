"""Seeded random deals for the solver's tools (benchmarks, statistics, tests)."""

from __future__ import annotations

import random

from companion.cards import Card
from companion.rules import Rules


def random_deal(rules: Rules, rng: random.Random) -> list[Card]:
    """A shuffled deck in deal order (pyramid from the apex, reserve, then stock)."""
    cards = list(rules.deck_cards())
    rng.shuffle(cards)
    return cards
