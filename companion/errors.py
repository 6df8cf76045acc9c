"""The narrow error family of the rules core.

Every error is a ``ValueError`` whose message quotes the offending input, so a
command line or a UI can show it to a person as it is.
"""

from __future__ import annotations


class CompanionError(ValueError):
    """Base of every input error raised by the rules core."""


class InvalidCardError(CompanionError):
    """A card code that cannot be read, e.g. ``'1X'``."""


class InvalidDealError(CompanionError):
    """A deal with the wrong number of cards, a duplicate or an unknown code."""


class InvalidRulesError(CompanionError):
    """An unknown preset name or an inconsistent set of rule options."""


class InvalidMoveError(CompanionError):
    """A move that cannot be parsed."""


class IllegalMoveError(CompanionError):
    """A well-formed move that the rules forbid in the current position."""


class InvalidLayoutError(CompanionError):
    """An observed table layout that cannot be a position of the game."""
