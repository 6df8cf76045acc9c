"""The live image with overlays: every recognised card's index corner boxed and labelled (card + slot).

API: ``show_frame(Frame)``, ``set_flags({Place: SlotFlags})``, ``set_cards({Place: Card})``
(corrections or the recorded game: they name the card shown at a place),
``set_highlights(places)`` (the advised move), ``set_banner(text)`` (the advice in
words, on the image), ``set_message(text)`` (source trouble); signal
``placeClicked(Place)`` when a box or its label is clicked.

Labels are sized from the pyramid's slot pitch on screen (half a card width, at
least 14 px) so they stay readable from a chair without covering each other; they
sit beside the corner they name, so the person can compare label and card.
"""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

import statistics
from typing import Iterable, Optional

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from companion.cards import Card
from companion.app.capture import Frame
from companion.app.cardpaint import FLAG_CONFLICT, FLAG_CORRECTED, FLAG_LOW, HIGHLIGHT, card_label
from companion.app.correction import SlotFlags
from companion.app.places import STOCK, Place

#: A frame's own read under this score is marked for checking (as the pipeline reports it).
LOW_SCORE = 0.5
OK_COLOR = QColor("#00e676")
RED_TEXT = QColor("#ff8a80")


def to_qimage(image) -> QImage:
    """A BGR numpy image as a QImage (copied: the worker reuses its buffers)."""
    h, w = image.shape[:2]
    if image.ndim == 2:
        return QImage(image.data, w, h, image.strides[0], QImage.Format.Format_Grayscale8).copy()
    return QImage(image.data, w, h, image.strides[0], QImage.Format.Format_BGR888).copy()


