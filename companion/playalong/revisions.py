"""Revising the record when a later view shows it was inferred wrong (a ``Follower`` mixin).

Three ways, tried by ``Follower._process`` when no legal continuation explains a view: a card once
guessed as a hidden pair's partner turns up (``_revise_guess``: the pair used another card of its
rank); the deal read from the view was misread (``_correct_deal``: the slots as the camera reads
them otherwise, a removed card turned up from the stock, the camera's runner-up readings:
``deal_reads``); an inferred change before was wrong (``_revise``: a hidden double draw or a wrong
guess shows only later, explained again from a checkpoint). Each replays the recorded moves on a
corrected deal or from a checkpoint, never drops a move the person entered, and says what it changed.
"""

from __future__ import annotations

from typing import Any, Optional

from companion.cards import Card
from companion.game import Deal, Game
from companion.moves import Move
from companion.playalong.deal_reads import corrected_games, same_rank_readings
from companion.playalong.events import CHECK, Event
from companion.playalong.misreads import eye_check
from companion.playalong.view import Observation, slot_name


class RecordRevisions:
    """The revisions of a :class:`~companion.playalong.follower.Follower` (its state: ``game``,
    ``rules``, the checks said and open, the guesses, the checkpoints; ``_explain``, ``_record``)."""

    game: Game
    rules: Any

    def _revise_guess(self, obs: Observation) -> Optional[list[Event]]:
        """A card once guessed as the partner of a hidden pair is seen again: the pair used
        another card of that rank. Swap the guess (same place in the deal) and replay."""
        seen = obs.visible()
        rules = self.rules
        deal = self.game.deal
        for wrong in sorted(self._guessed & seen & self.game.state.removed, key=lambda c: c.index):
            index = deal.cards.index(wrong)
            known = set(deal.known())
            for other in sorted(rules.deck_cards(), key=lambda c: c.index):
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
                self._guessed.discard(wrong)
                self._guessed.add(other)
                self._checkpoints.clear()
                events = [Event(obs.frame, CHECK, f"{wrong} is on the table: the hidden pair used {other}, "
                                                  f"not {wrong} (record corrected)")]
                return events + self._record(found, obs.frame)
        return None

    def _correct_deal(self, obs: Observation, checks: list[tuple]) -> Optional[list[Event]]:
        """No legal continuation explains ``obs`` with the deal as read from the view (or only a
        guess at hidden cards does): try it with the slots the camera reads otherwise (open checks
        and this view's) as the camera reads them. On success the record, status and events follow."""
        readings = {k[0]: k[1] for k in list(self._open_checks) + [key for key, _ in checks]
                    if isinstance(k[0], int) and isinstance(k[1], Card)}
        # then with the other readings of earlier views too (a check closed since: the slot's
        # card flickered between two readings, and the deal took the wrong one)
        tries = [readings, {**self._read_otherwise, **readings}]
        if tries[1] == readings:
            tries.pop()
        # A removed card seen again (drawn from the stock) was never where the deal put it: its
        # slot as the camera read it otherwise, else another card of its rank (the move stays a pair).
        reappeared = frozenset(obs.visible() & self.game.state.removed)
        guesses = [{slot: card} for slot, card in same_rank_readings(self.rules, self.game, reappeared)]
        # Last, the cards gone from their slots as the camera's runner-up reading of those slots.
        state = self.game.state
        taken = [s for s, c in enumerate(state.pyramid) if c is not None and obs.pyramid[s] is not c]
        runner = self._runner_ups.readings(taken)
        kinds = ["read"] * len(tries) + ["rank"] * len(guesses) + ["runner-up"] * len(runner)
        attempts = ((g, kind) for t, kind in zip(tries + guesses + runner, kinds)
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

    def _revise(self, obs: Observation, depth: int = 3) -> Optional[list[Event]]:
        """Explain ``obs`` from before one of the last inferred changes (a hidden double draw or a
        wrong guess shows only later); on success the inferred tail of the record is replaced."""
        moves = self.game.moves
        for n_before, deal in reversed(self._checkpoints[-depth:]):
            if n_before >= len(moves):
                continue
            game = Game(self.rules, deal)
            for m in moves[:n_before]:
                game.play(m)
            found = self._explain(game.state, obs, self.max_moves + len(moves) - n_before, self.max_nodes)
            if found is None or not (self.game.state.removed - self._guessed) <= found.state.removed:
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
            self._checkpoints = [c for c in self._checkpoints if c[0] < n_before]
            self._hidden_points = [p for p in self._hidden_points if p.index < n_before]
            frame = obs.frame
            events = [Event(frame, CHECK, f"revised moves {n_before + 1}-{len(moves)}: "
                                          f"{' '.join(map(str, old))} -> "
                                          f"{' '.join(map(str, found.moves)) or '(none)'}")]
            return events + self._record(found, frame)
        return None
