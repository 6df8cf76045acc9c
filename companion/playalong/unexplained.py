"""What the follower does with a view no legal continuation explains, and with the waits it starts.

A view no move explains is rarely the person's doing at once: the first card of a pair lifted
(``_first_of_pair``: pending until the pair completes, the card comes back, or ``lone_s`` passes,
``_lone_timed_out``), a card read on a slot the game has empty, a waste pile read empty over cards,
a waste top lifted over a card the camera named when it was turned (the next view decides: the top
back is a lift, not back that card was misread and drawn again, ``_settle_beneath``), one removed
card read again for a view, a stock card misread when it was turned (``revisions``), or a table that
moved on past a view said illegal (its best explanation from a larger search). Only what is left is
said illegal, once per distinct reason.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Optional

from companion.cards import Card
from companion.playalong.events import CHECK, ILLEGAL, Event
from companion.playalong.lone import LoneCard, lone_card, waste_unread
from companion.playalong.misreads import diagnose, legal_removal, open_cards, pyramid_moved_legally
from companion.playalong.view import Observation, expected_pyramid


class UnexplainedViews:
    """The part of :class:`~companion.playalong.follower.Follower` for views no move explains (its
    state: ``game``, ``rules``, ``status``, ``events``, the lone card and waits, the last illegal;
    ``_process``, ``_explain``, ``_record`` and the revisions)."""

    def _unexplained(self, state: Any, obs: Observation, fixed: Observation, wrong: list[str],
                     lone: Optional[LoneCard], beneath: Optional[tuple[Observation, Card]],
                     phantoms: list[tuple], waste_unread_ok: bool) -> list[Event]:
        """No legal continuation explains ``fixed`` (``obs`` as the eye check corrected it): a wait
        (a card lifted, a misread for a view), a revision of the record, or what the person did."""
        new: list[Event] = []
        # misread slots are the eye's doing: say what the person did with the cards
        text = diagnose(state, fixed, wrong, self.game.moves, self.max_moves)
        if not wrong and self._first_of_pair(state, fixed):
            # one open card lifted: usually the first card of a pair. Decide on
            # the next view: the pair completed, or the card put back (then it was illegal).
            # The same card still the only one gone (another view only by a misread
            # elsewhere): the wait goes on (``tick`` ends it).
            gone = [c for c in open_cards(state) if c not in fixed.visible()]
            if lone is None or set(gone) != set(lone.cards):
                lone = lone_card(self.rules, state, obs, gone, text)
            self._lone = lone
            if len(gone) == 1 and self._learned_beneath_lifted(fixed):
                self._beneath = beneath or (fixed, gone[0])  # or the card beneath drawn again
            self.status = "pending"
            return new
        if phantoms and legal_removal(state, fixed, []):  # ``fixed`` has their slots empty
            # a card read on a slot the game has empty, and which no move could have put
            # there (no removed card put back, none moved from elsewhere on the table: a
            # card of the stock): the eye's doing, not the person's. With no illegal
            # removal besides (the cards gone, if any, make a legal move), ask, don't
            # accuse; the next views decide (the reading gone, or what the person did).
            new += self._say_once(phantoms, obs.frame)
            self._lone = lone
            self._last_illegal = None
            self.status = "check"
            self.events.extend(new)
            return new
        if lone is None and not wrong and not waste_unread_ok and waste_unread(state, obs):
            # a waste pile seen empty where a card lies beneath its top: taking the top shows
            # that card, so the camera missed it; the next view decides, or ``lone_s`` from now
            self._lone = LoneCard(obs.frame, text, watched=tuple(sorted(obs.visible(), key=str)), unread=obs)
            self.status = "pending"
            return new
        if (waste_unread_ok and not wrong and waste_unread(state, fixed)
                and set(expected_pyramid(state)) - {None} <= fixed.visible()):
            # a waste pile read empty over cards for long, the pyramid as it was: no one empties
            # the waste by hand; the camera cannot read its card (g00566, a rendered whole game:
            # "8C: only a card worth 13 is removed alone" while three draws went unread)
            tops = ", ".join(str(p[-1]) for p, seen in zip(state.waste, fixed.waste) if p and not seen)
            new += self._say_once([(("waste unread", tops), f"check the waste: the camera sees no card "
                                                            f"there, the game has {tops}")], obs.frame)
            self.status = "check"
            self.events.extend(new)
            return new
        gone_now = frozenset(c for c in open_cards(state) if c not in fixed.visible())
        if self.status == "illegal" and gone_now and gone_now < self._illegal_gone:
            # The cards of an illegal removal put back one after the other: the same attempt,
            # not another (g00300: "QC: only a card worth 13 is removed alone" said between
            # 4D and QC coming back, after "QC+4D do not make 13").
            self.events.extend(new)
            return new
        if not wrong and beneath is None and len(gone_now) == 1 and self._learned_beneath_lifted(fixed):
            # a waste top gone and a learned card beneath it seen: the top lifted alone, or that
            # card misread when turned and drawn again now. The next view decides: the top back
            # (illegal), or not (g00548, g00502). No clock: a person thinks on after a draw
            # longer than anyone holds a card lifted.
            self._lone = LoneCard(obs.frame, text, cards=tuple(gone_now), beneath=True)
            self._beneath = (fixed, next(iter(gone_now)))
            self.status = "pending"
            return new
        # no removal in progress explains it: a stock card misread when it was turned, or one
        # turned and played at once while the fusion missed its view, maybe
        revised = None if wrong else (self._forget_learned(fixed) or self._moved_on(state, fixed))
        if revised is not None:
            self._last_illegal = None
            self.status = "check"
            self.events.extend(revised)
            return revised
        back = fixed.visible() & state.removed
        if (not wrong and len(back) == 1 and (lone is None or not lone.reread)
                and back <= {p[-1] for p in fixed.waste if p} | set(fixed.pyramid)
                and pyramid_moved_legally(state, fixed.with_pyramid(
                    tuple(None if c in back else c for c in fixed.pyramid)))):
            # one removed card read on the waste or on the pyramid, the pyramid otherwise as it
            # was or a legal removal from it: most often a card just turned, misread for a view
            # (g00504: KH taken and 8C, removed long before, read in the next draw's place), or
            # a card taken held over its slot (g00525: 5C, a frame after 8D+5C). Illegal if the
            # next view still shows it, or ``lone_s`` from now.
            self._lone = LoneCard(obs.frame, text, reread=True)
            self.status = "pending"
            return new
        if (not wrong and self.status == "illegal" and self._illegal_gone and gone_now > self._illegal_gone
                and not back):
            # the table moved on past a removal said illegal (more cards gone, none back): the
            # best explanation of it with a larger search, as the person's "accept the table"
            moved = self._best_explanation(state, fixed)
            if moved is not None and moved.moves:
                went = ", ".join(sorted(map(str, self._illegal_gone)))
                new.append(Event(obs.frame, CHECK, f"the table moved on after {went} went: recorded as "
                                                   "the best explanation of it; check"))
                new.extend(self._record(moved, obs.frame))
                self._last_illegal = None
                self.status = "check"
                self.events.extend(new)
                return new
        self.status = "illegal"
        if text != self._last_illegal:
            self._last_illegal = text
            self._illegal_gone = gone_now
            new.append(Event(obs.frame, ILLEGAL, text))
        self.events.extend(new)
        return new

    def _first_of_pair(self, state: Any, obs: Observation) -> bool:
        """One open card gone and nothing else changed but the card it uncovered (the waste or
        stock card beneath it): what lifting the first card of a pair looks like."""
        seen = obs.visible()
        open_now = set(open_cards(state))
        if self.rules.stock_playable and state.stock and state.stock[0] is not None:
            open_now.add(state.stock[0])
        gone = [c for c in open_now if c not in seen]
        if len(gone) != 1 or self.rules.is_king(gone[0]) or gone[0] not in state.available():
            return False
        if not any(self.rules.pairs(gone[0], c) for c in state.available() if c is not gone[0]):
            return False  # nothing open pairs with it: lifting it is illegal at once
        placed = {c for c in state.pyramid if c is not None}
        new = seen - open_now - placed
        if not new:
            return True
        if gone[0] in placed or len(new) > 1:
            return False
        # a waste / stock top lifted shows the card beneath: known there, or not yet seen
        (card,) = new
        below = {c for p in state.waste for c in p[-2:-1]} | set(state.stock[1:2])
        return card in below or card in state.unseen()

    def _lone_timed_out(self, frame: int, sightings: Optional[Mapping[Card, int]] = None) -> list[Event]:
        """A lone card gone for longer than ``lone_s`` was not the first card of a pair.

        Not while a view only a guessed hidden draw explains is waiting: after a blocked view the
        card may as well have been paired with a stock card turned out of sight (a rendered game:
        "JS removed alone" said while JS+2C had been played behind the hand). The next view
        decides: the card back (illegal, said then) or the table moving on (the guess stands)."""
        if self._lone is not None and not self._lone.blocked and self._lone.view_blocked(frame, sightings):
            self._lone = replace(self._lone, blocked=True)
        if self._lone is not None:
            self._lone = self._lone.note_view(frame, sightings)
        if self._lone is None or not self._lone.due(frame, self.fps, self.lone_s, sightings):
            return []
        if self._pending is not None and self._pending_guess:
            return []
        if self._lone.unread is not None:
            view, self._lone = self._lone.unread, None
            return self._process(view, waste_unread_ok=True)
        text, self._illegal_gone = self._lone.text, frozenset(self._lone.cards)
        self._lone = None
        self._pending = None
        self.status = "illegal"
        self._last_illegal = text
        event = Event(frame, ILLEGAL, text)  # said now, while the person still holds the card
        self.events.append(event)
        return [event]

    def _settle_beneath(self, view: Observation) -> list[Event]:
        """``view``'s learned card beneath a waste top gone made unknown and ``view`` explained so
        (its events said), or nothing where that does not explain it."""
        revised = self._forget_learned(view, beneath_ok=True)
        if not revised:
            return []
        self._last_illegal = None
        self.status = "check"
        self.events.extend(revised)
        return revised

    def _settle_waiting(self, waiting: Observation, obs: Observation) -> list[Event]:
        """Record the waiting view by its guess, then explain ``obs`` from there."""
        now = self._prev_visible
        self._prev_visible = set(self._pending_before)
        try:
            events = self._process(waiting, allow_guess=True)
        finally:
            self._prev_visible = now
        return events + self._process(obs)
