"""The placeholder a track draws while a background build is still making its table: a hatched band with
"building…", so that a track waiting for its data never reads as a track with none.

A large trace's window shows its first frame as soon as the thread slices are ready (Perfetto shows its
timeline while track data loads); the async, counter, CPU and instant tracks' tables follow in the background
build (:func:`fxscope.core.trace.prepare.prepare_tracks`). Until then each such kind of track is one of these
lanes (:data:`fxscope.core.timeline.track_order.BUILDING`), which the timeline replaces by the real tracks
when the table is in. It reads nothing from the model's tables: a paint never builds one on the UI thread.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen

from fxscope.app.timeline.lane_item import ROW_FILL, LaneItem
from fxscope.core.timeline.layout import ROW_HEIGHT
from fxscope.core.trace.model import TraceModel

#: what the band says (and what the hover tooltip and a click's status would say)
TEXT = "building…"
_FILL = QBrush(QColor(120, 130, 150, 60), Qt.BrushStyle.BDiagPattern)
_EDGE = QPen(QColor(120, 130, 150, 140))
_TEXT_PEN = QPen(QColor("#5a6578"))


class BuildingTrackItem(LaneItem):
    """A track whose table is still being built (``step``: the build step it waits for): a hatched band
    the view's width with :data:`TEXT` at its left; a click or hover on it finds nothing."""

    kind = "building"

    def __init__(self, model: TraceModel, step: str, y0: float, rows: int = 1) -> None:
        super().__init__(model, y0)
        self.step = step
        self.rows = rows

    def hit(self, lane_y: float, t: int, tol_ns: float) -> tuple[str, int]:
        """Nothing to select while the table is being built."""
        return "", -1

    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None:
            return
        t0, t1, sx, dx, sy, dy = f
        left, right = ((t - self.origin) / 1e9 * sx + dx for t in (t0, t1))  # the visible window, in pixels
        painter.resetTransform()
        top = self.y0 * sy + dy
        height = self.rows * ROW_FILL * ROW_HEIGHT * sy
        band = QRectF(left, top, max(right - left, 1.0), height)
        painter.setPen(_EDGE)
        painter.setBrush(_FILL)
        painter.drawRect(band)
        font = QFont(painter.font())
        font.setItalic(True)
        painter.setFont(font)
        painter.setPen(_TEXT_PEN)
        painter.drawText(band.adjusted(8.0, 0.0, 0.0, 0.0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, TEXT)
        self.last_drawn = 1
