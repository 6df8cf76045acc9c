"""Rule variants of Pyramid solitaire: one frozen ``Rules`` object per variant.

Every axis that real games vary is a field; the named presets are the games
people know. ``Rules.preset("relaxed")`` returns one; ``Rules.parse`` also
accepts ``"relaxed,draw=3,passes=unlimited"`` for a preset with overrides.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from companion.cards import Card, iter_deck
from companion.errors import InvalidRulesError

WIN_PYRAMID = "pyramid"  # relaxed win: the pyramid is cleared
WIN_ALL = "all"          # strict win: every card removed
SCORINGS = ("cards", "one", "par", "msc", "points")


@dataclass(frozen=True)
class Rules:
    """A complete set of rules. Defaults are the ``classic`` game."""

    name: str = "custom"
    rows: int = 7                    # 7 (28 cards) or 6 (21 cards, the ``small`` form)
    deck: int = 52                   # 52 (pairs sum 13) or 48 (Spanish: no queens, pairs sum 12)
    draw: int = 1                    # cards turned per draw: 1 or 3
    passes: int | None = None        # times through the stock; None = unlimited
    stock_playable: bool = False     # the stock top lies face up and may be played
    stock_waste_pairs: bool = False  # two cards from outside the pyramid may pair
    waste_piles: int = 1             # 1, or 3 piles receiving one card each per draw
    tuts_tomb: bool = False          # a card may pair with the one card still covering it
    win: str = WIN_PYRAMID           # WIN_PYRAMID or WIN_ALL
    free_cells: int = 0              # cells holding one card each, playable
    reserve: int = 0                 # cards dealt face up in a reserve row after the pyramid
    reserve_piles: int = 0           # 0: each reserve card lies alone; n: reserve card i goes onto
                                     # pile i % n (dealt row by row), only pile tops play (Giza: 8)
    inverted: bool = False           # apex at the bottom: the widest row is covered by the narrower ones
    face_down_rows: int = 0          # upper rows dealt face down, turned when uncovered
    stock_known: bool = False        # the whole stock lies face up: the player knows its order
    scoring: str = "cards"           # see companion.game.scoring

    def __post_init__(self) -> None:
        problems = []
        if self.rows not in (6, 7):
            problems.append(f"rows={self.rows!r} (6 or 7)")
        if self.deck not in (48, 52):
            problems.append(f"deck={self.deck!r} (52 or 48)")
        if self.draw not in (1, 3):
            problems.append(f"draw={self.draw!r} (1 or 3)")
        if self.passes is not None and (not isinstance(self.passes, int) or self.passes < 1):
            problems.append(f"passes={self.passes!r} (1 or more, or unlimited)")
        if self.waste_piles not in (1, 3):
            problems.append(f"waste_piles={self.waste_piles!r} (1 or 3)")
        if self.waste_piles == 3 and self.draw != 3:
            problems.append("waste_piles=3 needs draw=3 (one card onto each pile)")
        if self.win not in (WIN_PYRAMID, WIN_ALL):
            problems.append(f"win={self.win!r} ({WIN_PYRAMID!r} or {WIN_ALL!r})")
        if not 0 <= self.free_cells <= 4:
            problems.append(f"free_cells={self.free_cells!r} (0..4)")
        if self.reserve < 0 or self.reserve > self.deck - self.pyramid_size:
            problems.append(f"reserve={self.reserve!r} (0..{self.deck - self.pyramid_size})")
        if self.reserve_piles < 0 or (self.reserve_piles and not self.reserve) or (
                self.reserve_piles > max(self.reserve, 0)):
            problems.append(f"reserve_piles={self.reserve_piles!r} (0, or 1..reserve={self.reserve})")
        if not 0 <= self.face_down_rows < self.rows:
            problems.append(f"face_down_rows={self.face_down_rows!r} (0..{self.rows - 1})")
        if self.scoring not in SCORINGS:
            problems.append(f"scoring={self.scoring!r} (one of {', '.join(SCORINGS)})")
        if problems:
            raise InvalidRulesError("invalid rules: " + "; ".join(problems))

    # --- derived sizes -------------------------------------------------------------
    @property
    def pyramid_size(self) -> int:
        return self.rows * (self.rows + 1) // 2

    @property
    def stock_size(self) -> int:
        return self.deck - self.pyramid_size - self.reserve

    @property
    def pair_sum(self) -> int:
        return 13 if self.deck == 52 else 12

    @property
    def recycles(self) -> int | None:
        """How many times the waste may be turned back into the stock (None: no limit)."""
        return None if self.passes is None else self.passes - 1

    def value(self, card: Card) -> int:
        """Pairing value: rank for the 52-card deck; the Spanish deck reads K as 12."""
        if self.deck == 48 and card.rank == 13:
            return 12
        return card.rank

    def is_king(self, card: Card) -> bool:
        """Cards removed alone (value equals the pair sum)."""
        return self.value(card) == self.pair_sum

    def pairs(self, a: Card, b: Card) -> bool:
        return self.value(a) + self.value(b) == self.pair_sum

    def deck_cards(self) -> tuple[Card, ...]:
        ranks = range(1, 14) if self.deck == 52 else [r for r in range(1, 14) if r != 12]
        return tuple(iter_deck(ranks))

    # --- parse / print -------------------------------------------------------------
    @classmethod
    def preset(cls, name: str) -> "Rules":
        key = name.strip().lower().replace("_", "-")
        if key not in PRESETS:
            raise InvalidRulesError(
                f"unknown rules preset {name!r} (known: {', '.join(PRESETS)})")
        return PRESETS[key]

    @classmethod
    def parse(cls, text: str) -> "Rules":
        """``"relaxed"`` or ``"relaxed,draw=3,passes=unlimited"`` (preset + overrides)."""
        head, *overrides = [part.strip() for part in text.split(",")]
        rules = cls.preset(head)
        if not overrides:
            return rules
        changes: dict[str, Any] = {}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for item in overrides:
            key, sep, raw = item.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or key not in fields or key == "name":
                raise InvalidRulesError(f"bad rules option {item!r} in {text!r}")
            changes[key] = _parse_value(key, raw.strip(), text)
        return dataclasses.replace(rules, name=text.strip(), **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Rules":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise InvalidRulesError(f"unknown rules fields {sorted(unknown)!r}")
        return cls(**data)

    def __str__(self) -> str:
        return self.name


def _parse_value(key: str, raw: str, text: str) -> Any:
    if key == "passes" and raw.lower() in ("unlimited", "none", "inf"):
        return None
    if key in ("win", "scoring"):
        return raw.lower()
    default = getattr(Rules(), key)
    if isinstance(default, bool):
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
    else:
        try:
            return int(raw)
        except ValueError:
            pass
    raise InvalidRulesError(f"bad value {raw!r} for {key} in {text!r}")


def _make(name: str, **fields: Any) -> Rules:
    return Rules(name=name, **fields)


_STANDARD = dict(draw=1, passes=3, stock_playable=True, stock_waste_pairs=True, win=WIN_ALL)

#: Named presets. The first ten follow the meanings fixed in the project's issue; the
#: PySolFC / Wikipedia families (giza .. small) are documented with sources in docs/rules.md.
PRESETS: dict[str, Rules] = {
    "classic": _make("classic"),
    "standard": _make("standard", **_STANDARD),
    "relaxed": _make("relaxed", **{**_STANDARD, "win": WIN_PYRAMID}),
    "strict": _make("strict", **{**_STANDARD, "passes": 1}),
    "msc": _make("msc", **{**_STANDARD, "win": WIN_PYRAMID, "stock_known": True, "scoring": "msc"}),
    "par": _make("par", **{**_STANDARD, "scoring": "par"}),
    "tuts-tomb": _make("tuts-tomb", tuts_tomb=True),
    "king-tut": _make("king-tut", draw=3),
    "ancient-egypt": _make("ancient-egypt", draw=3, waste_piles=3, passes=1, free_cells=1,
                           stock_waste_pairs=True, scoring="points"),
    # PySolFC Apophis: three waste piles dealt one card each, 3 rounds, the stock top does not
    # play, waste tops pair with each other; PySolFC keeps Pyramid's win (all 52 cards).
    "apophis": _make("apophis", draw=3, waste_piles=3, passes=3, stock_waste_pairs=True, win=WIN_ALL),
    # PySolFC Giza: no stock; the 24 other cards face up in 8 reserve piles of 3, pile tops play
    # and pair with anything open; win = all cards.
    "giza": _make("giza", reserve=24, reserve_piles=8, stock_waste_pairs=True, win=WIN_ALL),
    # PySolFC Triangle: Pyramid (stock top plays, 3 rounds, all cards) on an inverted pyramid.
    "triangle": _make("triangle", inverted=True, **_STANDARD),
    # PySolFC Thirteen (listed, unfinished): the 21 upper cards face down, one pass, two cards of
    # the draw sequence playable (here: stock top and waste top), win = all cards.
    "thirteen": _make("thirteen", face_down_rows=6, **{**_STANDARD, "passes": 1}),
    # Wikipedia / Wikibooks variation: seven cards dealt face up below the pyramid pair with each
    # other, the pyramid and the stock; relaxed win.
    "reserve": _make("reserve", reserve=7, **{**_STANDARD, "win": WIN_PYRAMID}),
    "spanish": _make("spanish", deck=48, **{**_STANDARD, "win": WIN_PYRAMID}),
    "small": _make("small", rows=6, **{**_STANDARD, "win": WIN_PYRAMID}),
}
