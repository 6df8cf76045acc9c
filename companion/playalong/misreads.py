"""The table against the record: what the eye misread, and what the person did, in words.

``eye_check`` takes slots read as another card than the confirmed one for misreads (unless the
confirmed card lies elsewhere: moved by hand); ``phantom_cards`` finds cards read on slots the game
has empty that no move can have put there; ``doubtful_readings`` offers observations with one
weak slot, or the waste, read the way the game expects, or a slot read as the bared second index of
the card up-left of it as empty; ``unread_waste`` offers a waste pile read empty over cards as its
top left or taken; ``diagnose`` says why no legal continuation explains a table. Used by
:class:`companion.playalong.Follower`.
"""

from __future__ import annotations

from typing import Any, Iterable

from companion.cards import Card
from companion.layout import br_cover_of
from companion.moves import Move
from companion.playalong.view import Observation, expected_pyramid, slot_name

#: Below this score an empty/occupied reading is doubted before a move is called illegal.
LOW_SCORE = 0.6


def eye_check(state: Any, obs: Observation) -> tuple[Observation, list[tuple], list[str]]:
    """Correct slots that read a different card than the confirmed one (misreads).

    Returns the corrected observation, ``((slot, card), text)`` checks, and the
    "wrong place" problems that are the person's doing (a card moved).
    """
    expected = expected_pyramid(state)
    pyramid = list(obs.pyramid)
    checks: list[tuple] = []
    fixed_slots: set[int] = set()
    # Until nothing changes: a slot whose confirmed card is seen nowhere else was misread.
    # Fixing one can clear another (QC misread as QS, and QS's own slot misread as 2C: once
    # the first is fixed, QS is seen nowhere else either).
    changed = True
    while changed:
        changed = False
        seen = obs.with_pyramid(tuple(pyramid)).visible()
        for s, (exp, got) in enumerate(zip(expected, obs.pyramid)):
            if s in fixed_slots or got is None or got is exp or exp is None or exp in seen:
                continue
            pyramid[s] = exp
            fixed_slots.add(s)
            changed = True
            checks.append(((s, got), f"check {slot_name(s)}: the camera reads {got}"
                           f"{score_text(obs, s)}, the game has {exp}{alt_text(obs, s, exp)}"))
    seen = obs.with_pyramid(tuple(pyramid)).visible()
    wrong = [f"{exp} is in the wrong place: it belongs at {slot_name(s)}, which now shows {got}"
             for s, (exp, got) in enumerate(zip(expected, obs.pyramid))
             if s not in fixed_slots and got is not None and got is not exp and exp is not None
             and exp in seen]  # the confirmed card lies elsewhere now: moved by hand
    fixed = obs.with_pyramid(tuple(pyramid)) if checks else obs
    return fixed, checks, wrong


#: Slots the game holds cards on that the camera did not see (read empty with no score: outside the
#: picture, or under cards no read came from) that make a view too partial to judge: a model's miss
#: is one slot (rendered whole games: at most 1 in a view, but 14-15 in g00520, a close-up).
OUT_OF_VIEW_SLOTS = 3


def unseen_slots(state: Any, obs: Observation) -> list[int]:
    """The pyramid slots the game holds a card on that the camera read empty without seeing them."""
    expected = expected_pyramid(state)
    return [s for s, (exp, r) in enumerate(zip(expected, obs.readings))
            if exp is not None and r.card is None and r.score < 0.05]


#: How deep in a draw-1 waste pile a card read as its top may lie and be taken for a corner of it
#: showing (``buried_waste_card``): just beneath the top, the top may have been lifted (``lone``);
#: deeper than a few cards, the record more likely lost its place in the stock.
BURIED_DEPTHS = (2, 7)


