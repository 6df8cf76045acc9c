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

A draw missed where the view was not blocked leaves no such point: its card stays at the end of the
record's stock until a later pass turns it where the record expects a card seen in the first pass
(``reinsert``): the draw is put back into the first pass just before the one that turned that card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

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


#: First-pass draws ``reinsert`` tries as the place of a missed one, latest first.
REINSERT_TRIES = 6
#: Draws after the expected card within which ``reinsert`` places the missed one.
REACH = 2
#: A place where the first pass went this many times slower than at the place nearest the view
#: (fewest moves to it) wins over it.
SLOWER = 1.5


def reinsert(rules: Any, game: Game, explain: ExplainFn, frame: int = -1,
             turned_at: Optional[Mapping[Any, int]] = None, guess: bool = False) -> Optional[Relocated]:
    """A later pass turned a card the record never saw where it expects a card it learned in the
    first pass: a first-pass draw went unseen (a rendered whole game, g00528: JS and 5H missed, so
    every card of the second pass was "another card", and 25 of 94 moves lost). The record's last
    unseen stock position, turned blind just before the first recycle, is moved to just before one
    of the last ``REINSERT_TRIES`` first-pass draws up to the one that turned the card ``REACH``
    places after the expected one, a draw made there and the blind draw dropped. Of the places whose
    record replays legally, keeps every card this pass has turned, and explains the view without a
    guess, the one with the fewest moves to the view wins, unless the first pass went clearly slower
    at another (``turned_at``: the frame each stock card was seen turned in the first pass; frames
    from the draw before to that place's, per move made: a missed draw took its time). Draw 1 only
    (a missed draw of three moves three cards). With ``guess``, the view may be explained by a
    guess at the card (turned and paired at once, out of sight), by some moves."""
    state = game.state
    if rules.draw != 1 or state.pass_number < 2 or not state.stock or state.stock[0] is None:
        return None
    moves = game.moves
    recycle = next((i for i, m in enumerate(moves) if m.kind == RECYCLE), None)
    history = game.history
    last = next((i for i in range(recycle - 1, -1, -1) if moves[i].kind == DRAW), None) if recycle else None
    if last is None or history[last].pass_number != 1 or history[last].stock[0] is not None:
        return None  # the first pass did not end with a blind draw: no unseen position to move
    size = rules.stock_size
    stock = list(game.deal.stock)
    unseen = [i for i in range(size) if stock[i] is None]
    expected = stock.index(state.stock[0])
    # (the view may come a draw or two later: a quick second draw buries the card turned first)
    reach = max(stock.index(c) for c in state.stock[:REACH + 1] if c is not None)
    if not unseen or unseen[-1] <= expected:
        return None
    u = unseen[-1]
    head = game.deal.cards[:len(game.deal.cards) - size]
    firsts = [i for i in range(last) if moves[i].kind == DRAW and size - len(history[i].stock) <= reach]
    fits: list[tuple[float, Relocated]] = []
    shown = {c for pile in state.waste for c in pile if c is not None}
    for point in reversed(firsts[-REINSERT_TRIES:]):
        j = size - len(history[point].stock)  # the stock position the draw there turned
        trial = Game(rules, Deal(rules, [*head, *stock[:j], stock[u], *stock[j:u], *stock[u + 1:]]))
        try:
            for m in (*moves[:point], Move.draw(), *moves[point:last], *moves[last + 1:]):
                trial.play(m)
        except ValueError:
            continue
        if not shown <= {c for pile in trial.state.waste for c in pile}:
            continue  # a draw of this pass would have turned another card than the one seen then
        again = explain(trial.state)
        if again is not None and (again.moves if guess else not again.guessed):
            pace = _pace(moves, history, point, turned_at or {})
            fits.append((pace, Relocated(trial, again, HiddenPoint(point, frame), 1)))
    # (a quick second draw explains a card placed one later as well: the fewest moves to the view,
    # unless the first pass went clearly slower at another place)
    if not fits:
        return None
    fewest = min(len(r.found.moves) for _, r in fits)
    near = max((f for f in fits if len(f[1].found.moves) == fewest), key=lambda f: f[0])
    slow = max(fits, key=lambda f: f[0])
    return slow[1] if slow[0] >= SLOWER * near[0] else near[1]


def _pace(moves: Sequence[Move], history: Sequence[Any], point: int, turned_at: Mapping[Any, int]) -> float:
    """Frames per move from the first-pass draw before ``point`` to the draw at ``point`` (0: not known)."""
    prev = next((i for i in range(point - 1, -1, -1) if moves[i].kind == DRAW), None)
    if prev is None:
        return 0.0
    here, before = turned_at.get(history[point].stock[0]), turned_at.get(history[prev].stock[0])
    return 0.0 if here is None or before is None else (here - before) / (point - prev)
