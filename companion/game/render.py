"""Plain-text picture of a position: the pyramid as a triangle, then the other piles."""

from __future__ import annotations

from typing import TYPE_CHECKING

from companion.game import scoring
from companion.game.geometry import slot

if TYPE_CHECKING:
    from companion.game.state import GameState


def _code(card: object) -> str:
    return "??" if card is None else str(card)


def render_pyramid(state: "GameState") -> list[str]:
    rows = state.rules.rows
    k = state._k
    lines = []
    order = range(rows)  # inverted pyramids are drawn apex-down: widest row first
    if state.rules.inverted:
        order = range(rows - 1, -1, -1)
    for r in order:
        cells = []
        for c in range(r + 1):
            s = slot(r, c)
            if state.slot_empty(s):
                cells.append("..")
            elif not state.visible(s):
                cells.append("##")
            else:
                cells.append(_code(k.pyramid[s]))
        lines.append(" " * (2 * (rows - 1 - r)) + "  ".join(cells))
    return lines


def render_state(state: "GameState", moves: bool = True) -> str:
    """Multi-line text of the position (face-down cards as ``##``, empty slots ``..``)."""
    rules = state.rules
    lines = render_pyramid(state)
    if rules.reserve_piles:
        lines.append("reserve: " + "  ".join("[" + " ".join(map(str, pile)) + "]"
                                             for pile in state.reserve_piles))
    elif rules.reserve:
        lines.append("reserve: " + " ".join(".." if c is None else str(c) for c in state.reserve))
    stock = state.stock
    if stock:
        shown = " ".join(_code(c) for c in stock) if rules.stock_known else (
            _code(stock[0]) + " + " + str(len(stock) - 1) + " face down" if rules.stock_playable
            else f"{len(stock)} face down")
    else:
        shown = "empty"
    lines.append(f"stock ({len(stock)}): {shown}")
    for i, pile in enumerate(state.waste):
        label = "waste" if len(state.waste) == 1 else f"waste {i + 1}"
        lines.append(f"{label} ({len(pile)}): " + (" ".join(_code(c) for c in pile) if pile else "empty"))
    if rules.free_cells:
        lines.append("cells: " + " ".join(".." if c is None else str(c) for c in state.cells))
    left = state.recycles_left
    passes = "unlimited" if left is None else f"{left} recycle{'s' if left != 1 else ''} left"
    lines.append(f"pass {state.pass_number} ({passes}); cards left {state.cards_left()}; "
                 f"score {scoring.score(state)} ({rules.scoring}); {state.result}")
    if moves:
        legal = state.legal_moves()
        lines.append("moves: " + (" ".join(str(m) for m in legal) if legal else "none"))
    return "\n".join(lines)
