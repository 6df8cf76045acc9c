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
        #: Frames per second of the layouts' frame numbers (play-along turns its time limits into frames).
        self.fps = 15.0
        #: The last camera layout given to ``follow`` (before corrections), for the overrides.
        self.last_layout: Optional[TableLayout] = None
        #: What play-along says is wrong with the table (an illegal change, a card to check), or None.
        self.mismatch: Optional[str] = None
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
            self._follower = Follower(self.rules, self.game, fps=self.fps)
        self.last_layout = layout
        layout, self.corrections = apply_overrides(layout, self.corrections)
        before = len(self.game.moves)
        events = self._follower.feed(layout)
        self._after_follow(before, events)
        return events

    def tick(self, frame: int, sightings: Optional[dict] = None) -> list[Any]:
        """A camera frame with no new stable layout (``Follower.tick``): returns new events."""
        if self._follower is None:
            return []
        before = len(self.game.moves)
        events = self._follower.tick(frame, sightings)
        if events:
            self._after_follow(before, events)
        return events

    def _after_follow(self, before: int, events: list[Any]) -> None:
        if self._follower.game is not self.game:
            self.game = self._follower.game  # rebuilt on a better-known deal, same moves
        for event in events:
            if event.kind == "illegal":
                self.mismatch = f"Not legal: {event.text}"
            elif event.kind == "check":
                self.mismatch = event.text
            elif event.kind == "move" and (self.mismatch or "").startswith("Not legal"):
                self.mismatch = None  # a legal move followed: that illegal view is over
        if self._follower.status == "ok":
            self.mismatch = None
        elif self._follower.status == "check" and not self.mismatch:
            # a check said before (the camera reads the slot both ways in turn): shown again, not said again
            self.mismatch = next(iter(self._follower.checks), None)
        if len(self.game.moves) != before or events:
            self.pairing.reset()
            self.autosave()

    # --- the person overrides play-along ----------------------------------------------
    @property
    def following(self) -> bool:
        return self._follower is not None

    def accept_table(self) -> list[Any]:
        """The table is right: record the best legal explanation of it, however doubtful.

        ``IllegalMoveError`` when no legal sequence of moves leads there (nothing changes).
        """
        if self._follower is None or self.last_layout is None:
            raise IllegalMoveError("no camera view to accept yet")
        before = len(self.game.moves)
        events = self._follower.override()
        self.mismatch = None
        self._after_follow(before, events)
        return events

    def insist_recorded(self) -> list[Place]:
        """The recorded game is right: slots the camera reads as another card than the record are
        corrected to the record (until the card leaves), and the mismatch is dismissed.

        Returns the corrected places. Cards missing from the table stay recorded: the
        person puts them back (or plays on, and the next view is judged against the record).
        """
        from companion.app.places import slot_of

        self.mismatch = None
        layout = self.last_layout
        if layout is None:
            return []
        fixed: list[Place] = []
        for flat, card in enumerate(self.state.pyramid):
            place = slot_of(flat)
            if card is None or place.row >= layout.rows:
                continue
            seen = layout.pyramid[place.row][place.index].card
            if seen is not None and seen is not card and self.corrections.get(place) is not card:
                self.corrections[place] = card
                fixed.append(place)
        if fixed and self._follower is not None:
            self.follow(layout)  # judged again with the corrections: normally it agrees now
            self.mismatch = None
        return fixed

    def enter_moves(self, text: str) -> list[Move]:
        """Moves the person says were played (``"QH+AS draw"``): all legal in turn or none recorded."""
        moves = [Move.parse(t) for t in text.replace(",", " ").split()]
        if not moves:
            raise IllegalMoveError(f"no moves in {text!r} (e.g. 'QH+AS draw KD')")
        probe = self.state
        for m in moves:
            reason = probe.why_illegal(m)
            if reason is not None:
                raise IllegalMoveError(f"{m}: {reason}")
            probe = probe.apply(m)
        if self._follower is not None:
            before = len(self.game.moves)
            events = self._follower.override(moves)
            self.mismatch = None
            self._after_follow(before, events)
        else:
            for m in moves:
                self.game.play(m)
            self.pairing.reset()
            self.autosave()
        return moves

    def fix_card(self, place: Place, card: Card) -> None:
        """The deal had another card at ``place`` (misread, and confirmed): put ``card`` there and
        replay every move on the fixed deal. A card the deal has elsewhere swaps places with the
        old one. ``IllegalMoveError`` (nothing changes) when a recorded move is then illegal."""
        from companion.app.places import flat_index

        engine = _engine()
        cards = list(self.game.deal.cards)
        i = flat_index(place)
        if not place.is_slot or i >= self.rules.pyramid_size:
            raise IllegalMoveError(f"{place} is not a pyramid slot of {self.rules.name!r}")
        old = cards[i]
        if old is card:
            return
        if card in cards:
            cards[cards.index(card)] = old
        cards[i] = card
        try:
            game = engine.Game(self.rules, engine.Deal(self.rules, cards))
        except ValueError as exc:
            raise IllegalMoveError(f"{card} at {place}: {exc}") from None
        for k, move in enumerate(self.game.moves, 1):
            reason = game.state.why_illegal(move)
            if reason is not None:
                raise IllegalMoveError(f"with {card} at {place}, move {k} ({move}) would be illegal: {reason}")
            game.play(move)
        self.game = game
        self._follower = None  # follows the fixed game from the next view on
        self.corrections.pop(place, None)
        self.mismatch = None
        self.pairing.reset()
        self.autosave()

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
