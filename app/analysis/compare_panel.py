"""The Compare tab: this trace (A) against another one (B) opened beside it, per slice name: count, total,
p50 and p99 in both with the delta and change, sorted by the largest regression (as ``fxscope diff``, the
same core code). B is read and both are summarized off the UI thread; names whose total grew by more than
the threshold are drawn red, those that shrank by more green."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.analysis.worker import run_in_pool
from app.timeline.details import format_ns
from core.analysis.diff import DiffRow, compare, regressions
from core.analysis.stats import name_stats

COLUMNS = ("Name", "Count A", "Count B", "Total A", "Total B", "Δ total", "Change", "p50 A", "p50 B", "p99 A", "p99 B")
THRESHOLD_PCT = 10.0


class _NumberItem(QTableWidgetItem):
    def __init__(self, text: str, value: float) -> None:
        super().__init__(text)
        self.value = value

    def __lt__(self, other) -> bool:
        return self.value < getattr(other, "value", 0)


def _compare_files(model_a, path_b: str) -> tuple[list[DiffRow], str]:
    from core.trace.model import TraceModel
    from formats.fxt.reader import read_fxt

    b = TraceModel(read_fxt(path_b))
    return compare(name_stats(model_a), name_stats(b)), path_b


class ComparePanel(QWidget):
    """See the module docstring. ``compared(rows)`` once a comparison is shown."""

    compared = Signal(object)

    def __init__(self, model, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.rows: list[DiffRow] = []
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
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)

    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Compare with trace", "", "FXT traces (*.fxt);;All files (*)")
        if path:
            self.compare_with(path)

    def compare_with(self, path: str) -> None:
        """Read ``path`` and compare (in the thread pool); the table fills when done."""
        self.status.setText(f"Reading {path}…")
        self.button.setEnabled(False)
        run_in_pool(lambda: _compare_files(self.model, path), self._show, self._failed, self)

    def _failed(self, message: str) -> None:
        self.button.setEnabled(True)
        self.status.setText(f"Cannot compare: {message}")

    def _show(self, result: tuple[list[DiffRow], str]) -> None:
        rows, path = result
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
