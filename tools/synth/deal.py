"""What lies on the table: a scene spec (which card in which pyramid slot, piles, reserve, cells).

A spec is a plain dict (JSON-able), the same shape the truth files use::

    {"form": "pyramid"|"inverted", "pyramid": [[code|None, ...] per row, row 0 = apex],
     "face_down_rows": k,            # rows 0..k-1 dealt face down (turned once uncovered)
     "waste": [[codes bottom..top] per pile], "stock": n_face_down_cards,
     "reserve": [code|None, ...],    # a face-up row between the pyramid and the piles
     "cells": [code|None, ...],      # free cells beside the piles
     "loose": [codes]}               # face-up cards put aside (a discard pile)

``random_spec`` draws a shuffled, partly played deal: only exposed cards are ever removed, and empty
slots stay empty (they are ``None`` in place, never shifted).
"""

from __future__ import annotations

import numpy as np

from companion.cards import CARD_CODES, Card


def covering(form: str, rows: int, r: int, i: int) -> list[tuple[int, int]]:
    """The slots whose cards lie on (r, i)."""
    if form == "inverted":  # apex row at the bottom: row r is covered by the narrower row r - 1
        return [(r - 1, j) for j in (i - 1, i) if r > 0 and 0 <= j <= r - 1]
    return [(r + 1, j) for j in (i, i + 1)] if r < rows - 1 else []


def exposed(removed: set[tuple[int, int]], rows: int, r: int, i: int, form: str = "pyramid") -> bool:
    return all(c in removed for c in covering(form, rows, r, i))


def random_spec(rng: np.random.Generator, variants: np.random.Generator | None = None,
                p_variant: float = 0.0) -> dict:
    """A shuffled, partly played deal. ``variants`` (a separate generator) adds, with probability
    ``p_variant``, one rule-variant layout: inverted pyramid, face-down rows, reserve row or cells.
    With ``p_variant == 0`` the draws from ``rng`` are those of the plain generator."""
    form, face_down, n_reserve, n_cells = "pyramid", 0, 0, 0
    if variants is not None and variants.random() < p_variant:
        kind = str(variants.choice(["inverted", "face_down", "reserve", "cells"]))
        if kind == "inverted":
            form = "inverted"
        elif kind == "face_down":
            face_down = int(variants.integers(1, 4))
        elif kind == "reserve":
            n_reserve = int(variants.integers(3, 9))
        else:
            n_cells = int(variants.integers(1, 5))
    rows = 7 if rng.random() < 0.9 else 6
    n_pyr = rows * (rows + 1) // 2
    deck = [CARD_CODES[k] for k in rng.permutation(52)]
    removed: set[tuple[int, int]] = set()
    if rng.random() < 0.5:
        for _ in range(int(rng.integers(1, n_pyr + 1))):
            cand = [(r, i) for r in range(rows) for i in range(r + 1)
                    if (r, i) not in removed and exposed(removed, rows, r, i, form)]
            if not cand:
                break
            removed.add(cand[int(rng.integers(len(cand)))])
    pyramid = [[None if (r, i) in removed else deck[r * (r + 1) // 2 + i] for i in range(r + 1)]
               for r in range(rows)]
    removed_codes = [deck[r * (r + 1) // 2 + i] for r, i in sorted(removed)]
    pool = deck[n_pyr:]
    n_piles = 3 if rng.random() < 0.15 else 1
    waste = []
    for _ in range(n_piles):
        n = int(rng.integers(0, 5)) if rng.random() < 0.85 else 0
        if n_piles == 1 and rng.random() < 0.7:
            n = max(n, 1)
        waste.append([pool.pop(0) for _ in range(min(n, len(pool)))])
    stock = int(rng.integers(1, 10)) if rng.random() < 0.85 else 0
    loose = []
    if removed_codes and rng.random() < 0.35:  # removed pairs put aside face up
        loose += removed_codes[-int(rng.integers(1, 4)):]
    if pool and rng.random() < 0.12:  # a card someone put aside
        loose.append(pool.pop())
    spec = {"form": form, "pyramid": pyramid, "waste": waste, "stock": stock, "loose": loose}
    if face_down:
        spec["face_down_rows"] = min(face_down, rows - 1)
    if n_reserve or n_cells:
        assert variants is not None
        spare = [c for c in pool if c not in loose]
        if n_reserve:
            spec["reserve"] = [spare.pop() if spare and variants.random() < 0.85 else None for _ in range(n_reserve)]
        if n_cells:
            spec["cells"] = [spare.pop() if spare and variants.random() < 0.6 else None for _ in range(n_cells)]
    return spec


def check_spec(spec: dict) -> None:
    """A spec names each card at most once and has a pyramid of 1..7 rows of growing length."""
    rows = spec.get("pyramid")
    if not rows or len(rows) > 7 or any(len(r) != k + 1 for k, r in enumerate(rows)):
        raise ValueError(f"spec pyramid must have rows of 1, 2, ... cards (at most 7), got {rows!r}")
    if spec.get("form", "pyramid") not in ("pyramid", "inverted"):
        raise ValueError(f"spec form must be 'pyramid' or 'inverted', got {spec.get('form')!r}")
    codes = [c for r in rows for c in r if c] + [c for p in spec.get("waste", []) for c in p] + \
        list(spec.get("loose", [])) + [c for c in spec.get("reserve", []) if c] + \
        [c for c in spec.get("cells", []) if c]
    for c in codes:
        Card.parse(c)
    dup = {c for c in codes if codes.count(c) > 1}
    if dup:
        raise ValueError(f"spec shows cards twice: {sorted(dup)}")


def face_down_slots(spec: dict) -> set[tuple[int, int]]:
    """Slots still face down: in the face-down rows and not yet uncovered."""
    k = int(spec.get("face_down_rows", 0))
    rows = spec["pyramid"]
    form = spec.get("form", "pyramid")
    out = set()
    for r in range(min(k, len(rows))):
        for i, code in enumerate(rows[r]):
            if code is None:
                continue
            cover = covering(form, len(rows), r, i)
            if not all(rows[cr][ci] is None for cr, ci in cover):
                out.add((r, i))
    return out
