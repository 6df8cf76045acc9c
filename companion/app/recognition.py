"""Recognition for the app (Qt-free): the shipped ONNX model when installed, the overlay's boxes.

``shipped_detector()`` loads ``models/`` (or ``$PYRAMID_COMPANION_MODELS``) and says
what it did in words for the status bar. ``overlay_of(reading)`` turns one frame's
``FrameReading`` into what the live image draws: the index-corner box, card and
score of every recognised card by place, and the cards seen off every place.
``LiveRecognizer`` is the camera/video path: model -> slots -> temporal fusion, run
in the capture worker thread (``prepare()`` loads the model there, not in the GUI).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from companion.cards import CARD_CODES, Card
from companion.rules import Rules
from companion.app.capture import Frame
from companion.app.places import CELL, RESERVE, WASTE, Place

Box = tuple[float, float, float, float]


def shipped_detector() -> tuple[Any, str]:
    """``(detector or None, words)``: the ONNX model when its files load, else None and why not.

    The words start with a short phrase (``ONNX model (models/)``, ``no model in models/``); a
    `` - `` separates the details (the status bar shows the phrase, its tooltip all of it).
    """
    try:
        from companion.vision.detector import load_detector
        from companion.vision.model_files import default_models_dir
    except ImportError as exc:  # no onnxruntime/cv2: the app still runs (manual mode, fake demo)
        return None, f"no recognition model ({exc.name or exc} not installed)"
    folder = default_models_dir()
    try:
        detector = load_detector()
    except Exception as exc:  # noqa: BLE001 - a missing or broken model falls back, with the reason
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        what = "no model" if "lacks" in first or "does not exist" in first else "model not loadable"
        return None, f"{what} in {_short(folder)} - {first}"
    return detector, f"ONNX model ({_short(folder)})"


def _short(folder: Any) -> str:
    """A model folder as a person recognises it: relative to the working folder when inside it."""
    from pathlib import Path

    try:
        return str(Path(folder).resolve().relative_to(Path.cwd().resolve())) + "/"
    except ValueError:
        return str(folder)


@dataclass
class Overlay:
    """What one frame shows: boxes, cards and scores by place; reads placed nowhere."""

    boxes: dict[Place, Box] = field(default_factory=dict)
    cards: dict[Place, Card] = field(default_factory=dict)
    scores: dict[Place, float] = field(default_factory=dict)
    loose: list[tuple[Card, Box, float]] = field(default_factory=list)


def overlay_of(reading: Any) -> Overlay:
    """The overlay of a ``companion.vision.pipeline.FrameReading``.

    Each recognised pyramid card takes the read of its card nearest to its slot's
    lattice node (the pipeline keeps no read-to-slot table); waste, cell and reserve
    cards take a remaining read of their card. Unused reads are ``loose``.
    """
    out = Overlay()
    dets = reading.detections
    if dets is None or len(dets) == 0:
        return out
    boxes = [tuple(float(v) for v in b) for b in dets.xyxy]
    classes = [int(c) for c in dets.class_id]
    scores = [float(s) for s in dets.confidence]
    used: set[int] = set()

    def take(card: Card, near: Optional[tuple[float, float]]) -> Optional[int]:
        js = [j for j in range(len(classes)) if classes[j] == card.index and j not in used]
        if not js:
            return None
        if near is None:
            j = max(js, key=lambda j: scores[j])
        else:
            j = min(js, key=lambda j: ((boxes[j][0] + boxes[j][2]) / 2 - near[0]) ** 2
                    + ((boxes[j][1] + boxes[j][3]) / 2 - near[1]) ** 2)
        used.add(j)
        return j

    layout, fit = reading.layout, reading.fit
    if layout is not None and fit is not None:
        from companion.vision.slots import pyramid_nodes

        nodes = fit.node_xy()
        index = {(int(r), int(i)): k for k, (r, i) in enumerate(pyramid_nodes(fit.rows, fit.inverted)[0])}
        for r, i, slot in layout.slots():
            if slot.card is None or (r, i) not in index:
                continue
            x, y = nodes[index[(r, i)]]
            j = take(slot.card, (float(x), float(y)))
            if j is None:
                continue
            place = Place.slot(r, i)
            out.boxes[place], out.cards[place], out.scores[place] = boxes[j], slot.card, float(slot.score)
        sides: list[tuple[Place, Optional[Card]]] = [(Place(WASTE, 0, k), top)
                                                     for k, top in enumerate(layout.waste_tops())]
        sides += [(Place(CELL, 0, k), c) for k, c in enumerate(layout.cells)]
        sides += [(Place(RESERVE, 0, k), c) for k, c in enumerate(layout.reserve)]
        for place, card in sides:
            if card is None:
                continue
            j = take(card, None)
            if j is not None:
                out.boxes[place], out.cards[place], out.scores[place] = boxes[j], card, scores[j]
    for j in range(len(classes)):
        if j not in used and 0 <= classes[j] < len(CARD_CODES):
            out.loose.append((Card.from_index(classes[j]), boxes[j], scores[j]))
    return out


def with_overlay(frame: Frame, overlay: Overlay, layout: Any = None,
                 sightings: Optional[dict] = None) -> Frame:
    return Frame(frame.image, frame.index, layout, overlay.boxes, cards=overlay.cards, scores=overlay.scores,
                 loose=overlay.loose, sightings=dict(sightings or {}))


class LiveRecognizer:
    """``frame -> frame`` with the overlay of its reading and, when the table is newly stable, its layout.

    The detector loads on ``prepare()`` (or the first frame), in the calling (worker) thread.
    Without a model every frame passes through unrecognised and ``description`` says so.
    """

    def __init__(self, rules: Rules, fps: float = 15.0, detector: Any = None, description: str = "") -> None:
        self.rules = rules
        self.fps = fps
        self.detector = detector
        self.description = description or ("a given detector" if detector is not None else "")
        self._pipeline: Any = None
        self._fuser: Any = None
        self._prepared = detector is not None
        #: The deal's pyramid as the person checked it (``know_deal``), for the pipeline.
        self._known: Any = None

    def prepare(self) -> str:
        if not self._prepared:
            self._prepared = True
            self.detector, self.description = shipped_detector()
        if self.detector is None:
            return self.description + ": the image is shown unrecognised; enter the deal in manual mode (Ctrl+M)"
        return self.description

    def know_deal(self, pyramid: Any) -> None:
        """The deal's pyramid cards as the person checked them (``Deal.pyramid``), None for a new
        game: the pipeline names a misread card's second index by it (``LayoutPipeline.know_deal``).
        Called from the window's thread: the frames' thread takes it up at its next frame."""
        self._known = pyramid
        if self._pipeline is not None:
            self._pipeline.know_deal(pyramid)

    def reset(self) -> None:
        """Forget the table (another source, or the camera came back)."""
        if self._fuser is not None:
            self._fuser.reset()
        if self._pipeline is not None:
            self._pipeline.reset()

    def __call__(self, frame: Frame) -> Frame:
        if not self._prepared:
            self.prepare()
        if self.detector is None:
            return frame
        if self._pipeline is None:
            from companion.vision.fusion import LayoutFuser
            from companion.vision.pipeline import LayoutPipeline

            self._pipeline = LayoutPipeline(self.detector, self.rules)
            self._pipeline.know_deal(self._known)
            self._fuser = LayoutFuser.for_fps(self.fps, rules=self.rules, pipeline=self._pipeline)
        reading = self._pipeline.process(frame.image, frame.index)
        layout = self._fuser.update(reading, frame=frame.index)
        return with_overlay(frame, overlay_of(reading), layout, self._fuser.last_seen)