class LiveView(QWidget):
    placeClicked = Signal(object)  # Place

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.image: Optional[QImage] = None
        self.boxes: dict[Place, tuple[float, float, float, float]] = {}
        self.frame_cards: dict[Place, Card] = {}
        self.frame_scores: dict[Place, float] = {}
        self.loose: list[tuple[Card, tuple[float, float, float, float], float]] = []
        self.cards: dict[Place, Optional[Card]] = {}
        self.flags: dict[Place, SlotFlags] = {}
        self.highlights: frozenset[Place] = frozenset()
        self.banner = ""
        self.message = "No source yet: choose a camera, a file or the demo"
        self.show_overlay = True
        self.zoom = True
        self._crop: Optional[QRectF] = None
        self._label_rects: dict[Place, QRectF] = {}
        self.setMinimumSize(320, 200)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAccessibleName("Live image")

    def sizeHint(self) -> QSize:
        return QSize(720, 480)

    # --- API ------------------------------------------------------------------------
    def show_frame(self, frame: Frame) -> None:
        self.image = to_qimage(frame.image)
        self.boxes = dict(frame.boxes)
        self.frame_cards = dict(frame.cards)
        self.frame_scores = dict(frame.scores)
        placed = set(self.frame_cards.values())
        # a placed card's second index (or a duplicate read) is no loose card
        self.loose = [item for item in frame.loose if item[0] not in placed]
        size_changed = self._crop is not None and not self._full().contains(self._crop)
        if size_changed:
            self._crop = None
        self._update_crop()
        self.update()

    def set_cards(self, cards: dict[Place, Optional[Card]]) -> None:
        self.cards = dict(cards)
        self.update()

    def set_flags(self, flags: dict[Place, SlotFlags]) -> None:
        self.flags = dict(flags)
        self.update()

    def set_highlights(self, places: Iterable[Place]) -> None:
        self.highlights = frozenset(places)
        self.update()

    def set_banner(self, text: str) -> None:
        self.banner = text
        self.update()

    def set_message(self, text: str) -> None:
        self.message = text
        self.update()

    def label_of(self, place: Place) -> Optional[Card]:
        """The card the overlay names at ``place``: the person's correction, else what this frame
        reads there, else the card the set-up / the game has there."""
        flags = self.flags.get(place)
        if flags is not None and flags.corrected:
            return self.cards.get(place)
        seen = self.frame_cards.get(place)
        return seen if seen is not None else self.cards.get(place)

    def disagrees(self, place: Place) -> bool:
        """The camera reads another card than the set-up / the game has at ``place``."""
        flags = self.flags.get(place)
        known, seen = self.cards.get(place), self.frame_cards.get(place)
        return (known is not None and seen is not None and seen is not known
                and not (flags is not None and flags.corrected))

    def is_low(self, place: Place) -> bool:
        flags = self.flags.get(place)
        if flags is not None and (flags.low or flags.corrected):
            return flags.low and not flags.corrected
        return self.frame_scores.get(place, 1.0) < LOW_SCORE

    def set_zoom(self, on: bool) -> None:
        """Zoom onto the cards (the default) or show the whole camera picture."""
        self.zoom = on
        self._crop = None
        self._update_crop()
        self.update()

    # --- geometry -------------------------------------------------------------------
    def _full(self) -> QRectF:
        return QRectF(0, 0, self.image.width(), self.image.height()) if self.image is not None else QRectF()

    def _update_crop(self) -> None:
        """The part of the picture shown: the cards with a margin, kept steady while they stay inside."""
        full = self._full()
        boxes = list(self.boxes.values()) + [b for _, b, _ in self.loose]
        if not self.zoom or not boxes or full.isEmpty() or self.width() < 10 or self.height() < 10:
            self._crop = full
            return
        x1, y1 = min(b[0] for b in boxes), min(b[1] for b in boxes)
        x2, y2 = max(b[2] for b in boxes), max(b[3] for b in boxes)
        margin = 0.08 * max(x2 - x1, y2 - y1) + 16
        want = QRectF(x1 - margin, y1 - margin, x2 - x1 + 2 * margin, y2 - y1 + 2 * margin)
        crop = self._crop
        if crop is not None and crop.contains(want) and want.width() * want.height() > 0.45 * crop.width() * crop.height():
            return  # steady: the cards are still well inside the shown part
        aspect = self.width() / self.height()
        w, h = want.width(), want.height()
        w, h = max(w, h * aspect), max(h, w / aspect)
        w, h = min(w, full.width()), min(h, full.height())  # (the widget letterboxes the rest)
        if w * h > 0.8 * full.width() * full.height():
            self._crop = full
            return
        c = want.center()
        left = min(max(c.x() - w / 2, 0.0), full.width() - w)
        top = min(max(c.y() - h / 2, 0.0), full.height() - h)
        self._crop = QRectF(left, top, w, h)

    def _source_rect(self) -> QRectF:
        return self._crop if self._crop is not None and not self._crop.isEmpty() else self._full()

    def _image_rect(self) -> QRectF:
        if self.image is None or self.image.width() == 0:
            return QRectF()
        src = self._source_rect()
        scale = min(self.width() / src.width(), self.height() / src.height())
        w, h = src.width() * scale, src.height() * scale
        return QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)

    def _widget_box(self, box: tuple[float, float, float, float]) -> QRectF:
        target, src = self._image_rect(), self._source_rect()
        s = target.width() / src.width() if src.width() else 1.0
        x1, y1, x2, y2 = box
        return QRectF(target.left() + (x1 - src.left()) * s, target.top() + (y1 - src.top()) * s,
                      (x2 - x1) * s, (y2 - y1) * s)

    def resizeEvent(self, event) -> None:  # noqa: N802
        self._crop = None
        self._update_crop()
        super().resizeEvent(event)

    def place_rect(self, place: Place) -> Optional[QRectF]:
        box = self.boxes.get(place)
        return None if box is None or self.image is None else self._widget_box(box)

    def label_rect(self, place: Place) -> Optional[QRectF]:
        """Where the last paint put ``place``'s label (None when it has none)."""
        return self._label_rects.get(place)

    def _pitch(self) -> float:
        """Median distance on screen from a pyramid corner to its nearest neighbour (about a card width)."""
        centers = [self._widget_box(b).center() for p, b in self.boxes.items() if p.is_slot]
        if len(centers) < 2:
            widths = [self._widget_box(b).width() for b in self.boxes.values()]
            return 2.5 * max(widths) if widths else 80.0
        nearest = [min((a - b).manhattanLength() for b in centers if b is not a) for a in centers]
        return statistics.median(nearest) * 0.85  # manhattan overestimates a diagonal neighbour

    # --- painting -------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("#202124"))
        self._label_rects = {}
        if self.image is not None:
            p.drawImage(self._image_rect(), self.image, self._source_rect())
            if self.show_overlay:
                self._paint_overlay(p)
        font = QFont()
        font.setBold(True)
        if self.banner and self.image is not None:
            font.setPixelSize(24)
            p.setFont(font)
            band = QRectF(0, 0, self.width(), 40)
            p.fillRect(band, QColor(0, 0, 0, 170))
            p.setPen(HIGHLIGHT)
            p.drawText(band, Qt.AlignmentFlag.AlignCenter, self.banner)
        if self.message:
            font.setPixelSize(20)
            p.setFont(font)
            band = QRectF(0, self.height() - 44, self.width(), 44)
            p.fillRect(band, QColor(0, 0, 0, 170))
            p.setPen(QColor("#ffecb3"))
            p.drawText(band, Qt.AlignmentFlag.AlignCenter, self.message)
        p.end()

    def _color(self, place: Place) -> QColor:
        flags = self.flags.get(place, SlotFlags())
        if flags.conflict or self.disagrees(place):
            return FLAG_CONFLICT
        if flags.corrected:
            return FLAG_CORRECTED
        if self.is_low(place):
            return FLAG_LOW
        return OK_COLOR

    def _paint_overlay(self, p: QPainter) -> None:
        size = max(14.0, min(40.0, self._pitch() * 0.36))
        big, small = QFont(), QFont()
        big.setBold(True)
        big.setPixelSize(int(size))
        small.setBold(True)
        small.setPixelSize(max(10, int(size * 0.5)))
        big_m, small_m = QFontMetricsF(big), QFontMetricsF(small)
        # Cards read at no place: thin grey boxes, so a missing slot is explained.
        p.setPen(QPen(QColor(200, 200, 200, 200), 1.5, Qt.PenStyle.DashLine))
        p.setBrush(Qt.BrushStyle.NoBrush)
        for card, box, _ in self.loose:
            p.drawRect(self._widget_box(box))

        def order(item):  # marked places last, so nothing covers them
            place = item[0]
            return (place in self.highlights, self._color(place) != OK_COLOR, place)

        bounds = QRectF(self.rect())
        for place, box in sorted(self.boxes.items(), key=order):
            rect = self._widget_box(box)
            color = self._color(place)
            highlighted = place in self.highlights
            if highlighted:
                p.setPen(QPen(HIGHLIGHT, 5))
                p.setBrush(QColor(255, 196, 0, 70))
                p.drawRect(rect.adjusted(-4, -4, 4, 4))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(color, 3))
            p.drawRect(rect)
            card = self.label_of(place)
            if card is None and place.kind == STOCK:
                if not highlighted:
                    continue
                text = "draw"
            elif card is None:
                if not place.is_slot:
                    continue  # a waste card the game does not know
                text = "—"
            else:
                text = card_label(card)
            if self.is_low(place) or self.disagrees(place):
                text += "?"
            sub = str(place)
            tw, sw = big_m.horizontalAdvance(text), small_m.horizontalAdvance(sub)
            w, h = tw + sw + 14, big_m.height() + 2
            # Beside the corner (on the card's own visible top edge); inside a whole-card box.
            # A card nothing lies on shows its whole face: the label goes under its corner, onto it.
            if rect.width() > w * 1.3:
                tag = QRectF(rect.left() + 4, rect.top() + 4, w, h)
            elif place.is_slot and not self._covered(place):
                tag = QRectF(rect.left(), rect.bottom() + 3, w, h)
            else:
                tag = QRectF(rect.right() + 3, rect.top() - 2, w, h)
            if tag.right() > bounds.right():
                tag.moveRight(rect.left() - 3)
            tag.moveTop(max(bounds.top(), min(tag.top(), bounds.bottom() - h)))
            self._label_rects[place] = tag
            p.setPen(QPen(HIGHLIGHT if highlighted else color, 2))
            p.setBrush(QColor(255, 214, 0, 240) if highlighted else QColor(0, 0, 0, 200))
            p.drawRoundedRect(tag, 4, 4)
            red = card is not None and card.suit in "DH"
            p.setFont(big)
            p.setPen(QColor("#b71c1c") if highlighted and red else QColor("black") if highlighted
                     else RED_TEXT if red else QColor("white"))
            p.drawText(QRectF(tag.left() + 5, tag.top(), tw + 2, h), Qt.AlignmentFlag.AlignVCenter, text)
            p.setFont(small)
            p.setPen(QColor("#212121") if highlighted else QColor("#cfd8dc"))
            p.drawText(QRectF(tag.left() + 9 + tw, tag.top(), sw + 4, h - 3),
                       Qt.AlignmentFlag.AlignBottom | Qt.AlignmentFlag.AlignLeft, sub)

    def _covered(self, place: Place) -> bool:
        """Whether a card of the next row (seen in this frame) lies on ``place``."""
        below = (Place.slot(place.row + 1, place.index), Place.slot(place.row + 1, place.index + 1))
        return any(p in self.boxes for p in below)

    # --- input ----------------------------------------------------------------------
    def place_at(self, point: QPointF) -> Optional[Place]:
        hits = [pl for pl in self.boxes if self._widget_box(self.boxes[pl]).contains(point)]
        if not hits:
            hits = [pl for pl, r in self._label_rects.items() if r.contains(point)]
        # Overlapping cards: the lower row lies on top.
        return max(hits, key=lambda pl: (pl.is_slot, pl.row), default=None)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton and self.image is not None:
            place = self.place_at(event.position())
            if place is not None:
                self.placeClicked.emit(place)
                return
        super().mousePressEvent(event)
