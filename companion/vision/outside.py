"""Cards off the pyramid lattice: the waste pile(s), free cells, a reserve row, loose cards.

Below the pyramid they are the waste (one pile, or up to three piles left to
right; within a pile bottom to top), a reserve row when the rules have one (the
band right under the pyramid, the waste below it), to the right of the pyramid
the free cell(s); anything else is a stray card.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from companion.cards import Card
from companion.layout import br_cover_of
from companion.rules import Rules
from companion.vision.card_read import CardRead, dedupe_cards
from companion.vision.lattice import pyramid_nodes


#: Following a game, a card below the pyramid read less surely than this is a stray read, not the
#: waste: a single weak read there is as often a corner-like pattern on the stock's back, and a
#: false waste card costs play-along phantom draws (the bundled g00008 demo: two; rendered games
#: e2e8 with no such floor: moves right in order 156 -> 153 of 160). A still has none beyond the
#: pipeline's ``min_score``: a wrong waste top there is one card to correct, as a missing one is
#: (rendered val, shipped ensemble: waste top right 70.67 -> 72.33% and 70.33 -> 71.33% on the two
#: val sets of 300 scenes).
WASTE_MIN_SCORE = 0.35
#: Top-left indices of the waste further apart than this along the rows (lattice units) lie on two
#: piles: one pile fanned by draw 3 (``PILE_STEP``), three piles side by side, which are not fanned
#: (``PILES_STEP``: far below the pyramid the fitted lattice shrinks, and piles dealt a little more
#: than a card apart lay 0.53 slots apart in rendered val_s64 151; 0.35-0.45: two of 95 three-pile
#: scenes of both val sets more right, none lost).
PILE_STEP = 0.6
PILES_STEP = 0.45
#: One waste pile wanted and several found below the pyramid: the piles lying within its width
#: (top-left indices up to this far, in slots, past its lowest row's ends) come first. Cards put aside
#: face up (removed pairs on a discard pile) lie beside the pyramid, the stock and waste below it: a
#: discard pile's top read surer than the waste took its place (rendered val: 3 of 600 waste tops
#: more right, none lost, the same from 0.5 to 1.0).
WASTE_SPAN = 0.5
#: One waste pile wanted and several found: a pile read only by second indices (a still's reads told
#: turned) counts this share of its reads' scores (rendered val, 1,200 stills: 2 waste tops more right,
#: none lost, no slot changed; excluded outright, a top seen only by its second index lost to a card
#: beneath: val_s22_000289).
SECOND_ONLY = 0.8
#: What a card not among a read's names counts as when two reads of one card are pooled.
NOT_NAMED = 0.02
#: A read this near (lattice units) to where a lowest-row card's second index lies is taken for one.
SECOND_INDEX_NEAR = 0.45


def outside_places(rules: Rules, reads: list[CardRead], off: list[int], uv: np.ndarray, br_off: np.ndarray,
                   held: Optional[list[Optional[Card]]] = None, lowest_row: Optional[int] = None,
                   waste_min_score: float = WASTE_MIN_SCORE, name_tops: bool = False,
                   second: Optional[np.ndarray] = None,
                   ) -> tuple[list[list[CardRead]], list[Optional[CardRead]], list[Optional[CardRead]], list[int]]:
    """``held``: each pyramid node's card (None: empty), when known. ``lowest_row``: the lowest row
    that can hold a card (a still of a nearly cleared pyramid: the waste may lie where the lower
    rows were, as the lattice fitted on a few cards extrapolates them), else the last.
    ``waste_min_score``: a read below the pyramid scored lower is a stray read (``WASTE_MIN_SCORE``).
    ``name_tops``: name each pile's top with its own second index (``name_top_by_its_second_index``;
    stills: following a rendered game, e2e8 g00313, it cost a move). ``second``: for each read, whether
    the classifier told it lay turned (a second index; a still's, ``Detections.upright``), else None."""
    half = (rules.rows - 1) / 2
    centre = half if rules.inverted else 0.0
    last = rules.rows - 1 if lowest_row is None else lowest_row
    # The waste lies below the bottom row's cards: their top-left indices may lie as high as
    # the bottom row's second indices (which are placed already: nothing else lies there).
    floor = last + float(np.clip(br_off[1], 0.8, 4.0)) + 0.4
    waste_floor = last + 0.5 * float(np.clip(br_off[1], 0.8, 4.0)) + 0.5
    below, right, stray = [], [], []
    for j in off:
        u, v = uv[j]
        if held is not None and _misread_second_index(rules, reads[j], uv[j], br_off, held):
            stray.append(j)
        elif v > waste_floor and abs(u - centre) <= half + 3.5:
            if reads[j].score >= waste_min_score:
                below.append(j)
            else:
                stray.append(j)
        elif rules.free_cells and u > centre + half + 0.8 and -1 <= v <= floor:
            right.append(j)
        else:
            stray.append(j)
    reserve: list[Optional[CardRead]] = []
    if rules.reserve and below:
        vs = sorted(uv[j][1] for j in below)
        cut = vs[0] + 1.5
        band = [j for j in below if uv[j][1] < cut]
        below = [j for j in below if uv[j][1] >= cut]
        reserve = list(dedupe_cards(reads, sorted(band, key=lambda j: uv[j][0])))
    # Waste piles: clusters along the row direction, left to right, of the top-left indices;
    # then the bottom-right indices of cards under a pile's top card (a pile is never squared
    # up exactly) join the pile whose top-left indices lie one second-index offset up-left.
    low = low_reads(below, uv, br_off)
    piles: list[list[int]] = []
    step = PILE_STEP if rules.waste_piles == 1 else PILES_STEP
    for j in sorted((j for j in below if j not in low), key=lambda j: uv[j][0]):
        near = [p for p in piles if min(np.hypot(*(uv[k] - uv[j])) for k in p) < 1.2
                and uv[j][0] - uv[p[-1]][0] < step]
        if near:
            near[-1].append(j)
        else:
            piles.append([j])
    for j in sorted(low, key=lambda j: uv[j][0]):
        d = [min(np.hypot(*(uv[k] + br_off - uv[j])) for k in p) for p in piles]
        if d and min(d) < 1.2:
            piles[int(np.argmin(d))].append(j)
        else:
            piles.append([j])
    piles = [[j for j in p] for p in piles]
    for p in piles if name_tops else []:
        name_top_by_its_second_index(reads, p, uv, br_off, held)
    if rules.waste_piles == 1 and len(piles) > 1:
        # A pile of reads lying only where the lowest row's second indices lie is a second index
        # read as another card more likely than the waste, which lies lower: the other pile wins
        # (rendered val scenes: 2 of 300 waste tops more right, none lost).
        seconds = _second_index_places(rules, br_off, held)
        clear = [p for p in piles
                 if not len(seconds) or not all(np.hypot(*(seconds - uv[j]).T).min() < SECOND_INDEX_NEAR for j in p)]
        if clear and len(clear) < len(piles):
            stray += [j for p in piles if p not in clear for j in p]
            piles = clear
        # Below the pyramid's width lies the waste; a pile beside it is put aside (a discard pile).
        within = [p for p in piles if min(abs(uv[j][0] - centre) for j in p) <= half + WASTE_SPAN]
        if within and len(within) < len(piles):
            stray += [j for p in piles if p not in within for j in p]
            piles = within
        # A pile read only by second indices is often a card's lower corner (the top's own, read as
        # another card where the lattice far below a nearly cleared pyramid puts it off its first
        # index): it counts less against a pile showing a first index (``SECOND_ONLY``).
        best = max(piles, key=lambda p: sum(reads[j].score for j in p) * (
            SECOND_ONLY if second is not None and all(second[j] for j in p) else 1.0))
        stray += [j for p in piles if p is not best for j in p]
        piles = [best]
    elif len(piles) > rules.waste_piles:
        piles.sort(key=lambda p: -sum(reads[j].score for j in p))
        stray += [j for p in piles[rules.waste_piles:] for j in p]
        piles = sorted(piles[: rules.waste_piles], key=lambda p: uv[p[0]][0])
    waste = [list(dedupe_cards(reads, pile_order(reads, p, uv, br_off))) for p in piles]
    if rules.draw == 1:
        # Turned one by one the pile is not fanned: what shows of the cards under the top one
        # is a corner here and there, from any depth, so only the top is reported.
        waste = [p[-1:] for p in waste]
    cells: list[Optional[CardRead]] = list(dedupe_cards(reads, sorted(right, key=lambda j: uv[j][1])))
    cells = cells[: max(rules.free_cells, 0)] + [None] * max(0, rules.free_cells - len(cells))
    return waste, cells, reserve, stray


def name_top_by_its_second_index(reads: list[CardRead], pile: list[int], uv: np.ndarray, br_off: np.ndarray,
                                 held: Optional[list[Optional[Card]]] = None) -> None:
    """Name a pile's top card from its first index and the read one second-index offset down-right
    of it (``low_reads``) together, when the two name different cards: most often that read is the
    top card's own second index, read as a look-alike, not a card beneath (a pile is squared up
    within a few millimetres: the top card hides the cards under it, their corners too). The name
    the two reads make likeliest (their scores multiplied, a card a read does not name counting
    ``NOT_NAMED``), of the cards not held on the pyramid, is the top's; the other read then names
    the same card. Rendered val_s22 214: JS 0.70 (8S 0.04) over 6S 0.27 (8S 0.37) is 8S. Not when
    a read there names the top itself: that is its second index, and another read of the corner is
    a misread of it (val_s64_000173: 6C's second index read 6C 0.56 and TC 0.49 made the top TC)."""
    if len(pile) < 2:
        return
    taken = {c for c in held or [] if c is not None}
    off = np.clip(np.asarray(br_off, float), [0.2, 0.8], [4.0, 4.0])
    low = low_reads(pile, uv, br_off)
    top = max((j for j in pile if j not in low), key=lambda j: float(uv[j][0]), default=None)
    if top is None:
        return
    at_second = [j for j in range(len(reads)) if j != top and np.hypot(*(uv[j] - off - uv[top])) < 0.6]
    if any(reads[j].card is reads[top].card for j in at_second):
        return  # its own second index read as it: another read of that corner is a misread of it
    under = [j for j in low if j in at_second and reads[j].card is not reads[top].card]
    if not under:
        return
    second = max(under, key=lambda j: reads[j].score)
    a, b = dict(reads[top].best_alternatives()), dict(reads[second].best_alternatives())
    both = (set(a) & set(b)) - taken
    if not both:  # nothing in common: a card beneath as likely as a misread index
        return
    pooled = {c: (a.get(c, 0.0) + NOT_NAMED) * (b.get(c, 0.0) + NOT_NAMED) for c in both | ({reads[top].card} - taken)}
    best = max(pooled, key=lambda c: (pooled[c], a.get(c, 0.0)))
    for j in (top, second):
        if reads[j].card is not best:
            reads[j].rename(best, max(a.get(best, 0.0), b.get(best, 0.0)))


def _misread_second_index(rules: Rules, read: CardRead, at: np.ndarray, br_off: np.ndarray,
                          held: list[Optional[Card]]) -> bool:
    """Whether a read lies where a lowest-row card's second index lies and names a look-alike of
    that card (its rank with another suit, its suit with another rank): the index misread (KS's
    read as KC), not the waste. Taken for a waste card it would also put the real top card under
    it. A card of neither rank nor suit lying there is a waste card over that corner (rendered
    val, 2 x 300 scenes: waste tops 4 more right, none lost)."""
    _, uv = pyramid_nodes(rules.rows, rules.inverted)
    low = np.flatnonzero(uv[:, 1] == uv[:, 1].max())
    for m in low:
        card = held[m] if m < len(held) else None
        if (card is not None and card != read.card and (card.rank == read.card.rank or card.suit == read.card.suit)
                and np.hypot(*(uv[m] + np.asarray(br_off, float) - at)) < SECOND_INDEX_NEAR):
            return True
    return False


def _second_index_places(rules: Rules, br_off: np.ndarray,
                         held: Optional[list[Optional[Card]]] = None) -> np.ndarray:
    """Lattice places of the second (bottom-right) indices of the lowest row's cards; with ``held``
    (each node's card) and that row emptied, of the cards held whose bottom-right corner no card
    held lies on (val_s64_000042, four rows left: the waste top, lying where an emptied lowest-row
    slot's second index would, was put aside for a loose card). (A lowest row with a card left may
    have a card whose first index went unread: its second index still lies there.)"""
    _, uv = pyramid_nodes(rules.rows, rules.inverted)
    shown = uv[:, 1] == uv[:, 1].max()
    if held is not None and not any(held[m] is not None for m in np.flatnonzero(shown) if m < len(held)):
        cover = br_cover_of(rules.rows, rules.inverted)
        shown = np.array([m < len(held) and held[m] is not None and (cover[m] < 0 or held[cover[m]] is None)
                          for m in range(len(uv))], bool)
    return uv[shown] + np.asarray(br_off, float)


def low_reads(js: list[int], uv: np.ndarray, br_off: np.ndarray) -> set[int]:
    """Of waste reads, the bottom-right indices of cards under a pile's top card: those with a read
    about one second-index offset up-left of them (the top card's top-left index covers the card
    beneath's own there). Not "lower than the highest read": far below the pyramid the fitted
    lattice bends, and three piles side by side can lie a row or more apart in it (rendered val
    scenes: 2 of 300 waste tops more right, no slot changed)."""
    off = np.clip(np.asarray(br_off, float), [0.2, 0.8], [4.0, 4.0])
    return {j for j in js if any(k != j and np.hypot(*(uv[j] - off - uv[k])) < 0.6 for k in js)}


def pile_order(reads: list[CardRead], pile: list[int], uv: np.ndarray, br_off: np.ndarray) -> list[int]:
    """A waste pile's reads bottom to top: the cards seen only by a bottom-right index lie under
    the others (see ``_low_reads``); the rest lie left to right by their top-left index (a fanned
    draw-3 waste). All reads of one card share its place."""
    low = low_reads(pile, uv, br_off)
    key: dict[Card, tuple[bool, float]] = {}
    for j in pile:
        k = (j not in low, float(uv[j][0]))
        old = key.get(reads[j].card)
        if old is None or (k[0] and not old[0]) or (k[0] == old[0] and k[1] < old[1]):
            key[reads[j].card] = k
    return sorted(pile, key=lambda j: key[reads[j].card])
