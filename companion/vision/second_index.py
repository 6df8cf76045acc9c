"""A card's second index: the rotated bottom-right index corner of an uncovered card.

Every card shows its top-left index unless a card lies on it there; a card with
nothing on its bottom-right corner shows the second index too. Second indices
confirm their card and claim no slot; a lone one (its first index missed) names
the card of the slot it belongs to, also when it lies on the slot down-right of
that card (rows dealt a row apart) and no card lies on that slot. Positions are lattice ``uv`` (see
``companion.vision.slots``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from companion.cards import Card
from companion.layout import br_cover_of  # noqa: F401 (re-exported)
from companion.rules import Rules
from companion.vision.card_read import CardRead
from companion.vision.detections import Detections
from companion.vision.slots import SECOND_INDEX_WINDOW, covering, pyramid_nodes

#: Its usual place when no card of the frame shows both (cards dealt half-overlapping).
DEFAULT_SECOND_OFFSET = (0.7, 2.0)
#: A lone second index read on the slot that covers its card's bottom-right corner lies this close
#: (lattice units) to where that index belongs (rendered val: 0.05-0.24 for second indices; 0.37-0.46
#: for first indices of that slot's own card whose second index was missed).
OWN_SLOT_TOL = 0.3
#: Second indices this many rows or more below their card's first index lie under the next row's
#: cards (rows dealt overlapping; apart, a second index lies less than a row below). A card's top
#: edge lies ~0.55 index sides above its first index and its second index ~2.7 below: a card on the
#: next row covers the index from about 0.83 rows down (rendered val: 0.95 -> 0.85 read one partly
#: cleared deal exactly, KC's figure seen on the slot below it as JC; 0.75 lost a full deal).
UNDER_NEXT_ROW = 0.85
#: A read on the slot lying on a card's bottom-right corner, about as near where that card's second
#: index lies as its own slot's corner (this much farther, lattice units), is that index misread
#: when it names the card as its runner-up at least ``AS_NEAR_ALT`` (rows dealt a row apart put the
#: index right on that slot; rendered val, 600 scenes: 6 scenes with fewer slots wrong, 2 of them
#: exact, none worse; without the runner-up's floor a 2D read on its slot was taken for the apex 9D's
#: second index). Not on a slot with a card read lying on it: that slot holds a card.
AS_NEAR = 0.15
AS_NEAR_ALT = 0.05


def maybe_second(reads: list[CardRead], uv: np.ndarray) -> np.ndarray:
    """Reads lying where a second index of another read of the same card would lie."""
    (du0, du1), (dv0, dv1) = SECOND_INDEX_WINDOW
    cards = np.array([rd.card.index for rd in reads])
    d = uv[:, None, :] - uv[None, :, :]
    same = (cards[:, None] == cards[None, :]) & ~np.eye(len(reads), dtype=bool)
    inside = (d[..., 0] >= du0) & (d[..., 0] <= du1) & (d[..., 1] >= dv0) & (d[..., 1] <= dv1)
    return (same & inside).any(1)


def second_indices(reads: list[CardRead], uv: np.ndarray, can_show: np.ndarray,
                    certain: np.ndarray, weakly_hidden: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
    """For each read, the read whose second index it is (-1: none), merging their scores; and
    where second indices lie from first ones in this frame (lattice units).

    Candidates are two reads of one card, the lower one inside ``SECOND_INDEX_WINDOW`` of the
    other. Pairs whose upper read surely has nothing on it (``certain``: the bottom row, the
    waste) give the frame's offset; with it, every pair must match it to 0.45 units. Without
    them, pairs whose upper read has no other card over it (``can_show``) are taken, and pairs
    exactly at their offset whose upper read has only weak reads over it (``weakly_hidden``: a
    card's pips read through the lattice on the empty slot down-right of it, val_s22_000257).
    """
    (du0, du1), (dv0, dv1) = SECOND_INDEX_WINDOW
    by_card: dict[Card, list[int]] = {}
    for j, rd in enumerate(reads):
        by_card.setdefault(rd.card, []).append(j)
    cands = []
    for js in by_card.values():
        for j in js:
            for k in js:
                d = uv[j] - uv[k]
                if k != j and du0 <= d[0] <= du1 and dv0 <= d[1] <= dv1:
                    cands.append((j, k, d))
    sure = [d for j, k, d in cands if certain[k]]
    if sure:
        off = np.median(sure, 0)
        # Exactly at the offset: a second index even on a "covered" card (rows dealt without
        # overlap show every card whole); near it: only on a card with nothing down-right on it.
        ok = [(j, k) for j, k, d in cands
              if np.hypot(*(d - off)) < 0.2 or (np.hypot(*(d - off)) < 0.45 and can_show[k])]
    else:
        ok = [(j, k) for j, k, d in cands if can_show[k]]
        off = np.median([uv[j] - uv[k] for j, k in ok], 0) if ok else np.array(DEFAULT_SECOND_OFFSET)
        if weakly_hidden is not None:
            ok += [(j, k) for j, k, d in cands
                   if not can_show[k] and weakly_hidden[k] and np.hypot(*(d - off)) < 0.2]
    second = np.full(len(reads), -1)
    firsts: set[int] = set()
    for j, k in sorted(ok, key=lambda t: -uv[t[0]][1]):   # lowest first
        if second[j] >= 0 or second[k] >= 0 or k in firsts or j in firsts:
            continue
        second[j] = k
        firsts.add(k)
        top, rd = reads[k], reads[j]
        # Two independent reads of one card agree: noisy-or of their scores.
        top.score = 1 - (1 - top.score) * (1 - rd.score)
        for c, sc in rd.alts.items():
            if c is not top.card:
                top.alts[c] = max(top.alts.get(c, 0.0), sc)
    return second, off


def bared_slots(second: np.ndarray, ids: np.ndarray, winner: list[int], br_cover: np.ndarray,
                br_off: np.ndarray) -> set[int]:
    """Slots a shown second index says are empty: the slot lying on the bottom-right corner of a
    placed card whose second index was read, when rows overlap enough (``UNDER_NEXT_ROW``) that a
    card there would hide it. Rows dealt apart show every second index: then none."""
    if br_off[1] < UNDER_NEXT_ROW:
        return set()
    return {int(br_cover[ids[k]]) for k in second[second >= 0]
            if ids[k] >= 0 and winner[ids[k]] == k and br_cover[ids[k]] >= 0}


def cross_second_indices(reads: list[CardRead], uv: np.ndarray, on_br: list[list[int]],
                          second: np.ndarray, br_off: np.ndarray, tol: float = 0.35,
                          from_own_corner: Optional[np.ndarray] = None) -> None:
    """Pairs whose two reads disagree: exactly where a second index lies, and one read's card is
    among the other's alternatives. Their evidence is pooled and the better card kept.

    ``on_br[k]``: the reads of other cards on the slot lying on read ``k``'s bottom-right corner
    (which would hide its second index). The read itself may be the one there when it lies nearer
    where the second index belongs than ``from_own_corner[j]``, its distance from its slot's corner
    (0 where no slot, or a card read lying on it: a slot under cards holds a card), or, on a slot with
    no card read on it, about as near (``AS_NEAR``) and naming ``k``'s card as its runner-up
    (``AS_NEAR_ALT``): rows dealt about a row apart put the index on that slot (val_s22_000205: 9H's
    second index read as 7H there; val_s64_000206: TC's as 8C, TC its runner-up)."""
    is_first = set(second[second >= 0].tolist())
    for j in range(len(reads)):
        if second[j] >= 0 or j in is_first:
            continue
        d = uv - (uv[j] - br_off)
        dist = np.hypot(d[:, 0], d[:, 1])
        near = np.flatnonzero(dist < tol)
        for k in near:
            if k == j or second[k] >= 0 or k in is_first:
                continue
            a, b = reads[k], reads[j]
            if on_br[k] and not (on_br[k] == [j] and from_own_corner is not None
                                 and (dist[k] < from_own_corner[j]
                                      or (0.0 < from_own_corner[j] and dist[k] < from_own_corner[j] + AS_NEAR
                                          and b.alts.get(a.card, 0.0) >= AS_NEAR_ALT))):
                continue
            if b.card not in a.alts and a.card not in b.alts:
                continue
            pooled: dict[Card, float] = {}
            for rd in (a, b):
                for c, sc in list(rd.alts.items()) + [(rd.card, rd.score)]:
                    pooled[c] = max(pooled.get(c, 0.0), 0.0)
            for c in pooled:
                pa = max(a.alts.get(c, 0.0), a.score if c is a.card else 0.0)
                pb = max(b.alts.get(c, 0.0), b.score if c is b.card else 0.0)
                pooled[c] = 1 - (1 - pa) * (1 - pb)
            best = max(pooled, key=pooled.get)
            a.card, a.score = best, pooled[best]
            a.alts = {c: sc for c, sc in pooled.items() if c is not best}
            second[j] = k
            is_first.add(int(k))
            break


def turned_on_slots(winner: list[int], used: np.ndarray, turned: np.ndarray, lain_on: np.ndarray) -> None:
    """A read the classifier told lay turned (``turned``: a second index, its card's corner upside
    down) on an open slot (no card read lying on it: ``lain_on``): a card's second index (a card
    placed on another slot, a loose card's, a card's whose first index was missed), not a card of
    the slot. Its slot is left empty and the read claims nothing. (Once only where the second index
    of a card placed on another slot lies, rendered val, 600 scenes: 2 with fewer slots wrong, none
    with more; with the turn net shipped since, any open slot: 1,200 scenes, 9 more with fewer
    slots wrong, e.g. val_s66_000164's card read on an emptied slot, 1 with more: val_s66_000103,
    hands over the pyramid.)"""
    for node, j in enumerate(winner):
        if j >= 0 and turned[j] and not lain_on[node]:
            winner[node] = -1
            used[j] = True


def place_orphans(rules: Rules, reads: list[CardRead], winner: list[int], used: np.ndarray, ids: np.ndarray,
                   uv: np.ndarray, br_off: np.ndarray, cov: tuple, lowest_by_place: bool = True,
                   in_picture: Optional[np.ndarray] = None, first_index: Optional[np.ndarray] = None) -> None:
    """A lone second index (its card's first index was missed) names the card of the slot it belongs to.

    Candidates: reads off the lattice, and reads on a slot whose covered
    cards are missing (impossible for a card, natural for a second index
    falling onto the cleared part of the pyramid). ``lowest_by_place``: a lowest-row card's
    second index is taken by its place alone when no read shows the cards under it (see
    ``_place_orphan``). ``in_picture``: which slots lie inside the picture; a slot outside it
    showing no read is out of view, not cleared (rendered val: 5 of 600 scenes with a slot more
    right, none with fewer). ``first_index``: per detection, read surely standing upright, as first
    indices do (a classifier that tells the turn): never a lone second index (rendered val, 600
    scenes: 3 with fewer slots wrong, none with more).
    """
    _, nodes_uv = pyramid_nodes(rules.rows, rules.inverted)
    n_nodes = len(nodes_uv)
    # Only the card lying on its bottom-right corner hides a second index (the other card
    # lying on it covers its bottom-left: a card whose top-left index is hidden that way
    # shows its second index as soon as the bottom-right one is gone).
    br_cover = br_cover_of(rules.rows, rules.inverted)
    over = cards_over(rules.rows, rules.inverted)
    placed = {reads[w].card for w in winner if w >= 0}
    cand = []
    for node in range(n_nodes):
        j = winner[node]
        if j >= 0 and any(winner[c] < 0 and (in_picture is None or in_picture[c]) for c in cov[node]):
            cand.append(j)
    cand += [j for j in range(len(reads)) if not used[j] and ids[j] < 0]
    if first_index is not None:
        cand = [j for j in cand if not first_index[reads[j].det]]
    # A placed index can show that a card it lies on is there, hidden: go again while one is placed.
    while cand:
        left = [j for j in cand if not _place_orphan(j, reads, winner, used, uv, br_off, cov, nodes_uv, br_cover,
                                                     over, placed, lowest_by_place)]
        if len(left) == len(cand):
            break
        cand = left


def _place_orphan(j: int, reads: list[CardRead], winner: list[int], used: np.ndarray, uv: np.ndarray,
                  br_off: np.ndarray, cov: tuple, nodes_uv: np.ndarray, br_cover: tuple, over: tuple,
                  placed: set, lowest_by_place: bool = True) -> bool:
    """Give read ``j`` to the slot whose second index it is (see ``place_orphans``); True if given."""
    n_nodes = len(nodes_uv)
    if any(k != j and reads[k].card is reads[j].card and np.hypot(*(uv[k] - uv[j] - br_off)) < 0.5
           for k in range(len(reads))):
        return False  # its own second index lies down-right of it: a first index (a waste card)
    target = uv[j] - br_off
    d = np.hypot(*(nodes_uv - target).T)
    m = int(np.argmin(d))
    # The card on m's bottom-right corner would hide this index, unless that card is this very
    # read, taken for a card of its own on the slot where m's second index falls (rows dealt a
    # row apart), and no card lies on that slot: a card lying on it says the slot holds a card.
    if d[m] > 0.5 or winner[m] >= 0:
        return False
    # Not a read lying right on a slot's corner, farther from the index's place than the second
    # indices' spread: a card of its own (on a card hidden by a hand, not cleared).
    if d[m] > OWN_SLOT_TOL and np.hypot(*(nodes_uv - uv[j]).T).min() < d[m]:
        return False
    br = br_cover[m]
    if br >= 0 and winner[br] >= 0:
        # (and it must lie close to where m's second index lies)
        if winner[br] != j or any(winner[o] >= 0 for o in over[br]) or d[m] > OWN_SLOT_TOL:
            return False
    # A card lies on the cards it covers: with one of them gone it is gone too (the pyramid is
    # cleared there, and the read is a card of its own). Unless another card read lying on
    # that one says it is there, only hidden (a hand over the pyramid, a read missed); or m is a
    # lowest-row card and the read lies right where its second index does: there it is that
    # index far more often than a waste card lying exactly so (rendered val, 300 scenes: slots
    # right 84.9 -> 85.5%, hands 71.8 -> 73.6%, waste tops 63.7 -> 64.3%, no deal lost).
    lowest = lowest_by_place and not over[m]
    if not (lowest and d[m] <= OWN_SLOT_TOL) and any(
            winner[c] < 0 and not any(winner[o] >= 0 for o in over[c] if o != m) for c in cov[m]):
        return False
    card = reads[j].card
    home = [node for node in range(n_nodes) if winner[node] == j]
    if card in placed and not home:
        return False
    for node in home:
        winner[node] = -1
    winner[m] = j
    used[j] = True
    placed.add(card)
    return True


def home_second_indices(expected, reads: list[CardRead], winner: list[int], used: np.ndarray,
                        uv: np.ndarray, br_off: np.ndarray, nodes_ri, nodes_uv: np.ndarray,
                        tol: float = 0.45, known: Optional[dict] = None) -> None:
    """A card the accepted layout (``expected``) holds on slot A, whose first index this frame
    missed or read as another card, read where its second index lies: A's card. Cards never move
    between slots; once the card on A's bottom-right corner is gone, A's second index lies close to
    that cleared slot (rows dealt a little apart) or below the pyramid, where it passed for a card of
    its own. A first index read as another card, with A's card its runner-up, is that card's misread
    (g00409, a deal checked by the person: JD's first index read QD, JD second, frame after frame,
    its second index JD on the cleared slot below: "JD is in the wrong place", seven times).
    ``known``: slot -> card as the person checked the deal; on a slot the accepted layout still
    holds, that card is at home there, whatever the camera made of it (g00409's JD, accepted as
    the QD the camera reads, checked JD by the person). A slot accepted empty is not: its card was
    taken, and a read of it now is another card's misread."""
    node_of = {(int(r), int(i)): m for m, (r, i) in enumerate(nodes_ri)}
    home = {s.card: node_of[(r, i)] for r, i, s in expected.slots()
            if s.card is not None and (r, i) in node_of}
    checked: set[int] = set()
    if known:
        held = {(r, i) for r, i, s in expected.slots() if s.card is not None}
        mended = {node_of[place]: card for place, card in known.items() if place in held and place in node_of}
        checked = set(mended)
        home = {card: m for card, m in home.items() if m not in checked}
        home.update({card: m for m, card in mended.items()})
    for j, rd in enumerate(reads):
        a = home.get(rd.card)
        if a is None or np.hypot(*(uv[j] - nodes_uv[a] - br_off)) >= tol:
            continue
        # (A first index read as another card gives way only when it names A's card as a runner-up:
        # else the accepted layout may hold a misread that a misread second index would lock in:
        # g00314's JD accepted as 2D once, its index read JD again, its second index as 2D. The
        # person's checked card is no such misread.)
        first = winner[a]
        if first >= 0 and (reads[first].card is rd.card
                           or (rd.card not in reads[first].alts and a not in checked)):
            continue
        for b, w in enumerate(winner):
            if w == j:
                winner[b] = -1
        winner[a] = j
        used[j] = True
        if first >= 0:
            used[first] = True  # A's first index, misread: no card of its own


def pair_indices(class_id: np.ndarray) -> np.ndarray:
    """Indices (P, 2) of every two reads naming one card (most often its two indices)."""
    a, b = np.triu_indices(len(class_id), 1)
    same = class_id[a] == class_id[b]
    return np.stack([a[same], b[same]], 1).astype(np.int64)


@lru_cache(maxsize=16)
def cards_over(rows: int, inverted: bool) -> tuple[tuple[int, ...], ...]:
    """For each node, the nodes lying on it."""
    cov = covering(rows, inverted)
    return tuple(tuple(m for m in range(len(cov)) if node in cov[m]) for node in range(len(cov)))