def doubtful_readings(state: Any, obs: Observation, rules: Any, clear_view: bool,
                      doubts: frozenset = frozenset(), after_draw: bool = False
                      ) -> Iterable[tuple[Observation, list[tuple]]]:
    """Observations with one doubtful slot read the way the game expects it. ``doubts``: cards
    the record named by a guess or by the deal as the camera read it (``doubtful_waste``);
    ``after_draw``: the record's last move is a draw (``buried_waste_card``)."""
    expected = expected_pyramid(state)
    for s, (exp, got) in enumerate(zip(expected, obs.pyramid)):
        if exp is got:
            continue
        reading = obs.readings[s] if s < len(obs.readings) else None
        if reading is None:
            continue
        alts = {c for c, p in reading.alternatives if p >= 0.1}
        if reading.score < LOW_SCORE or (exp is not None and exp in alts):
            pyramid = list(obs.pyramid)
            pyramid[s] = exp
            what = f"reads {got}" if got is not None else "sees no card"
            text = (f"check {slot_name(s)}: the camera {what}{score_text(obs, s)}, the game has "
                    f"{exp if exp is not None else 'no card there'}")
            yield obs.with_pyramid(tuple(pyramid)), [((s, got), text)]
    if after_draw and clear_view:
        yield from buried_waste_card(state, obs, rules)
    yield from doubtful_waste(state, obs, rules, clear_view, doubts)
    yield from bared_indices(state, obs, rules)


def buried_waste_card(state: Any, obs: Observation, rules: Any) -> Iterable[tuple[Observation, list[tuple]]]:
    """A draw-1 waste top read as a card the record holds two to seven cards deeper in the pile,
    just after a draw: a corner of that card showing past the cards over it (a pile is never
    squared up), not that card turned again. Rendered whole games, the camera's reading of such a
    card taken for a misread when it was turned ("8S is seen again", ``_forget_learned``): 9 of 10
    such views were a card beneath the top (g00501: AC on the waste, 8S's corner read; a draw
    recorded twice and 10 of 70 moves lost)."""
    if rules.draw != 1 or obs.loose or len(state.waste) != 1 or len(obs.waste) != 1 or not obs.waste[0]:
        return
    pile, read = state.waste[0], obs.waste[0][-1]
    depth = next((len(pile) - 1 - i for i, c in enumerate(pile) if c is read), None)
    if depth is None or not BURIED_DEPTHS[0] <= depth <= BURIED_DEPTHS[1] or pile[-1] is None:
        return
    yield (obs.with_waste(((pile[-1],),)),
           [(("waste", (read,)), f"check the waste: the camera reads {read}, a card deeper in the pile; "
                                 f"the game has {pile[-1]}")])


def bared_indices(state: Any, obs: Observation, rules: Any) -> Iterable[tuple[Observation, list[tuple]]]:
    """A slot whose card was read as another card of the rank of the card up-left of it, still in
    place: that card's second index, bared as the slot's card was taken, misread by suit (a rendered
    whole game, g00521: JD taken with 2S, 2C's second index read 2S on JD's slot for the rest of the
    game, every later move "taken while still covered"); or read as another card with that one a
    likely runner-up, or as a card the record holds off the pyramid. The slot seen empty."""
    expected = expected_pyramid(state)
    under = br_cover_of(rules.rows, rules.inverted)
    for m, s in enumerate(under):
        exp, up_left = (expected[s], expected[m]) if s >= 0 else (None, None)
        if exp is None or up_left is None or obs.pyramid[s] is not exp or obs.pyramid[m] is not up_left:
            continue
        reading = obs.readings[s] if s < len(obs.readings) else None
        got = reading.card if reading is not None else None  # before ``eye_check`` named it
        if got is None or got is exp or exp.rank == up_left.rank:
            continue
        # read as that index (its rank, or that card a likely runner-up: g00608, 7C's index read
        # AC, 2C, 7C as 4C was taken), or as a card the record holds off the pyramid
        if not (got.rank == up_left.rank or up_left in {c for c, p in reading.alternatives if p >= 0.1}
                or got in state.removed or any(got in pile for pile in state.waste)):
            continue
        pyramid = list(obs.pyramid)
        pyramid[s] = None
        yield obs.with_pyramid(tuple(pyramid)), [(
            (s, got), f"check {slot_name(s)}: the camera reads {got}{score_text(obs, s)}, taken for the second "
                      f"index of {up_left} ({slot_name(m)}) bared as {exp} was taken")]


