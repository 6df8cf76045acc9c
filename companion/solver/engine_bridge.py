"""Between the rules engine (``companion.game``) and the solver's own ``Position``.

``position_from_engine`` reads a ``Deal`` or ``GameState``. Unknown cards (a
face-down pyramid card, an unseen stock card) must be filled in: pass
``fill``, the cards to put in the unknown places in the order of
``unknown_places`` (pyramid slots, then the waste bottom..top, then the stock
top first); the advisor fills them with sampled orders.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

from companion.cards import Card
from companion.errors import InvalidDealError
from companion.rules import Rules
from companion.solver.position import Position


def engine_state(rules: Rules, game: Any) -> Any:
    """An engine ``GameState`` from a ``GameState``, a ``Deal`` or deal text."""
    from companion.game import Deal, GameState
    if isinstance(game, GameState):
        return game
    if isinstance(game, str):
        game = Deal.parse(game, rules)
    if isinstance(game, Deal):
        return GameState.initial(rules, game)
    raise TypeError(f"cannot read a position from {type(game).__name__}")


def _pyramid_slots(state: Any) -> list[tuple[bool, Optional[Card]]]:
    """(empty, card) per pyramid slot; card None and not empty = unknown (face down)."""
    empty = state.empty_mask
    return [(bool((empty >> i) & 1), c) for i, c in enumerate(state.pyramid)]


def unknown_count(state: Any) -> int:
    n = sum(1 for empty, c in _pyramid_slots(state) if not empty and c is None)
    n += sum(1 for pile in state.waste for c in pile if c is None)
    return n + sum(1 for c in state.stock if c is None)


def position_from_engine(rules: Rules, game: Any, fill: Optional[Iterable[Card]] = None) -> Position:
    state = engine_state(rules, game)
    rules = state.rules
    if rules.waste_piles != 1 or rules.free_cells:
        raise ValueError(f"{rules.name}: the slot solver handles one waste pile without cells")
    it: Optional[Iterator[Card]] = iter(fill) if fill is not None else None

    def known(card: Optional[Card], where: str) -> Card:
        if card is not None:
            return card
        if it is None:
            raise InvalidDealError(f"the {where} holds an unknown card (??): the solver needs the whole deal")
        try:
            return next(it)
        except StopIteration:
            raise ValueError("fill has fewer cards than there are unknown places") from None

    table: list[Optional[Card]] = []
    for i, (empty, card) in enumerate(_pyramid_slots(state)):
        table.append(None if empty else known(card, f"pyramid slot {i + 1}"))
    table.extend(state.reserve)
    waste = tuple(known(c, "waste") for c in state.waste[0])
    stock = tuple(known(c, "stock") for c in state.stock)
    return Position(rules, tuple(table), waste, stock, state.pass_number - 1)
