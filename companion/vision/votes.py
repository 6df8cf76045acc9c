"""How the frames of the fusion window vote (``companion.vision.fusion``): pure functions of
the window's keys (one value per pyramid slot in deal order, then the extras: waste tops, cells,
reserve), the accepted key and what the fuser remembers."""

from __future__ import annotations

from collections import Counter
from typing import Optional

from companion.cards import Card
from companion.layout import SlotReading


def settle(keys: list[tuple], quorum: int, accepted: Optional[tuple], emptied: set[int]) -> Optional[tuple]:
    """Each position's value held by ``quorum`` of the window's ``keys``, or None while one has none.

    A pyramid slot votes in two steps: card or no card (the only change a slot sees in a game: its
    card taken), then which card, by plurality of the frames that read one, the ``accepted`` card
    kept while it holds a third of them. A model unsure of a deck's clubs and spades reads one
    card two or three ways from frame to frame; a quorum of any one reading would never come. The
    waste tops, cells and reserve vote as one exact value, or else their cards as the slots do
    (``settle_extras``).

    A slot the accepted key has empty, or that an accepted key showed emptied (``emptied``), is
    empty while no card holds the quorum there: no move puts a card on it (a card put back after
    an illegal removal holds), and a read flickering there (the second index of the card it
    bared, misread) must not hold up every other change (g00311: 28 s lost; g00405: 20 s).
    """
    size = len(keys[-1])
    keys = [k for k in keys if len(k) == size]
    if accepted is not None and len(accepted) != size:
        accepted = None
    out: list = []
    votes: dict[int, Counter] = {}
    for pos in range(size):
        values = [k[pos] for k in keys]
        if pos == size - 1:  # the extras
            value = settle_extras(values, quorum, accepted[-1] if accepted is not None else None)
            if value is None:
                return None
            out.append(value)
            continue
        cards = Counter(v for v in values if v is not None)
        votes[pos] = cards
        occupied = sum(cards.values())
        if len(values) - occupied >= quorum:
            out.append(None)
            continue
        old = accepted[pos] if accepted is not None else None
        if occupied < quorum:
            if accepted is not None and (old is None or pos in emptied):
                out.append(None)
                continue
            return None
        if old is not None and 3 * cards.get(old, 0) >= occupied:
            out.append(old)
        else:
            top = max(cards.values())
            # ties: the reading of the newest frame among them
            out.append(next(v for v in reversed(values) if v is not None and cards[v] == top))
    return tuple(one_place(out, votes))


def settle_extras(values: list[tuple], quorum: int, old: Optional[tuple]) -> Optional[tuple]:
    """The extras (waste tops, cells, reserve) held by ``quorum`` of ``values``; else, where a
    quorum agrees on all but which card tops each waste pile, each pile's card by plurality of
    those frames, as a pyramid slot's (g00607: 7H on the waste read as AH in half the frames, on
    a deck whose 7 looks like an A; no view showed it until 7H+6H, and "6H removed alone" was
    said). Not while the ``old`` top is among those reads: a new card over it read by turns with
    it is no settled table (g00663: 7D over 2H; a view with 2H and a pyramid card lifted made
    the follower guess a hidden draw and pair, and lose 54 moves)."""
    value, count = Counter(values).most_common(1)[0]
    if count >= quorum:
        return value

    def shape(v: tuple) -> tuple:
        return (tuple(t is None for t in v[0]),) + tuple(v[1:])

    form, count = Counter(shape(v) for v in values).most_common(1)[0]
    if count < quorum:
        return None
    agree = [v for v in values if shape(v) == form]
    tops: list[Optional[Card]] = []
    for p, empty in enumerate(form[0]):
        cards = Counter(v[0][p] for v in agree)
        kept = old[0][p] if old is not None and len(old[0]) == len(form[0]) else None
        if empty or len(cards) == 1:
            tops.append(None if empty else next(iter(cards)))
        elif kept in cards:
            return None  # the old top still read in some frames: a card over it read by turns
        else:
            most = max(cards.values())  # ties: the reading of the newest frame among them
            tops.append(next(v[0][p] for v in reversed(agree) if cards[v[0][p]] == most))
    return (tuple(tops),) + tuple(form[1:])


def one_place(out: list, votes: dict[int, Counter]) -> list:
    """A card voted onto two slots (each frame placed it once, but not always at the same slot:
    two slots read alike by turns) stays where it holds the larger share of the votes; the other
    slot takes its next most voted card seen nowhere else, if it has one."""
    where: dict = {}
    for pos, card in enumerate(out[:-1]):
        if card is not None:
            where.setdefault(card, []).append(pos)
    used = set(where)
    for card, places in where.items():
        if len(places) < 2:
            continue
        places.sort(key=lambda p: -votes[p][card] / max(1, sum(votes[p].values())))
        for p in places[1:]:
            alt = next((c for c, _ in votes[p].most_common() if c not in used), None)
            if alt is not None:
                out[p] = alt
                used.add(alt)
    return out


def voted_card(last: SlotReading, mean: float, agreeing: int, cards: list) -> SlotReading:
    """A card read other ways in some frames: its score is its share of the frames that read
    a card (times their mean score), and the other readings become alternatives with theirs."""
    others = Counter(c for c in cards if c is not None)
    occupied = sum(others.values())
    score = round(mean * agreeing / occupied, 4)
    alts = {c: a for c, a in last.alternatives if c is not last.card}
    for c, n in others.items():
        if c is not last.card:
            alts[c] = max(alts.get(c, 0.0), round(n / occupied, 4))
    best = ((last.card, score),) + tuple(sorted(alts.items(), key=lambda a: -a[1])[:2])
    return SlotReading(last.card, score, best, last.corrected)


def early_reads(early: dict[int, Counter], rows: list, min_frames: int) -> dict[int, str]:
    """Empty positions of a layout's ``rows`` (deal order) -> the card read there most often
    before (``early``: per position, the cards read there) that is nowhere else on it, when read
    in ``min_frames`` frames (``companion.layout.EARLY_READS``)."""
    on_table: set[Card] = {s.card for row in rows for s in row if s.card is not None}
    flat = [s for row in rows for s in row]
    out: dict[int, str] = {}
    for pos, cards in sorted(early.items()):
        if pos >= len(flat) or flat[pos].card is not None:
            continue
        # a card read on another slot of the layout is not this one (misread from a neighbour)
        card, count = next(((c, n) for c, n in cards.most_common() if c not in on_table
                            and str(c) not in out.values()), (None, 0))
        if count >= min_frames:
            out[pos] = str(card)
    return out
