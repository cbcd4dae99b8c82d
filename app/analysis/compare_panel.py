"""The Compare tab: this trace (A) against another one (B) opened beside it, per slice name: count, total,
p50 and p99 in both with the delta and change, sorted by the largest regression (as ``fxscope diff``, the
same core code). B is read and both are summarized off the UI thread; names whose total grew by more than
the threshold are drawn red, those that shrank by more green."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.analysis.flame_view import FlameGraphView
from fxscope.app.analysis.worker import run_in_pool
from fxscope.app.timeline.details import format_ns
from fxscope.core.analysis.call_tree import top_down
from fxscope.core.analysis.diff import DiffRow, compare, regressions
from fxscope.core.analysis.diff_tree import total_deltas
from fxscope.core.analysis.stats import name_stats

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
    return {"rows": compare(name_stats(model_a), name_stats(b)), "path": path_b, "model_b": b, "tree_b": tree_b,
            "delta": total_deltas(top_down(model_a), model_a, tree_b, b)}  # fmt: skip


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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.flame = FlameGraphView()
        self.flame_title = QLabel("")
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.flame_title)
        lower_layout.addWidget(self.flame, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(lower)
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
        red, green = QBrush(QColor("#f6d5d1")), QBrush(QColor("#d5f0dc"))
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
                    item.setBackground(brush)
                self.table.setItem(i, col, item)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(5, Qt.SortOrder.DescendingOrder)  # largest regression first
        self.compared.emit(rows)
