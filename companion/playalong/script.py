"""Scripted tables: the layout a camera would report for a game state.

Used by tests, benchmarks and scripted demo sources: play moves on a fully
known deal and turn each position into the :class:`TableLayout` the vision
pipeline would produce (only what a person could see: pyramid face-up cards,
the visible part of each waste pile, cells, reserve, the stock pile).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

from companion.cards import Card
from companion.layout import SlotReading, TableLayout
from companion.moves import Move
from companion.playalong.view import expected_pyramid


def layout_of(state: Any, *, frame: int = -1, fanned: Optional[int] = None,
              stock_top: bool | str = False) -> TableLayout:
    """The table in ``state`` as a perfect eye sees it.

    ``fanned``: how many waste cards show per pile (default: the draw count,
    i.e. draw-3 cards lie fanned). ``stock_top`` (rules with a playable stock):
    ``True`` reports the face-up stock top in ``layout.extra["stock_top"]``;
    ``"pile"`` shows it as one more face-up card left of the waste, unlabelled,
    as a vision pipeline that cannot tell the two apart would.
    """
    rules = state.rules
    flat = expected_pyramid(state)
    rows, i = [], 0
    for r in range(rules.rows):
        rows.append(tuple(SlotReading.empty() if c is None else SlotReading.known(c)
                          for c in flat[i:i + r + 1]))
        i += r + 1
    show = rules.draw if fanned is None else fanned
    show = 1 if rules.waste_piles > 1 else show
    waste = tuple(tuple(c for c in pile[-show:] if c is not None) for pile in state.waste)
    extra: dict[str, Any] = {}
    if stock_top and rules.stock_playable and state.stock and state.stock[0] is not None:
        if stock_top == "pile":
            waste = ((state.stock[0],),) + waste
        else:
            extra["stock_top"] = state.stock[0]
    return TableLayout(tuple(rows), waste, tuple(state.cells), tuple(state.reserve),
                       stock_present=bool(state.stock), frame=frame, extra=extra)


def misread(layout: TableLayout, row: int, index: int, card: Optional[Card], score: float = 0.55,
            runner_up: float = 0.3) -> TableLayout:
    """``layout`` with one slot read as ``card``; the true card becomes the runner-up reading."""
    true = layout.pyramid[row][index].card
    alts: tuple = ((card, score),) if card is not None else ()
    if true is not None:
        alts += ((true, runner_up),)
    return layout.with_slot(row, index, SlotReading(card, score, alts))


def play_layouts(state: Any, moves: Iterable[Move | str], *, start_frame: int = 0, step: int = 10,
                 **kw: Any) -> Iterator[TableLayout]:
    """The layout after each move in turn (frames ``start_frame + step``, ...)."""
    frame = start_frame
    for move in moves:
        state = state.apply(move)
        frame += step
        yield layout_of(state, frame=frame, **kw)
