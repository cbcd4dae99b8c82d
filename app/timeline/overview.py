"""The overview strip above the timeline: the whole trace as an event-density curve, the visible window
as a draggable region, and the search matches as ticks. A large trace's strip says "building…" until the
background build after its first frame has counted the density."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGraphicsItem

from fxscope.app.pyqtgraph_import import pg
from fxscope.app.timeline.building_track import TEXT as BUILDING_TEXT
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import table_pending


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
        self.density_curve = self.plot(np.linspace(0.0, span / 1e9, self.BINS + 1), np.zeros(self.BINS),
                                       stepMode="center", fillLevel=0, brush=pg.mkBrush("#9aa7b8"),
                                       pen=pg.mkPen("#6b7a90"))  # fmt: skip
        self.setXRange(0.0, span / 1e9, padding=0.0)
        #: "building…" while the background build makes the density (a large trace's first frame)
        self.building = pg.TextItem(BUILDING_TEXT, color="#5a6578", anchor=(0.0, 0.5))
        self.building.setPos(0.0, 0.5)
        self.addItem(self.building, ignoreBounds=True)
        if table_pending(model, "density"):
            self.setYRange(0.0, 1.0, padding=0.05)
        else:
            self.show_density()
        self.region = pg.LinearRegionItem(brush=pg.mkBrush(31, 78, 156, 50), pen=pg.mkPen("#1f4e9c"))
        self.region.setZValue(10)
        self.addItem(self.region)
        self.overview_ticks = pg.PlotCurveItem(pen=pg.mkPen("#d08a00", width=1))  # search matches
        self.overview_ticks.setZValue(5)
        self.addItem(self.overview_ticks)
        # the curve and the ticks change only with the data, not when the region moves (every pan or zoom of
        # the timeline repaints the strip): kept as pixmaps, one blit each a frame instead of a path of
        # thousands of segments (the same pixels: opaque, not antialiased)
        for item in (self.density_curve, self.overview_ticks):
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.scene().sigMouseClicked.connect(self._clicked)

    def show_density(self) -> None:
        """Draw the events' density (the model's, built: by the loader, or by the background build that
        :meth:`fxscope.app.timeline.widget.TimelineWidget.tables_built` reports)."""
        m = self.model
        span = max(m.end_ns - m.start_ns, 1)
        level = np.log1p(m.density(self.BINS)).astype(np.float64)
        self.density_curve.setData(np.linspace(0.0, span / 1e9, self.BINS + 1), level)
        self.setYRange(0.0, max(float(level.max()), 1.0), padding=0.05)
        self.building.setVisible(False)

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
            x = matched_bins(np.floor(x / (span / 1e9) * 4 * self.BINS)) * (span / 1e9) / (4 * self.BINS)
        top = self.getViewBox().viewRange()[1][1]
        self.overview_ticks.setData(np.repeat(x, 2), np.tile([0.0, top], len(x)), connect="pairs")

    def _clicked(self, event) -> None:
        self.clicked.emit(self.getViewBox().mapSceneToView(event.scenePos()).x())


def matched_bins(bins: np.ndarray) -> np.ndarray:
    """The distinct values of ``bins``, ascending (``np.unique``): a search's hits come in time order, so their
    bins too, and the distinct ones are where the value changes, one pass; a sort otherwise. (``np.unique``
    sorted them all the same: ~0.1 s of the UI thread for the 2M hits of "frame" at 100M events.)"""
    if len(bins) > 1 and bool((bins[1:] >= bins[:-1]).all()):
        return bins[np.r_[True, bins[1:] != bins[:-1]]]
    return np.unique(bins)