def unread_waste(state: Any, obs: Observation) -> Iterable[tuple[Observation, list[tuple]]]:
    """A waste pile seen empty where the game has two cards or more, while pyramid cards are gone:
    its top taken in a pair with the card beneath it unread, or left in place (a rendered whole
    game, g00526: TC+3D, the AD beneath read at 0.26 as 2D or QD; the waste seen empty for the rest
    of the game and every later move "taken while still covered"). For explanations that guess no
    hidden card: a guess explains a lone card gone as easily (g00524: JC+2C read as draw, JH+2C)."""
    if obs.loose or len(obs.waste) != len(state.waste):
        return
    expected = expected_pyramid(state)
    if not any(e is not None and g is None for e, g in zip(expected, obs.pyramid)):
        return  # nothing gone: the next view shows the card, or the wait says what happened
    for i, (pile, seen) in enumerate(zip(state.waste, obs.waste)):
        if seen or len(pile) < 2:
            continue
        for top in (pile[-2], pile[-1]):
            if top is not None:
                waste = obs.waste[:i] + ((top,),) + obs.waste[i + 1:]
                yield obs.with_waste(waste), [(("waste unread", top), f"check the waste: the camera sees no "
                                                                   f"card there, taken for {top}")]


def doubtful_waste(state: Any, obs: Observation, rules: Any, clear_view: bool,
                   doubts: frozenset = frozenset()) -> Iterable[tuple[Observation, list[tuple]]]:
    """The pyramid as the game has it, the view clear since the last layout, and a waste top
    that no legal draw can have turned (a stock card whose place is known, too deep for the
    one or two draws a clear view allows, or a card of the pyramid): the camera misread the
    waste (a glare, a hand's edge, the stock's back), which is no move; or, where the card the next
    draw turns is of its rank and colour, that card (8S read for 8C). A removed card seen again is
    the person's doing, reported as such, unless the card one of the next two draws turns looks like
    it (a rendered whole game, g00528: QH turned after a draw the fusion missed, read KH, "KH
    reappears" said and 27 of 94 moves lost), or, the next card unknown (the first pass), a card
    never seen that looks like it (``lookalikes``), or the card under the top (the top taken).
    Not a card in ``doubts`` (named by a guess, or by the deal as the camera read it): seen
    again, the record is wrong, not the eye."""
    if obs.loose or len(obs.waste) != len(state.waste):
        return
    if not clear_view or obs.pyramid != expected_pyramid(state):
        # (after a blocked view, many draws may have turned an odd card: not the eye's doing; but a
        # removed card still read where it looks like the top, or the card under it, is the eye's)
        yield from _top_or_under_misread(state, obs, rules, doubts)
        return
    known = set(state.pyramid) | {c for c in state.stock if c is not None}
    odd = [c for p in obs.waste for c in p if c not in state.removed and c in known]
    back = [c for p in obs.waste for c in p if c in state.removed]
    if (rules.draw == 1 and len(state.waste) == 1 and len(odd) + len(back) == 1 and obs.waste[0]
            and obs.waste[0][-1] in odd + back):
        read = obs.waste[0][-1]
        # (a card the record holds elsewhere may be right where the record's stock order is not:
        # only the next draw, a suit of the same colour, as before)
        near = (state.stock[:2] if read in back
                else [c for c in state.stock[:1] if c is not None and c.rank == read.rank])
        turned = next((c for c in near if c is not None and looks_alike(read, c)), None)
        top = state.waste[0][-1] if state.waste[0] else None
        if read in back and top is not None and looks_alike(read, top):
            # the card on the waste, read as a removed one it looks like (g00580: JS turned, read
            # right, then QS, taken long before: a draw and a deal "corrected" to QD, the rest lost)
            yield (obs.with_waste(((top,),)),
                   [(("waste", (read,)), f"check the waste: the camera reads {read}, the game has {top}")])
        under = state.waste[0][-2] if len(state.waste[0]) >= 2 else None
        taken = read in back and read not in doubts  # (a card in doubts seen again: the record is wrong)
        if turned is None and taken and state.stock and state.stock[0] is not None:
            # the next card known (a later pass): a removed card on the waste is that card misread,
            # whatever it looks like (no one puts a removed card back on the waste; rendered whole
            # games, n96: 7S read AS, 7H read AH, 8H read JH, each "reappears")
            turned = state.stock[0]
        if taken and under is not None and looks_alike(read, under):
            # the top taken, the card under it read as a removed one it looks like (g00621: KC
            # taken alone, the QH under it read KH again)
            yield (obs.with_waste(((under,),)),
                   [(("waste", (read,)), f"check the waste: the camera reads {read}, the game has {under}")])
        if turned is not None:
            yield (obs.with_waste(((turned,),)),
                   [(("waste", (read,)), f"check the waste: the camera reads {read}, the game has {turned}")])
        elif state.stock and state.stock[0] is None and (taken or (
                read in odd and (top is None or not looks_alike(read, top)))):
            # the next card unknown (the first pass): a card not seen yet that looks like it,
            # turned (g00621: QH turned, read KH, "KH reappears" said and its draw never recorded;
            # 41 such "reappears" said in 80 rendered games, none true); so too a card the game
            # holds elsewhere, unlike the top (g00542: 8H turned, read JH, on the pyramid: taken
            # for the top misread, the draw lost and the stock's order with it)
            where = "taken before" if taken else "on the table"
            for card in lookalikes(read, state.unseen()):
                yield (obs.with_waste(((card,),)),
                       [(("waste", (read,)), f"check the waste: the camera reads {read} ({where}), "
                                             f"taken for {card}, a card not seen yet that looks like it")])
    if not odd:
        return
    said = ", ".join(map(str, odd))
    waste = tuple(tuple(c for c in pile[-len(seen):] if c is not None) if seen else ()
                  for pile, seen in zip(state.waste, obs.waste))
    tops = ", ".join(str(p[-1]) for p in waste if p) or "nothing there"
    yield obs.with_waste(waste), [(("waste", tuple(odd)),
                                   f"check the waste: the camera reads {said}, the game has {tops}")]


