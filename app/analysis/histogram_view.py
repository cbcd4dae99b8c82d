"""The duration histogram of one slice name on a log-scale time axis (as Tracy's Find Zone draws it): bars of
equal ratio, count upwards, the p50/p90/p99 lines; click a bar (``binClicked``) to list its slices."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QWidget

from fxscope.app.timeline.details import format_ns
from fxscope.core.analysis.stats import Histogram

MARGIN_BOTTOM = 18
MARGIN_TOP = 16


class HistogramView(QWidget):
    binClicked = Signal(float, float)  # [lo, hi) ns of the clicked bin

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hist: Histogram | None = None
        self.title = ""
        self.marks: dict[str, int] = {}
        self.selected_bin = -1
        self.setMinimumHeight(120)

    def set_histogram(self, hist: Histogram | None, title: str = "", marks: dict[str, int] | None = None) -> None:
        self.hist, self.title, self.marks, self.selected_bin = hist, title, marks or {}, -1
        self.update()

    def _bar_rect(self, i: int) -> QRectF:
        h = self.hist
        n = len(h.counts)
        w = self.width() / max(n, 1)
        peak = max(int(h.counts.max()), 1)
        top = self.height() - MARGIN_BOTTOM
        bar = (top - MARGIN_TOP) * h.counts[i] / peak
        return QRectF(i * w, top - bar, max(w - 1, 1), bar)

    def _x_of(self, ns: float) -> float:
        h = self.hist
        lo, hi = math.log10(h.edges[0]), math.log10(h.edges[-1])
        return (math.log10(max(ns, h.edges[0])) - lo) / (hi - lo) * self.width()

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("#ffffff"))
        p.setPen(QColor("#333333"))
        p.drawText(4, 12, self.title)
        h = self.hist
        if h is None or not h.counts.any():
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Select a name to see its durations")
            return
        for i in np.flatnonzero(h.counts).tolist():
            p.fillRect(self._bar_rect(i), QColor("#c0392b" if i == self.selected_bin else "#3b7dd8"))
        p.setPen(QColor("#555555"))
        base = self.height() - MARGIN_BOTTOM
        p.drawLine(0, base, self.width(), base)
        decade = math.ceil(math.log10(h.edges[0]))
        while 10.0**decade <= h.edges[-1] * 1.0001:  # a tick per factor 10, labelled
            x = self._x_of(10.0**decade)
            p.drawLine(int(x), base, int(x), base + 4)
            p.drawText(int(x) + 2, self.height() - 3, format_ns(int(10.0**decade)))
            decade += 1
        for label, value in self.marks.items():
            if value > 0:
                x = self._x_of(value)
                p.setPen(QPen(QColor("#e67e22"), 1, Qt.PenStyle.DashLine))
                p.drawLine(int(x), MARGIN_TOP, int(x), base)
                p.drawText(int(x) + 2, MARGIN_TOP + 10, label)
        p.end()

    def bin_at(self, px: float) -> int:
        if self.hist is None or not len(self.hist.counts):
            return -1
        i = int(px / (self.width() / len(self.hist.counts)))
        return i if 0 <= i < len(self.hist.counts) and self.hist.counts[i] else -1

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        i = self.bin_at(event.position().x())
        if i >= 0:
            self.selected_bin = i
            self.update()
            self.binClicked.emit(float(self.hist.edges[i]), float(self.hist.edges[i + 1]))
