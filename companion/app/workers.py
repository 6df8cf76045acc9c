"""Worker threads: capture + recognition, and advice. The window never waits on them.

Both are ``QThread`` subclasses stopped with ``requestInterruption()`` + ``wait()``
(``stop()``), never ``terminate()``: their loops check for interruption at
least every ``POLL_S`` seconds, so closing the window or switching the source
is quick and clean.
"""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

import time
import traceback
from typing import Any, Callable, Optional, Sequence

from PySide6.QtCore import QThread, Signal

from companion.app.capture import Frame, FrameSource, Recognizer, SourceLost

POLL_S = 0.05


class CaptureWorker(QThread):
    """Reads frames from a source, recognises them, and emits them.

    A camera that stops delivering is reported with ``sourceLost`` and retried
    every ``retry_s`` seconds; ``sourceRestored`` says when frames flow again.
    """

    frameReady = Signal(object)        # Frame (with .layout when recognised)
    sourceOpened = Signal(str)         # source name
    sourceLost = Signal(str)           # reason
    sourceRestored = Signal()
    sourceEnded = Signal()             # end of a video / image folder
    sourceFailed = Signal(str)         # could not open at all
    recognitionInfo = Signal(str)      # how frames are recognised (model, fake, none), in words

    def __init__(self, opener: Callable[[], FrameSource], recognizer: Optional[Recognizer] = None,
                 fps: float = 15.0, retry_s: float = 1.0, parent: Any = None) -> None:
        super().__init__(parent)
        self._opener = opener
        self._recognizer = recognizer
        self._period = 1.0 / fps
        self._retry_s = retry_s
        self.frames = 0
        #: The open source (set in the worker thread); only thread-safe methods may be called on it.
        self.source: Optional[FrameSource] = None
        self._known: Optional[Sequence[Any]] = None

    def stop(self, timeout_ms: int = 5000) -> bool:
        self.requestInterruption()
        return self.wait(timeout_ms)

    def know_deal(self, pyramid: Optional[Sequence[Any]]) -> None:
        """The deal's pyramid as the person checked it (None: a new game) to whatever reads the
        frames, the recognizer or a source that reads its own (the demo). Only replaces a reference
        the worker thread reads at its next frame."""
        self._known = pyramid
        for part in (self._recognizer, self.source):
            _tell_deal(part, pyramid)

    def _sleep(self, seconds: float) -> bool:
        """Sleep in short steps; False when interrupted."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.isInterruptionRequested():
                return False
            time.sleep(min(POLL_S, max(0.0, end - time.monotonic())))
        return not self.isInterruptionRequested()

    def run(self) -> None:
        try:
            source = self._opener()
        except Exception as exc:  # noqa: BLE001 - any open failure is shown to the person
            self.sourceFailed.emit(str(exc) or type(exc).__name__)
            return
        self.source = source
        if self._known is not None:  # told before the source was open
            _tell_deal(source, self._known)
        self.sourceOpened.emit(getattr(source, "name", "source"))
        info = getattr(source, "recognition", "")
        prepare = getattr(self._recognizer, "prepare", None)
        if not info and callable(prepare):  # (a source that recognises itself, like the demo, says how)
            try:
                info = prepare()  # loads the model here, off the GUI thread
            except Exception as exc:  # noqa: BLE001
                info = f"recognition unavailable: {exc}"
        if info:
            self.recognitionInfo.emit(str(info))
        try:
            self._loop(source)
        finally:
            source.close()

    def _loop(self, source: FrameSource) -> None:
        while not self.isInterruptionRequested():
            started = time.monotonic()
            try:
                frame = source.read()
            except SourceLost as exc:
                self.sourceLost.emit(str(exc))
                if not self._reconnect(source):
                    return
                continue
            except Exception as exc:  # noqa: BLE001
                self.sourceFailed.emit(f"{exc}")
                return
            if frame is None:
                self.sourceEnded.emit()
                return
            if self._recognizer is not None and frame.layout is None:
                try:
                    frame = self._recognizer(frame)
                except Exception:  # noqa: BLE001 - a bad frame must not stop the camera
                    traceback.print_exc()
            self.frames += 1
            self.frameReady.emit(frame)
            if not self._sleep(self._period - (time.monotonic() - started)):
                return

    def _reconnect(self, source: FrameSource) -> bool:
        while self._sleep(self._retry_s):
            try:
                ok = source.reopen()
            except Exception:  # noqa: BLE001
                ok = False
            if ok:
                reset = getattr(self._recognizer, "reset", None)
                if callable(reset):
                    reset()  # the table may have changed while the camera was away
                self.sourceRestored.emit()
                return True
        return False


class AdviceWorker(QThread):
    """Computes one piece of advice off the GUI thread; ``ready(request_id, Advice)``."""

    ready = Signal(int, object)
    failed = Signal(int, str)

    def __init__(self, request_id: int, compute: Callable[[], Any], parent: Any = None) -> None:
        super().__init__(parent)
        self.request_id = request_id
        self._compute = compute

    def stop(self, timeout_ms: int = 10000) -> bool:
        self.requestInterruption()
        return self.wait(timeout_ms)

    def run(self) -> None:
        try:
            result = self._compute()
        except Exception as exc:  # noqa: BLE001 - advice failing must not take the game down
            traceback.print_exc()
            self.failed.emit(self.request_id, str(exc) or type(exc).__name__)
            return
        if not self.isInterruptionRequested():
            self.ready.emit(self.request_id, result)


def _tell_deal(part: Any, pyramid: Optional[Sequence[Any]]) -> None:
    tell = getattr(part, "know_deal", None)
    if callable(tell):
        tell(pyramid)
