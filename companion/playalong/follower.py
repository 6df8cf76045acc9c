"""Follow a physical game: stable table layouts in, recorded moves and readable events out.

``Follower(rules, deal)`` keeps a :class:`~companion.game.Game`. Each stable
layout is compared with the recorded position; a change is explained by the
shortest legal move sequence (``explain``), recorded, and reported as ``move``
events. A change no legal sequence explains is either the eye's fault (a slot
reading a card that contradicts a confirmed one: a ``check`` event naming the
slot) or the person's (an ``illegal`` event with the reason); the recorded game
then keeps its last legal position until the table matches a legal
continuation again, or the person overrides. Nothing recorded is ever dropped.

Hidden draws (a stock card turned and played out of sight) are believed only after
a real gap before the view: frames the stream skipped (``layout.extra["skipped"]``)
or a long time between stable layouts. Between two views seen clearly a draw shows
its card in a stable view before it is played, so an explanation then never plays a
card it turned. A second draw hidden behind the same hand shows only when the stock runs
out a card early; it is then put back at that blocked view, and one missed in a clear view where
a later pass turns its card (``hidden_draws``). One open
card gone (the first card of a pair being picked up) is ``pending`` until the pair
completes; it is illegal when the card comes back or stays gone longer than ``lone_s``
after the camera last read it (``tick`` tells the follower that frames went by without a
new layout). After a blocked view, when a stock card turned out of sight could have paired it,
the next view decides instead: the card back (illegal), or the table moved on with the card
still gone (the guessed draw and pair are recorded, with a check saying so). A waste pile read
empty over cards waits the same way; still unread after the wait, or in the next view, it is taken
for its top left or taken in the pair, with a check (``unread_waste``), and with the pyramid as it
was it is a check, not an illegal move (no one empties the waste by hand). A view no legal
continuation explains may show that the record was inferred wrong: ``revisions`` corrects it. A view
with several slots the game holds cards on read empty unseen (the pyramid partly out of the picture)
is not judged: a check asks to move the camera.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping, Optional

from companion.cards import Card
from companion.errors import IllegalMoveError, InvalidLayoutError
from companion.game import Deal, Game
from companion.layout import TableLayout
from companion.moves import DRAW, RECYCLE, Move
from companion.playalong.deal_reads import RunnerUps
from companion.playalong.events import CHECK, ILLEGAL, MOVE, Event
from companion.playalong.explain import Explainer, Explanation
from companion.playalong.hidden_draws import HiddenPoint, Relocated, blind_draws, relocate
from companion.playalong.lone import LoneCard, lone_card, waste_back
from companion.playalong.misreads import (BURIED_DEPTHS, OUT_OF_VIEW_SLOTS, diagnose, doubtful_readings, eye_check,
                                          open_cards, phantom_cards, unread_waste, unseen_slots)
from companion.playalong.revisions import RecordRevisions
from companion.playalong.unexplained import UnexplainedViews
from companion.playalong.view import Observation, expected_pyramid, observe, slot_name


def deal_from_layout(rules: Any, layout: TableLayout) -> Deal:
    """The deal as a first stable layout shows it: pyramid and reserve, stock unknown."""
    from companion.game.deal import face_down_slots
    hidden = face_down_slots(rules)
    pyramid = [s.card for _, _, s in layout.slots()]
    if len(pyramid) != rules.pyramid_size:
        raise InvalidLayoutError(f"layout of frame {layout.frame} has {len(pyramid)} pyramid slots, rules "
                                 f"{rules.name!r} need {rules.pyramid_size}")
    missing = [slot_name(i) for i, c in enumerate(pyramid) if c is None and i not in hidden]
    if missing:
        raise InvalidLayoutError(f"the first layout (frame {layout.frame}) is not a full deal: nothing seen "
                                 f"at {', '.join(missing)}")
    reserve = list(layout.reserve)[:rules.reserve]
    if len(reserve) < rules.reserve or None in reserve:
        raise InvalidLayoutError(f"the first layout shows {sum(c is not None for c in reserve)} reserve "
                                 f"cards, rules {rules.name!r} deal {rules.reserve}")
    return Deal.from_cards(rules, [None if i in hidden else c for i, c in enumerate(pyramid)], reserve)


class Follower(UnexplainedViews, RecordRevisions):
    """Follow one game. ``start``: a Deal, deal text, a first layout, or a Game to resume."""

    def __init__(self, rules: Any, start: Deal | str | TableLayout | Game, *, max_moves: int = 8,
                 max_nodes: int = 4000, fps: float = 30.0, gap_s: float = 6.0, blocked_s: float = 1.5,
                 lone_s: float = 2.0) -> None:
        self.rules = rules
        self.max_moves = max_moves
        self.max_nodes = max_nodes
        #: Frames per second of the layouts' frame numbers, to turn the limits below into frames.
        self.fps = fps
        #: A hidden draw (a stock card turned and played out of sight) is only believed after a
        #: real gap: this long between two stable layouts, or this long of frames the stream
        #: says it skipped (``layout.extra["skipped"]``, a hand or arm over the table). Between
        #: two views seen clearly a draw would have shown its card in a stable view of its own.
        self.gap_s = gap_s
        self.blocked_s = blocked_s
        #: A lone open card gone longer than this is reported illegal (else: the first card
        #: of a pair being picked up, waiting for the second).
        self.lone_s = lone_s
        self._prev_frame: Optional[int] = None
        self._skipped = 0  # frames the stream skipped since the last change
        self._gap = True
        self._unseen_frames = 0  # frames since the last stable layout (or skipped), for the current view
        self.events: list[Event] = []
        self.status = "ok"  # "ok" | "illegal" | "check" | "pending"
        self._last_sig: Optional[tuple] = None
        self._last_obs: Optional[Observation] = None
        self._waste_back = False  # this view shows a waste top the view before read empty
        self._last_illegal: Optional[str] = None
        #: The cards gone when that illegal removal was said (a part of them put back says nothing new).
        self._illegal_gone: frozenset[Card] = frozenset()
        self._open_checks: set[tuple] = set()
        #: Checks said since the deal was last corrected: a slot the camera reads two ways in turn
        #: (QS, JS, QS ...) is said once, not at every flicker (a rendered game: 13 checks -> 4).
        self._said_checks: set[tuple] = set()
        self._check_texts: dict[tuple, str] = {}  # what this view's checks say
        #: The last other card the camera read on each pyramid slot (a check, open or closed):
        #: a deal read from the view may be corrected to it (``_correct_deal``).
        self._read_otherwise: dict[int, Card] = {}
        #: The camera's other readings of each slot (a misread deal corrected by them).
        self._runner_ups = RunnerUps()
        #: (moves recorded before, deal as known before) of each inferred change, newest last:
        #: a later view that contradicts an inference may revise it (never a move entered by hand)
        self._checkpoints: list[tuple[int, Deal]] = []
        #: Stock cards named by guess (a draw and a pair hidden under a hand): a revision may
        #: bring these back, never a card seen removed.
        self._guessed: set[Card] = set()
        #: Cards face up in the view before the current one (a revision may only remove those).
        self._prev_visible: set[Card] = set()
        #: A view only a guessed hidden draw explains, waiting for the next one (see ``finish``).
        self._pending: Optional[Observation] = None
        self._pending_gap = False  # whether the view waited on (pending, a lone card's) came after a real gap
        #: The waiting view is one only a guess at hidden cards explains (not a recycle), and
        #: the cards face up in the view before it (what its explanation took as seen before).
        self._pending_guess = False
        self._pending_before: frozenset = frozenset()
        #: A lone open card lifted, waiting for the next view. The clock (``lone_s``) runs from
        #: the card's last sighting (1 s doubled the false warnings on the rendered games); it
        #: waits longer while a card it pairs with is out of sight (``companion.playalong.lone``).
        self._lone: Optional[LoneCard] = None
        #: A view showing a learned card just beneath a waste top gone (``_learned_beneath_lifted``),
        #: and that top, kept for the next view: the top not back there, the card is forgotten.
        self._beneath: Optional[tuple[Observation, Card]] = None
        #: Draws recorded right after a blocked view: where a second, unseen draw may hide.
        self._hidden_points: list[HiddenPoint] = []
        self._turned_at: dict[Card, int] = {}  # the frame each stock card was seen turned in the first pass
        first: Optional[TableLayout] = None
        #: The deal is the camera's reading (no one confirmed it): a misread slot may be corrected
        #: by the person's moves (``deal_reads``).
        self._deal_read = isinstance(start, TableLayout)
        if isinstance(start, Game):
            self.game = start
        elif isinstance(start, TableLayout):
            first = start
            self.game = Game(rules, deal_from_layout(rules, start))
        else:
            self.game = Game(rules, Deal.parse(start, rules) if isinstance(start, str) else start)
        self._given = self.game.deal.known()
        if first is not None:
            self.feed(first)

    # --- views ---------------------------------------------------------------------------
    @property
    def state(self) -> Any:
        return self.game.state

    @property
    def moves(self) -> tuple[Move, ...]:
        return self.game.moves

    # --- following -----------------------------------------------------------------------
    @property
    def checks(self) -> tuple[str, ...]:
        """What the open checks say (slots the camera reads otherwise now), said before or not."""
        return tuple(self._check_texts[k] for k in sorted(self._open_checks, key=str) if k in self._check_texts)

    def feed(self, layout: TableLayout) -> list[Event]:
        """Take the next stable layout; returns the new events (usually none)."""
        obs = observe(layout, self.rules)
        sig = obs.signature
        skipped = int((layout.extra or {}).get("skipped") or 0)
        prev, self._prev_frame = self._prev_frame, layout.frame
        if sig == self._last_sig:  # the common case: nothing changed
            self._skipped += skipped  # skipped while nothing changed: still a blocked view
            return self._lone_timed_out(layout.frame, obs.last_seen) if self._lone is not None else []
        self._last_sig = sig
        skipped, self._skipped = skipped + self._skipped, 0
        # a change explained across a waiting view keeps that view's gap (a recycle seen while pending)
        # the waste read empty over its top, now its top again: a card drawn unread may have gone in a pair
        self._waste_back = (waste_back(self.game.state, self._last_obs, obs)
                            or (self._pending is not None and self._waste_back))  # kept as the gap is
        # (so too across a lone card's wait begun after a gap: g00565, the waste read empty after a
        # blocked view of five moves, its card read the next view, judged as a clear view's change)
        waited = self._pending is not None or self._lone is not None or self._beneath is not None
        self._gap = (self._real_gap(prev, layout.frame, skipped) or (waited and self._pending_gap)
                     or self._waste_back)
        self._unseen_frames = max(skipped, layout.frame - prev if prev is not None and prev >= 0 else 0)
        self._last_obs = obs
        if self._deal_read and obs.readings:
            self._runner_ups.note(obs.pyramid, obs.readings)
        try:
            return self._process(obs)
        finally:
            self._prev_visible = obs.visible()
            if self._pending is None:  # (a pending view sets its own)
                self._pending_gap = self._gap

    def tick(self, frame: int, sightings: Optional[Mapping[Card, int]] = None) -> list[Event]:
        """A frame went by without a new stable layout (call it for every frame, it is cheap): a
        lone card lifted that long ago is reported now, while the person still holds it.
        ``sightings``: the last frame each card was read (``LayoutFuser.last_seen``), which
        tells whether a card the lifted one pairs with is out of sight (being picked up)."""
        return self._lone_timed_out(frame, sightings) if self._lone is not None else []

    def _real_gap(self, prev: Optional[int], frame: int, skipped: int) -> bool:
        """Whether the table may have changed out of sight since the previous stable layout."""
        if prev is None or prev < 0 or frame < 0:
            return True  # frame numbers unknown: cannot tell, allow it
        if skipped >= self.blocked_s * self.fps:
            return True
        return frame - prev >= self.gap_s * self.fps

    def finish(self) -> list[Event]:
        """The stream ended: accept a waiting guessed explanation of the last view, if any."""
        if self._pending is not None:
            obs, self._pending = self._pending, None
            if self._pending_guess:
                self._pending_guess = False
                self._prev_visible = set(self._pending_before)
            return self._process(obs, allow_guess=True)
        if self._lone is not None and self._lone.unread is not None:
            view, self._lone = self._lone.unread, None
            return self._process(view, waste_unread_ok=True)
        if self._beneath is not None:
            view, self._beneath, self._lone = self._beneath[0], None, None
            return self._settle_beneath(view)
        if self._lone is not None:
            lone, self._lone = self._lone, None
            event = Event(lone.lifted, ILLEGAL, lone.text)
            self.events.append(event)
            self.status, self._illegal_gone = "illegal", frozenset(lone.cards)
            return [event]
        return []

    def _process(self, obs: Observation, *, max_moves: Optional[int] = None, max_nodes: Optional[int] = None,
                 allow_guess: bool = False, waste_unread_ok: bool = False) -> list[Event]:
        state = self.game.state
        new: list[Event] = []
        unseen = unseen_slots(state, obs)
        if len(unseen) >= OUT_OF_VIEW_SLOTS:
            # the pyramid partly out of the picture: its cards there are not seen taken, and the moves
            # made meanwhile are explained once the whole pyramid is in view again (g00520, a close-up:
            # "9S is covered by 2C and 9D: taken while still covered" said from the deal on)
            where = ", ".join(slot_name(s) for s in unseen[:3]) + (" ..." if len(unseen) > 3 else "")
            new = self._say_once([(("out of view",), f"{len(unseen)} cards of the pyramid are not in view "
                                                      f"({where}): move the camera to see the whole pyramid; "
                                                      "moves are followed again once it is")], obs.frame)
            self.status = "check"
            self.events.extend(new)
            return new
        lone, self._lone = self._lone, None
        beneath, self._beneath = self._beneath, None
        waiting = self._pending if self._pending_guess else None
        held_back = self._pending  # a view waited on and not recorded (None: none)
        self._pending, self._pending_guess = None, False
        fixed, checks, wrong = eye_check(state, obs)
        # Cards read on slots the game has empty that no move can have put there (misreads):
        # the rest of the view is explained without them, so a persistent one does not stop
        # the record (g00405: a draw lost while 8H was read on a cleared slot).
        phantoms = [] if wrong else phantom_cards(state, fixed, frozenset(self._said_checks))
        if phantoms:
            gone = {k[0] for k, _ in phantoms}
            fixed = fixed.with_pyramid(tuple(None if s in gone else c for s, c in enumerate(fixed.pyramid)))
        found = None
        used = fixed  # the observation the explanation was found for
        # the same top still gone over the same card: no news of a misread (g00640: QS lifted over
        # 7S, and a view a tenth of a second later, a pyramid slot read otherwise, took 7S for a
        # misread drawn again, "7S is seen again"); the lift is judged as any other
        same_lift = beneath is not None and not wrong and _same_lift(state, beneath[0], fixed)
        if not wrong:
            found = self._explain(state, fixed, max_moves, max_nodes)
            if beneath is not None and not same_lift and (found is None or (
                    beneath[1] not in fixed.visible() and not any(beneath[1] in m.cards for m in found.moves))):
                # the view before showed a learned card beneath a waste top gone, and this one
                # neither shows the top back (nor paired) nor is explained: not lifted, but that card
                # misread when it was turned and drawn again (g00502: 4S read AH, then AH turned and
                # paired)
                settled = self._settle_beneath(beneath[0])
                if settled:
                    return settled + self._process(obs)
            if found is not None and _drawn_past_known(state, found):
                # a known card drawn unseen under a card never seen: that card's first-pass draw
                # missed, when putting it back explains the view with fewer moves (g00663: JH, 7H
                # expected after AC; 7H turned, "AC drawn under it", and the waste read JH after)
                moved = self._reinserted(fixed)
                if moved is not None and len(moved.found.moves) < len(found.moves):
                    revised = self._missed_earlier(fixed, moved=moved) or []
                    self._last_illegal = None
                    self.status = "check"
                    self.events.extend(revised)
                    return revised
            if found is not None and found.guessed and checks and not self._deal_read:
                # a slot read as another card (taken for its card misread) seen empty instead
                # explains the view with no guess at hidden cards: its card was taken (g00645:
                # JC+2S, JC's emptied slot read KC; "JD turned and paired with 2S" guessed). Not
                # with a deal as the camera read it: its misread slots read so again (g00313)
                taken = self._slot_read_taken(state, fixed, checks, max_moves, max_nodes, lambda alt: bool(alt.moves))
                if taken is not None:
                    found, fixed, checks = taken
                    used = fixed
            if found is not None and held_back is not None and checks:
                # a slot the view waited on (not recorded) showed empty, read now as another card
                # than the game's: its card was taken (g00608: 9C+4C and a recycle waited on, then
                # 4C's slot read AC; 4C kept, and "4C: only a card worth 13 is removed alone" said)
                emptied = {s for s, c in enumerate(held_back.pyramid) if c is None}
                moves = len(found.moves)
                taken = self._slot_read_taken(state, fixed, checks, max_moves, max_nodes,
                                              lambda alt: len(alt.moves) > moves, emptied)
                if taken is not None:
                    found, fixed, checks = taken
                    used = fixed
            if found is not None and found.guessed and self._deal_read:
                # a slot of the deal as the camera read it otherwise explains the view with no
                # guess at hidden cards (7D+6S where the deal says AD): surer than the guess
                corrected = self._correct_deal(obs, checks)
                if corrected is not None:
                    return corrected
            if found is not None and found.guessed and not allow_guess:
                if waiting is not None and still_gone(state, waiting, obs):
                    # the view before was waiting on the same kind of guess, and what it saw gone
                    # stayed gone while the table moved on: that guess stands (else the record
                    # waited for the end of the game). Record it, then this view from there.
                    return self._settle_waiting(waiting, obs)
                # one card gone that only a hidden draw could have paired: most often the
                # first card of a pair being picked up. Wait for the next view to decide.
                return self._wait_on_guess(state, obs, new)
            if found is None and self._checkpoints:
                # the first card of the pass on the waste: a recycle missed behind a hand, after draws
                # missed too, explained again from before with turns out of sight allowed; or a card
                # on the waste after the last change made up a recycle: taken back
                revised = (self._revise(fixed, hidden=True) if _pass_begun_again(state, fixed)
                           else self._revise(fixed, depth=1) if _recycled_into_card(
                               state, fixed, self.game.moves[self._checkpoints[-1][0]:]) else None)
                if revised is not None:
                    self._last_illegal = None
                    self.status = "check"
                    self.events.extend(revised)
                    return revised
            if found is None:
                after_draw = bool(self.game.moves) and self.game.moves[-1].kind == DRAW
                for alt_obs, alt_checks in doubtful_readings(state, fixed, self.rules, not self._gap,
                                                             self._record_doubts(), after_draw):
                    found = self._explain(state, alt_obs, max_moves, max_nodes)
                    if found is not None:  # the reading it took replaces what was said of that place
                        checks = [c for c in checks if c[0] not in {k for k, _ in alt_checks}] + alt_checks
                        used = alt_obs
                        break
            if found is None and (lone is not None or waste_unread_ok):
                # a waste pile read empty over cards in a view after a wait (or at its verdict):
                # not a glimpse missed but a card the camera cannot read
                for alt_obs, alt_checks in unread_waste(state, fixed):
                    alt = self._explain(state, alt_obs, max_moves, max_nodes)
                    if alt is not None and not alt.guessed:
                        found, checks, used = alt, checks + alt_checks, alt_obs
                        break
        # Wait for the next view where a recycle in this one may not be: the waste top taken and
        # the pile recycled in one view, the card beneath it never seen (most often hidden by the
        # hand taking the pair: the card shows up, no recycle; the waste stays empty, recycled);
        # or draws of cards never seen, a recycle and draws of the next pass, with more moves than
        # the time since the last view allows: the camera may have misread one card (the pass's
        # end alone is no such sign: a missed draw leaves it blind). g00582: 6C turned after QH+AH
        # behind a hand for 1.8 s, read TD, a card of the first pass: three blind draws, a recycle
        # and three draws recorded, the second pass a pass early. (After a long blocked view,
        # g00524's 12 s, such moves are the person's.)
        if found is not None and not allow_guess and (_recycle_unseen(state, found) or (
                held_back is None and self._unseen_frames < MOVE_S * self.fps * len(found.moves)
                and found.moves and found.moves[-1].kind == DRAW
                and blind_draws(self.rules, self.game, found.state.deal, found.moves))):
            self._pending, self._pending_gap = obs, self._gap
            self.status = "pending"
            return new
        if found is None and not wrong:
            revised = self._revise_guess(fixed)
            if revised is None and fixed.visible() & state.unseen():
                # a card turned up that the record cannot place (a draw hidden behind another, or
                # missed on the first pass)
                revised = self._missed_earlier(fixed) or self._revise(fixed)
            elif revised is None and self._guessed_pairs_back(fixed, self.game.moves):
                revised = self._revise(fixed)  # a card of a guessed pair back: that pair never was
            elif revised is None and allow_guess:
                revised = self._missed_earlier(fixed, guess=True)
            elif revised is None and waiting is not None and still_gone(state, waiting, obs):
                # the view waited on (below) had its card gone for good: a missed card paired then
                return self._settle_waiting(waiting, obs)
            elif revised is None and self._reinserted(fixed, guess=True) is not None:
                # a card gone that a first-pass card never seen, turned now and paired at once,
                # explains: most often the first card of a pair picked up. Wait for the next view.
                return self._wait_on_guess(state, obs, new)
            if revised is not None:
                new.extend(revised)
                self._last_illegal = None
                self.status = "check"
                self.events.extend(new)
                return new
        if found is None:
            corrected = (self._correct_deal(obs, checks) if self._deal_read
                         else self._correct_given_deal(obs, checks))
            if corrected is not None:
                return corrected
        if found is None:
            return self._unexplained(state, obs, fixed, wrong, lone, beneath, phantoms, waste_unread_ok)
        self._last_illegal = None
        if lone is not None and not found.moves and not lone.reread:
            new.append(Event(obs.frame, ILLEGAL, lone.text + " (the card was put back)"))
        open_now = set()
        for key, text in checks:
            open_now.add(key)
            if isinstance(key[0], int) and isinstance(key[1], Card):
                self._read_otherwise[key[0]] = key[1]
            if key not in self._open_checks and key not in self._said_checks:
                self._said_checks.add(key)
                new.append(Event(obs.frame, CHECK, text))
        new += self._say_once(phantoms, obs.frame)
        self._open_checks = open_now
        self._check_texts = dict(checks)
        if self._hidden_points and not self._gap and any(m.kind == RECYCLE for m in found.moves):
            # the view was clear: a card turned and recycled at once would have shown. It was
            # turned earlier, behind a hand, under a card drawn then (after a gap, the hand
            # may as well have turned it now: the record stays as explained)
            moved = relocate(self.rules, self.game, found, self._hidden_points,
                             lambda st: self._explain(st, used, max_moves, max_nodes))
            if moved is not None:
                new.append(self._adopt(moved))
                found = moved.found
        new.extend(self._record(found, obs.frame))
        self.status = "check" if open_now or phantoms else "ok"
        self.events.extend(new)
        return new

    def _wait_on_guess(self, state: Any, obs: Observation, new: list[Event]) -> list[Event]:
        """Hold ``obs``, which only a guess at a card turned out of sight explains, for the next
        view (``_settle_waiting``); a single card gone is watched as lifted alone, in case it comes
        back. Returns ``new``."""
        self._pending, self._pending_gap = obs, self._gap
        self._pending_guess, self._pending_before = True, frozenset(self._prev_visible)
        gone = [c for c in open_cards(state) if c not in obs.visible()]
        if len(gone) == 1:  # if the card comes back instead, it was lifted alone
            self._lone = lone_card(self.rules, state, obs, gone,
                                   diagnose(state, obs, [], self.game.moves, self.max_moves))
        self.status = "pending"
        return new

    def _slot_read_taken(self, state: Any, fixed: Observation, checks: list[tuple], max_moves: Optional[int],
                         max_nodes: Optional[int], better: Callable[[Explanation], bool],
                         slots: Optional[set[int]] = None
                         ) -> Optional[tuple[Explanation, Observation, list[tuple]]]:
        """A slot read as another card than the game's (taken for its card misread; of ``slots``
        when given) seen empty instead: the explanation with no guess at hidden cards that ``better``
        accepts, that view, and the checks with the slot's said so; else None."""
        for (slot, got), _ in checks:
            if not isinstance(slot, int) or (slots is not None and slot not in slots):
                continue
            alt_obs = fixed.with_pyramid(tuple(None if k == slot else c for k, c in enumerate(fixed.pyramid)))
            alt = self._explain(state, alt_obs, max_moves, max_nodes)
            if alt is not None and not alt.guessed and better(alt):
                text = f"check {slot_name(slot)}: the camera reads {got}, taken for no card (its card taken)"
                return alt, alt_obs, [c for c in checks if c[0] != (slot, got)] + [((slot, got), text)]
        return None

    def _record_doubts(self) -> frozenset[Card]:
        """The cards the record holds by a guess, or by the camera's reading of the deal (not
        confirmed): seen where the record cannot have them, the record may be wrong, not the eye."""
        read = self.game.deal.pyramid if self._deal_read else ()
        return frozenset(self._guessed) | {c for c in read if c is not None}

    def _say_once(self, checks: list[tuple], frame: int) -> list[Event]:
        """Check events for the ``(key, text)`` checks not said before."""
        out = []
        for key, text in checks:
            if key not in self._said_checks:
                self._said_checks.add(key)
                out.append(Event(frame, CHECK, text))
        return out

    def _explain(self, state: Any, obs: Observation, max_moves: Optional[int],
                 max_nodes: Optional[int], hidden: Optional[bool] = None) -> Optional[Explanation]:
        """``hidden``: may draws have happened out of sight (default: a real gap before this view)."""
        hidden = self._gap if hidden is None else hidden
        kw = dict(max_moves=max_moves or self.max_moves, max_nodes=max_nodes or self.max_nodes,
                  hidden_draws=hidden, seen_before=frozenset(self._prev_visible))
        found = Explainer(obs, **kw).search(state)
        if found is None and hidden:
            found = Explainer(obs, deep=True, **kw).search(state)
        return found

    def _record(self, found: Explanation, frame: int) -> list[Event]:
        events: list[Event] = []
        moves = found.moves
        if moves or found.learned:
            self._checkpoints.append((len(self.game.moves), self.game.deal))
            del self._checkpoints[:-8]
        if found.state.deal != self.game.deal:
            # cards were learned: rebuild the record on the better-known deal (same moves)
            game = Game(self.rules, found.state.deal)
            for m in self.game.moves:
                game.play(m)
            self.game = game
        for learned, move in found.steps:
            if move.kind == DRAW and self.game.state.pass_number == 1:
                for card in learned:
                    self._turned_at.setdefault(card, frame)
            if move.kind == DRAW and learned and self._gap:
                self._hidden_points.append(HiddenPoint(len(self.game.moves), frame, self._unseen_frames))
            self.game.play(move)
            text = str(move)
            if learned:
                verb = "turned" if move.kind == DRAW else "uncovered"
                text += f" ({verb} {', '.join(map(str, learned))})"
            events.append(Event(frame, MOVE, text))
        if found.alternatives:
            others = "; ".join(" ".join(str(m) for _, m in alt) for alt in found.alternatives)
            events.append(Event(frame, CHECK, f"{len(found.alternatives) + 1} move sequences explain the "
                                              f"change; recorded {' '.join(map(str, moves))} "
                                              f"(also possible: {others})"))
        if found.guessed:
            guessed = [c for ls, _ in found.steps for c in ls if c not in (self._last_obs.visible()
                                                                         if self._last_obs else ())]
            self._guessed.update(guessed)
            why = ("the camera could not read the card on the waste" if self._waste_back
                   else "the view was blocked")
            events.append(Event(frame, CHECK, f"{why} while a stock card was turned and "
                                              f"played: assumed it was {', '.join(map(str, guessed))}"))
        return events

    def _adopt(self, moved: Relocated) -> Event:
        """Take a record with a missed draw put back at a blocked view (``hidden_draws``)."""
        at = moved.point
        self.game = moved.game
        self._checkpoints.clear()
        self._hidden_points = [replace(p, index=p.index + moved.draws) if p.index >= at.index else p
                               for p in self._hidden_points]
        n = "a draw" if moved.draws == 1 else f"{moved.draws} draws"
        return Event(self._last_obs.frame if self._last_obs else at.frame, CHECK,
                     f"the stock ran out early: {n} made while the view was blocked (frame {at.frame}) "
                     f"went unseen; record corrected (move {at.index + 1})")

    # --- the person's word ----------------------------------------------------------------
    def override(self, moves: Iterable[Move | str] | None = None) -> list[Event]:
        """The person says what happened.

        With ``moves``: record them (all legal in turn, else IllegalMoveError and
        nothing changes). Without: accept the best explanation of the current
        table found with a larger search, however doubtful.
        """
        frame = self._last_obs.frame if self._last_obs else -1
        new: list[Event] = []
        if moves is not None:
            parsed = [m if isinstance(m, Move) else Move.parse(m) for m in moves]
            probe = self.game.state
            for m in parsed:
                probe = probe.apply(m)
            for m in parsed:
                self.game.play(m)
                new.append(Event(frame, MOVE, f"{m} (entered by hand)"))
            self._checkpoints.clear()  # the person's word is never revised
            self._last_sig = None  # look at the next layout afresh
        else:
            if self._last_obs is None:
                return []
            found = self._best_explanation(self.game.state, self._last_obs)
            if found is None:
                raise IllegalMoveError("override: no legal sequence of moves leads to the table as seen; "
                                       "enter the moves played instead")
            new = self._record(found, frame)
        self.status = "ok"
        self._last_illegal = None
        # the person's word settles what the waits were for: no lone card's verdict, no view kept
        self._lone, self._beneath = None, None
        self.events.extend(new)
        return new

    def _best_explanation(self, state: Any, obs: Observation) -> Optional[Explanation]:
        """The best explanation of ``obs`` from a larger search, hidden draws guessed: what the person
        accepting the table, or a table that moved on past "illegal", records."""
        return self._explain(state, obs, self.max_moves * 2, self.max_nodes * 10, hidden=True)

    # --- output ------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The ``follow --json`` object: moves, events, pyramid rows, waste, result.

        ``waste`` lists the single pile bottom to top (``"??"`` for a card not
        seen yet); with three waste piles it lists the pile tops (null when empty).
        """
        state = self.game.state
        flat = [None if c is None else str(c) for c in expected_pyramid(state)]
        rows, i = [], 0
        for r in range(self.rules.rows):
            rows.append(flat[i:i + r + 1])
            i += r + 1
        if len(state.waste) == 1:
            waste: list[Optional[str]] = ["??" if c is None else str(c) for c in state.waste[0]]
        else:
            waste = [None if not p else "??" if p[-1] is None else str(p[-1]) for p in state.waste]
        return {
            "moves": [str(m) for m in self.game.moves],
            "events": [e.to_json() for e in self.events],
            "pyramid": rows,
            "waste": waste,
            "result": state.result,
        }


def still_gone(state: Any, before: Observation, now: Observation) -> bool:
    """The open cards of ``state`` gone in view ``before`` are still gone in ``now``."""
    gone = [c for c in open_cards(state) if c not in before.visible()]
    seen = now.visible()
    return bool(gone) and not any(c in seen for c in gone)


def _recycle_unseen(state: Any, found: Explanation) -> bool:
    """A recycle after a move that took a waste top, in one explanation, and no draw after it
    (a card drawn from the new pass shows the recycle happened)."""
    tops = {p[-1] for p in state.waste if p}
    took = recycled = False
    for m in found.moves:
        if m.is_removal and tops & set(m.cards):
            took = True
        elif m.kind == RECYCLE and took:
            recycled = True
        elif m.kind == DRAW and recycled:
            return False
    return recycled


#: Seconds a move takes at least: a view explained by more moves than its time allows waits.
MOVE_S = 1.0


def _same_lift(state: Any, before: Observation, now: Observation) -> bool:
    """``now`` shows the same open cards of ``state`` gone as ``before``, and the same waste."""
    gone = [c for c in open_cards(state) if c not in before.visible()]
    return bool(gone) and gone == [c for c in open_cards(state) if c not in now.visible()] and now.waste == before.waste


def _drawn_past_known(state: Any, found: Explanation) -> bool:
    """A later pass's explanation drawing the record's next card, known, and then a card never
    seen (draw 1): the known card turned unseen under it."""
    if state.rules.draw != 1 or state.pass_number < 2 or not state.stock or state.stock[0] is None:
        return False
    draws = [learned for learned, m in found.steps if m.kind == DRAW]
    return len(draws) >= 2 and not draws[0] and any(draws[1:])


def _recycled_into_card(state: Any, obs: Observation, last: list[Move]) -> bool:
    """The record's last change (``last``, its moves) turned the stock's last cards unseen and
    recycled, and the waste reads a card again: the view that read it empty missed its top
    (a rendered whole game, g00542: 3H at a steep angle unread for 4 s, taken for two draws and
    a recycle; 19 moves lost). A recycle alone is the person's."""
    return (len(last) >= 2 and last[-1].kind == RECYCLE and last[-2].kind == DRAW
            and not any(state.waste) and any(obs.waste))


def _pass_begun_again(state: Any, obs: Observation) -> bool:
    """A draw-1 waste reads the card at the bottom of the record's pile (the first turned this pass)
    while the record's stock still holds cards never seen: the person recycled, and the draws the
    record lacks went on out of sight (a rendered whole game, g00526: six pairs and a recycle behind
    a hand, three draws of the first pass never seen; 8S, the pass's first card, then read on the
    waste and taken for a misread when it was turned: "8S is seen again", and every draw after)."""
    if state.rules.draw != 1 or len(state.waste) != 1 or len(obs.waste) != 1 or not obs.waste[0]:
        return False
    pile = state.waste[0]
    # (deeper than a corner showing, ``BURIED_DEPTHS``, or the card under a top lifted)
    return (len(pile) - 1 > BURIED_DEPTHS[1] and pile[0] is not None and obs.waste[0][-1] is pile[0]
            and any(c is None for c in state.stock))
