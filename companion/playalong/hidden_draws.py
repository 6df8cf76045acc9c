"""Draws missed behind a blocked view, found when the stock runs out a card early.

With the stock face down, a view blocked while the person turned two stock cards looks like one
draw: only the top card of the waste shows, and the shortest explanation wins. The record then
believes one card more is left in the stock than there is. That shows at the end of the first
pass: the person recycles while the record still has unseen stock cards, and the only way to
explain the recycle is to turn them "blind" just before it. That puts them at the wrong place in
the waste, so every later pass would go wrong.

Stock and waste hold deal *positions* (``companion.game.state``), so moving a blind draw back to
a blocked view means: rotate the unseen positions to the place of the draw made then, and insert
a draw there. It is only accepted if the card it turned stayed covered ever since (the draw that
followed it is still in the waste), the record replays legally, and the current view is then
explained without any blind draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from companion.game import Deal, Game
from companion.moves import DRAW, RECYCLE, Move

#: explain(state) -> Explanation or None (the follower's search for the current view).
ExplainFn = Callable[[Any], Any]


@dataclass(frozen=True)
class HiddenPoint:
    """A draw recorded right after a blocked view: ``index`` into the moves, ``frame`` of the view,
    ``blocked`` frames since the stable view before it (the longer, the likelier a draw hid there)."""
    index: int
    frame: int
    blocked: int = 0


@dataclass
class Relocated:
    game: Game
    found: Any
    point: HiddenPoint
    draws: int


def blind_draws(rules: Any, game: Game, deal: Deal, moves: Sequence[Move]) -> int:
    """Draws in ``moves`` (before a recycle in them) that turn only stock cards the record has never
    seen, in the first pass; 0 when there is no recycle in ``moves`` or a draw is partly known."""
    probe = Game(rules, deal)
    for m in game.moves:
        probe.play(m)
    if probe.state.pass_number != 1:
        return 0
    blind = 0
    for m in moves:
        if m.kind == RECYCLE:
            return blind
        if m.kind == DRAW:
            turned = probe.state.stock[:rules.draw]
            if all(c is None for c in turned):
                blind += 1
            elif blind or any(c is None for c in turned):
                return 0  # a blind draw followed by a seen one: not the stock running out
        probe.play(m)
    return 0


def relocate(rules: Any, game: Game, found: Any, points: Sequence[HiddenPoint],
             explain: ExplainFn) -> Optional[Relocated]:
    """Move the blind draws of ``found`` (an explanation ending in a recycle) back to one of the
    blocked views ``points`` (the longest blocked first, then the latest); None when none explains it."""
    deal = found.state.deal
    n_blind = blind_draws(rules, game, deal, found.moves)
    if not n_blind:
        return None
    size = rules.stock_size
    k = n_blind * rules.draw
    stock = list(deal.stock)
    if any(c is not None for c in stock[size - k:]):
        return None  # the blind cards are not the last stock positions: not this case
    head = deal.cards[:len(deal.cards) - size]
    for point in sorted(points, key=lambda p: (-p.blocked, -p.index)):
        if point.index >= len(game.moves) or game.moves[point.index].kind != DRAW:
            continue
        before = game.history[point.index]  # stock and waste hold positions: any deal's state will do
        if before.pass_number != 1:
            continue
        j = size - len(before.stock)  # stock position the draw at the point turned
        new_stock = stock[:j] + stock[size - k:] + stock[j:size - k]
        trial = Game(rules, Deal(rules, [*head, *new_stock]))
        try:
            for m in game.moves[:point.index]:
                trial.play(m)
            for _ in range(n_blind):
                trial.play(Move.draw())
            for m in game.moves[point.index:]:
                trial.play(m)
        except ValueError:
            continue
        # the card drawn at the point lay on the blind ones: still in the waste, they never showed
        covering = [c for c in new_stock[j + k:j + k + rules.draw] if c is not None]
        in_waste = {c for pile in trial.state.waste for c in pile}
        if not covering or not set(covering) <= in_waste:
            continue
        again = explain(trial.state)
        if again is None or blind_draws(rules, trial, again.state.deal, again.moves):
            continue
        return Relocated(trial, again, point, n_blind)
    return None
