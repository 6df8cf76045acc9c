"""Fakes for tests and benchmarks: a scripted frame source that can lose its camera."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Optional, Sequence

from companion.app.capture import Frame, SourceLost
from companion.layout import TableLayout


class ScriptedSource:
    """Plays a script of frames; ``lose()``/``restore()`` unplug and replug the "camera".

    The script item is a numpy image or a ``Frame``; after the last item the last
    frame repeats (a camera keeps delivering) unless ``end=True``.
    """

    def __init__(self, frames: Sequence[object], layouts: Sequence[Optional[TableLayout]] = (),
                 end: bool = False, lost_after: Optional[int] = None) -> None:
        self.name = "scripted camera"
        self._frames = list(frames)
        self._layouts = list(layouts)
        self._end = end
        self._lost_after = lost_after
        self._plugged = threading.Event()
        self._plugged.set()
        self.reads = 0
        self.reopens = 0
        self.closed = False

    def lose(self) -> None:
        self._plugged.clear()

    def restore(self) -> None:
        self._plugged.set()

    def read(self) -> Optional[Frame]:
        if self._lost_after is not None and self.reads >= self._lost_after:
            self._lost_after = None
            self.lose()
        if not self._plugged.is_set():
            raise SourceLost("scripted camera unplugged")
        if self.reads >= len(self._frames) and self._end:
            return None
        k = min(self.reads, len(self._frames) - 1)
        item = self._frames[k]
        layout = self._layouts[k] if k < len(self._layouts) else None
        self.reads += 1
        if isinstance(item, Frame):
            return replace(item, index=self.reads - 1)
        return Frame(item, self.reads - 1, layout)

    def reopen(self) -> bool:
        self.reopens += 1
        return self._plugged.is_set()

    def close(self) -> None:
        self.closed = True
