"""What the camera sees, normalised so it can be compared with a game state.

An :class:`Observation` is the part of a :class:`~companion.layout.TableLayout`
that the rules can check: the pyramid slot by slot (flat, row-major from the
apex like ``GameState.pyramid``), the visible cards of each waste pile (bottom
to top), cells, reserve, and the face-up stock top when the vision reports one.
Its ``signature`` is a plain tuple, so "nothing changed" costs one comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

from companion.cards import Card
from companion.layout import SlotReading, TableLayout
from companion.rules import Rules


def slot_name(index: int) -> str:
    """``"row 3 card 2"`` (1-based, rows counted from the apex) for a flat slot index."""
    row = 0
    while (row + 1) * (row + 2) // 2 <= index:
        row += 1
    return f"row {row + 1} card {index - row * (row + 1) // 2 + 1}"


def _pad(items: Iterable[Any], n: int, fill: Any) -> tuple:
    items = tuple(items)
    return items[:n] + (fill,) * (n - len(items)) if len(items) < n else items


@dataclass(frozen=True)
class Observation:
    pyramid: tuple[Optional[Card], ...]
    #: Visible cards of each waste pile, bottom to top (usually just the top one).
    waste: tuple[tuple[Card, ...], ...]
    cells: tuple[Optional[Card], ...]
    reserve: tuple[Optional[Card], ...]
    #: The face-up stock top when the vision reports it (rules with a playable stock), else None.
    stock_top: Optional[Card]
    stock_present: bool
    #: Slot readings (score, alternatives) by flat slot index, for "check" messages.
    readings: tuple[SlotReading, ...] = ()
    frame: int = -1
    #: Rules with a face-up playable stock and one waste pile, when the vision does not say which
    #: face-up card off the pyramid is the stock top: ``waste`` then holds every such card (as
    #: one-card piles) and is compared with {stock top, waste top} as a set.
    loose: bool = False
    #: The last frame each card was read in, raw frames included (``LayoutFuser``): when one view
    #: hides several removals, the card that vanished first was taken first.
    last_seen: dict[Card, int] = field(default_factory=dict, compare=False, hash=False)

    @property
    def signature(self) -> tuple:
        return (self.pyramid, self.waste, self.cells, self.reserve, self.stock_top, self.stock_present)

    def waste_tops(self) -> tuple[Optional[Card], ...]:
        return tuple(p[-1] if p else None for p in self.waste)

    def visible(self) -> set[Card]:
        """Every card the camera sees face up anywhere on the table."""
        seen = {c for c in self.pyramid if c is not None}
        seen.update(c for p in self.waste for c in p)
        seen.update(c for c in self.cells if c is not None)
        seen.update(c for c in self.reserve if c is not None)
        if self.stock_top is not None:
            seen.add(self.stock_top)
        return seen

    def where(self, card: Card) -> Optional[str]:
        """A readable place of ``card`` in this view, or None when not seen."""
        for s, c in enumerate(self.pyramid):
            if c is card:
                return slot_name(s)
        for i, p in enumerate(self.waste):
            if card in p:
                return "the waste" if len(self.waste) == 1 else f"waste pile {i + 1}"
        if card in self.cells:
            return "a cell"
        if card in self.reserve:
            return "the reserve"
        if card is self.stock_top:
            return "the stock"
        return None

    def with_pyramid(self, pyramid: tuple[Optional[Card], ...]) -> "Observation":
        return replace(self, pyramid=pyramid)

    def with_waste(self, waste: tuple[tuple[Card, ...], ...]) -> "Observation":
        return replace(self, waste=waste)


def _stock_top_of(layout: TableLayout) -> Optional[Card]:
    top = getattr(layout, "stock_top", None)
    if top is None and layout.extra:
        top = layout.extra.get("stock_top")
    if isinstance(top, str):
        top = Card.parse(top)
    return top if isinstance(top, Card) else None


def observe(layout: TableLayout, rules: Rules) -> Observation:
    """Normalise a layout to the rules' shape (waste piles, cells, reserve padded)."""
    if layout.rows != rules.rows:
        from companion.errors import InvalidLayoutError
        raise InvalidLayoutError(f"layout of frame {layout.frame} has {layout.rows} pyramid rows, the rules "
                                 f"{rules.name!r} have {rules.rows}")
    readings = tuple(s for row in layout.pyramid for s in row)
    piles = tuple(tuple(p) for p in layout.waste)
    last_seen = _last_seen(layout)
    stock_top = _stock_top_of(layout) if rules.stock_playable else None
    if rules.stock_playable and rules.waste_piles == 1 and stock_top is None:
        # the face-up stock top lies off the pyramid too: without a label, compare as a set
        # every face-up card there is one of the two (a draw-1 waste shows only its top)
        tops = tuple((c,) for p in piles for c in p)
        return Observation(tuple(s.card for s in readings), tops, _pad(layout.cells, rules.free_cells, None),
                           _pad(layout.reserve, rules.reserve, None), None, bool(layout.stock_present),
                           readings, layout.frame, loose=True, last_seen=last_seen)
    if len(piles) > rules.waste_piles and all(not p for p in piles[rules.waste_piles:]):
        piles = piles[:rules.waste_piles]
    piles = _pad(piles, rules.waste_piles, ())
    return Observation(
        pyramid=tuple(s.card for s in readings),
        waste=piles,
        cells=_pad(layout.cells, rules.free_cells, None),
        reserve=_pad(layout.reserve, rules.reserve, None),
        stock_top=stock_top,
        stock_present=bool(layout.stock_present),
        readings=readings,
        frame=layout.frame,
        last_seen=last_seen,
    )