def _top_or_under_misread(state: Any, obs: Observation, rules: Any,
                          doubts: frozenset) -> Iterable[tuple[Observation, list[tuple]]]:
    """A removed card, or one the record holds elsewhere, read on the waste, with the pyramid changed
    or after a blocked view: the waste top, where it looks like it (the misread a clear view
    corrects, kept while the person plays on the pyramid); or, where the top was taken in a pair with
    the open cards gone from the pyramid, the card under the top where it looks like it, or whatever
    it looks like where the record holds it deeper in the pile: the record's order of the pile was
    wrong there, or the read is. Rendered whole games: g00542, JD turned and read QD, taken before;
    QS+AS taken from over it, then KS, 9D+4S under a hand: "QD reappears" said and 23 moves lost;
    g00561, TC+3D, the 4S under 3D in the pile where the record had QH between: "TC, 3D gone: no
    legal sequence explains it" (14 such said wrongly of two cards in 119 games, 2 left)."""
    pile = state.waste[0] if len(state.waste) == 1 else ()
    if rules.draw != 1 or not pile or pile[-1] is None or len(obs.waste[0]) != 1:
        return
    read, top = obs.waste[0][-1], pile[-1]
    known = set(state.pyramid) | {c for c in state.stock if c is not None} | {c for c in pile[:-2] if c is not None}
    if read not in state.removed and read not in known:
        return  # (a card never seen: a draw may have turned it)
    if looks_alike(read, top):
        yield (obs.with_waste(((top,),)),
               [(("waste", (read,)), f"check the waste: the camera reads {read}, the game has {top}")])
    under = pile[-2] if len(pile) >= 2 else None
    if read in doubts or under is None or not (looks_alike(read, under) or read in pile[:-2]):
        return
    expected = expected_pyramid(state)
    gone = [e for e, got in zip(expected, obs.pyramid) if e is not None and got is None]
    if not gone or any(got is not e for e, got in zip(expected, obs.pyramid) if got is not None):
        return  # (only cards gone from the pyramid, none read otherwise)
    if Move.remove(top, *gone) not in state.legal_moves():
        return
    yield (obs.with_waste(((under,),)),
           [(("waste", (read,)), f"check the waste: the camera reads {read}, the game has {under}")])


