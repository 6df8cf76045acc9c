"""A game record: the moves played on one deal, with unlimited undo/redo and JSON files."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Optional

from companion.cards import Card
from companion.errors import InvalidDealError, InvalidMoveError
from companion.game.deal import Deal
from companion.game.state import GameState
from companion.moves import Move
from companion.rules import Rules

FORMAT = "pyramid-companion/game"
VERSION = 1


class Game:
    """The history of one game. ``game.state`` is the current position."""

    def __init__(self, rules: Rules, deal: Deal | str) -> None:
        if isinstance(deal, str):
            deal = Deal.parse(deal, rules)
        self.rules = rules
        self._states: list[GameState] = [GameState.initial(rules, deal)]
        self._moves: list[Move] = []
        self._redo: list[Move] = []

    # --- views ------------------------------------------------------------------------
    @property
    def state(self) -> GameState:
        return self._states[-1]

    @property
    def deal(self) -> Deal:
        """The deal as known now (cards revealed so far included)."""
        return self.state.deal

    @property
    def moves(self) -> tuple[Move, ...]:
        return tuple(self._moves)

    @property
    def history(self) -> tuple[GameState, ...]:
        """Every state from the deal to the current one (``len(moves) + 1`` of them)."""
        return tuple(self._states)

    @property
    def can_undo(self) -> bool:
        return bool(self._moves)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    # --- changes ------------------------------------------------------------------------
    def play(self, move: Move | str) -> GameState:
        """Play ``move``; on an illegal move nothing changes and IllegalMoveError says why."""
        if isinstance(move, str):
            move = Move.parse(move)
        new = self.state.apply(move)
        self._states.append(new)
        self._moves.append(move)
        if self._redo and self._redo[-1] == move:
            self._redo.pop()  # replaying the undone move keeps the rest of the redo line
        else:
            self._redo.clear()
        return new

    def undo(self) -> GameState:
        if not self._moves:
            raise InvalidMoveError("undo: nothing to undo")
        self._states.pop()
        self._redo.append(self._moves.pop())
        return self.state

    def redo(self) -> GameState:
        if not self._redo:
            raise InvalidMoveError("redo: nothing to redo")
        move = self._redo.pop()
        new = self.state.apply(move)
        self._states.append(new)
        self._moves.append(move)
        return new

    def reveal(self, card: Card | str, slot: Optional[int] = None) -> GameState:
        """Name an unknown card just seen; the knowledge applies to the whole history."""
        new = self.state.reveal(card, slot)
        known = new._k
        self._states = [s._with_known(known) for s in self._states]
        return self.state

    def learn(self, state: GameState) -> GameState:
        """Adopt what ``state`` knows about the deal: it must be the current position with more
        cards named (from ``GameState.reveal``, ``reveal_stock`` or ``reveal_waste``)."""
        if state.key() != self.state.key() or state.rules != self.rules:
            raise InvalidMoveError("learn: the state is not the current position of this game")
        known = state._k
        for before, after in zip(self.state.deal.cards, known.deal.cards):
            if before is not None and before is not after:
                raise InvalidMoveError(f"learn: the state contradicts a known card ({before} vs {after})")
        self._states = [s._with_known(known) for s in self._states]
        return self.state

    # --- files ----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "rules": self.rules.to_dict(),
            "deal": str(self.deal),
            "moves": [str(m) for m in self._moves],
            "redo": [str(m) for m in reversed(self._redo)],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Game":
        if not isinstance(data, dict) or "deal" not in data or "rules" not in data:
            raise InvalidDealError("not a game record: expected an object with 'rules' and 'deal'")
        rules_data = data["rules"]
        rules = Rules.parse(rules_data) if isinstance(rules_data, str) else Rules.from_dict(rules_data)
        game = cls(rules, Deal.parse(data["deal"], rules))
        for i, text in enumerate(data.get("moves", [])):
            try:
                game.play(text)
            except ValueError as exc:
                raise InvalidMoveError(f"move {i + 1} of the record ({text!r}): {exc}") from None
        game._redo = [Move.parse(t) for t in reversed(data.get("redo", []))]
        return game

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the record atomically (temporary file + rename)."""
        path = Path(path)
        text = json.dumps(self.to_json(), indent=1)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Game":
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as exc:
                raise InvalidDealError(f"{os.fspath(path)!r} is not a game record: {exc}") from None
        return cls.from_json(data)

    def __repr__(self) -> str:
        return f"<Game {self.rules.name} {len(self._moves)} moves {self.state.result}>"
