"""Painting one card face, back or empty place with QPainter (shared by board, picker, screenshots)."""

from __future__ import annotations

import companion.app.qtfix  # noqa: F401  (first: PySide6 bug workaround, see the module)

from typing import Optional

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen

from companion.cards import Card

SUIT_GLYPH = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
RED = QColor("#c62828")
BLACK = QColor("#212121")
FLAG_LOW = QColor("#ef8a00")
FLAG_CONFLICT = QColor("#d50000")
FLAG_CORRECTED = QColor("#1565c0")
HIGHLIGHT = QColor("#ffc400")
SELECTED = QColor("#2962ff")


def card_label(card: Card) -> str:
    rank = "10" if card.rank == 10 else card.code[0]
    return rank + SUIT_GLYPH[card.suit]


def card_color(card: Card) -> QColor:
    return RED if card.suit in "DH" else BLACK


def paint_card(p: QPainter, rect: QRectF, card: Optional[Card], *, unknown: bool = False,
               face_down: bool = False, dim: bool = False, center: bool = True) -> None:
    radius = rect.width() * 0.08
    p.setPen(QPen(QColor("#5f6368"), 1.2))
    if face_down:
        p.setBrush(QBrush(QColor("#1a3d7c")))
        p.drawRoundedRect(rect, radius, radius)
        inner = rect.adjusted(rect.width() * 0.1, rect.width() * 0.1, -rect.width() * 0.1, -rect.width() * 0.1)
        p.setPen(QPen(QColor("#8fa8d8"), 1.5))
        p.setBrush(QBrush(QColor("#2b5aa8"), Qt.BrushStyle.DiagCrossPattern))
        p.drawRoundedRect(inner, radius / 2, radius / 2)
        return
    p.setBrush(QBrush(QColor("#e8e8e8") if dim else QColor("#ffffff")))
    p.drawRoundedRect(rect, radius, radius)
    text = "??" if card is None or unknown else card_label(card)
    color = QColor("#9e9e9e") if card is None or unknown else card_color(card)
    if dim:
        color = QColor(color.red(), color.green(), color.blue(), 150)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(max(8, int(rect.width() * 0.36)))
    p.setFont(font)
    p.setPen(color)
    # Label in the top part: rows overlap like a real pyramid, the top stays visible.
    top = QRectF(rect.left(), rect.top() + rect.height() * 0.02, rect.width(), rect.height() * 0.42)
    p.drawText(top, Qt.AlignmentFlag.AlignCenter, text)
    if center and card is not None and not unknown:
        font.setPixelSize(max(8, int(rect.width() * 0.42)))
        p.setFont(font)
        bottom = QRectF(rect.left(), rect.top() + rect.height() * 0.45, rect.width(), rect.height() * 0.5)
        p.drawText(bottom, Qt.AlignmentFlag.AlignCenter, SUIT_GLYPH[card.suit])


def paint_empty(p: QPainter, rect: QRectF, text: str = "") -> None:
    radius = rect.width() * 0.08
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.setPen(QPen(QColor(255, 255, 255, 90), 1.5, Qt.PenStyle.DashLine))
    p.drawRoundedRect(rect, radius, radius)
    if text:
        font = QFont()
        font.setPixelSize(max(8, int(rect.width() * 0.16)))
        p.setFont(font)
        p.setPen(QColor(255, 255, 255, 140))
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)


def paint_frame(p: QPainter, rect: QRectF, color: QColor, width: float, fill_alpha: int = 0) -> None:
    radius = rect.width() * 0.08
    if fill_alpha:
        p.setBrush(QBrush(QColor(color.red(), color.green(), color.blue(), fill_alpha)))
    else:
        p.setBrush(Qt.BrushStyle.NoBrush)
    p.setPen(QPen(color, width))
    grow = width / 2
    p.drawRoundedRect(rect.adjusted(-grow, -grow, grow, grow), radius, radius)


def paint_badge(p: QPainter, rect: QRectF, text: str, color: QColor) -> None:
    size = max(14.0, rect.width() * 0.3)
    badge = QRectF(rect.right() - size * 0.75, rect.top() - size * 0.25, size, size)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QBrush(color))
    p.drawEllipse(badge)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(int(size * 0.7))
    p.setFont(font)
    p.setPen(QColor("white"))
    p.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)
