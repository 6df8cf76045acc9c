"""What following a game says: a move recorded, an illegal move, or a check for the person."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MOVE, ILLEGAL, CHECK = "move", "illegal", "check"


@dataclass(frozen=True)
class Event:
    frame: int
    kind: str  # "move" | "illegal" | "check"
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"frame": int(self.frame), "kind": self.kind, "text": self.text}
