"""The aggregate tables of an area selection, as Perfetto's area selection shows them: thread slices (and
async spans) per name, CPU time per thread and per process over CPU lanes, time per thread state over
state strips. Each table opens sorted by its time in the area, largest first."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.timeline.details import format_ns
from fxscope.core.trace.area_summary import async_by_name, cpu_by_process, cpu_by_thread, states_by_state
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.query import aggregate


class _NumberItem(QTableWidgetItem):
    """Sorts by the number it shows, not by its text."""

    def __init__(self, text: str, value: float) -> None:
        super().__init__(text)
        self.value = value

    def __lt__(self, other) -> bool:
        return self.value < getattr(other, "value", 0)


def _table(columns: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(columns)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return table


def _fill(table: QTableWidget, rows: list[list[tuple[str, float | None]]], sort_column: int) -> None:
    """Cells as (text, number or None for text); sorted by ``sort_column``, largest first."""
    table.setSortingEnabled(False)
    table.setRowCount(len(rows))
    for i, cells in enumerate(rows):
        for col, (text, value) in enumerate(cells):
            table.setItem(i, col, QTableWidgetItem(text) if value is None else _NumberItem(text, value))
    table.setSortingEnabled(True)
    # explicitly: enabling sorting alone sorts by the header's indicator, the name column Z -> A
    table.sortByColumn(sort_column, Qt.SortOrder.DescendingOrder)


class AggregatePanel(QWidget):
    COLUMNS = ("Name", "Count", "Wall in area", "Wall total", "Self total", "Average", "Min", "Max")
    CPU_THREAD_COLUMNS = ("Thread", "Process", "CPU slices", "CPU time in area", "Wall total")
    CPU_PROCESS_COLUMNS = ("Process", "Threads", "CPU slices", "CPU time in area", "Wall total")
    STATE_COLUMNS = ("State", "Count", "Time in area", "Wall total")
    ASYNC_COLUMNS = ("Name", "Count", "Wall in area", "Wall total")

    def __init__(self, model: TraceModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.title = QLabel("Ctrl+drag across tracks on the timeline to aggregate an area.")
        self.table = _table(self.COLUMNS)
        self.async_table = _table(self.ASYNC_COLUMNS)
        self.cpu_thread_table = _table(self.CPU_THREAD_COLUMNS)
        self.cpu_process_table = _table(self.CPU_PROCESS_COLUMNS)
        self.state_table = _table(self.STATE_COLUMNS)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for table, title in ((self.table, "Slices"), (self.async_table, "Async spans"),
                             (self.cpu_thread_table, "CPU by thread"), (self.cpu_process_table, "CPU by process"),
                             (self.state_table, "Thread states")):  # fmt: skip
            self.tabs.addTab(table, title)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.title)
        layout.addWidget(self.tabs)
        self.rows: list[dict] = []
        self.async_rows: list[dict] = []
        self.cpu_threads: list[dict] = []
        self.cpu_processes: list[dict] = []
        self.states: list[dict] = []

    def show_area(self, t0: int, t1: int, threads: list, keys: list | None = None) -> None:
        """The area [t0, t1) over thread tracks ``threads`` and, from ``keys`` (the timeline's lane keys),
        async tracks, CPU lanes and thread-state strips."""
        keys = list(keys or [])
        m = self.model
        cpus = [k[1] for k in keys if k[0] == "cpu"]
        pids = [k[1] for k in keys if k[0] == "async"]
        state_tids = [int(m.cols.threads_tid[k[1]]) for k in keys if k[0] == "state"]
        self.rows = aggregate(m, t0, t1, threads) if threads else []
        self.async_rows = async_by_name(m, t0, t1, pids) if pids else []
        self.cpu_threads = cpu_by_thread(m, t0, t1, cpus) if cpus else []
        self.cpu_processes = cpu_by_process(m, t0, t1, cpus) if cpus else []
        self.states = states_by_state(m, t0, t1, state_tids) if state_tids else []
        parts = []
        if threads or not keys:
            parts.append(f"{sum(r['count'] for r in self.rows)} slices on {len(threads)} tracks")
        if pids:
            parts.append(f"{sum(r['count'] for r in self.async_rows)} async spans on {len(pids)} tracks")
        if cpus:
            cpu_ns = sum(r["total"] for r in self.cpu_threads)
            parts.append(f"{format_ns(cpu_ns)} CPU time of {len(self.cpu_threads)} threads on {len(cpus)} CPUs")
        if state_tids:
            parts.append(f"thread states of {len(state_tids)} threads")
        self.title.setText(
            f"{', '.join(parts)}, {format_ns(t0 - m.start_ns)} .. {format_ns(t1 - m.start_ns)} ({format_ns(t1 - t0)})"
        )

        def times(r: dict, *names: str) -> list[tuple[str, float]]:
            return [(format_ns(int(r[n])), float(r[n])) for n in names]

        _fill(self.table, [[(r["name"], None), (str(r["count"]), r["count"]),
                            *times(r, "total", "wall_total", "self_total", "avg", "min", "max")]
                           for r in self.rows], 2)  # fmt: skip
        _fill(self.async_table, [[(r["name"], None), (str(r["count"]), r["count"]), *times(r, "total", "wall_total")]
                                 for r in self.async_rows], 2)  # fmt: skip
        _fill(self.cpu_thread_table, [[(r["name"], None), (m.process_name(r["pid"]) if r["pid"] else "?", None),
                                       (str(r["count"]), r["count"]), *times(r, "total", "wall_total")]
                                      for r in self.cpu_threads], 3)  # fmt: skip
        _fill(self.cpu_process_table, [[(r["name"], None), (str(r["threads"]), r["threads"]),
                                        (str(r["count"]), r["count"]), *times(r, "total", "wall_total")]
                                       for r in self.cpu_processes], 3)  # fmt: skip
        _fill(self.state_table, [[(r["state"], None), (str(r["count"]), r["count"]), *times(r, "total", "wall_total")]
                                 for r in self.states], 2)  # fmt: skip
        # the first tab with something in it
        for table, rows in ((self.table, self.rows), (self.async_table, self.async_rows),
                            (self.cpu_thread_table, self.cpu_threads), (self.state_table, self.states)):  # fmt: skip
            if rows:
                self.tabs.setCurrentWidget(table)
                break
