"""Work around a PySide6 reference-count bug on Python < 3.12 (measured with 6.12.0 on 3.11.7).

Every call of a Qt method that returns nothing (``label.setText``, ``painter.setPen``,
``widget.update`` ...) drops one reference to ``None`` that it never took. From
Python 3.12 on, ``None`` is immortal and nothing happens; on 3.11 its count falls by
one per call and after some seconds of painting the interpreter aborts with
"Fatal Python error: none_dealloc". ``ensure()`` probes for the bug once and, only
when it is present, makes ``None`` effectively immortal (what 3.12 does) by raising
its count far beyond reach. Importing this module runs it; every Qt module of the
app imports it first. Remove it once the pinned PySide6 is fixed.
"""

from __future__ import annotations

import ctypes
import sys

_FAR = 1 << 60
_done = False


def leaks_none() -> bool:
    """True when void Qt calls lose references to ``None`` (probe: 20 calls)."""
    from PySide6.QtCore import QRectF

    rect = QRectF()
    before = sys.getrefcount(None)
    for _ in range(20):
        rect.setWidth(1.0)
    return sys.getrefcount(None) < before - 10


def ensure() -> bool:
    """Apply the workaround when needed; returns True when it was applied."""
    global _done
    if _done or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    _done = True
    if not leaks_none():
        return False
    # ob_refcnt is the first field of every object on CPython < 3.12.
    ctypes.c_ssize_t.from_address(id(None)).value = _FAR
    return True


APPLIED = ensure()
