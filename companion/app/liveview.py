"""The live image with overlays: every recognised card boxed and labelled (card + slot).

API: ``show_frame(Frame)``, ``set_flags({Place: SlotFlags})``, ``set_cards({Place: Card})``
(corrections change the labels), ``set_highlights(places)``, ``set_message(text)``;
signal ``placeClicked(Place)`` when a box is clicked.
"""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

from typing import Iterable, Optional

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from companion.cards import Card
from companion.app.capture import Frame
from companion.app.cardpaint import FLAG_CONFLICT, FLAG_CORRECTED, FLAG_LOW, HIGHLIGHT, card_label
from companion.app.correction import SlotFlags
from companion.app.places import Place


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
        self.cards: dict[Place, Optional[Card]] = {}
        self.flags: dict[Place, SlotFlags] = {}
        self.highlights: frozenset[Place] = frozenset()
        self.message = "No source yet: choose a camera, a file or the demo"
        self.show_overlay = True
        self.setMinimumSize(320, 200)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAccessibleName("Live image")

    def sizeHint(self) -> QSize:
        return QSize(720, 480)

    # --- API ------------------------------------------------------------------------
    def show_frame(self, frame: Frame) -> None:
        self.image = to_qimage(frame.image)
        self.boxes = dict(frame.boxes)
        if frame.layout is not None and not self.cards:
            self.cards = {Place.slot(r, i): s.card for r, i, s in frame.layout.slots()}
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

    def set_message(self, text: str) -> None:
        self.message = text
        self.update()

    # --- geometry -------------------------------------------------------------------
    def _image_rect(self) -> QRectF:
        if self.image is None or self.image.width() == 0:
            return QRectF()
        scale = min(self.width() / self.image.width(), self.height() / self.image.height())
        w, h = self.image.width() * scale, self.image.height() * scale
        return QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)

    def _widget_box(self, box: tuple[float, float, float, float]) -> QRectF:
        target = self._image_rect()
        s = target.width() / self.image.width() if self.image is not None else 1.0
        x1, y1, x2, y2 = box
        return QRectF(target.left() + x1 * s, target.top() + y1 * s, (x2 - x1) * s, (y2 - y1) * s)

    def place_rect(self, place: Place) -> Optional[QRectF]:
        box = self.boxes.get(place)
        return None if box is None or self.image is None else self._widget_box(box)

    # --- painting -------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("#202124"))
        if self.image is not None:
            p.drawImage(self._image_rect(), self.image)
            if self.show_overlay:
                self._paint_overlay(p)
        if self.message:
            font = QFont()
            font.setPixelSize(20)
            font.setBold(True)
            p.setFont(font)
            band = QRectF(0, self.height() - 44, self.width(), 44)
            p.fillRect(band, QColor(0, 0, 0, 170))
            p.setPen(QColor("#ffecb3"))
            p.drawText(band, Qt.AlignmentFlag.AlignCenter, self.message)
        p.end()

    def _paint_overlay(self, p: QPainter) -> None:
        font = QFont()
        font.setBold(True)
        def order(item):  # marked boxes last, so nothing covers them
            place = item[0]
            flags = self.flags.get(place, SlotFlags())
            return (place in self.highlights or flags.low or flags.conflict or flags.corrected, place)

        for place, box in sorted(self.boxes.items(), key=order):
            rect = self._widget_box(box)
            flags = self.flags.get(place, SlotFlags())
            color = QColor("#00e676")
            if flags.conflict:
                color = FLAG_CONFLICT
            elif flags.low:
                color = FLAG_LOW
            elif flags.corrected:
                color = FLAG_CORRECTED
            highlighted = place in self.highlights
            if highlighted:
                p.fillRect(rect, QColor(255, 196, 0, 90))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(HIGHLIGHT if highlighted else color, 6 if highlighted else 3))
            p.drawRect(rect)
            if not place.is_slot and self.cards.get(place) is None:
                continue  # the stock pile, or a waste card the game does not know
            card = self.cards.get(place)
            label = (card_label(card) if card is not None else "—") + ("?" if flags.low else "")
            # Large label: readable from a chair.
            size = max(14, int(rect.width() * 0.42))
            font.setPixelSize(size)
            p.setFont(font)
            tag = QRectF(rect.left(), rect.top() - 2, rect.width(), size * 1.25)
            p.fillRect(tag, QColor(0, 0, 0, 185))
            p.setPen(QColor("#ff8a80") if card is not None and card.suit in "DH" else QColor("white"))
            p.drawText(tag, Qt.AlignmentFlag.AlignCenter, label)
            if rect.width() < 70:
                continue  # too small for the slot name: the card label matters more
            font.setPixelSize(max(10, int(size * 0.5)))
            p.setFont(font)
            p.setPen(QColor("#e0e0e0"))
            p.drawText(QRectF(rect.left(), tag.bottom(), rect.width(), size * 0.7),
                       Qt.AlignmentFlag.AlignCenter, str(place))

    # --- input ----------------------------------------------------------------------
    def place_at(self, point: QPointF) -> Optional[Place]:
        hits = [pl for pl in self.boxes if self._widget_box(self.boxes[pl]).contains(point)]
        # Overlapping cards: the lower row lies on top.
        return max(hits, key=lambda pl: (pl.is_slot, pl.row), default=None)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton and self.image is not None:
            place = self.place_at(event.position())
            if place is not None:
                self.placeClicked.emit(place)
                return
        super().mousePressEvent(event)
