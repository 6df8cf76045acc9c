"""One card read (a detection) while a frame is read: card, score, alternatives, lattice place."""

from __future__ import annotations

from dataclasses import dataclass, field

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
