"""The marks the timeline draws over its tracks on demand: the measured (or M-marked) span with its
duration label, the area selection's rectangle, and the line at a time shown from elsewhere (a log line)."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from fxscope.app.pyqtgraph_import import pg


class MeasureMarks:
    """Creates each mark on its first use (most tabs never measure) and adds it to ``plot``."""

    def __init__(self, plot: pg.PlotWidget) -> None:
        self.plot = plot
        self.measure_region: pg.LinearRegionItem | None = None
        self.measure_label: pg.TextItem | None = None
        self.area_region: QGraphicsRectItem | None = None
        self.marker = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#d62728", width=1.5))
        self.marker.hide()
        plot.addItem(self.marker, ignoreBounds=True)

    def show_span(self, a: float, b: float, y_rows: float, text: str) -> None:
        """Mark view x [a, b] with the measure region and ``text`` above row ``y_rows``."""
        if self.measure_region is None:
            self.measure_region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 170, 0, 45),
                                                      pen=pg.mkPen("#e08a00"))  # fmt: skip
            # over the slices, on its own background: the label never hides behind a track
            self.measure_label = pg.TextItem(color="#5c3800", anchor=(0.5, 1.0), fill=pg.mkBrush(255, 244, 214, 235),
                                             border=pg.mkPen("#e08a00"))  # fmt: skip
            self.measure_label.setZValue(60)
            # over the tracks that scroll, under the pinned block and its backdrop (z 15, pinned lanes 20): the
            # pinned area stays on top of everything that scrolls, the measured span included
            self.measure_region.setZValue(10)
            self.plot.addItem(self.measure_region, ignoreBounds=True)
            self.plot.addItem(self.measure_label, ignoreBounds=True)
        self.measure_region.setRegion((a, b))
        self.measure_region.show()
        self.measure_label.show()
        self.measure_label.setText(text)
        self.measure_label.setPos((a + b) / 2, y_rows)

    def show_area(self, rect: QRectF) -> None:
        """Highlight the area selection's rectangle (view units)."""
        if self.area_region is None:
            self.area_region = QGraphicsRectItem()
            pen = QPen(QColor("#2e9e5b"))
            pen.setCosmetic(True)
            self.area_region.setPen(pen)
            self.area_region.setBrush(QColor(46, 158, 91, 40))
            self.area_region.setZValue(30)
            self.plot.addItem(self.area_region, ignoreBounds=True)
        self.area_region.setRect(rect)
        self.area_region.show()

    def show_time(self, x: float) -> None:
        """The line at view x ``x``."""
        self.marker.setPos(x)
        self.marker.show()

    def clear(self) -> None:
        """The measured span and the area selection go away (the time line stays)."""
        for item in (self.measure_region, self.measure_label, self.area_region):
            if item is not None:
                item.hide()
