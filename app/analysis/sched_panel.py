"""The Scheduling tab: over the whole trace or the area selected with Ctrl+drag, CPU time per thread and per
process, time per thread state, and the wakeup latency distribution (log-scale histogram with p50/p90/p99),
from :func:`fxscope.core.analysis.sched_stats.sched_summary`, computed in the thread pool."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.analysis.histogram_view import HistogramView
from fxscope.app.analysis.worker import run_in_pool
from fxscope.app.timeline.details import format_ns
from fxscope.core.analysis.sched_stats import SchedSummary, sched_summary
from fxscope.core.analysis.stats import duration_histogram, nearest_rank


def _table(headers: tuple[str, ...]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(headers)
    t.verticalHeader().setVisible(False)
    t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return t


def _fill(table: QTableWidget, rows: list[tuple[str, ...]]) -> None:
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            table.setItem(i, j, QTableWidgetItem(text))


class SchedPanel(QWidget):
    def __init__(self, model, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.summary: SchedSummary | None = None
        self.span = (model.start_ns, model.end_ns + 1, None)
        self.title = QLabel("")
        self.threads = _table(("Thread", "Process", "CPU time", "Share"))
        self.processes = _table(("Process", "CPU time", "Share"))
        self.states = _table(("State", "Time"))
        self.latency = HistogramView()
        tables = QSplitter()
        for w in (self.threads, self.processes, self.states):
            tables.addWidget(w)
        split = QSplitter()
        split.addWidget(tables)
        split.addWidget(self.latency)
        split.setSizes([700, 400])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.title)
        layout.addWidget(split, 1)
        self._stale = True

    def set_area(self, t0: int, t1: int, threads: list) -> None:
        tids = {int(self.model.cols.threads_tid[t]) for t in threads if t >= 0}
        self.span = (int(t0), int(t1), tids or None)
        self._stale = True
        if self.isVisible():
            self.recompute()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.recompute()

    def recompute(self) -> None:
        self._stale = False
        t0, t1, tids = self.span
        self.title.setText("Computing…")
        model = self.model  # the pool thread reads no widget
        run_in_pool(lambda: sched_summary(model, t0, t1, tids), self._show,
                    lambda m: self.title.setText(f"Scheduling summary failed: {m}"), self)  # fmt: skip

    def _show(self, s: SchedSummary) -> None:
        self.summary = s
        t0, t1, tids = self.span
        total = max(int(s.thread_cpu_ns.sum()), 1)
        where = "whole trace" if t0 <= self.model.start_ns and t1 > self.model.end_ns else (
            f"area {format_ns(t1 - t0)}" + (f" on {len(tids)} threads" if tids else ""))  # fmt: skip
        self.title.setText(f"Scheduling, {where}: CPU time {format_ns(total)}, {len(s.latency_ns)} wakeups "
                           f"({s.unserved_wakeups} never ran)")  # fmt: skip
        _fill(self.threads, [(str(t), str(p), format_ns(v), f"{100 * v / total:.1f}%")
                             for t, p, v in zip(s.thread_tid.tolist(), s.thread_pid.tolist(),
                                                s.thread_cpu_ns.tolist(), strict=True)])  # fmt: skip
        _fill(self.processes, [(f"{p} {self.model.process_name(p)}", format_ns(v), f"{100 * v / total:.1f}%")
                               for p, v in zip(s.process_pid.tolist(), s.process_cpu_ns.tolist(), strict=True)])  # fmt: skip
        _fill(self.states, [(k, format_ns(v)) for k, v in sorted(s.state_ns.items(), key=lambda kv: -kv[1])])
        lat = np.sort(s.latency_ns)
        marks = {f"p{p}": int(lat[nearest_rank(np.array([len(lat)]), p)[0]]) for p in (50, 90, 99)} if len(lat) else {}
        self.latency.set_histogram(duration_histogram(lat), "Wakeup latency (wakeup to running)", marks)
