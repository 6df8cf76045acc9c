"""Game scripts: a whole game a person plays at the table, as a list of steps with its truth.

``make_script(rules, seed)`` deals a seeded deck, then plays: mostly the solver's winning line,
sometimes a random legal move (kept only when the position stays winnable, so the game still ends
won), and now and then an illegal removal the person tries before the next legal move. What the
person does after an illegal removal is fixed: the cards go back where they were (the table returns
to the recorded position), so the truth move list holds only the legal moves.

A step is ``Step(kind, text, before, after, reason)``: ``kind`` ``"move"`` (``after`` is the new
state) or ``"illegal"`` (``after`` is ``before``; ``text`` names the cards taken, ``reason`` why the
rules forbid it). ``Script.to_json()`` is the move/illegal truth; ``Script.specs()`` the tables.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Optional

from companion.cards import Card
from companion.game import Deal, GameState
from companion.moves import DRAW, RECYCLE, REMOVE, Move
from companion.rules import Rules

MOVE, ILLEGAL = "move", "illegal"
#: Kinds of illegal removal the script can stage.
NOT_13, LONE_CARD, COVERED = "not13", "lone", "covered"


def physical_ok(rules: Rules) -> Optional[str]:
    """Why the renderer cannot lay out this rules' table (None when it can)."""
    if rules.waste_piles != 1 or rules.draw != 1:
        return "draw 1 onto one waste pile only"
    if rules.free_cells or rules.reserve or rules.inverted or rules.face_down_rows:
        return "no cells, reserve, inverted or face-down rows"
    if rules.stock_playable:
        return "a face-up stock top is not rendered (use classic or tuts-tomb)"
    return None


@dataclass(frozen=True)
class Step:
    kind: str                 # MOVE | ILLEGAL
    text: str                 # move notation; for an illegal removal the cards taken ("QH+5C", "7D")
    before: GameState
    after: GameState
    reason: str = ""          # ILLEGAL: why the rules forbid it
    illegal_kind: str = ""    # NOT_13 | LONE_CARD | COVERED

    @property
    def cards(self) -> tuple[Card, ...]:
        if self.text in (DRAW, RECYCLE):
            return ()
        return tuple(Card.parse(t) for t in self.text.split("+"))


@dataclass
class Script:
    rules: Rules
    deal: Deal
    seed: int
    steps: list[Step] = field(default_factory=list)

    @property
    def moves(self) -> list[str]:
        return [s.text for s in self.steps if s.kind == MOVE]

    @property
    def final(self) -> GameState:
        return self.steps[-1].after if self.steps else GameState.initial(self.rules, self.deal)

    def to_json(self) -> dict[str, Any]:
        illegal, k = [], 0
        for s in self.steps:
            if s.kind == MOVE:
                k += 1
            else:
                illegal.append({"cards": s.text, "kind": s.illegal_kind, "reason": s.reason,
                                "after_moves": k})
        return {"rules": self.rules.name, "seed": self.seed, "deal": str(self.deal),
                "moves": self.moves, "illegal": illegal, "result": self.final.result}


def _solve(rules: Rules, state: GameState, budget: float) -> Optional[list[Move]]:
    from companion.solver import solve
    sol = solve(rules, state, budget_seconds=budget)
    return list(sol.moves) if sol.solvable and sol.moves is not None else None


def _covered(state: GameState) -> list[Card]:
    """Pyramid cards still lying under another card."""
    avail = state.available()
    return [c for c in state.pyramid if c is not None and c not in avail]


