"""Starting to follow a game from its first stable views.

Without a known deal the first stable layout is the deal as recognised. It may
show a slot that must hold a card (a card lies on it) but whose index the camera
cannot see: dealt unevenly, the card on it hides the corner. A ``Deal`` needs
every face-up pyramid card, so ``FollowStart`` keeps the layouts until a later
view shows each such card at its slot (its bottom-right index once the card
lying there is gone), builds the deal with them and replays the kept layouts
into a ``Follower``. A first layout that cannot be completed within
``max_wait`` layouts, or is no deal at all, is dropped and the next one tried
(as before: "wait for the next").

The deal is not taken from the first stable layout alone: every stable view until the first
card leaves the pyramid shows the same deal, and the fuser can settle on a misreading for a
second before the camera reads it right (clubs for spades, at the start of the bundled demo).
Each slot takes the card it showed the longest over those views (frames until the next view);
the game starts when a card first leaves the pyramid, and those views are replayed with that
pyramid (their waste and stock as seen).

A person may take a card before the view first settles (they start playing at once): the first
stable layout then lacks open cards, and is no deal. The fuser says which cards were read on its
empty slots before (``EARLY_READS`` in its ``extra``); with a card for each, those are dealt there
and the next view is explained from that deal (the first may show the middle of a move).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Optional

from companion.cards import Card
from companion.errors import CompanionError
from companion.game import Deal
from companion.layout import EARLY_READS, SlotReading, TableLayout
from companion.playalong.events import Event
from companion.playalong.follower import Follower


def unseen_covered(rules: Any, layout: TableLayout) -> list[int]:
    """Pyramid slots (deal order) read as empty although a card lies on them, directly or not."""
    from companion.game.deal import face_down_slots
    from companion.game.geometry import Geometry
    geo = Geometry(rules.rows, rules.inverted)
    cards = cards_of(layout)
    if len(cards) != geo.size:
        return []
    covered: set[int] = set()
    for _ in range(rules.rows):  # a card lies on it, or on a card lying on it, ...
        covered |= {i for i in range(geo.size)
                    if any(cards[c] is not None or c in covered for c in geo.covers(i))}
    down = face_down_slots(rules)
    return sorted(i for i in covered if cards[i] is None and i not in down)


def deal_views(layouts: list[TableLayout]) -> int:
    """How many layouts from the first show its pyramid untouched: every card read in the
    first still read at its slot (cards may differ: that is a reading, not a move)."""
    shape = [s.card is not None for _, _, s in layouts[0].slots()]
    for n, layout in enumerate(layouts[1:], 1):
        now = [s.card is not None for _, _, s in layout.slots()]
        if len(now) != len(shape) or any(a and not b for a, b in zip(shape, now)):
            return n
    return len(layouts)


def one_slot_each(readings: list[SlotReading]) -> Optional[list[SlotReading]]:
    """``readings`` with no card named at two slots, or None when that cannot be had.

    A card named at several slots stays where taking the reading's best runner-up named nowhere
    else would lose the most score; the other slots take their runner-ups (the fuser votes slot by
    slot: in the bundled demo it kept QC at two slots, though the frames had read the second as QS).
    """
    out = list(readings)
    for _ in range(len(out)):
        slots: dict[Card, list[int]] = {}
        for i, r in enumerate(out):
            if r.card is not None:
                slots.setdefault(r.card, []).append(i)
        twice = next((where for where in slots.values() if len(where) > 1), None)
        if twice is None:
            return out
        named = set(slots)

        def way_out(i: int) -> tuple[float, Optional[tuple[Card, float]]]:
            if out[i].corrected:  # set by the person: it stays
                return float("inf"), None
            alt = next(((c, a) for c, a in out[i].alternatives if c is not None and c not in named), None)
            return (out[i].score - alt[1] if alt is not None else float("inf")), alt

        ways = sorted((way_out(i) + (i,) for i in twice), key=lambda w: w[0])
        for loss, alt, i in ways[:-1]:  # the slot that would lose most keeps the card
            if alt is None:
                return None
            out[i] = SlotReading(alt[0], min(alt[1], out[i].score),
                                 (alt,) + tuple(a for a in out[i].alternatives if a[0] != alt[0]), out[i].corrected)
            named.add(alt[0])
    return None


def _one_slot_each_view(view: TableLayout) -> TableLayout:
    readings = [s for _, _, s in view.slots()]
    fixed = one_slot_each(readings)
    if fixed is None:
        return view
    return with_slots(view, {i: r for i, (r, s) in enumerate(zip(fixed, readings)) if r is not s})


def voted_deal(views: list[TableLayout], after: Optional[TableLayout]) -> TableLayout:
    """The first view with each slot showing the reading it held the longest across ``views``
    (frames until the next view; ``after`` ends the last). Unknown frame numbers count 1 each.
    A card the votes name at two slots stays at one (``one_slot_each``); when no runner-up can
    take its place, the longest-held view is taken whole."""
    if len(views) == 1:
        return _one_slot_each_view(views[0])
    ends = [v.frame for v in views[1:]] + [after.frame if after is not None else -1]
    weights = [e - v.frame if v.frame >= 0 and e > v.frame else 1 for v, e in zip(views, ends)]
    size = sum(len(r) for r in views[0].pyramid)
    tally: list[dict[Optional[Card], float]] = [{} for _ in range(size)]
    best: list[dict[Optional[Card], SlotReading]] = [{} for _ in range(size)]
    for view, w in zip(views, weights):
        for i, (_, _, reading) in enumerate(view.slots()):
            tally[i][reading.card] = tally[i].get(reading.card, 0.0) + w
            held = best[i].get(reading.card)
            if held is None or reading.score > held.score:
                best[i][reading.card] = reading
    voted = one_slot_each([best[i][max(t, key=lambda c: t[c])] for i, t in enumerate(tally)])
    if voted is None:
        return _one_slot_each_view(max(zip(views, weights), key=lambda vw: vw[1])[0])
    return with_slots(views[0], {i: r for i, (r, (_, _, s)) in enumerate(zip(voted, views[0].slots()))
                                 if r.card != s.card})


def cards_of(layout: TableLayout) -> list[Optional[Card]]:
    """The pyramid's cards in deal order (``None``: nothing read)."""
    return [s.card for _, _, s in layout.slots()]


