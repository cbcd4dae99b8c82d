"""The Compare tab: this trace (A) against another one (B) opened beside it, per slice name: count, total,
p50 and p99 in both with the delta and change, sorted by the largest regression (as ``fxscope diff``, the
same core code). B is read and both are summarized off the UI thread; names whose total grew by more than
the threshold are drawn red, those that shrank by more green.

Beside the table, the duration histograms of the selected name in A and in B, overlaid on the same log
scale; below it, the differential flame graph and (built when first shown) both timelines, A above B, with
their time axes aligned (:mod:`fxscope.app.analysis.aligned_timelines`)."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.analysis.flame_view import FlameGraphView
from fxscope.app.analysis.histogram_view import HistogramView, Series
from fxscope.app.analysis.worker import run_in_pool
from fxscope.app.theme import is_dark, tinted
from fxscope.app.timeline.details import format_ns
from fxscope.core.analysis.call_tree import top_down
from fxscope.core.analysis.diff import DiffRow, compare, regressions
from fxscope.core.analysis.diff_tree import total_deltas
from fxscope.core.analysis.stats import name_stats, shared_histograms

#: the colours of A and B in the overlaid histograms (and their percentile lines)
COLOUR_A, COLOUR_B = "#3b7dd8", "#e67e22"
MARK_A, MARK_B = "#1d4f91", "#a04f00"
COLUMNS = ("Name", "Count A", "Count B", "Total A", "Total B", "Δ total", "Change", "p50 A", "p50 B", "p99 A", "p99 B")
THRESHOLD_PCT = 10.0


class _NumberItem(QTableWidgetItem):
    def __init__(self, text: str, value: float) -> None:
        super().__init__(text)
        self.value = value

    def __lt__(self, other) -> bool:
        return self.value < getattr(other, "value", 0)


def _compare_files(model_a, path_b: str) -> dict:
    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.reading import read_trace

    b = TraceModel(read_trace(path_b))
    tree_b = top_down(b)
    stats_a, stats_b = name_stats(model_a), name_stats(b)
    return {"rows": compare(stats_a, stats_b), "path": path_b, "model_b": b, "tree_b": tree_b,
            "stats_a": stats_a, "stats_b": stats_b,
            "delta": total_deltas(top_down(model_a), model_a, tree_b, b)}  # fmt: skip


def name_durations(model, stats, name: str) -> np.ndarray:
    """The durations of every slice named ``name`` (by text) in ``model``; empty when it has none."""
    if name not in stats.names:
        return np.zeros(0, np.int64)
    s = model.slices
    return s.dur[np.asarray(s.name) == int(stats.name_id[stats.row_of(name)])]


def delta_colours(delta: np.ndarray) -> list[QColor]:
    """Red for time gained in B, blue for time lost, white for none; saturation by the share of the
    largest change (per node)."""
    top = float(np.abs(delta).max()) if len(delta) else 0.0
    out = []
    for d in (delta / top if top else np.zeros(len(delta))).tolist():
        fade = int(235 * (1 - min(abs(d), 1.0)))
        out.append(QColor(235, fade, fade) if d > 0 else QColor(fade, fade, 235) if d < 0 else QColor(235, 235, 235))
    return out


class ComparePanel(QWidget):
    """See the module docstring. ``compared(rows)`` once a comparison is shown."""

    compared = Signal(object)

    def __init__(self, model, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.rows: list[DiffRow] = []
        self.delta = np.zeros(0, np.int64)
        self.result: dict | None = None
        self.timelines = None  # the AlignedTimelines, built when their tab is first shown
        self.button = QPushButton("Compare with trace…")
        self.button.clicked.connect(self._choose)
        self.status = QLabel("Open a second trace (B) to compare this one (A) with it.")
        bar = QHBoxLayout()
        bar.addWidget(self.button)
        bar.addWidget(self.status, 1)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.itemSelectionChanged.connect(self._row_selected)
        self.histogram = HistogramView()
        self.histogram.setMinimumWidth(260)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.flame = FlameGraphView()
        self.flame_title = QLabel("")
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.flame_title)
        lower_layout.addWidget(self.flame, 1)
        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.addWidget(self.table)
        upper.addWidget(self.histogram)
        upper.setSizes([600, 400])
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.views.addTab(lower, "Differential flame graph")
        self.timelines_page = QWidget()
        QVBoxLayout(self.timelines_page).setContentsMargins(0, 0, 0, 0)
        self.views.addTab(self.timelines_page, "Timelines, A above B")
        self.views.currentChanged.connect(lambda _i: self._build_timelines())
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(upper)
        split.addWidget(self.views)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 2)  # the flame graph and the two timelines need the height
        layout.addLayout(bar)
        layout.addWidget(split, 1)

    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Compare with trace", "", "FXT traces (*.fxt);;All files (*)")
        if path:
            self.compare_with(path)

    def compare_with(self, path: str) -> None:
        """Read ``path`` and compare (in the thread pool); the table fills when done."""
        self.status.setText(f"Reading {path}…")
        self.button.setEnabled(False)
        model = self.model  # the pool thread reads no widget
        run_in_pool(lambda: _compare_files(model, path), self._show, self._failed, self)

    def _failed(self, message: str) -> None:
        self.button.setEnabled(True)
        self.status.setText(f"Cannot compare: {message}")

    def _show(self, result: dict) -> None:
        rows, path = result["rows"], result["path"]
        self.result = result
        if self.timelines is not None:  # a new B: its timeline is built again when shown
            self.timelines.setParent(None)
            self.timelines.deleteLater()
            self.timelines = None
        self.histogram.set_series([])
        self.delta = result["delta"]
        self.flame.set_tree(result["model_b"], result["tree_b"], delta_colours(self.delta))
        self.flame_title.setText("Differential flame graph: B's call paths, red where B spends more time than A "
                                 "on the same path, blue where less")  # fmt: skip
        self.button.setEnabled(True)
        self.rows = rows
        bad = regressions(rows, THRESHOLD_PCT)
        self.status.setText(f"A = this trace, B = {path}: {len(rows)} names, {len(bad)} regressed by more than "
                            f"{THRESHOLD_PCT:g}% of their total time")  # fmt: skip
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(rows))
        dark = is_dark(self.table.palette())
        red, green = tinted("worse", dark), tinted("better", dark)  # (background, text) each
        for i, r in enumerate(rows):
            pct = r.change_pct
            cells = [QTableWidgetItem(r.name), _NumberItem(str(r.a["count"]), r.a["count"]),
                     _NumberItem(str(r.b["count"]), r.b["count"])]  # fmt: skip
            for v in (r.a["total_ns"], r.b["total_ns"], r.delta_ns):
                cells.append(_NumberItem(format_ns(v), v))
            cells.append(_NumberItem("new" if math.isinf(pct) else f"{pct:+.1f}%", pct))
            for v in (r.a["p50_ns"], r.b["p50_ns"], r.a["p99_ns"], r.b["p99_ns"]):
                cells.append(_NumberItem(format_ns(v), v))
            brush = red if r.delta_ns > 0 and pct > THRESHOLD_PCT else green if pct < -THRESHOLD_PCT else None
            for col, item in enumerate(cells):
                if brush is not None:
                    item.setBackground(brush[0])
                    item.setForeground(brush[1])
                self.table.setItem(i, col, item)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(5, Qt.SortOrder.DescendingOrder)  # largest regression first
        self._build_timelines()
        self.compared.emit(rows)
        if rows:
            self.table.selectRow(0)

    # ------------------------------------------------------------------ one name in A and B
    def selected_name(self) -> str:
        items = self.table.selectedItems()
        return self.table.item(items[0].row(), 0).text() if items else ""

    def _row_selected(self) -> None:
        name = self.selected_name()
        if name and self.result is not None:
            self.show_name(name)

    def show_name(self, name: str) -> None:
        """The duration histograms of ``name`` in A and B over each other (shared log-scale bins), with
        their p50 and p99 lines; the name the timelines align at when asked for "the selected name"."""
        r = self.result
        da = name_durations(self.model, r["stats_a"], name)
        db = name_durations(r["model_b"], r["stats_b"], name)
        ha, hb = shared_histograms(da, db)
        series = []
        for hist, stats, colour, mark, tag, d in ((ha, r["stats_a"], COLOUR_A, MARK_A, "A", da),
                                                   (hb, r["stats_b"], COLOUR_B, MARK_B, "B", db)):  # fmt: skip
            marks = {}
            if name in stats.names:
                i = stats.row_of(name)
                marks = {f"p50 {tag}": int(stats.p50_ns[i]), f"p99 {tag}": int(stats.p99_ns[i])}
            series.append(Series(hist, colour, f"{tag}: {len(d)} slices", marks, mark))
        self.histogram.set_series(series, f"{name}: durations in A and B")
        if self.timelines is not None:
            self.timelines.name = name

    # ------------------------------------------------------------------ A above B
    def _build_timelines(self) -> None:
        """Both timelines, aligned at the starts, once their tab is shown (a timeline of a large trace
        takes a moment to build, and most comparisons need only the table)."""
        shown = self.views.currentWidget() is self.timelines_page
        if self.timelines is not None or self.result is None or not shown:
            return
        from fxscope.app.analysis.aligned_timelines import AlignedTimelines

        self.timelines = AlignedTimelines(self.model, self.result["model_b"], self.model.cols.path,
                                          self.result["path"])  # fmt: skip
        self.timelines.name = self.selected_name()
        self.timelines_page.layout().addWidget(self.timelines)