def illegal_attempt(state: GameState, rng: random.Random, kinds: tuple[str, ...] = (NOT_13, LONE_CARD)
                    ) -> Optional[tuple[str, str, str]]:
    """An illegal removal a person might try here: ``(cards text, kind, reason)``, or None.

    Only cards that can be seen are taken (pyramid cards and the waste top), so the camera can
    tell they are gone; the engine's own reason says why it is illegal.
    """
    rules = state.rules
    seen = [c for c in state.available() if c is not None]
    options: list[tuple[tuple[Card, ...], str]] = []
    if NOT_13 in kinds:
        for i, a in enumerate(seen):
            for b in seen[i + 1:]:
                if not rules.pairs(a, b) and not rules.is_king(a) and not rules.is_king(b):
                    options.append(((a, b), NOT_13))
    if LONE_CARD in kinds:
        options += [((a,), LONE_CARD) for a in seen if not rules.is_king(a)]
    if COVERED in kinds:
        for c in _covered(state):
            for a in seen:
                if rules.pairs(a, c):
                    options.append(((a, c), COVERED))
    rng.shuffle(options)
    for cards, kind in options:
        move = Move.remove(*cards)
        reason = state.why_illegal(move)
        if reason is not None:
            return str(move), kind, reason
    return None


def make_script(rules: Rules | str, seed: int, *, max_moves: Optional[int] = None, p_random: float = 0.15,
                p_illegal: float = 0.06, max_illegal: int = 3, min_illegal: int = 1,
                illegal_kinds: tuple[str, ...] = (NOT_13, LONE_CARD), budget: float = 2.0,
                max_deals: int = 50) -> Script:
    """Play a seeded game: the solver's line with random legal detours and staged illegal removals.

    Deals are drawn from ``random.Random(seed)`` until one is winnable. ``max_moves`` stops the game
    early (a short sample). At least ``min_illegal`` illegal removals are staged when possible.
    """
    if isinstance(rules, str):
        rules = Rules.parse(rules)
    why = physical_ok(rules)
    if why:
        raise ValueError(f"rules {rules.name!r} cannot be rendered: {why}")
    rng = random.Random(seed)
    for _ in range(max_deals):
        deal = Deal.random(rules, rng)
        state = GameState.initial(rules, deal)
        line = _solve(rules, state, budget)
        if line:
            break
    else:
        raise RuntimeError(f"no winnable deal in {max_deals} tries (seed {seed})")
    script = Script(rules, deal, seed)
    n_moves = 0
    limit = max_moves if max_moves is not None else 10 ** 6
    n_illegal = 0
    while line and n_moves < limit:
        left = min(limit, len(line) + n_moves) - n_moves
        want_illegal = (n_illegal < max_illegal and
                        (rng.random() < p_illegal or (n_illegal < min_illegal and left <= 2 * (min_illegal - n_illegal))))
        if want_illegal and n_moves > 0:
            attempt = illegal_attempt(state, rng, illegal_kinds)
            if attempt is not None:
                text, kind, reason = attempt
                script.steps.append(Step(ILLEGAL, text, state, state, reason, kind))
                n_illegal += 1
        move = line[0]
        if rng.random() < p_random:
            # a detour: a random legal removal the solver did not choose, kept if the game stays winnable
            others = [m for m in state.legal_moves() if m != move and m.kind == REMOVE]
            if others:
                detour = rng.choice(others)
                after = state.apply(detour)
                rest = _solve(rules, after, budget) if not after.is_won() else []
                if rest is not None:
                    script.steps.append(Step(MOVE, str(detour), state, after))
                    state, line, n_moves = after, rest, n_moves + 1
                    continue
        after = state.apply(move)
        script.steps.append(Step(MOVE, str(move), state, after))
        state, line, n_moves = after, line[1:], n_moves + 1
    return script


def table_spec(state: GameState, *, taken: tuple[Card, ...] = ()) -> dict:
    """The ``tools.synth`` scene spec of ``state`` (with ``taken`` cards lifted off the table)."""
    rules = state.rules
    gone = set(taken)
    flat = [None if c is None or c in gone else str(c) for c in state.pyramid]
    rows, i = [], 0
    for r in range(rules.rows):
        rows.append(flat[i:i + r + 1])
        i += r + 1
    waste = [[str(c) for c in pile if c is not None and c not in gone] for pile in state.waste]
    return {"form": "pyramid", "pyramid": rows, "waste": waste or [[]], "stock": len(state.stock), "loose": []}
