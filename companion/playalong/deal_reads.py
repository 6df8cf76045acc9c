"""A deal read from the view, corrected by what the person does with the cards.

Without a confirmed deal (``follow`` with no ``--deal``) the pyramid is what the camera read
before the first move, and a misreading there (AC for AS, AS for 7S) turns the person's legal
pairs into "illegal" ones: 7S+6S becomes AS+6S. While the deal holds, the eye's other readings
of such a slot are only checks (``misreads.eye_check``). When a view cannot be explained,
``corrected_games`` offers the record replayed on the deal with those slots as the camera read
them: all at once, then one or two at a time. The follower takes the first that explains the view. A
slot qualifies only while its card was never moved, and only with a card the game has not placed
elsewhere (removed, on the waste, turned from the stock).

A slot whose card was already removed qualifies too when that card turns up again (drawn from
the stock: the deal read it where another card lay): its recorded moves are replayed with the
slot's other card. With no other reading of the slot, ``same_rank_readings`` offers the cards of
its rank that the game has not placed, the other suit of the same colour first (QC for QS is
the eye's most common misreading); a pair removed with it stays a pair.

Last, a card of the deal taken in a move the view cannot explain is re-read as the camera's
runner-up reading of its slot (``RunnerUps``: the best that runner-up ever scored against the
slot's reading, from ``RUNNER_UP_MIN`` of it): g00402's deal read 8H as JH (runner-up 8H, as
sure in one view) and JD as QD, and 8H+5C and JD+2D then looked illegal.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Iterable, Iterator

from companion.cards import Card
from companion.game import Deal, Game
from companion.moves import Move

#: At most this many slots are tried one by one (each try replays the record and searches).
MAX_SLOTS = 4
#: A runner-up reading is tried for a slot once it scored this share of the slot's reading.
RUNNER_UP_MIN = 0.25


class RunnerUps:
    """Per pyramid slot, the other readings the camera gave it and their best share of the
    reading's score (over every view with a card on the slot)."""

    def __init__(self) -> None:
        self.share: dict[int, dict[Card, float]] = {}

    def note(self, pyramid: tuple, readings: tuple) -> None:
        for slot, (card, reading) in enumerate(zip(pyramid, readings)):
            if card is None or reading.card is not card:
                continue
            best = self.share.setdefault(slot, {})
            for other, score in reading.alternatives:
                if other is not card and score > 0:
                    share = score / max(reading.score, 1e-6)
                    best[other] = max(best.get(other, 0.0), share)

    def readings(self, slots: Iterable[int]) -> list[dict[int, Card]]:
        """``{slot: card}`` for each runner-up of ``slots`` from ``RUNNER_UP_MIN``, surest first;
        then two slots' runner-ups together (two cards of a view both misread), two a slot at most."""
        out = [(share, slot, card) for slot in slots for card, share in self.share.get(slot, {}).items()
               if share >= RUNNER_UP_MIN]
        out.sort(key=lambda t: (-t[0], t[1], t[2].index))
        per_slot: dict[int, list[Card]] = {}
        for _, slot, card in out:
            if len(per_slot.setdefault(slot, [])) < 2:
                per_slot[slot].append(card)
        pairs = [{a: x, b: y} for a, b in combinations(sorted(per_slot), 2)
                 for x in per_slot[a] for y in per_slot[b] if x is not y]
        return [{slot: card} for _, slot, card in out] + pairs


def corrected_games(rules: Any, game: Game, readings: Iterable[tuple[int, Card]],
                    reappeared: frozenset[Card] = frozenset(),
                    ) -> Iterator[tuple[Game, dict[int, tuple[Card, Card]]]]:
    """Games replaying ``game``'s moves on its deal with pyramid slots re-read.

    ``readings``: (slot, card the camera reads there). ``reappeared``: removed cards seen on the
    table again; a slot dealt one of them is re-read too, its moves replayed with the new card.
    Yields (game, {slot: (old, new)}).
    """
    state = game.state
    deal = game.deal
    placed = {c for c in deal.pyramid if c is not None}
    known = deal.known()
    out: dict[int, Card] = {}
    for slot, card in readings:
        old = state.pyramid[slot] if slot < len(state.pyramid) else None
        dealt = deal.pyramid[slot] if slot < len(deal.pyramid) else None
        if old is None and dealt is not None and dealt in reappeared and dealt in state.removed:
            old = dealt  # removed, and now seen again: it was never on this slot
        if old is None or old is not dealt or card is old or card not in rules.deck_cards():
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
        swap = {deal.pyramid[s]: out[s] for s in subset}
        try:
            new = Game(rules, Deal(rules, cards))
            for m in game.moves:
                new.play(Move(m.kind, tuple(swap.get(c, c) for c in m.cards)) if set(m.cards) & swap.keys() else m)
        except ValueError:
            continue  # a card twice, or a recorded move no longer legal
        yield new, {s: (deal.pyramid[s], out[s]) for s in subset}


def same_rank_readings(rules: Any, game: Game, reappeared: frozenset[Card]) -> list[tuple[int, Card]]:
    """(slot, card) for each removed card of the deal's pyramid seen again: the cards of its rank
    the deal does not place, the same colour's other suit first."""
    deal = game.deal
    known = deal.known()
    out: list[tuple[int, Card]] = []
    for slot, dealt in enumerate(deal.pyramid):
        if dealt is None or dealt not in reappeared or dealt not in game.state.removed:
            continue
        others = [c for c in rules.deck_cards() if c.rank == dealt.rank and c not in known]
        others.sort(key=lambda c: ((c.suit in "DH") != (dealt.suit in "DH"), c.suit))
        out += [(slot, c) for c in others]
    return out
