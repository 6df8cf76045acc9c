"""The game being played in the app (Qt-free): moves from clicks, undo/redo, autosave, resume.

Wraps the engine's ``Game`` (``companion.game``). After every change the game is
saved atomically (``Game.save`` writes a temp file and renames it) to the
autosave file; a lock file beside it exists while the app runs, so a lock left
behind at start-up means the last session crashed and the app offers to resume.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from companion.cards import Card
from companion.errors import IllegalMoveError
from companion.layout import TableLayout
from companion.app.correction import apply_overrides
from companion.app.places import Place
from companion.moves import Move
from companion.rules import Rules

AUTOSAVE_NAME = "autosave.json"
LOCK_NAME = "running.lock"


def _engine():
    import companion.game as game  # written by the rules-engine developer

    return game


class ClickPairing:
    """Turns clicks on cards into moves: a king alone, or two cards that pair."""

    def __init__(self) -> None:
        self.selected: Optional[Card] = None

    def click(self, card: Card, rules: Rules) -> Optional[Move]:
        if self.selected is card:
            self.selected = None
            return None
        if rules.is_king(card):
            self.selected = None
            return Move.remove(card)
        if self.selected is None:
            self.selected = card
            return None
        first, self.selected = self.selected, None
        return Move.remove(first, card)

    def reset(self) -> None:
        self.selected = None


class PlaySession:
    """One game with its autosave file."""

    def __init__(self, game: Any, autosave_dir: Optional[Path] = None,
                 corrections: Optional[dict[Place, Optional[Card]]] = None) -> None:
        self.game = game
        self.autosave_dir = Path(autosave_dir) if autosave_dir is not None else None
        self.pairing = ClickPairing()
        #: The person's set-up corrections, applied to camera layouts until each card leaves.
        self.corrections = dict(corrections or {})
        self._follower: Any = None
        self.autosave()

    @classmethod
    def new(cls, rules: Rules, deal_text: str, autosave_dir: Optional[Path] = None) -> "PlaySession":
        engine = _engine()
        deal = engine.Deal.parse(deal_text, rules)
        return cls(engine.Game(rules, deal), autosave_dir)

    @classmethod
    def load(cls, path: Path, autosave_dir: Optional[Path] = None) -> "PlaySession":
        return cls(_engine().Game.load(str(path)), autosave_dir)

    # --- queries --------------------------------------------------------------------
    @property
    def state(self) -> Any:
        return self.game.state

    @property
    def rules(self) -> Rules:
        return self.game.state.rules

    def moves(self) -> list[Move]:
        return list(self.game.moves)

    def score(self) -> int:
        return int(_engine().scoring.score(self.game))

    def score_text(self) -> str:
        rules = self.rules
        system = rules.scoring
        value = self.score()
        if system == "cards":
            return f"{value} cards left"
        return f"{value} points ({system})"

    def needs_reveal(self) -> bool:
        """The next draw turns a card nobody has named yet: ask which one it is."""
        state = self.state
        stock = tuple(state.stock)
        return bool(stock) and any(c is None for c in stock[: state.rules.draw]) \
            and Move.draw() in state.legal_moves()

    # --- changes --------------------------------------------------------------------
    def play(self, move: Move | str) -> Move:
        """Play a move; ``IllegalMoveError`` (with the engine's reason) leaves the game as it was."""
        move = Move.parse(move) if isinstance(move, str) else move
        reason = self.state.why_illegal(move)
        if reason is not None:
            raise IllegalMoveError(reason)
        self.game.play(move)
        self.pairing.reset()
        self.autosave()
        return move

    def reveal(self, card: Card) -> None:
        """Name the stock card about to be turned (hidden stock at a real table)."""
        reveal = getattr(self.game, "reveal", None)
        if reveal is None:
            raise IllegalMoveError("this engine cannot learn stock cards yet")
        reveal(card)
        self.autosave()

    def undo(self) -> bool:
        if not self.game.can_undo:
            return False
        self.game.undo()
        self.pairing.reset()
        self.autosave()
        return True

    def redo(self) -> bool:
        if not self.game.can_redo:
            return False
        self.game.redo()
        self.pairing.reset()
        self.autosave()
        return True

    # --- play-along -----------------------------------------------------------------
    def follow(self, layout: TableLayout) -> list[Any]:
        """Feed a stable camera layout to the play-along engine; returns its new events.

        Moves it infers are recorded in this game (autosaved); an illegal change
        leaves the game as it was. Without ``companion.playalong`` nothing happens.
        """
        if self._follower is None:
            try:
                from companion.playalong import Follower
            except ImportError:
                return []
            self._follower = Follower(self.rules, self.game)
        layout, self.corrections = apply_overrides(layout, self.corrections)
        before = len(self.game.moves)
        events = self._follower.feed(layout)
        if self._follower.game is not self.game:
            self.game = self._follower.game  # rebuilt on a better-known deal, same moves
        if len(self.game.moves) != before or events:
            self.pairing.reset()
            self.autosave()
        return events

    def click_card(self, card: Card) -> Optional[Move]:
        """A click on a card: returns the move it completes (not yet played), or None."""
        if card not in self.state.available():
            self.pairing.reset()
            raise IllegalMoveError(f"{card} is not available: {self._why_unavailable(card)}")
        return self.pairing.click(card, self.rules)

    def _why_unavailable(self, card: Card) -> str:
        reason = self.state.why_illegal(Move.remove(card)) if self.rules.is_king(card) else None
        return reason or "it is covered or not in play"

    # --- autosave -------------------------------------------------------------------
    def autosave(self) -> None:
        if self.autosave_dir is None:
            return
        self.autosave_dir.mkdir(parents=True, exist_ok=True)
        self.game.save(str(self.autosave_dir / AUTOSAVE_NAME))


class CrashGuard:
    """The lock file that tells a crash from a clean exit."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.lock = self.directory / LOCK_NAME
        self.autosave = self.directory / AUTOSAVE_NAME
        #: Set at start: the previous run did not close cleanly and left a game.
        self.crashed_game: Optional[Path] = None

    def start(self) -> None:
        if self.lock.exists() and self.autosave.exists():
            self.crashed_game = self.autosave
        self.directory.mkdir(parents=True, exist_ok=True)
        self.lock.write_text(str(os.getpid()))

    def finish(self) -> None:
        """Clean exit: no resume offer next time."""
        try:
            self.lock.unlink()
        except FileNotFoundError:
            pass
