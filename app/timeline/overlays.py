"""Items drawn over (or under) the whole visible view of the timeline rather than on one track: flow
arrows, the wakeup line, the time grid, and the opaque band behind the pinned block and sticky header."""

from __future__ import annotations

from typing import Protocol

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from fxscope.app.pyqtgraph_import import pg
from fxscope.app.theme import Theme
from fxscope.app.timeline.lane_item import GuardedPaint
from fxscope.core.timeline.layout import PROCESS_HEADER_ROWS
from fxscope.core.trace.model import TraceModel


class TimelineGeometry(Protocol):
    """What the overlays read from the timeline (a protocol: the widget imports this module)."""

    model: TraceModel
    theme: Theme

    def slice_y(self, row: int) -> float | None: ...

    def lane_y(self, key: tuple) -> float | None: ...

    def selection_y(self) -> float | None: ...


class ViewOverlayItem(GuardedPaint, pg.GraphicsObject):
    """An item drawn over (or under) the whole visible view: its bounds are the view range."""

    def boundingRect(self) -> QRectF:
        vb = self.getViewBox()
        if vb is None:
            return QRectF()
        (x0, x1), (y0, y1) = vb.viewRange()
        return QRectF(x0, y0, x1 - x0, y1 - y0)


class FlowArrowsItem(ViewOverlayItem):
    """Arrows of the selected slice's flows, anchored as the FXT format says (and Perfetto draws them): a
    link leaves where its source slice ends and arrives where its destination slice begins."""

    def __init__(self, timeline: TimelineGeometry) -> None:
        super().__init__()
        self.timeline = timeline
        self.setZValue(50)
        self.links = np.zeros(0, np.int64)
        self._colour = QColor("#222222")
        self._pen = QPen(self._colour, 1.4)
        self._pen.setCosmetic(True)

    def set_colour(self, colour: str) -> None:
        self._colour = QColor(colour)
        self._pen = QPen(self._colour, 1.4)
        self._pen.setCosmetic(True)
        self.update()

    def show_for(self, row: int) -> None:
        flows = self.timeline.model.flows if row >= 0 else None
        self.links = np.concatenate([flows.incoming(row), flows.outgoing(row)]) if flows is not None else np.zeros(0, np.int64)
        self.update()

    def draw(self, painter: QPainter) -> None:
        if not len(self.links):
            return
        tl = self.timeline
        flows, o = tl.model.flows, tl.model.start_ns
        tr = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setPen(self._pen)
        painter.setBrush(self._colour)
        s = tl.model.slices
        for link in self.links.tolist():
            src, dst = int(flows.src_slice[link]), int(flows.dst_slice[link])
            ya, yb = tl.slice_y(src), tl.slice_y(dst)
            if ya is None or yb is None:
                continue
            a = tr.map(QPointF((int(s.ts[src]) + int(s.dur[src]) - o) / 1e9, ya))
            b = tr.map(QPointF((int(s.ts[dst]) - o) / 1e9, yb))
            painter.drawLine(a, b)
            arrow_head(painter, a, b)
        painter.restore()


class WakeupItem(ViewOverlayItem):
    """The wakeup behind a selected CPU slice or thread state: a dashed line at the wakeup's time across
    the view, and an arrow from the CPU lane the wakeup was recorded on (where the waker ran) to the start of
    the selected box (Perfetto draws the same line and latency)."""

    def __init__(self, timeline: TimelineGeometry) -> None:
        super().__init__()
        self.timeline = timeline
        self.setZValue(45)
        self.wakeup: tuple[int, int, int] | None = None  # (wakeup ns, its CPU, the selected box's start ns)
        self._line = QPen(QColor("#7a1f1f"), 1.2, Qt.PenStyle.DashLine)
        self._line.setCosmetic(True)
        self._arrow = QPen(QColor("#7a1f1f"), 1.4)
        self._arrow.setCosmetic(True)

    def show_for(self, kind: str, row: int) -> None:
        self.wakeup = None
        if kind in ("cpu", "state") and row >= 0:
            from fxscope.core.trace.sched import cpu_slice_details, thread_state_details

            m = self.timeline.model
            d = cpu_slice_details(m, row) if kind == "cpu" else thread_state_details(m, row)
            if int(d["wakeup_row"]) >= 0:
                self.wakeup = (int(d["wakeup_ns"]), int(d["wakeup_cpu"]), int(d["start_ns"]))
        self.update()

    def draw(self, painter: QPainter) -> None:
        if self.wakeup is None:
            return
        tl = self.timeline
        wake_ns, cpu, start_ns = self.wakeup
        o = tl.model.start_ns
        vb = self.getViewBox()
        (_x0, _x1), (y0, y1) = vb.viewRange()
        wx, sx = (wake_ns - o) / 1e9, (start_ns - o) / 1e9
        tr = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setPen(self._line)
        painter.drawLine(tr.map(QPointF(wx, y0)), tr.map(QPointF(wx, y1)))
        ya = tl.lane_y(("cpu", cpu))
        yb = tl.selection_y()
        if ya is not None and yb is not None:
            a, b = tr.map(QPointF(wx, ya)), tr.map(QPointF(sx, yb))
            painter.setPen(self._arrow)
            painter.setBrush(QColor("#7a1f1f"))
            painter.drawLine(a, b)
            arrow_head(painter, a, b)
        painter.restore()