#: (rank read, rank there) the shipped index nets confuse most on decks held out of training
#: (rendered games' deal frames, of 30,207 pyramid slots: 7 read A 125 times, J read Q 81, 8 read J 40).
COMMON_MISREADS = frozenset({(1, 7), (12, 11), (11, 8)})


def lookalikes(card: Card, among: Iterable[Card]) -> list[Card]:
    """The cards of ``among`` that look like ``card`` (``looks_alike``) when the camera read
    ``card``, likeliest first: the model's common misreads (``COMMON_MISREADS``), then a court
    letter next to its own (Q for K), then the same rank in the other suit of its colour."""
    alike = [c for c in among if c is not card and looks_alike(card, c)]
    return sorted(alike, key=lambda c: (c.suit != card.suit, (card.rank, c.rank) not in COMMON_MISREADS,
                                        abs(c.rank - card.rank), c.index))


def looks_alike(a: Card, b: Card) -> bool:
    """Index misreads the camera makes: a suit of the same colour (8S for 8C), courts of one
    suit (J, Q and K letters read one for another), and, in one suit, the model's common misreads
    (``COMMON_MISREADS``: 7 read as A, 8 as J on decks held out of training; "AS reappears at the
    waste" said of a 7S)."""
    return ((a.rank == b.rank and (a.suit in "DH") == (b.suit in "DH"))
            or (a.suit == b.suit and a.rank >= 11 and b.rank >= 11)
            or (a.suit == b.suit and bool({(a.rank, b.rank), (b.rank, a.rank)} & COMMON_MISREADS)))


def diagnose(state: Any, obs: Observation, wrong: list[str], history: Any, max_moves: int) -> str:
    """Why no legal continuation explains the table, in words."""
    seen = obs.visible()
    problems = list(wrong)
    removed = state.removed
    for c in sorted(seen & removed, key=lambda c: c.index):
        when = next((i + 1 for i, m in enumerate(history) if c in m.cards), None)
        problems.append(f"{c} reappears at {obs.where(c)}" +
                        (f" (removed by move {when}, {history[when - 1]})" if when else ""))
    expected = expected_pyramid(state)
    for s, (exp, got) in enumerate(zip(expected, obs.pyramid)):
        if exp is None and got is not None and got not in removed:
            problems.append(f"{got} is in the wrong place: {slot_name(s)} is empty in the game")
    if problems:
        return "; ".join(problems)
    covered = [c for s, c in enumerate(state.pyramid)
               if c is not None and c not in seen and not state.exposed_mask >> s & 1]
    if covered:
        return "; ".join(f"{where_is(state, c)}: taken while still covered" for c in covered)
    vanished = [c for c in open_cards(state) if c not in seen]
    vanished.sort(key=lambda c: (-c.rank, c.suit))
    if 1 <= len(vanished) <= 2:
        move = Move.remove(*vanished)
        why = state.why_illegal(move)
        if why:
            return why if why.startswith(str(move)) else f"{move}: {why}"
    if vanished:
        return (f"{', '.join(map(str, vanished))} gone: no legal sequence of up to "
                f"{max_moves} moves explains it")
    new_cards = [c for c in seen if c in state.unseen()]
    if new_cards:
        return (f"{', '.join(map(str, new_cards))} turned up on the table, but no legal draw "
                f"explains it" + (" (the stock is used up)" if not state.stock else ""))
    return "the table does not match any legal continuation of the game"


def open_cards(state: Any) -> list[Card]:
    """Cards a person sees face up in ``state`` outside face-down rows."""
    cards = [c for c in expected_pyramid(state) if c is not None]
    cards += [p[-1] for p in state.waste if p and p[-1] is not None]
    cards += [c for c in state.cells if c is not None]
    cards += [c for c in state.reserve if c is not None]
    return cards


