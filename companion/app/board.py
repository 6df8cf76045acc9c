"""The board view: the pyramid, stock, waste, cells and reserve as they are understood.

API: ``set_picture(BoardPicture)``, ``set_highlights(places)``, ``set_selected(places)``;
signal ``placeClicked(Place)``. Low-confidence slots get an orange frame and ``?``,
inconsistent ones a red frame and ``!``, corrected ones a blue ``✎``.
"""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

from typing import Iterable, Optional

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from companion.app.cardpaint import (FLAG_CONFLICT, FLAG_CORRECTED, FLAG_LOW, HIGHLIGHT, SELECTED, paint_badge,
                                     paint_card, paint_empty, paint_frame)
from companion.app.picture import BoardPicture
from companion.app.places import CELL, RESERVE, STOCK, WASTE, Place

ASPECT = 1.4        # card height / width
ROW_STEP = 0.5      # vertical step between pyramid rows, in card heights (rows overlap)
GAP = 0.12          # horizontal gap, in card widths


class BoardView(QWidget):
    placeClicked = Signal(object)  # Place

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.picture = BoardPicture()
        self.highlights: frozenset[Place] = frozenset()
        self.selected: frozenset[Place] = frozenset()
        self._rects: dict[Place, QRectF] = {}
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(360, 300)
        self.setMouseTracking(True)
        self.setAccessibleName("Board")

    def sizeHint(self) -> QSize:
        return QSize(760, 640)

    # --- API ------------------------------------------------------------------------
    def set_picture(self, picture: BoardPicture) -> None:
        self.picture = picture
        self._layout()
        self.update()

    def set_highlights(self, places: Iterable[Place]) -> None:
        self.highlights = frozenset(places)
        self.update()

    def set_selected(self, places: Iterable[Place]) -> None:
        self.selected = frozenset(places)
        self.update()

    def place_rect(self, place: Place) -> Optional[QRectF]:
        """Where a place is drawn (tests click there)."""
        return self._rects.get(place)

    # --- geometry -------------------------------------------------------------------
    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        self._layout()
        super().resizeEvent(event)

    def _side_places(self) -> list[Place]:
        pic = self.picture
        places = [Place(STOCK)] + [Place(WASTE, 0, k) for k in range(max(1, len(pic.waste)))]
        places += [Place(CELL, 0, k) for k in range(len(pic.cells))]
        return places

    def _layout(self) -> None:
        pic = self.picture
        rows = max(1, pic.rows)
        side = self._side_places()
        reserve_n = len(pic.reserve)
        margin, caption_h, label_h = 14.0, 28.0, 24.0
        w_avail = self.width() - 2 * margin
        h_avail = self.height() - 2 * margin - caption_h - label_h
        columns = max(rows, len(side) + 0.5, reserve_n)
        # Height in card heights: pyramid + gap + side row (+ reserve row).
        lines = (rows - 1) * ROW_STEP + 1 + 0.25 + 1 + (1.15 if reserve_n else 0)
        cw = min(w_avail / (columns * (1 + GAP)), h_avail / (lines * ASPECT))
        cw = max(cw, 10.0)
        ch = cw * ASPECT
        cx = self.width() / 2
        top = margin + caption_h
        rects: dict[Place, QRectF] = {}
        pyr_h = (rows - 1) * ROW_STEP * ch + ch
        for r in range(rows):
            y_row = (rows - 1 - r) if pic.inverted else r
            y = top + y_row * ROW_STEP * ch
            row_w = (r + 1) * cw + r * GAP * cw
            x0 = cx - row_w / 2
            for i in range(r + 1):
                rects[Place.slot(r, i)] = QRectF(x0 + i * cw * (1 + GAP), y, cw, ch)
        y_side = top + pyr_h + 0.25 * ch
        x = cx - (len(side) * cw * (1 + GAP) + 0.5 * cw) / 2
        for k, place in enumerate(side):
            rects[place] = QRectF(x, y_side, cw, ch)
            x += cw * (1 + GAP) + (0.5 * cw if place.kind == STOCK else 0)
        if reserve_n:
            y_res = y_side + 1.15 * ch
            x = cx - reserve_n * cw * (1 + GAP) / 2
            for k in range(reserve_n):
                rects[Place(RESERVE, 0, k)] = QRectF(x + k * cw * (1 + GAP), y_res, cw, ch)
        self._rects = rects

    # --- painting -------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("#1b5e20"))
        pic = self.picture
        if pic.caption:
            font = QFont()
            font.setPixelSize(18)
            font.setBold(True)
            p.setFont(font)
            p.setPen(QColor("#e8f5e9"))
            p.drawText(QRectF(0, 6, self.width(), 26), Qt.AlignmentFlag.AlignCenter, pic.caption)
        order = sorted((pl for pl in self._rects if pl.is_slot), key=lambda pl: (pl.row, pl.index))
        if pic.inverted:
            order.reverse()
        # Empty places first: their outlines must not cross the cards that overlap them.
        empties = [pl for pl in order if pl in pic.slots and pic.slots[pl] is None]
        for place in empties + [pl for pl in order if pl not in empties]:
            self._paint_slot(p, place)
        for place in self._rects:
            if not place.is_slot:
                self._paint_side(p, place)
        p.end()

    def _paint_slot(self, p: QPainter, place: Place) -> None:
        pic, rect = self.picture, self._rects[place]
        if place in pic.slots and pic.slots[place] is None:
            flags = pic.flags.get(place)
            paint_empty(p, rect, str(place) if flags is not None else "")
            if flags is not None and flags.needs_check:
                paint_frame(p, rect, FLAG_LOW, 3)
            self._paint_marks(p, place, rect)
            return
        card = pic.slots.get(place)
        dim = pic.available is not None and card is not None and card not in pic.available
        paint_card(p, rect, card, unknown=place not in pic.slots, face_down=place in pic.face_down, dim=dim,
                   center=not self._covered(place))
        self._paint_marks(p, place, rect)

    def _covered(self, place: Place) -> bool:
        """A card of the next row lies over this one (its lower half is hidden)."""
        pic = self.picture
        nxt = place.row - 1 if pic.inverted else place.row + 1
        if not 0 <= nxt < pic.rows:
            return False
        if pic.inverted:
            below = [Place.slot(nxt, j) for j in (place.index - 1, place.index) if 0 <= j <= nxt]
        else:
            below = [Place.slot(nxt, j) for j in (place.index, place.index + 1)]
        return any(pic.slots.get(b, True) is not None for b in below)

    def _paint_marks(self, p: QPainter, place: Place, rect: QRectF) -> None:
        flags = self.picture.flags.get(place)
        if flags is not None:
            if flags.conflict:
                paint_frame(p, rect, FLAG_CONFLICT, 4)
                paint_badge(p, rect, "!", FLAG_CONFLICT)
            elif flags.low:
                paint_frame(p, rect, FLAG_LOW, 4)
                paint_badge(p, rect, "?", FLAG_LOW)
            elif flags.corrected:
                paint_badge(p, rect, "✎", FLAG_CORRECTED)
        if place in self.highlights:
            paint_frame(p, rect, HIGHLIGHT, 5, fill_alpha=70)
        if place in self.selected:
            paint_frame(p, rect, SELECTED, 5, fill_alpha=50)

    def _paint_side(self, p: QPainter, place: Place) -> None:
        pic, rect = self.picture, self._rects[place]
        if place.kind == STOCK:
            if pic.stock_top is not None:
                paint_card(p, rect, pic.stock_top)
            elif pic.stock_present and pic.stock_count != 0:
                paint_card(p, rect, None, face_down=True)
            else:
                paint_empty(p, rect, "recycle" if pic.waste and any(pic.waste) else "stock")
            count = "" if pic.stock_count is None else str(pic.stock_count)
            self._label_below(p, rect, f"stock {count}".strip())
        elif place.kind == WASTE:
            pile = pic.waste[place.index] if place.index < len(pic.waste) else ()
            if pile:
                paint_card(p, rect, pile[-1], dim=pic.available is not None and pile[-1] not in pic.available)
            else:
                paint_empty(p, rect, "waste")
            self._label_below(p, rect, f"waste {len(pile)}" if pile else "")
        else:
            cards = pic.cells if place.kind == CELL else pic.reserve
            card = cards[place.index] if place.index < len(cards) else None
            if card is None:
                paint_empty(p, rect, place.kind)
            else:
                paint_card(p, rect, card)
        self._paint_marks(p, place, rect)

    def _label_below(self, p: QPainter, rect: QRectF, text: str) -> None:
        if not text:
            return
        font = QFont()
        font.setPixelSize(max(10, int(rect.width() * 0.16)))
        p.setFont(font)
        p.setPen(QColor("#e8f5e9"))
        p.drawText(QRectF(rect.left() - 10, rect.bottom() + 2, rect.width() + 20, 22),
                   Qt.AlignmentFlag.AlignCenter, text)

    # --- input ----------------------------------------------------------------------
    def place_at(self, point: QPointF) -> Optional[Place]:
        # Topmost first: later rows are drawn over earlier ones.
        for place in sorted(self._rects, key=lambda pl: (pl.is_slot, pl.row), reverse=not self.picture.inverted):
            if self._rects[place].contains(point):
                return place
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            place = self.place_at(event.position())
            if place is not None:
                self.placeClicked.emit(place)
                return
        super().mousePressEvent(event)
