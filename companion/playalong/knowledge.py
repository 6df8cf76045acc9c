"""Learning unknown stock cards at the place the camera sees them.

``GameState.reveal(card)`` names the next unknown card the engine expects to be
seen (the first unknown of the next draw, else an unknown waste top). At the
table a card can be first seen elsewhere: the top of an unfanned draw-3 waste,
or a waste top after a draw the camera missed. These helpers name the card at
its exact place by rebuilding the state from its deal with that card filled in
(``GameState.reveal_waste``/``reveal_stock``; with an older engine through its
pickling form, which carries the stock/waste positions).
"""

from __future__ import annotations

from typing import Any, Optional

from companion.cards import Card


def _parts(state: Any) -> Optional[tuple]:
    try:
        fn, args = state.__reduce__()
    except (TypeError, AttributeError):
        return None
    if len(args) < 5 or not isinstance(args[3], tuple) or not isinstance(args[4], tuple):
        return None
    return fn, args


def _rebuild_with(state: Any, pos: int, card: Card) -> Any:
    fn, args = _parts(state)  # type: ignore[misc]
    rules, deal = args[0], args[1]
    index = rules.pyramid_size + rules.reserve + pos
    return fn(rules, deal.with_card(index, card), *args[2:])


def learn_waste(state: Any, pile: int, depth: int, card: Card) -> Any:
    """``state`` with the unknown card ``depth`` below the top of waste ``pile`` named ``card``."""
    if hasattr(state, "reveal_waste"):
        return state.reveal_waste(card, pile, depth)
    parts = _parts(state)
    if parts is None:
        return state.reveal(card)
    pos = parts[1][4][pile][-1 - depth]
    return _rebuild_with(state, pos, card)


def learn_stock(state: Any, depth: int, card: Card) -> Any:
    """``state`` with the unknown stock card ``depth`` (0 = next to draw) named ``card``."""
    if hasattr(state, "reveal_stock"):
        return state.reveal_stock(card, depth)
    parts = _parts(state)
    if parts is None:
        return state.reveal(card)
    pos = parts[1][3][depth]
    return _rebuild_with(state, pos, card)
