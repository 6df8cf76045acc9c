"""The rules engine: deals, immutable game states, a game record with undo/redo, scoring.

``from companion.game import Deal, GameState, Game, geometry, scoring``. Pure
Python; no Qt, no OpenCV.
"""

from companion.game import geometry, scoring
from companion.game.deal import Deal
from companion.game.record import Game
from companion.game.state import LOST, PLAYING, WON, GameState

__all__ = ["Deal", "Game", "GameState", "LOST", "PLAYING", "WON", "geometry", "scoring"]
