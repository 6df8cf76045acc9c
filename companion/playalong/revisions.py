"""Revising the record when a later view shows it was inferred wrong (a ``Follower`` mixin).

Six ways, tried by ``Follower._process`` and ``UnexplainedViews._unexplained`` when no legal
continuation explains a view: a card once guessed as a hidden pair's partner, or named by the camera
when it was turned and taken in a pair, turns up (``_revise_guess``: the pair used another card of
its rank); the deal read from the view was misread (``_correct_deal``: the slots as the camera reads
them otherwise, a removed card turned up from the stock, the camera's runner-up readings:
``deal_reads``); a card never seen turns up on a later pass where the record expects one learned in
the first (``_missed_earlier``: a first-pass draw missed, put back: ``hidden_draws.reinsert``); an
inferred change before was wrong (``_revise``: a hidden double draw or a wrong guess shows only
later, explained again from a checkpoint); a stock card the camera misread when it was turned
(``_forget_learned``: that card unknown again, or named as the card that makes the pair it was
taken in, or, glimpsed by the camera just now while the record holds it under the waste top, turned
now and taken in a pair at once); a removal said illegal whose cards stayed gone while the game
went on, or that cleared the pyramid (``_moved_on``: a stock card turned and played at once, its
view missed). Each replays the recorded moves on a corrected deal or from a checkpoint, never drops
a move the person entered, and says what it changed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping, Optional

from companion.cards import Card
from companion.game import Deal, Game
from companion.moves import DRAW, Move
from companion.playalong.deal_reads import corrected_games, same_rank_readings
from companion.playalong.events import CHECK, Event
from companion.playalong.explain import Explanation, unseen_partners
from companion.playalong.hidden_draws import Relocated, reinsert
from companion.playalong.knowledge import learn_waste
from companion.playalong.misreads import eye_check, looks_alike, open_cards
from companion.playalong.view import Observation, slot_name

#: A card the camera read this many seconds ago at most (in no stable view) was glimpsed just now: a draw
#: and a pair take about four seconds.
GLIMPSE_S = 4.0


class RecordRevisions:
    """The revisions of a :class:`~companion.playalong.follower.Follower` (its state: ``game``,
    ``rules``, the checks said and open, the guesses, the checkpoints; ``_explain``, ``_record``)."""

    game: Game
    rules: Any
    #: The cards the person's deal named (never forgotten, unlike cards the camera learned).
    _given: frozenset
    status: str
    #: The cards of the last removal said illegal.
    _illegal_gone: frozenset
    #: The frame each stock card was seen turned in the first pass.
    _turned_at: dict

    def _revise_guess(self, obs: Observation) -> Optional[list[Event]]:
        """A card once guessed as the partner of a hidden pair is seen again: the pair used
        another card of that rank. Swap the guess (same place in the deal) and replay. The same for
        a stock card the camera named when it was turned and that was taken in a pair: it was
        another card of its rank, one it looks like first (g00542: AC turned, read AS, and taken
        with QD; when AS itself turned, 14 moves later, "AS reappears" and 47 of 97 moves lost)."""
        seen = obs.visible()
        rules = self.rules
        deal = self.game.deal
        named = self._guessed | self._learned().keys()
        for wrong in sorted(named & seen & self.game.state.removed, key=lambda c: c.index):
            index = deal.cards.index(wrong)
            known = set(deal.known())
            for other in sorted(rules.deck_cards(), key=lambda c: (not looks_alike(c, wrong), c.index)):
                if other in known or other in seen or rules.value(other) != rules.value(wrong):
                    continue
                cards = list(deal.cards)
                cards[index] = other
                game = Game(rules, Deal(rules, cards))
                try:
                    for m in self.game.moves:
                        if wrong in m.cards:
                            m = Move.remove(*(other if c is wrong else c for c in m.cards))
                        game.play(m)
                except ValueError:
                    continue
                found = self._explain(game.state, obs, self.max_moves, self.max_nodes)
                if found is None:
                    continue
                self.game = game
                self._checkpoints.clear()
                if wrong in self._guessed:
                    self._guessed.discard(wrong)
                    text = f"{wrong} is on the table: the hidden pair used {other}, not {wrong} (record corrected)"
                else:
                    text = (f"{wrong} is on the table: the stock card the camera read as {wrong} when it was "
                            f"turned, and taken in a pair, was another card of its rank, assumed {other} "
                            "(record corrected)")
                self._guessed.add(other)  # a guess: a later sight of it corrects it again
                events = [Event(obs.frame, CHECK, text)]
                return events + self._record(found, obs.frame)
        return None

    def _checked_readings(self, checks: list[tuple]) -> dict[int, Card]:
        """The slots the camera reads as other cards (open checks and this view's), by slot."""
        return {k[0]: k[1] for k in list(self._open_checks) + [key for key, _ in checks]
                if isinstance(k[0], int) and isinstance(k[1], Card)}

    def _correct_given_deal(self, obs: Observation, checks: list[tuple]) -> Optional[list[Event]]:
        """A deal the person gave, with a slot the camera reads as a card that looks like the one
        dealt there while that one shows elsewhere (drawn from the stock): the person let a misread
        of the deal stand (g00649: AH confirmed on row 6 card 6, read 7H, a 7 the model reads as
        an A; "AH is in the wrong place" said when AH was drawn, every later view). The deal is
        corrected there only, as the camera reads it, where that explains the view."""
        state, seen = self.game.state, obs.visible()
        readings = {s: read for s, read in self._checked_readings(checks).items()
                    if s < len(state.pyramid) and state.pyramid[s] is not None
                    and state.pyramid[s] is self.game.deal.pyramid[s] and obs.pyramid[s] is read
                    and state.pyramid[s] in seen and looks_alike(read, state.pyramid[s])}
        return self._adopt_corrected_deal(obs, [(readings, "read")]) if readings else None

    def _correct_deal(self, obs: Observation, checks: list[tuple]) -> Optional[list[Event]]:
        """No legal continuation explains ``obs`` with the deal as read from the view (or only a
        guess at hidden cards does): try it with the slots the camera reads otherwise (open checks
        and this view's) as the camera reads them. On success the record, status and events follow."""
        readings = self._checked_readings(checks)
        # then with the other readings of earlier views too (a check closed since: the slot's
        # card flickered between two readings, and the deal took the wrong one)
        tries = [(readings, "read")]
        if {**self._read_otherwise, **readings} != readings:
            tries.append(({**self._read_otherwise, **readings}, "read"))
        # A removed card seen again (drawn from the stock) was never where the deal put it: its
        # slot as the camera read it otherwise, else another card of its rank (the move stays a pair).
        reappeared = frozenset(obs.visible() & self.game.state.removed)
        tries += [({slot: card}, "rank") for slot, card in same_rank_readings(self.rules, self.game, reappeared)]
        # Last, the cards gone from their slots as the camera's runner-up reading of those slots.
        state = self.game.state
        taken = [s for s, c in enumerate(state.pyramid) if c is not None and obs.pyramid[s] is not c]
        tries += [(t, "runner-up") for t in self._runner_ups.readings(taken)]
        return self._adopt_corrected_deal(obs, tries)

    def _adopt_corrected_deal(self, obs: Observation, tries: list[tuple[dict, str]]) -> Optional[list[Event]]:
        """The first deal re-read as one of ``tries`` (``({slot: card}, kind)``) that explains ``obs``
        with no guess, recorded and said; else None."""
        reappeared = frozenset(obs.visible() & self.game.state.removed)
        attempts = ((g, kind) for t, kind in tries
                    for g in corrected_games(self.rules, self.game, sorted(t.items()), reappeared))
        for (game, changed), kind in attempts:
            fixed, _, wrong = eye_check(game.state, obs)
            found = None if wrong else self._explain(game.state, fixed, None, None)
            if found is None or found.guessed:
                continue
            self.game = game
            self._checkpoints.clear()
            self._open_checks -= {(s, new) for s, (_, new) in changed.items()}
            self._said_checks.clear()
            fixes = ", ".join(f"{slot_name(s)} is {new}, not {old}" for s, (old, new) in changed.items())
            why = {"rank": f"{', '.join(str(old) for old, _ in changed.values())} turned up again; a card of "
                           "its rank never seen",
                   "runner-up": "the camera's other reading of it; the table makes sense only so"}.get(
                kind, "as the camera reads it; the table makes sense only so")
            events = [Event(obs.frame, CHECK, f"the deal was misread: {fixes} ({why}): record corrected")] + \
                self._record(found, obs.frame)
            self._last_illegal = None
            self.status = "check"
            self.events.extend(events)
            return events
        return None

    def _revise(self, obs: Observation, depth: int = 3, hidden: Optional[bool] = None) -> Optional[list[Event]]:
        """Explain ``obs`` from before one of the last inferred changes (a hidden double draw or a
        wrong guess shows only later); on success the inferred tail of the record is replaced.
        ``hidden``: may draws have happened out of sight (default: a real gap before this view)."""
        moves = self.game.moves
        for n_before, deal in reversed(self._checkpoints[-depth:]):
            if n_before >= len(moves):
                continue
            game = Game(self.rules, deal)
            for m in moves[:n_before]:
                game.play(m)
            found = self._explain(game.state, obs, self.max_moves + len(moves) - n_before, self.max_nodes, hidden)
            # (a pair guessed with a hidden card whose other card is back in view never was)
            back = self._guessed_pairs_back(obs, moves[n_before:])
            if found is None or not (self.game.state.removed - self._guessed - back) <= found.state.removed:
                continue
            # a removal of cards that were all seen stays as recorded: only guesses and hidden draws move
            solid = {m for m in moves[n_before:] if m.is_removal and not set(m.cards) & self._guessed}
            if not solid <= set(found.moves):
                continue
            # nor may it take cards that were not in view just before (other than its own guess)
            guess = {c for ls, _ in found.steps for c in ls if c not in obs.visible()}
            if not found.state.removed <= self.game.state.removed | self._prev_visible | guess:
                continue
            old = moves[n_before:]
            self.game = game
            self._guessed &= set(found.state.deal.cards)  # guesses of the tail replaced are gone
            self._checkpoints = [c for c in self._checkpoints if c[0] < n_before]
            self._hidden_points = [p for p in self._hidden_points if p.index < n_before]
            frame = obs.frame
            events = [Event(frame, CHECK, f"revised moves {n_before + 1}-{len(moves)}: "
                                          f"{' '.join(map(str, old))} -> "
                                          f"{' '.join(map(str, found.moves)) or '(none)'}")]
            return events + self._record(found, frame)
        return None

    def _guessed_pairs_back(self, obs: Observation, moves: Iterable[Move]) -> frozenset[Card]:
        """The cards of ``moves``' pairs made with a guessed hidden card whose other card is in view
        again (g00583: 9S+5H lifted behind a hand, explained as a hidden draw of 4C and 9S+4C, then
        put back: "9S reappears" said at every view to the next move)."""
        seen = obs.visible()
        return frozenset(c for m in moves if m.is_removal and set(m.cards) & self._guessed
                         and set(m.cards) & seen for c in m.cards)

    def _reinserted(self, obs: Observation, guess: bool = False) -> Optional[Relocated]:
        """``hidden_draws.reinsert`` for ``obs``; with ``guess``, a draw of a card never seen and
        played at once, out of sight (the view explained by a guess at it)."""
        return reinsert(self.rules, self.game, lambda st: self._explain(st, obs, None, None, hidden=guess or None),
                        obs.frame, self._turned_at, guess)

    def _missed_earlier(self, obs: Observation, guess: bool = False,
                        moved: Optional[Relocated] = None) -> Optional[list[Event]]:
        """A card never seen turned on a later pass where the record expects a card of the first:
        a first-pass draw went unseen (``hidden_draws.reinsert``); the record takes it back there.
        With ``guess``: a card never seen turned there and paired at once, the view only showing
        its partner gone (g00584: 8H missed in the first pass, turned and taken with 5D in the
        second between two views: "5D: only a card worth 13 is removed alone", 19 moves lost)."""
        expected = self.game.state.stock[0] if self.game.state.stock else None
        moved = moved or self._reinserted(obs, guess)
        if moved is None:
            return None
        self.game = moved.game
        self._checkpoints.clear()
        self._hidden_points = []  # (only the first pass's end uses them)
        named = [*moved.found.learned, *(c for learned, _ in moved.found.steps for c in learned)]
        new = ", ".join(map(str, named))
        what = "a card never seen, paired at once," if guess else new or "a card never seen"
        text = (f"{what} turned where the record expects {expected}: a draw of the first "
                f"pass went unseen; record corrected (move {moved.point.index + 1})")
        return [Event(obs.frame, CHECK, text)] + self._record(moved.found, obs.frame)

    def _forget_learned(self, obs: Observation, beneath_ok: bool = False) -> Optional[list[Event]]:
        """A stock card the camera named when it was turned (not one the person gave) was misread
        then: the view shows that card where the record cannot have it (on a waste top while the
        record holds it deeper in the pile), or shows another card where the record expects it (the
        next draw, a waste top), or that card taken in a pair it cannot make and never put back. That
        card is made unknown again (learned anew when next seen), the moves replayed, and the view
        explained with no guess; else, taken in a pair that was said illegal while the table moved on
        with its cards still gone, it is named as the card that makes the pair (its misread's suit
        first, then its rank: a guess, said, that a later sight of the card corrects, as a hidden
        pair's is). Rendered whole games: g00500, JH read as QH when turned; when QH itself
        was turned, 20 moves later, the record said "QS: only a card worth 13 is removed alone" and
        followed no move after; g00506, QH read as 8H, taken with AC: "8H+AC do not make 13"."""
        deal = self.game.deal
        learned = self._learned()
        if not learned:
            return None
        state = self.game.state
        seen = obs.visible()
        expected = list(state.stock[:3]) + [p[-1] for p in state.waste if p]
        # A card seen just beneath a waste top the view lacks may be that top lifted: not forgotten
        # unless ``beneath_ok`` (the view after it did not show the top put back; ``beneath_lifted``)
        lifted = set() if beneath_ok else beneath_lifted(state, seen)
        candidates = ([c for c in learned if c in seen and c not in lifted]
                      + [c for c in expected if c in learned and c not in seen])
        # A card the record holds under the waste top that the camera glimpsed just now (in frames no
        # stable view kept): turned now, and named wrongly before. Only a draw of it, unseen in a
        # stable view and played at once, may explain the view then (a rendered whole game, g00507:
        # 8H read JH when turned; JH turned 40 draws later, read in a few frames, taken with 2H:
        # "2H: only a card worth 13 is removed alone", and 25 moves lost)
        recent = obs.frame - GLIMPSE_S * self.fps
        buried = {c for p in state.waste for c in p[:-1]}
        glimpsed = [c for c in learned if c in buried and c not in seen and c not in candidates
                    and obs.last_seen.get(c, -1) >= recent]
        candidates += glimpsed
        # (named as a pair's partner only once an illegal removal of it was said and the table moved
        # on with its cards still gone: a removal put back was the person's, not the camera's doing)
        gone = self._gone_since_illegal(state, seen)
        for card in dict.fromkeys(candidates):
            partners = self._pair_partners(card, state, seen, obs.last_seen) if card in gone else []
            for named in (None, *partners):
                cards = list(deal.cards)
                cards[learned[card]] = named
                game = Game(self.rules, Deal(self.rules, cards))
                try:
                    for m in self.game.moves:
                        game.play(m)
                except ValueError:
                    break  # the card was played in a pair: seen surely then
                fixed, _, wrong = eye_check(game.state, obs)
                if wrong:
                    found = None
                elif card in glimpsed:  # (unknown, not named otherwise: the draw turned it)
                    found = self._glimpsed_pair(card, game.state, fixed) if named is None else None
                else:
                    found = self._explain(game.state, fixed, None, None)
                # (named: the pair it makes and a move after it, the table moved on meanwhile)
                if found is None or found.guessed or (named is not None and (
                        len(found.moves) < 2 or not any(named in m.cards for m in found.moves))):
                    continue
                self.game = game
                self._checkpoints.clear()
                if named is None:
                    where = ("seen again" if card in seen else "read just now, turned and played at once"
                             if card in glimpsed else "not where the record has it")
                    text = (f"{card} is {where}: the stock card the camera read as {card} when it was turned "
                            "was another card; record corrected (that card unknown until it is seen again)")
                else:
                    self._guessed.add(named)
                    text = (f"{card} cannot have been taken so: the stock card the camera read as {card} "
                            f"when it was turned was another card, assumed {named}; record corrected")
                return [Event(obs.frame, CHECK, text)] + self._record(found, obs.frame)
        return None

    def _glimpsed_pair(self, card: Card, state: Any, obs: Observation) -> Optional[Explanation]:
        """``obs`` from ``state`` (``card`` unknown there) explained by a draw that turned ``card`` and a
        pair that took it, no stable view between: the camera's glimpse of it names the card turned."""
        found = self._explain(state, obs, None, None, hidden=True)
        seen = obs.visible()
        if (found is None or [c for ls, _ in found.steps for c in ls if c not in seen] != [card]
                or not any(m.is_removal and card in m.cards for m in found.moves)):
            return None
        self._guessed.add(card)
        steps = list(found.steps)  # named by the draw that turned it, not by its pair
        k = next(i for i, (ls, _) in enumerate(steps) if card in ls)
        if k > 0 and steps[k - 1][1].kind == DRAW and not steps[k - 1][0]:
            steps[k - 1:k + 1] = [((card,), steps[k - 1][1]), ((), steps[k][1])]
        return replace(found, steps=steps, guessed=False)

    def _learned_beneath_lifted(self, obs: Observation) -> bool:
        """Whether ``obs`` shows a stock card the camera named when turned just beneath a waste top
        the view lacks: that top lifted (g00548: 2H lifted alone, AS beneath it "seen again", and
        both recorded as draws), or the card misread when turned and drawn again now (g00502: 4S
        read as AH on the first pass, AH turned at the end). The next view tells which."""
        return bool(self._learned().keys() & beneath_lifted(self.game.state, obs.visible()))

    def _learned(self) -> dict[Card, int]:
        """The stock cards the camera named when they were turned (not the person), by deal index."""
        first = self.rules.pyramid_size + self.rules.reserve
        return {c: i for i, c in enumerate(self.game.deal.cards) if i >= first and c is not None
                and c not in self._given}

    def _pair_partners(self, card: Card, state: Any, seen: frozenset, glimpsed: Mapping[Card, int]) -> list[Card]:
        """Cards never seen that ``card``'s place may hold to pair with an open card now gone (or a
        king, alone): those the camera glimpsed first (the latest first), then ``card``'s suit,
        then its rank, then the others."""
        gone = [c for c in state.available() if c not in seen and c is not card]
        return sorted(unseen_partners(state, seen, gone),
                      key=lambda c: (-glimpsed.get(c, -1), c.suit != card.suit, c.rank != card.rank, c.index))

    def _moved_on(self, state: Any, obs: Observation) -> Optional[list[Event]]:
        """An illegal removal said, and the table moved on with its cards still gone (never put
        back): a stock card turned and played with them at once, whose view the camera missed
        (no stable view between the draw and the pair), explains it as a blocked view's guess does:
        the draw, the pair with the card it turned (known, on a later pass; else a card never seen
        that makes the pair: a guess, said, that a later sight of the card corrects), then the rest
        of the view explained as usual (a rendered whole game,
        g00509: 7S turned and paired with 6D within two seconds; "6D: only a card worth 13 is
        removed alone", and nothing after was followed). Not while the cards may still come back:
        the table must show a move more, or the pyramid cleared (the game won: no move comes after)."""
        seen = obs.visible()
        gone = self._gone_since_illegal(state, seen)
        if not gone and not any(c is not None for c in obs.pyramid):
            # the last pyramid card taken: no move comes after to wait for (g00509: JH turned and
            # paired with 2C at once, "2C: only a card worth 13 is removed alone" ended the game)
            gone = frozenset(c for c in open_cards(state) if c not in seen)
        if not gone:
            return None
        partners = unseen_partners(state, seen, gone, kings=False, glimpsed=obs.last_seen)
        for draw in (m for m in state.legal_moves() if m.kind == DRAW):
            after = state.apply(draw)
            for pile, cards in enumerate(after.waste):
                if not cards:
                    continue
                # the card turned: known already (a later pass), or any never seen that pairs
                for card in (partners if cards[-1] is None else [cards[-1]]):
                    try:
                        named = after if cards[-1] is not None else learn_waste(after, pile, 0, card)
                    except ValueError:
                        continue
                    for pair in (m for m in named.legal_moves() if m.is_removal and card in m.cards
                                 and set(m.cards) - {card} <= gone):
                        rest = self._explain(named.apply(pair), obs, None, None)
                        # (a move more, or the pair that cleared the pyramid: no move comes after)
                        if rest is None or rest.guessed or not (rest.moves or rest.state.pyramid_cleared()):
                            continue
                        guess = cards[-1] is None
                        found = Explanation([((card,) if guess else (), draw), ((), pair)] + rest.steps, rest.state)
                        if guess:
                            self._guessed.add(card)
                        how = ("were the pyramid's last" if found.state.pyramid_cleared()
                               else "stayed gone while the game went on")
                        text = (f"{', '.join(map(str, sorted(gone, key=str)))} {how}: a stock card turned and "
                                f"played at once ({'assumed ' if guess else ''}{card}) took "
                                f"{'them' if len(gone) > 1 else 'it'}; record corrected")
                        return [Event(obs.frame, CHECK, text)] + self._record(found, obs.frame)
        # else any guess at hidden draws (the draw and pair with more unseen between), with a move
        # after the one taking the cards gone: the view changing by a misread flickering elsewhere
        # is no move more (g00544: 9H lifted alone, "assumed 4H" as 7S read AS on another slot)
        found = self._explain(state, obs, None, None, hidden=True)
        taking = [i for i, m in enumerate(found.moves) if m.is_removal and set(m.cards) & gone] if found else []
        if (found is None or not found.guessed or not taking
                or (taking[-1] == len(found.moves) - 1 and not found.state.pyramid_cleared())):
            return None
        guessed = [c for ls, _ in found.steps for c in ls if c not in seen]
        text = (f"{', '.join(map(str, sorted(gone, key=str)))} stayed gone while the game went on: "
                f"stock cards turned and played out of sight (assumed {', '.join(map(str, guessed))}); "
                "record corrected")
        return [Event(obs.frame, CHECK, text)] + self._record(found, obs.frame)

    def _gone_since_illegal(self, state: Any, seen: frozenset) -> frozenset:
        """The cards of the removal said illegal (said by the clock of a waste seen emptied: the
        open cards gone now) when all are still gone in a view that changed since; else none."""
        if self.status != "illegal":
            return frozenset()
        gone = self._illegal_gone or frozenset(c for c in open_cards(state) if c not in seen)
        return frozenset() if gone & seen else gone


def beneath_lifted(state: Any, seen: frozenset) -> set[Card]:
    """The cards just beneath a waste top that ``seen`` lacks, seen themselves (on top now)."""
    return {p[-2] for p in state.waste if len(p) >= 2 and p[-1] is not None and p[-1] not in seen
            and p[-2] in seen}
