"""A collapsed process's header row: its threads' busy time as one density strip."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QTransform

from fxscope.app.timeline.lane_item import (
    ROW_FILL,
    LaneItem,
    paint_rects,
    rect_buffer,
)
from fxscope.core.timeline.layout import ROW_HEIGHT
from fxscope.core.trace.model import ThreadTrack, TraceModel


class GroupSummaryItem(LaneItem):
    """A collapsed process's header row: its threads' busy time as one density strip (per pixel, the
    fraction of its threads inside a top-level slice, as a bar), not an empty row.

    Busy time up to ``t`` is exact from sorted starts and ends and their prefix sums
    (``sum(min(t - start, dur))`` over the slices begun by ``t``), so a frame costs two searches per pixel
    edge whatever the zoom, never a pass over the slices."""

    kind = "summary"

    def __init__(self, model: TraceModel, tracks: list[ThreadTrack], y0: float) -> None:
        super().__init__(model, y0)
        self.tracks = tracks
        self._sums: tuple[np.ndarray, ...] | None = None
        self._strip: tuple | None = None  # the last strip drawn: (window start, end, sx, sy, bars)
        self._brush = QBrush(QColor("#6b7a90"))

    def set_colour(self, colour: str) -> None:
        self._brush = QBrush(QColor(colour))
        self.update()

    def _prefix(self) -> tuple[np.ndarray, ...]:
        if self._sums is None:  # once, on the first paint: the top-level slices of the process's threads
            s = self.model.slices
            rows = np.concatenate([t.by_depth[0] for t in self.tracks if t.by_depth]) if self.tracks else []
            rows = np.asarray(rows, np.int64)
            since = (s.ts[rows].view(np.uint64) - np.uint64(self.origin & 0xFFFF_FFFF_FFFF_FFFF)).astype(np.float64)
            start = np.sort(since)
            end = np.sort(since + s.dur[rows].astype(np.float64))
            self._sums = (start, np.r_[0.0, np.cumsum(start)], end, np.r_[0.0, np.cumsum(end)])
        return self._sums

    def busy(self, edges_rel_ns: np.ndarray) -> np.ndarray:
        """Busy thread-time (ns, summed over threads) from the trace start to each edge (ns since it)."""
        start, start_sum, end, end_sum = self._prefix()
        n_start = np.searchsorted(start, edges_rel_ns, "right")
        n_end = np.searchsorted(end, edges_rel_ns, "right")
        return (n_start * edges_rel_ns - start_sum[n_start]) - (n_end * edges_rel_ns - end_sum[n_end])

    #: the strip is computed for the view and this fraction of its width on either side: a pan inside
    #: draws it moved (as the box tracks' pictures)
    MARGIN = 0.5

    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None or not self.tracks:
            return
        t0, t1, sx, dx, sy, dy = f
        strip = self._strip
        if strip is None or not (strip[0] <= t0 and t1 <= strip[1] and abs(sx - strip[2]) <= 1e-9 * sx and sy == strip[3]):
            strip = self._strip = self._bars(t0, t1, sx, sy)
        w0, _w1, _sx, _sy, rects = strip
        self.last_drawn = len(rects)
        if not len(rects):
            return
        painter.save()
        painter.setTransform(QTransform.fromTranslate((w0 - self.origin) / 1e9 * sx + dx, self.y0 * sy + dy))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._brush)
        paint_rects(painter, rects)
        painter.restore()

    def _bars(self, t0: int, t1: int, sx: float, sy: float) -> tuple:
        """(window start, end, sx, sy, bars): a pixel-wide bar per pixel of a window around [t0, t1) where
        the threads are busy, in pixels from the window's start and the row's top."""
        lo, hi = -(1 << 63) + 1, (1 << 63) - 2
        margin = (t1 - t0) // 2
        w0, w1 = max(t0 - margin, lo), min(t1 + margin, hi)
        ns_per_px = 1e9 / sx
        first = max(w0, self.origin)  # (nothing before the trace: the window may start before it)
        n = int(min(max((w1 - first) / ns_per_px, 0.0), 40_000))
        if n < 1:
            return w0, w1, sx, sy, np.zeros((0, 4))
        edges = (first - self.origin) + np.arange(n + 1) * ns_per_px  # pixel edges, ns since the start
        fraction = np.diff(self.busy(edges)) / (ns_per_px * len(self.tracks))
        px = np.flatnonzero(fraction > 0.002)
        height = ROW_FILL * ROW_HEIGHT * sy
        # square root: one busy thread in twenty still shows as a fifth of the row, and full stays full
        bar = np.clip(np.sqrt(fraction[px]), 0.1, 1.0) * height
        x = (first - w0) / 1e9 * sx + px
        return w0, w1, sx, sy, rect_buffer(x, height - bar, np.ones(len(px)), bar)
