"""A deal read from the view, corrected by what the person does with the cards.

Without a confirmed deal (``follow`` with no ``--deal``) the pyramid is what the camera read
before the first move, and a misreading there (AC for AS, AS for 7S) turns the person's legal
pairs into "illegal" ones: 7S+6S becomes AS+6S. While the deal holds, the eye's other readings
of such a slot are only checks (``misreads.eye_check``). When a view cannot be explained,
``corrected_games`` offers the record replayed on the deal with those slots as the camera read
them: all at once, then one or two at a time. The follower takes the first that explains the view. A
slot qualifies only while its card was never moved, and only with a card the game has not placed
elsewhere (removed, on the waste, turned from the stock).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Iterable, Iterator

from companion.cards import Card
from companion.game import Deal, Game

#: At most this many slots are tried one by one (each try replays the record and searches).
MAX_SLOTS = 4


def corrected_games(rules: Any, game: Game, readings: Iterable[tuple[int, Card]]
                    ) -> Iterator[tuple[Game, dict[int, tuple[Card, Card]]]]:
    """Games replaying ``game``'s moves on its deal with pyramid slots re-read.

    ``readings``: (slot, card the camera reads there). Yields (game, {slot: (old, new)}).
    """
    state = game.state
    deal = game.deal
    placed = {c for c in deal.pyramid if c is not None}
    known = deal.known()
    out: dict[int, Card] = {}
    for slot, card in readings:
        old = state.pyramid[slot] if slot < len(state.pyramid) else None
        if old is None or old is not deal.pyramid[slot] or card is old or card not in rules.deck_cards():
            continue  # the slot's card was moved (or the reading agrees)
        if card in known and card not in placed:
            continue  # turned from the stock or dealt to the reserve: it is not on the pyramid
        out[slot] = card
    slots = sorted(out)
    if not slots:
        return
    tries = [tuple(slots)]
    if 1 < len(slots) <= MAX_SLOTS:  # one wrong reading among them must not spoil the others
        tries += [(s,) for s in slots] + [p for p in combinations(slots, 2) if len(slots) > 2]
    for subset in tries:
        cards = list(deal.cards)
        for s in subset:
            cards[s] = out[s]
        try:
            new = Game(rules, Deal(rules, cards))
            for m in game.moves:
                new.play(m)
        except ValueError:
            continue  # a card twice, or a recorded move no longer legal
        yield new, {s: (deal.pyramid[s], out[s]) for s in subset}