def with_slots(layout: TableLayout, readings: dict[int, SlotReading]) -> TableLayout:
    """``layout`` with pyramid slots (deal order) read as ``readings`` say (itself if none)."""
    if not readings:
        return layout
    rows, n = [], 0
    for row in layout.pyramid:
        rows.append(tuple(readings.get(n + i, s) for i, s in enumerate(row)))
        n += len(row)
    return replace(layout, pyramid=tuple(rows))


class FollowStart:
    """Feed stable layouts to ``feed``; ``follower`` is ``None`` until the game can start.

    ``deal``: the deal when known (``follow --deal``): the follower starts at once.
    ``follower_kw`` go to ``Follower`` (``fps`` ...). ``errors`` says why layouts were dropped.
    """

    def __init__(self, rules: Any, deal: Deal | str | None = None, *, max_wait: int = 60,
                 **follower_kw: Any) -> None:
        self.rules = rules
        self.max_wait = max_wait
        self.follower_kw = follower_kw
        self.follower: Optional[Follower] = None
        self.errors: list[str] = []
        self._waiting: list[TableLayout] = []
        #: Slot -> card read there before the first stable view (``EARLY_READS``), once fed.
        self._early: Optional[dict[int, Card]] = None
        if deal is not None:
            self.follower = Follower(rules, deal, **follower_kw)

    def feed(self, layout: TableLayout) -> list[Event]:
        if self.follower is not None:
            return self.follower.feed(layout)
        if self._early is None:
            self._early = {int(i): Card.parse(c) for i, c in (layout.extra or {}).get(EARLY_READS, {}).items()}
        self._waiting.append(layout)
        return self._try_start()

    def tick(self, frame: int, sightings: Optional[Mapping[Card, int]] = None) -> list[Event]:
        """A frame without a new stable layout (see ``Follower.tick``)."""
        return self.follower.tick(frame, sightings) if self.follower is not None else []

    def finish(self) -> list[Event]:
        """The stream ended: start from what is known if the game never could (the first layout
        that is a deal without waiting for hidden cards), then settle the follower."""
        if self.follower is None:
            self._try_start(final=True)
        return self.follower.finish() if self.follower is not None else []

    # --- helpers -------------------------------------------------------------------------------
    def _try_start(self, final: bool = False) -> list[Event]:
        while self._waiting:
            views = deal_views(self._waiting)
            if views == len(self._waiting) and not final and len(self._waiting) <= self.max_wait:
                return []  # no card has left the pyramid yet: the deal may still be read better
            first = voted_deal(self._waiting[:views], self._waiting[views] if views < len(self._waiting) else None)
            # the deal views, replayed, show the voted pyramid (their waste and stock as seen)
            self._waiting[:views] = [v if v.pyramid == first.pyramid else replace(v, pyramid=first.pyramid)
                                     for v in self._waiting[:views]]
            missing = unseen_covered(self.rules, first)
            named = self._named(first, missing)
            if len(named) < len(missing) and not final and len(self._waiting) <= self.max_wait:
                return []  # wait for a view that shows the hidden cards
            dealt = with_slots(first, named)
            early = self._early_named(dealt)
            if early:
                # cards taken before the view first settled: the deal as read before, and this
                # view its first change (a card lying under others was not taken: each view
                # waiting shows it, as the deal does)
                dealt = replace(with_slots(dealt, early), frame=first.frame - 1 if first.frame > 0 else first.frame)
                under = {i: r for i, r in {**named, **early}.items() if i in missing}
                self._waiting = [with_slots(v, {i: r for i, r in under.items() if seen[i] is None})
                                 for v, seen in ((v, cards_of(v)) for v in self._waiting)]
            try:
                follower = Follower(self.rules, dealt, **self.follower_kw)
            except CompanionError as exc:
                self.errors.append(f"frame {first.frame}: {exc}")
                self._waiting.pop(0)
                continue
            # (with cards taken before: the next view says what was done, the first may show the
            # middle of a move, a card lifted with a king gone, or be the only one)
            skip = 0 if early and len(self._waiting) == 1 else 1
            self.follower, rest, self._waiting = follower, self._waiting[skip:], []
            events = list(follower.events)
            for later in rest:
                events += follower.feed(later)
            return events
        return []

    def _early_named(self, first: TableLayout) -> dict[int, SlotReading]:
        """The empty (face-up) slots of ``first``, each with the card read there before the first
        stable view, when every such slot has one (else none: no deal to start from)."""
        from companion.game.deal import face_down_slots
        down = face_down_slots(self.rules)
        empty = [i for i, c in enumerate(cards_of(first)) if c is None and i not in down]
        seen = set(first.visible_cards())
        early = self._early or {}
        if not empty or any(i not in early or early[i] in seen for i in empty):
            return {}
        return {i: SlotReading.known(early[i]) for i in empty}

    def _named(self, first: TableLayout, missing: list[int]) -> dict[int, SlotReading]:
        """Hidden slots of ``first`` that a later layout shows a card at (one seen nowhere in
        ``first``): slot -> that reading."""
        seen = set(first.visible_cards())
        out: dict[int, SlotReading] = {}
        for later in self._waiting[1:]:
            slots = [s for _, _, s in later.slots()]
            for i in missing:
                card = slots[i].card if i < len(slots) else None
                if i not in out and card is not None and card not in seen:
                    out[i] = slots[i]
        return out