def arrow_head(painter: QPainter, a: QPointF, b: QPointF) -> None:
    """A filled arrow head at ``b`` pointing away from ``a`` (device coordinates)."""
    dx, dy = b.x() - a.x(), b.y() - a.y()
    length = max((dx * dx + dy * dy) ** 0.5, 1e-6)
    ux, uy = dx / length, dy / length
    painter.drawPolygon([b, QPointF(b.x() - 8 * ux + 4 * uy, b.y() - 8 * uy - 4 * ux),
                         QPointF(b.x() - 8 * ux - 4 * uy, b.y() - 8 * uy + 4 * ux)])  # fmt: skip


class TimeGridItem(ViewOverlayItem):
    """Light vertical lines at the bottom axis' ticks, drawn in one call, under the tracks."""

    def __init__(self, axis) -> None:
        super().__init__()
        self.axis = axis
        self.setZValue(-100)
        self._pen = QPen(QColor("#ececef"))
        self._pen.setCosmetic(True)

    def set_colour(self, colour: str) -> None:
        self._pen = QPen(QColor(colour))
        self._pen.setCosmetic(True)
        self.update()

    def draw(self, painter: QPainter) -> None:
        vb = self.getViewBox()
        if vb is None:
            return
        (x0, x1), (y0, y1) = vb.viewRange()
        levels = self.axis.tickValues(x0, x1, max(vb.width(), 1.0))
        xs = [v for _spacing, values in levels[:2] for v in values]
        if not xs:
            return
        painter.setPen(self._pen)
        painter.drawLines([QLineF(x, y0, x, y1) for x in xs])


class PinnedBackdropItem(ViewOverlayItem):
    """The opaque band behind the pinned block and a sticky process header: the tracks scrolled under
    them do not show through (the pinned area stays on top, as in Perfetto)."""

    def __init__(self, timeline: TimelineGeometry) -> None:
        super().__init__()
        self.timeline = timeline
        self.setZValue(15)
        self.area: tuple[float, float, bool] = (0.0, 0.0, False)  # (top, pinned rows, sticky header)

    def update_area(self, top: float, pinned_rows: float, sticky: bool) -> None:
        if (top, pinned_rows, sticky) != self.area:
            self.area = (top, pinned_rows, sticky)
            self.update()

    def draw(self, painter: QPainter) -> None:
        top, pinned_rows, sticky = self.area
        if not pinned_rows and not sticky:
            return
        vb = self.getViewBox()
        (x0, x1), _ = vb.viewRange()
        theme = self.timeline.theme
        painter.setPen(Qt.PenStyle.NoPen)
        if pinned_rows:
            painter.setBrush(QColor(theme.pinned_background))
            painter.drawRect(QRectF(x0, top, x1 - x0, pinned_rows))
        if sticky:
            painter.setBrush(QColor(theme.header_background))
            painter.drawRect(QRectF(x0, top + pinned_rows, x1 - x0, PROCESS_HEADER_ROWS))
        pen = QPen(QColor(theme.grid))
        pen.setCosmetic(True)
        painter.setPen(pen)
        y = top + pinned_rows + (PROCESS_HEADER_ROWS if sticky else 0.0)
        painter.drawLine(QPointF(x0, y), QPointF(x1, y))
