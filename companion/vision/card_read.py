"""One card read (a detection) while a frame is read: card, score, alternatives, lattice place."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from companion.cards import Card


@dataclass
class CardRead:
    det: int
    card: Card
    score: float
    alts: dict[Card, float] = field(default_factory=dict)
    uv: tuple[float, float] = (0.0, 0.0)

    def best_alternatives(self, k: int = 3) -> tuple[tuple[Card, float], ...]:
        merged = dict(self.alts)
        merged[self.card] = max(merged.get(self.card, 0.0), self.score)
        items = sorted(merged.items(), key=lambda t: -t[1])
        first = [(self.card, merged[self.card])]
        return tuple(first + [(c, s) for c, s in items if c is not self.card][: k - 1])

    def rename(self, card: Card, score: float) -> None:
        """Name this read ``card`` scored ``score``; the name it gives up becomes an alternative."""
        self.alts[self.card] = max(self.alts.get(self.card, 0.0), self.score)
        self.alts.pop(card, None)
        self.card, self.score = card, score


def dedupe_cards(reads: list[CardRead], js: list[int]) -> list[CardRead]:
    """One read per card (a loose card shows two indices), in the given order, scores pooled."""
    out: dict[Card, CardRead] = {}
    for j in js:
        rd = reads[j]
        if rd.card in out:
            top = out[rd.card]
            top.score = 1 - (1 - top.score) * (1 - rd.score)
        else:
            out[rd.card] = rd
    return list(out.values())


#: What a read with no free alternative is worth when it gives its card up (it is "seen twice").
NO_ALTERNATIVE = 0.02


def keeper_first(where: list[tuple[str, CardRead]],
                 free_alt: Callable[[CardRead], Optional[tuple[Card, float]]]) -> list[tuple[str, CardRead]]:
    """The places one card was read at, the one that keeps it first: the one whose keeping makes
    the likeliest table, its score times the others' best free alternatives (``free_alt``), so a
    card read surely on one slot and as a near second choice on another (val_s22_000127: JS 0.62
    at one, JS 0.92 with JC 0.17 at the other) keeps the name that costs least to give up."""
    def worth(i: int) -> float:
        v = where[i][1].score
        for k, (_, rd) in enumerate(where):
            if k != i:
                alt = free_alt(rd)
                v *= alt[1] if alt is not None else NO_ALTERNATIVE
        return v
    best = max(range(len(where)), key=lambda i: (worth(i), where[i][1].score))
    return [where[best]] + [w for k, w in enumerate(where) if k != best]


def rename_to_free_alternative(read: CardRead, taken: set[Card], at_least: float, deck: set[Card]) -> bool:
    """Name ``read`` as its likeliest alternative of ``deck`` not in ``taken``, when that scores
    ``at_least``; the name it gives up becomes an alternative. Whether it was renamed."""
    for card, score in read.best_alternatives(6)[1:]:
        if card not in taken and card in deck and score >= at_least:
            read.rename(card, score)
            return True
    return False
