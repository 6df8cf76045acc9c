"""Find the legal move sequence that explains a change of the table.

Breadth-first over legal moves from the recorded state, shortest first, until
a state agrees with the observation. The search stays small because removals
are permanent: a move may only remove cards the camera no longer sees, so the
branching is mostly draws and recycles. Unknown stock cards are learned on the
way: a draw that turns unknown cards may only turn cards the camera now sees
for the first time (``deep=True`` also lets a hidden draw turn an unseen card
that pairs with a card that vanished, for views blocked during a draw+pair).
``hidden_draws=False`` (the table was in view since the last stable layout)
never plays a card turned within the same explanation, and turns the stock at
most ``MAX_CLEAR_STOCK_STEPS`` times (draws and recycles): each turn would have
shown its card in a stable view of its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import permutations
from typing import Any, Iterable, Iterator, Mapping, Optional

from companion.cards import Card
from companion.moves import DRAW, RECYCLE, REMOVE, TO_CELL, Move
from companion.playalong.knowledge import learn_stock, learn_waste
from companion.playalong.view import Observation, agrees, outside_tops

#: Draws and recycles one explanation may hold when the table was in view all along (two quick
#: draws can fall within one fusion window; more cannot).
MAX_CLEAR_STOCK_STEPS = 2

#: Longest explanation reordered to the order its cards vanished in (``_in_seen_order``).
MAX_REORDER = 6

#: A step of an explanation: the stock cards learned just before the move, then the move.
Step = tuple[tuple[Card, ...], Move]


@dataclass
class Explanation:
    steps: list[Step]
    state: Any
    #: Other sequences of the same length that explain the change (distinct move sets).
    alternatives: list[list[Step]] = field(default_factory=list)
    #: True when a hidden draw had to guess an unseen stock card.
    guessed: bool = False
    nodes: int = 0
    #: Cards named before the first move (a face-up stock top, a waste card seen again).
    learned: tuple[Card, ...] = ()

    @property
    def moves(self) -> list[Move]:
        return [m for _, m in self.steps]


def unseen_partners(state: Any, seen: Iterable[Card], gone: Iterable[Card], kings: bool = True,
                    glimpsed: Optional[Mapping[Card, int]] = None) -> list[Card]:
    """Cards no view has shown (unknown to ``state``, not in ``seen``) that pair with one of
    ``gone``, and kings (removed alone) when ``kings``: what a card turned out of sight may have been.
    Those the camera read in some frame (``glimpsed``: the fuser's last sighting of each card, in no
    stable view) come first, the latest first: a glimpse of a card drawn and paired before a stable
    view showed it (a rendered whole game, g00524: JS read in two frames, then "assumed JH")."""
    rules = state.rules
    want = {rules.pair_sum - rules.value(c) for c in gone} | ({rules.pair_sum} if kings else set())
    seen = set(seen)
    glimpsed = glimpsed or {}
    return sorted((c for c in state.unseen() if c not in seen and rules.value(c) in want),
                  key=lambda c: (-glimpsed.get(c, -1), c.index))


class Explainer:
    """Bounded shortest-sequence search; one instance per question."""

    def __init__(self, obs: Observation, *, max_moves: int = 8, max_nodes: int = 4000,
                 deep: bool = False, max_alternatives: int = 8, max_seconds: float = 0.5,
                 hidden_draws: bool = True, seen_before: frozenset = frozenset()) -> None:
        self.obs = obs
        #: Cards face up in the view before (a card a draw turned that was seen there is not hidden).
        self.seen_before = seen_before
        #: False when the view before was seen clearly up to this one: a card a draw turns
        #: would have been seen in a stable view before being played, so no card turned in an
        #: explanation may be played in it (``deep`` guessing is off too). Draws that only
        #: bury cards under the waste top stay allowed (a quick second draw).
        self.hidden_draws = hidden_draws
        self.seen = obs.visible()
        self.max_moves = max_moves
        self.max_nodes = max_nodes
        self.deep = deep
        self.max_alternatives = max_alternatives
        self.max_seconds = max_seconds
        self.nodes = 0

    # --- learning the cards the camera shows for the first time -----------------------
    def learn(self, state: Any) -> tuple[Any, tuple[Card, ...]]:
        """Name the unknown waste cards (and face-up stock top) that the observation shows."""
        learned: list[Card] = []
        obs = self.obs
        if obs.loose:
            return self._learn_loose(state)
        for i, (pile, seen) in enumerate(zip(state.waste, obs.waste)):
            for depth in range(min(len(pile), len(seen))):
                card = seen[-1 - depth]
                if pile[-1 - depth] is None and card in state.unseen():
                    state = learn_waste(state, i, depth, card)
                    learned.append(card)
        if state.rules.face_down_rows:
            pyramid = state.pyramid
            for s, card in enumerate(obs.pyramid):
                if (card is not None and pyramid[s] is None and not state.slot_empty(s)
                        and state.visible(s) and card in state.unseen()):
                    state = state.reveal(card, s)
                    learned.append(card)
        top = obs.stock_top
        if top is not None and state.stock and state.stock[0] is None and top in state.unseen():
            state = learn_stock(state, 0, top)
            learned.append(top)
        return state, tuple(learned)

    def _learn_loose(self, state: Any) -> tuple[Any, tuple[Card, ...]]:
        """Stock top and waste top seen as an unlabelled pair: name the one unknown of them."""
        tops = outside_tops(state)
        if tops.count(None) != 1:
            return state, ()
        unseen = state.unseen()
        new = [c for (c,) in self.obs.waste if c in unseen]
        if len(new) != 1:
            return state, ()
        card = new[0]
        if state.stock and state.stock[0] is None:
            return learn_stock(state, 0, card), (card,)
        return learn_waste(state, 0, 0, card), (card,)

    def _guesses(self, state: Any, start: Any) -> list[Card]:
        """Unseen cards a hidden draw may have turned: kings, and partners of open cards now gone."""
        gone = [c for c in state.available() if c not in self.seen]
        return unseen_partners(state, self.seen, gone, glimpsed=self.obs.last_seen) if gone else []

    def _useful(self, move: Move) -> bool:
        """Prune moves the observation rules out: removing or parking a card still seen in play."""
        if move.kind == REMOVE:
            return not any(c in self.seen for c in move.cards)
        if move.kind == TO_CELL:
            card = move.cards[0]
            return card not in self.seen or card in self.obs.cells
        return True

    def _children(self, state: Any, start: Any, may_guess: bool = True
                  ) -> Iterator[tuple[tuple[Card, ...], Move, Any]]:
        for move in state.legal_moves():
            if self._useful(move):
                yield (), move, state.apply(move)
        if self.deep and may_guess and self.hidden_draws:
            # the view was blocked while an unseen card was turned and played at once:
            # name it (a guess among the partners of the cards that vanished) so that
            # the removal using it becomes a legal move. One guess per explanation at
            # most: two would explain away an illegal pair (each "paired" with a
            # phantom stock card).
            for guess in self._guessed_bases(state, start):
                card, base = guess
                for move in base.legal_moves():
                    if card in move.cards and self._useful(move):
                        yield (card,), move, base.apply(move)

    def _guessed_bases(self, state: Any, start: Any) -> Iterator[tuple[Card, Any]]:
        places: list[tuple[str, int]] = []
        if state.rules.stock_playable and state.stock and state.stock[0] is None:
            places.append(("stock", 0))
        places += [("waste", i) for i, p in enumerate(state.waste) if p and p[-1] is None]
        if not places:
            return
        guesses = self._guesses(state, start)
        for kind, i in places:
            for card in guesses:
                try:
                    base = learn_stock(state, 0, card) if kind == "stock" else learn_waste(state, i, 0, card)
                except ValueError:
                    continue
                yield card, base

    def _goal(self, state: Any) -> Optional[tuple[Any, tuple[Card, ...]]]:
        """``state`` (with the cards seen for the first time named) when it agrees with the view."""
        if agrees(state, self.obs):
            return state, ()
        learned_state, learned = self.learn(state)
        if learned and agrees(learned_state, self.obs):
            return learned_state, learned
        return None

    def _bound(self, state: Any) -> int:
        """Moves still needed at least: each removes at most two cards the camera no longer sees."""
        gone = sum(1 for c in state.pyramid if c is not None and c not in self.seen)
        return (gone + 1) // 2

    def search(self, start: Any) -> Optional[Explanation]:
        """The shortest explanation (0 moves when ``start`` already agrees), or None."""
        hit = self._goal(start)
        if hit is not None:
            return Explanation([], hit[0], learned=hit[1])
        frontier: list[tuple[Any, list[Step], frozenset]] = [(start, [], frozenset())]
        seen_keys = {start.key()}
        goals: list[tuple[list[Step], Any]] = []
        depth = 0
        deadline = time.perf_counter() + self.max_seconds
        while frontier and depth < self.max_moves and not goals and self.nodes <= self.max_nodes:
            depth += 1
            next_frontier: list[tuple[Any, list[Step], frozenset]] = []
            for state, path, drawn in frontier:
                may_guess = not any(c not in self.seen for ls, _ in path for c in ls)
                for learned, move, child in self._children(state, start, may_guess):
                    if not self.hidden_draws and not self._clear_step(move, path, drawn):
                        continue
                    if (not self.hidden_draws and move.kind in (DRAW, RECYCLE)
                            and sum(m.kind in (DRAW, RECYCLE) for _, m in path) >= MAX_CLEAR_STOCK_STEPS):
                        continue  # turning through the stock in view would have shown each card
                    self.nodes += 1
                    hit = self._goal(child)
                    if hit is not None:
                        goals.append((path + [(learned + hit[1], move)], hit[0]))
                        continue
                    key = child.key()
                    if key in seen_keys or depth + self._bound(child) >= self.max_moves + 1:
                        continue
                    seen_keys.add(key)
                    turned = (drawn | (_turned(state, child) - self.seen_before)
                              if move.kind == DRAW and not self.hidden_draws else drawn)
                    next_frontier.append((child, path + [(learned, move)], turned))
                if self.nodes > self.max_nodes or time.perf_counter() > deadline:
                    self.nodes = max(self.nodes, self.max_nodes + 1)
                    break
            frontier = next_frontier
        if not goals:
            return None
        return self._pick(goals, start)

    def _disorder(self, steps: list[Step]) -> int:
        """Pairs of removals in the opposite order to the one their cards were last seen in
        (a move is done when the last of its cards vanished)."""
        seen = self.obs.last_seen
        times = [max(seen[c] for c in m.cards) for _, m in steps
                 if m.kind == REMOVE and m.cards and all(c in seen for c in m.cards)]
        return sum(1 for i, a in enumerate(times) for b in times[i + 1:] if a > b)

    def _in_seen_order(self, steps: list[Step], start: Any) -> list[Step]:
        """``steps`` reordered where the view says more than the search: removals in the order
        their cards vanished, and turns of the stock after the removals that did not need them
        (people play the pairs they see before drawing), when that order is legal and leads to
        the same position. The search keeps one path to each position, so of several moves made
        behind one hand the order it met first stood (g00403: QS+AH, 7D+6D, KS recorded as
        7D+6D, KS, QS+AH)."""
        if (len(steps) < 2 or len(steps) > MAX_REORDER or any(ls for ls, _ in steps[:-1])
                or self._order_cost(steps) == (0, 0)):
            return steps  # (a card guessed for a move within the sequence stays with its move)
        end = _replay(start, steps)
        if end is None:
            return steps
        for order in sorted(permutations(steps), key=lambda o: self._order_cost(list(o))):
            if self._order_cost(list(order)) >= self._order_cost(steps):
                break
            reached = _replay(start, order)
            if reached is not None and reached.key() == end.key():
                # cards named on the last step were read in the view after all the moves
                return [((), m) for _, m in order[:-1]] + [(steps[-1][0], order[-1][1])]
        return steps

    def _order_cost(self, steps: list[Step]) -> tuple[int, int]:
        """(removals out of vanishing order, removals after a turn of the stock)."""
        early = sum(1 for i, (_, m) in enumerate(steps) if m.kind in (DRAW, RECYCLE)
                    for _, later in steps[i + 1:] if later.kind == REMOVE)
        return self._disorder(steps), early

    @staticmethod
    def _clear_step(move: Move, path: list[Step], drawn: frozenset) -> bool:
        """Whether ``move`` may follow ``path`` when the table was in view all along."""
        return not (drawn and any(c in drawn for c in move.cards))

    # --- choosing among explanations ----------------------------------------------------
    def _pick(self, goals: list[tuple[list[Step], Any]], start: Any) -> Explanation:
        distinct: dict[Any, tuple[list[Step], Any]] = {}
        for steps, state in goals:
            # the same moves in another order: keep the order the cards vanished in
            sig = (frozenset(str(m) for _, m in steps), tuple(c for ls, _ in steps for c in ls))
            kept = distinct.get(sig)
            if kept is None or self._disorder(steps) < self._disorder(kept[0]):
                distinct[sig] = (steps, state)
        options = list(distinct.values())
        available = start.available()

        def likelihood(option: tuple[list[Step], Any]) -> tuple:
            steps, state = option
            # people play what they can see: moves whose cards were open at the start first
            open_now = sum(1 for _, m in steps if m.cards and all(c in available for c in m.cards))
            stock_ok = int(bool(state.stock) == self.obs.stock_present)
            guessed = sum(1 for ls, _ in steps for c in ls if c not in self.seen)
            return (stock_ok, -guessed, open_now)

        ranked = sorted(options, key=likelihood, reverse=True)  # stable: BFS order breaks ties
        best_steps, best_state = ranked[0]
        best_steps = self._in_seen_order(best_steps, start)
        guessed = any(c not in self.seen for ls, _ in best_steps for c in ls)
        return Explanation(best_steps, best_state, [s for s, _ in ranked[1:self.max_alternatives + 1]],
                           guessed, self.nodes)


def _turned(before: Any, after: Any) -> frozenset:
    """Cards a draw put face up: new waste cards, and a playable stock's new top."""
    old = {c for p in before.waste for c in p if c is not None}
    new = {c for p in after.waste for c in p if c is not None and c not in old}
    if after.rules.stock_playable and after.stock and after.stock[0] is not None:
        new.add(after.stock[0])
    return frozenset(new)


def _replay(start: Any, steps: Iterable[Step]) -> Optional[Any]:
    """The position after ``steps`` from ``start``; None if a move is illegal there (in another
    order, or a stock card named in the search but not in ``start``)."""
    state = start
    try:
        for _, move in steps:
            state = state.apply(move)
    except ValueError:  # IllegalMoveError, or a move naming a card the deal does not hold there
        return None
    return state


def explain(start: Any, obs: Observation, *, max_moves: int = 8, max_nodes: int = 4000) -> Optional[Explanation]:
    """Shortest legal sequence from ``start`` to a state agreeing with ``obs`` (None if none found)."""
    found = Explainer(obs, max_moves=max_moves, max_nodes=max_nodes).search(start)
    if found is None:
        found = Explainer(obs, max_moves=max_moves, max_nodes=max_nodes, deep=True).search(start)
    return found