def where_is(state: Any, card: Card) -> str:
    """``"QH is covered by 7C and 2D"`` from the engine when it says so, else the card."""
    try:
        from companion.game.reasons import where
        return where(state, card) or str(card)
    except (ImportError, AttributeError):
        return str(card)


def score_text(obs: Observation, s: int) -> str:
    if s < len(obs.readings):
        return f" ({obs.readings[s].score:.0%})"
    return ""


def alt_text(obs: Observation, s: int, card: Card) -> str:
    if s < len(obs.readings):
        for c, p in obs.readings[s].alternatives[1:]:
            if c is card:
                return f" (the camera's runner-up reading, {p:.0%})"
    return ""


def phantom_cards(state: Any, obs: Observation, known: frozenset = frozenset()) -> list[tuple]:
    """``((slot, card), text)`` for each pyramid slot the game has empty that reads a card no
    move can have put there: not removed (put back), not on the table elsewhere (moved by
    hand), so a card of the stock or one never seen: a misread (the corner of the card
    beneath, a glare). A waste card the camera reads on its pile too is one as well: one card
    lies in one place (g00405: 6H's second index read as 8H, once 8H was drawn); so is one under
    the top, or the top with a card never seen read over it (drawn on it). ``known``: the
    ``(slot, card)`` readings taken for misreads before; the same reading again is one still, even
    once that card is in play or removed (the person lifting 8H from the waste to pair it)."""
    expected = expected_pyramid(state)
    on_waste = {c for p in state.waste for c in p if c is not None}
    on_table = {c for c in state.pyramid if c is not None} | on_waste
    in_its_place = on_waste & {c for p in obs.waste for c in p}
    # a waste card under the top, or a top with a new card read over it (a draw): no hand digs
    # it out (g00565: AS under a 6S drawn, read on row 5 card 2, emptied: "in the wrong place")
    for pile, seen in zip(state.waste, obs.waste):
        if seen and pile and seen[-1] not in on_table:
            in_its_place |= {c for c in pile if c is not None}
        else:
            in_its_place |= {c for c in pile[:-1] if c is not None}
    removed = state.removed
    return [((s, got), f"check {slot_name(s)}: the camera reads {got}, the game has no card there")
            for s, (exp, got) in enumerate(zip(expected, obs.pyramid))
            if exp is None and got is not None and ((s, got) in known or (
                got not in removed and (got not in on_table or got in in_its_place)))]


def legal_removal(state: Any, obs: Observation, slots: list[int]) -> bool:
    """With ``slots`` read as the game has them (empty), the open cards gone are none, or one
    legal removal (a king, a pair making the sum)."""
    pyramid = list(obs.pyramid)
    for s in slots:
        pyramid[s] = None
    seen = obs.with_pyramid(tuple(pyramid)).visible()
    vanished = [c for c in open_cards(state) if c not in seen]
    if not vanished:
        return True
    return removal_is_legal(state, vanished)


def removal_is_legal(state: Any, cards: list[Card]) -> bool:
    """Whether taking ``cards`` (one or two) together is a legal removal in ``state``."""
    if not 1 <= len(cards) <= 2:
        return False
    try:
        return not state.why_illegal(Move.remove(*cards))
    except Exception:  # noqa: BLE001 - no such move at all
        return False


def pyramid_moved_legally(state: Any, obs: Observation) -> bool:
    """The pyramid in ``obs`` as ``state`` has it, or with the cards of one legal removal gone (a
    king, a pair, or a card paired with the waste top)."""
    expected = expected_pyramid(state)
    if any(g is not None and g != e for g, e in zip(obs.pyramid, expected)):
        return False
    gone = [e for e, g in zip(expected, obs.pyramid) if e is not None and g is None]
    if not gone:
        return True
    tops = [p[-1] for p in state.waste if p and p[-1] is not None]
    return any(removal_is_legal(state, cards) for cards in [gone] + [gone + [t] for t in tops])
