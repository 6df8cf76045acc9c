"""The Qt desktop app: the ONLY package of the project that imports Qt.

Widgets expose Qt signals as their API; the decisions they trigger live in small
Qt-free modules beside them (``places``, ``correction``, ``session``,
``advice``, ``capture``, ``recognition``) so tests and the command line can use
them directly. ``recognition`` runs the shipped ONNX model (or says why it
cannot and the demo falls back to the fake detector) and turns each frame's
reading into the live overlay's boxes and labels.
Capture, recognition and advice run in worker threads (``workers``) so the
window never freezes; heavy modules (cv2, the solver) load lazily.
"""

from __future__ import annotations

__all__ = ["run_app"]


def run_app(*args, **kwargs) -> int:
    """Open the main window (see ``companion.app.main.run_app``)."""
    from companion.app.main import run_app as _run

    return _run(*args, **kwargs)
