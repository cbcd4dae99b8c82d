"""The overview strip above the timeline: the whole trace as an event-density curve, the visible window
as a draggable region, and the search matches as ticks."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal

from fxscope.core.trace.model import TraceModel


class OverviewStrip(pg.PlotWidget):
    """The density strip. ``region`` is the visible window (the timeline follows it when dragged);
    ``clicked(x)`` gives the view x (seconds from the trace start) of a click."""

    clicked = Signal(float)
    BINS = 1000

    def __init__(self, model: TraceModel) -> None:
        super().__init__(background="#f4f5f7", enableMenu=False, viewBox=pg.ViewBox(enableMenu=False))
        self.model = model
        self.setFixedHeight(46)
        self.hideAxis("left")
        self.hideAxis("bottom")
        self.hideButtons()
        self.setMouseEnabled(x=False, y=False)
        self.setMenuEnabled(False)
        span = max(model.end_ns - model.start_ns, 1)
        counts = model.density(self.BINS)
        edges = np.linspace(0.0, span / 1e9, self.BINS + 1)
        level = np.log1p(counts).astype(np.float64)
        self.density_curve = self.plot(edges, level, stepMode="center", fillLevel=0, brush=pg.mkBrush("#9aa7b8"),
                                       pen=pg.mkPen("#6b7a90"))  # fmt: skip
        self.setXRange(0.0, span / 1e9, padding=0.0)
        self.setYRange(0.0, max(float(level.max()), 1.0), padding=0.05)
        self.region = pg.LinearRegionItem(brush=pg.mkBrush(31, 78, 156, 50), pen=pg.mkPen("#1f4e9c"))
        self.region.setZValue(10)
        self.addItem(self.region)
        self.overview_ticks = pg.PlotCurveItem(pen=pg.mkPen("#d08a00", width=1))  # search matches
        self.overview_ticks.setZValue(5)
        self.addItem(self.overview_ticks)
        self.scene().sigMouseClicked.connect(self._clicked)

    def align_left(self, width: int) -> None:
        """Give the strip the timeline's left margin, so that the two time axes line up."""
        strip_left = self.getAxis("left")
        strip_left.setWidth(width)
        strip_left.setStyle(showValues=False, tickLength=0)
        strip_left.setPen(pg.mkPen(None))
        self.showAxis("left")

    def show_window(self, x0: float, x1: float) -> None:
        """Move the region to the timeline's visible range, without echoing it back."""
        self.region.blockSignals(True)
        self.region.setRegion((x0, x1))
        self.region.blockSignals(False)

    def show_matches(self, ts: np.ndarray) -> None:
        """Search matches at times ``ts`` (ns) as ticks; one per bin when there are more than it shows."""
        m = self.model
        span = max(m.end_ns - m.start_ns, 1)
        x = (ts - m.start_ns).astype(np.float64) / 1e9
        if len(x) > 4 * self.BINS:  # one tick per bin is all the strip can show
            x = np.unique(np.floor(x / (span / 1e9) * 4 * self.BINS)) * (span / 1e9) / (4 * self.BINS)
        top = self.getViewBox().viewRange()[1][1]
        self.overview_ticks.setData(np.repeat(x, 2), np.tile([0.0, top], len(x)), connect="pairs")

    def _clicked(self, event) -> None:
        self.clicked.emit(self.getViewBox().mapSceneToView(event.scenePos()).x())
