"""The timeline widget: tracks stacked by process and thread on one zoomable time axis.

Navigation follows Perfetto: W/S zoom around the centre, A/D pan, wheel zooms, drag pans, F fits the
selection (or the whole trace). The x axis is seconds from the trace start and pyqtgraph picks the unit
(s, ms, us, ns) as the user zooms.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QKeyEvent
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.timeline.tracks import ROW_HEIGHT, SliceTrackItem
from core.trace.model import TraceModel

PROCESS_HEADER_ROWS = 1.0
ZOOM_STEP = 0.8
PAN_STEP = 0.2


class TimelineWidget(QWidget):
    """Shows one :class:`TraceModel`. Emits ``sliceSelected(row)`` (-1 when a click hits nothing)."""

    sliceSelected = Signal(int)

    def __init__(self, model: TraceModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.plot = pg.PlotWidget(background="w")
        self.plot.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.overview = self._build_overview(model)
        layout.addWidget(self.overview)
        layout.addWidget(self.plot)
        vb = self.plot.getViewBox()
        vb.invertY(True)
        vb.setMouseEnabled(x=True, y=False)
        vb.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.showGrid(x=True, y=False, alpha=0.15)
        bottom = self.plot.getAxis("bottom")
        bottom.setLabel(units="s")
        bottom.enableAutoSIPrefix(True)
        self.items: list[SliceTrackItem] = []
        ticks = []
        y = 0.0
        for group in model.processes:
            ticks.append((y + 0.5, f"▾ {group.name}"))
            y += PROCESS_HEADER_ROWS
            for track in group.tracks:
                item = SliceTrackItem(model, track, y)
                self.plot.addItem(item)
                self.items.append(item)
                ticks.append((y + 0.45, f"   {track.name}"))
                y += item.rows * ROW_HEIGHT + 0.3
        self.total_rows = max(y, 1.0)
        left = self.plot.getAxis("left")
        left.setTicks([ticks, []])
        # pyqtgraph drops a tick label that does not fit the axis: size the axis to the longest name
        metrics = QFontMetrics(left.font() if hasattr(left, "font") else QFont())
        widest = max((metrics.horizontalAdvance(text) for _, text in ticks), default=100)
        self.axis_width = min(widest + 24, 360)
        left.setWidth(self.axis_width)
        left.setStyle(tickLength=0, textFillLimits=[(0, 2.0), (2, 2.0)])
        self.duration_s = (model.end_ns - model.start_ns) / 1e9
        vb.setLimits(xMin=-0.05 * self.duration_s, xMax=1.05 * self.duration_s, minXRange=1e-9)
        self.fit_all()
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.selected_row = -1
        vb.sigXRangeChanged.connect(self._sync_overview)
        self.region.sigRegionChanged.connect(self._overview_moved)
        self._sync_overview()
        # the strip's time axis lines up with the timeline's: same left margin
        strip_left = self.overview.getAxis("left")
        strip_left.setWidth(self.axis_width)
        strip_left.setStyle(showValues=False, tickLength=0)
        strip_left.setPen(pg.mkPen(None))
        self.overview.showAxis("left")
        self.marker = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#d62728", width=1.5))
        self.marker.hide()
        self.plot.addItem(self.marker, ignoreBounds=True)

    # ------------------------------------------------------------------ overview strip
    OVERVIEW_BINS = 1000

    def _build_overview(self, model: TraceModel) -> pg.PlotWidget:
        """The whole trace as an event-density strip, with the visible window as a draggable region."""
        strip = pg.PlotWidget(background="#f4f5f7")
        strip.setFixedHeight(46)
        strip.hideAxis("left")
        strip.hideAxis("bottom")
        strip.hideButtons()
        strip.setMouseEnabled(x=False, y=False)
        strip.setMenuEnabled(False)
        span = max(model.end_ns - model.start_ns, 1)
        ts = model.cols.ev_ts
        counts = np.zeros(self.OVERVIEW_BINS, np.int64)
        if len(ts):  # in blocks: no full-size temporaries for a big trace
            for a in range(0, len(ts), 1 << 22):
                part = ((ts[a : a + (1 << 22)] - model.start_ns) * self.OVERVIEW_BINS // span).clip(0, self.OVERVIEW_BINS - 1)
                counts += np.bincount(part, minlength=self.OVERVIEW_BINS)
        edges = np.linspace(0.0, span / 1e9, self.OVERVIEW_BINS + 1)
        level = np.log1p(counts).astype(np.float64)
        strip.plot(edges, level, stepMode="center", fillLevel=0, brush=pg.mkBrush("#9aa7b8"), pen=pg.mkPen("#6b7a90"))
        strip.setXRange(0.0, span / 1e9, padding=0.0)
        strip.setYRange(0.0, max(float(level.max()), 1.0), padding=0.05)
        self.region = pg.LinearRegionItem(brush=pg.mkBrush(31, 78, 156, 50), pen=pg.mkPen("#1f4e9c"))
        self.region.setZValue(10)
        strip.addItem(self.region)
        strip.scene().sigMouseClicked.connect(self._overview_clicked)
        return strip

    def _sync_overview(self, *_args) -> None:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        self.region.blockSignals(True)
        self.region.setRegion((x0, x1))
        self.region.blockSignals(False)

    def _overview_moved(self) -> None:
        x0, x1 = self.region.getRegion()
        if x1 > x0:
            self.plot.getViewBox().setXRange(x0, x1, padding=0.0)

    def _overview_clicked(self, event) -> None:
        """A click on the strip centres the timeline there, keeping the zoom."""
        x = self.overview.getViewBox().mapSceneToView(event.scenePos()).x()
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        half = (x1 - x0) / 2
        self.plot.getViewBox().setXRange(x - half, x + half, padding=0.0)

    def show_time(self, ts_ns: int) -> None:
        """Mark ``ts_ns`` with a line and bring it to the middle of the view (a log line was clicked)."""
        x = (ts_ns - self.model.start_ns) / 1e9
        self.marker.setPos(x)
        self.marker.show()
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        half = (x1 - x0) / 2
        self.plot.getViewBox().setXRange(x - half, x + half, padding=0.0)

    # ------------------------------------------------------------------ navigation
    def fit_all(self) -> None:
        vb = self.plot.getViewBox()
        vb.setXRange(0.0, self.duration_s, padding=0.01)
        vb.setYRange(0.0, min(self.total_rows, 40.0), padding=0.0)

    def set_range_ns(self, start_ns: int, end_ns: int) -> None:
        o = self.model.start_ns
        self.plot.getViewBox().setXRange((start_ns - o) / 1e9, (end_ns - o) / 1e9, padding=0.0)

    def visible_range_ns(self) -> tuple[int, int]:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        o = self.model.start_ns
        return o + int(x0 * 1e9), o + int(x1 * 1e9)

    def zoom(self, factor: float) -> None:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        centre, half = (x0 + x1) / 2, (x1 - x0) / 2 * factor
        self.plot.getViewBox().setXRange(centre - half, centre + half, padding=0.0)

    def pan(self, fraction: float) -> None:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        shift = (x1 - x0) * fraction
        self.plot.getViewBox().setXRange(x0 + shift, x1 + shift, padding=0.0)

    def fit_selection(self) -> None:
        if self.selected_row < 0:
            self.fit_all()
            return
        s = self.model.slices
        start, dur = int(s.ts[self.selected_row]), max(int(s.dur[self.selected_row]), 1)
        self.set_range_ns(start - dur // 10, start + dur + dur // 10)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        key = event.key()
        if key == Qt.Key.Key_W:
            self.zoom(ZOOM_STEP)
        elif key == Qt.Key.Key_S:
            self.zoom(1 / ZOOM_STEP)
        elif key == Qt.Key.Key_A:
            self.pan(-PAN_STEP)
        elif key == Qt.Key.Key_D:
            self.pan(PAN_STEP)
        elif key == Qt.Key.Key_F:
            self.fit_selection()
        else:
            super().keyPressEvent(event)

    # ------------------------------------------------------------------ selection
    def hit_test(self, x_s: float, y_rows: float) -> int:
        """Slice row under view coordinates (seconds from start, rows), or -1."""
        t = self.model.start_ns + int(round(x_s * 1e9))
        for item in self.items:
            if item.y0 <= y_rows < item.y0 + item.rows * ROW_HEIGHT:
                depth = int((y_rows - item.y0) // ROW_HEIGHT)
                return self.model.slice_at(item.track, depth, t)
        return -1

    def select(self, row: int) -> None:
        self.selected_row = row
        for item in self.items:
            item.selected_row = row
            item.update()
        self.sliceSelected.emit(row)

    def _on_click(self, event) -> None:
        pos = self.plot.getViewBox().mapSceneToView(event.scenePos())
        self.select(self.hit_test(pos.x(), pos.y()))
        self.setFocus()
