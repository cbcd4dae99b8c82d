"""A collapsed process's header row: its threads' busy time as one density strip."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPainter

from fxscope.app.timeline.lane_item import (
    ROW_FILL,
    LaneItem,
    draw_rects,
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

    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None or not self.tracks:
            return
        t0, t1, sx, dx, sy, dy = f
        # the window may start before the trace (Python ints: px() counts times from the start only)
        x_left = max((t0 - self.origin) / 1e9 * sx + dx, dx, -10.0)
        x_right = min((t1 - self.origin) / 1e9 * sx + dx, 1e7)
        n = int(min(max(x_right - x_left, 0.0), 20_000))
        if n < 1:
            return
        ns_per_px = 1e9 / sx
        edges = (np.floor(x_left) + np.arange(n + 1) - dx) * ns_per_px  # pixel edges, ns since the start
        fraction = np.diff(self.busy(edges)) / (ns_per_px * len(self.tracks))
        px = np.flatnonzero(fraction > 0.002)
        self.last_drawn = len(px)
        if not len(px):
            return
        height = ROW_FILL * ROW_HEIGHT * sy
        # square root: one busy thread in twenty still shows as a fifth of the row, and full stays full
        bar = np.clip(np.sqrt(fraction[px]), 0.1, 1.0) * height
        bottom = (self.y0 + ROW_FILL * ROW_HEIGHT) * sy + dy
        painter.save()
        painter.resetTransform()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._brush)
        draw_rects(painter, np.floor(x_left) + px, bottom - bar, np.ones(len(px)), bar)
        painter.restore()
