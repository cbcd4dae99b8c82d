"""The duration histogram of one slice name on a log-scale time axis (as Tracy's Find Zone draws it): bars of
equal ratio, count upwards, the p50/p90/p99 lines; click a bar (``binClicked``) to list its slices.

It also overlays several histograms on the same bins (:func:`~fxscope.core.analysis.stats.shared_histograms`),
each a translucent colour with its own percentile lines and a legend entry: one name's durations in trace A
and in trace B (the Compare tab). The counts share one scale, so a B with fewer slices draws lower bars."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import QWidget

from fxscope.app.timeline.details import format_ns
from fxscope.core.analysis.stats import Histogram

MARGIN_BOTTOM = 18
MARGIN_TOP = 16
BAR = "#3b7dd8"
SELECTED_BAR = "#c0392b"
MARK = "#e67e22"


@dataclass
class Series:
    """One histogram drawn in the view: its bars' colour, its legend label ("" for none) and its
    percentile lines (label -> ns), drawn in ``mark_colour``."""

    hist: Histogram
    colour: str = BAR
    label: str = ""
    marks: dict[str, int] = field(default_factory=dict)
    mark_colour: str = MARK


class HistogramView(QWidget):
    binClicked = Signal(float, float)  # [lo, hi) ns of the clicked bin

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.series: list[Series] = []
        self.title = ""
        self.selected_bin = -1
        self.setMinimumHeight(120)

    @property
    def hist(self) -> Histogram | None:
        """The first series' histogram (all series share its bins)."""
        return self.series[0].hist if self.series else None

    def set_histogram(self, hist: Histogram | None, title: str = "", marks: dict[str, int] | None = None) -> None:
        self.set_series([] if hist is None else [Series(hist, marks=marks or {})], title)

    def set_series(self, series: list[Series], title: str = "") -> None:
        """Draw ``series`` over each other; their histograms must share their bins."""
        for s in series[1:]:
            if not np.array_equal(s.hist.edges, series[0].hist.edges):
                raise ValueError("overlaid histograms need the same bins (shared_histograms)")
        self.series, self.title, self.selected_bin = list(series), title, -1
        self.update()

    def _peak(self) -> int:
        return max([int(s.hist.counts.max()) for s in self.series if len(s.hist.counts)] + [1])

    def _bar_rect(self, i: int, series: int = 0) -> QRectF:
        counts = self.series[series].hist.counts
        w = self.width() / max(len(counts), 1)
        top = self.height() - MARGIN_BOTTOM
        bar = (top - MARGIN_TOP) * counts[i] / self._peak()
        return QRectF(i * w, top - bar, max(w - 1, 1), bar)

    def _x_of(self, ns: float) -> float:
        h = self.hist
        lo, hi = math.log10(h.edges[0]), math.log10(h.edges[-1])
        return (math.log10(max(ns, h.edges[0])) - lo) / (hi - lo) * self.width()

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        text = self.palette().color(QPalette.ColorRole.Text)  # (the theme's, as the background)
        p.fillRect(self.rect(), self.palette().color(QPalette.ColorRole.Base))
        p.setPen(text)
        p.drawText(4, 12, self.title)
        h = self.hist
        if h is None or not any(s.hist.counts.any() for s in self.series):
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Select a name to see its durations")
            return
        overlaid = len(self.series) > 1
        for k, s in enumerate(self.series):
            colour = QColor(s.colour)
            if overlaid:  # translucent, so that where both have slices both show
                colour.setAlpha(150)
            for i in np.flatnonzero(s.hist.counts).tolist():
                p.fillRect(self._bar_rect(i, k), QColor(SELECTED_BAR) if i == self.selected_bin and not overlaid
                           else colour)  # fmt: skip
        p.setPen(text)
        base = self.height() - MARGIN_BOTTOM
        p.drawLine(0, base, self.width(), base)
        decade = math.ceil(math.log10(h.edges[0]))
        while 10.0**decade <= h.edges[-1] * 1.0001:  # a tick per factor 10, labelled
            x = self._x_of(10.0**decade)
            p.drawLine(int(x), base, int(x), base + 4)
            p.drawText(int(x) + 2, self.height() - 3, format_ns(int(10.0**decade)))
            decade += 1
        placed: list[tuple[float, float, int]] = []  # each label's x extent and line
        for s in self.series:
            for label, value in s.marks.items():
                if value > 0:
                    x = self._x_of(value)
                    p.setPen(QPen(QColor(s.mark_colour), 1, Qt.PenStyle.DashLine))
                    p.drawLine(int(x), MARGIN_TOP, int(x), base)
                    line = self._label_line(placed, x + 2, x + 2 + p.fontMetrics().horizontalAdvance(label))
                    p.drawText(int(x) + 2, MARGIN_TOP + 10 + 12 * line, label)
        if overlaid:
            self._legend(p)
        p.end()

    @staticmethod
    def _label_line(placed: list[tuple[float, float, int]], x0: float, x1: float) -> int:
        """The first of four text lines under the top where a mark's label from x0 to x1 overlaps no label
        placed there (p50 and p90 of a narrow distribution are a few pixels apart: on one line they were
        drawn over each other); it joins ``placed``."""
        taken = {line for a, b, line in placed if a < x1 + 2 and x0 < b + 2}
        line = next((k for k in range(4) if k not in taken), len(placed) % 4)
        placed.append((x0, x1, line))
        return line

    def _legend(self, p: QPainter) -> None:
        """A colour swatch and label per series, top right."""
        fm = p.fontMetrics()
        y = 4
        for s in self.series:
            text = s.label or "?"
            x = self.width() - fm.horizontalAdvance(text) - 22
            p.fillRect(QRectF(x, y, 12, 10), QColor(s.colour))
            p.setPen(self.palette().color(QPalette.ColorRole.Text))
            p.drawText(int(x) + 16, y + 10, text)
            y += 14

    def bin_at(self, px: float) -> int:
        h = self.hist
        if h is None or not len(h.counts):
            return -1
        i = int(px / (self.width() / len(h.counts)))
        return i if 0 <= i < len(h.counts) and any(s.hist.counts[i] for s in self.series) else -1

    def mousePressEvent(self, event: QMouseEvent) -> None:
        i = self.bin_at(event.position().x())
        if i >= 0:
            self.selected_bin = i
            self.update()
            self.binClicked.emit(float(self.hist.edges[i]), float(self.hist.edges[i + 1]))