def _last_seen(layout: TableLayout) -> dict[Card, int]:
    """``layout.extra["last_seen"]`` ({code: frame}, from the fuser) as cards; bad entries are skipped."""
    raw = layout.extra.get("last_seen") if layout.extra else None
    out: dict[Card, int] = {}
    if isinstance(raw, dict):
        for code, frame in raw.items():
            try:
                out[Card.parse(code) if isinstance(code, str) else code] = int(frame)
            except (ValueError, TypeError):
                continue
    return out


def expected_pyramid(state: Any) -> tuple[Optional[Card], ...]:
    """The pyramid as a person sees it: face-down cards read as no card."""
    pyramid = tuple(state.pyramid)
    if not state.rules.face_down_rows:
        return pyramid
    return tuple(c if c is not None and state.visible(s) else None for s, c in enumerate(pyramid))


def outside_tops(state: Any) -> list[Any]:
    """Face-up cards off the pyramid of a playable-stock game: stock top, waste top (None = unknown)."""
    out = []
    if state.stock:
        out.append(state.stock[0])
    pile = state.waste[0]
    if pile:
        out.append(pile[-1])
    return out


def state_view(state: Any) -> Observation:
    """What a person would see on the table in ``state`` (unknown cards are None)."""
    rules = state.rules
    stock = state.stock
    top = stock[0] if rules.stock_playable and stock else None
    return Observation(expected_pyramid(state), tuple(tuple(p) for p in state.waste),
                       tuple(state.cells), tuple(state.reserve), top, bool(stock))


def agrees(state: Any, obs: Observation) -> bool:
    """True when ``obs`` is what the table looks like in ``state``.

    Waste piles compare only their visible cards (a suffix of the pile); the
    stock top only when the vision reports it; ``stock_present`` is not
    compared (a face-down pile is hard to see, so it only breaks ties).
    """
    if expected_pyramid(state) != obs.pyramid:
        return False
    if obs.loose:
        if sorted(c.index for (c,) in obs.waste) != sorted(-1 if c is None else c.index for c in outside_tops(state)):
            return False
        return tuple(state.cells) == obs.cells and tuple(state.reserve) == obs.reserve
    piles = state.waste
    if len(piles) != len(obs.waste):
        return False
    for pile, seen in zip(piles, obs.waste):
        k = len(seen)
        if k == 0:
            if pile:
                return False
        elif len(pile) < k or tuple(pile[-k:]) != seen:
            return False
    if tuple(state.cells) != obs.cells or tuple(state.reserve) != obs.reserve:
        return False
    if obs.stock_top is not None:
        stock = state.stock
        if not stock or stock[0] is not obs.stock_top:
            return False
    return True
