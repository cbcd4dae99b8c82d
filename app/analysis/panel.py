"""The Analysis tab of a trace: what to analyse (the whole trace, the area selected with Ctrl+drag, a process
or a thread), a flame graph / bottom-up tree / butterfly of it, the per-name statistics table, the duration
histogram of the selected name and the slices of a clicked frame or histogram bar (a click shows one on the
timeline; a clicked frame's slices are all outlined there, the earliest selected). Results come from
:class:`~fxscope.app.analysis.worker.AnalysisRunner`, off the UI thread."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.analysis.flame_view import FlameGraphView
from fxscope.app.analysis.histogram_view import HistogramView
from fxscope.app.analysis.worker import AnalysisResult, AnalysisRunner
from fxscope.app.timeline.details import format_ns
from fxscope.core.analysis.call_tree import CallTree, bottom_up, callees, callers
from fxscope.core.analysis.selection import Area, name_text
from fxscope.core.analysis.stats import duration_histogram

MODES = ("Flame graph (top-down)", "Bottom-up", "Callers of the selected name", "Callees of the selected name")
STAT_COLUMNS = ("Name", "Count", "Total", "Self", "Min", "p50", "p90", "p99", "Max")
#: threads offered as scopes at most (a trace with thousands: Ctrl+drag over their tracks instead)
MAX_SCOPES = 2000
#: slices listed at most (the list says how many more there are)
MAX_LISTED = 2000


class _NumberItem(QTableWidgetItem):
    def __init__(self, text: str, value: float) -> None:
        super().__init__(text)
        self.value = value

    def __lt__(self, other) -> bool:
        return self.value < getattr(other, "value", 0)


class AnalysisPanel(QWidget):
    """See the module docstring. ``sliceRequested(row)``: show this slice on the timeline;
    ``slicesHighlighted(rows)``: outline these slices on the timeline (a clicked frame's; empty: none)."""

    sliceRequested = Signal(int)
    slicesHighlighted = Signal(object)  # int64 slice rows

    def __init__(self, model, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.result: AnalysisResult | None = None
        self.butterfly_name = -1
        self.shown_tree: CallTree | None = None
        self.pending = False
        self.runner = AnalysisRunner(model, self)
        self.runner.finished.connect(self._show_result)
        self.runner.failed.connect(lambda m: self.status.setText(f"Analysis failed: {m}"))

        self.scope = QComboBox()
        self.scope.addItem("Whole trace", ("all",))
        listed = 0
        for group in model.processes:  # per process and thread (at most MAX_SCOPES threads listed)
            self.scope.addItem(f"Process {group.pid} {group.name}", ("process", group.pid))
            for track in group.tracks[: max(MAX_SCOPES - listed, 0)]:
                self.scope.addItem(f"    Thread {track.tid} {track.name}", ("thread", track.thread))
            listed += len(group.tracks)
        self.scope.currentIndexChanged.connect(lambda _i: self.recompute())
        self.mode = QComboBox()
        self.mode.addItems(MODES)
        self.mode.currentIndexChanged.connect(lambda _i: self._show_tree())
        self.search = QLineEdit()
        self.search.setPlaceholderText("Highlight frames by name")
        self.search.setClearButtonEnabled(True)
        self.status = QLabel("")
        bar = QHBoxLayout()
        for w in (QLabel("Analyse:"), self.scope, self.mode, self.search, self.status):
            bar.addWidget(w)
        bar.setStretch(3, 1)

        self.flame = FlameGraphView()
        self.flame.frameClicked.connect(self._frame_clicked)
        self.search.textChanged.connect(self.flame.set_search)
        self.table = QTableWidget(0, len(STAT_COLUMNS))
        self.table.setHorizontalHeaderLabels(STAT_COLUMNS)
        self.table.verticalHeader().setVisible(False)
        # rows of the text's height (the style's default is ~1.6 lines): more names in the bottom panel's height
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._stats_row_selected)
        self.histogram = HistogramView()
        self.histogram.setMinimumHeight(80)  # (beside the slices, under the table: its bars still 46 px high)
        self.histogram.binClicked.connect(self._bin_clicked)
        self.slices = QListWidget()
        self.slices.itemClicked.connect(self._slice_clicked)
        # the table over the selected name's histogram beside its listed slices: stacked three high in the
        # bottom panel's ~250 px, the table showed a single row at 1600x1000
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.addWidget(self.histogram)
        lower.addWidget(self.slices)
        lower.setSizes([300, 300])
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.table)
        right.addWidget(lower)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)
        right.setSizes([300, 200])
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.flame)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(bar)
        layout.addWidget(split, 1)
        split.setSizes([550, 450])  # (the table's nine columns in the right part at 1600 px)

    # ------------------------------------------------------------------ what to analyse
    def set_area(self, t0: int, t1: int, threads: list) -> None:
        """An area selected on the timeline becomes the scope (first entry after "Whole trace")."""
        label = (f"Area: {format_ns(t1 - t0)} on {len(threads)} tracks")
        data = ("area", int(t0), int(t1), tuple(int(t) for t in threads))
        if self.scope.itemData(1) and self.scope.itemData(1)[0] == "area":
            self.scope.setItemText(1, label)
            self.scope.setItemData(1, data)
            if self.scope.currentIndex() == 1:
                self.recompute()
                return
        else:
            self.scope.insertItem(1, label, data)
        self.scope.setCurrentIndex(1)

    def analyse(self, kind: str, key: int) -> None:
        """Make one thread (``kind`` "thread", ``key`` its reader thread index) or one process ("process",
        its pid) the scope: the timeline's "Analyse thread/process" menu entries. A thread past the
        :data:`MAX_SCOPES` listed gets an entry of its own."""
        data = (kind, int(key))
        index = self.scope.findData(data)
        if index < 0:
            if kind == "thread":
                label = f"    Thread {self.model.thread_name(int(key))}"
            else:
                label = f"Process {key} {self.model.process_name(int(key))}"
            self.scope.addItem(label, data)
            index = self.scope.count() - 1
        if index == self.scope.currentIndex():
            self.recompute()
        else:
            self.scope.setCurrentIndex(index)

    def area(self) -> Area:
        data = self.scope.currentData() or ("all",)
        if data[0] == "area":
            return Area(data[1], data[2], data[3])
        if data[0] == "process":
            return Area(threads=tuple(t.thread for g in self.model.processes if g.pid == data[1] for t in g.tracks))
        if data[0] == "thread":
            return Area(threads=(data[1],))
        return Area()

    def recompute(self) -> None:
        """Start the analysis of the current scope (when the panel is shown; else when it next is)."""
        self.slicesHighlighted.emit(np.zeros(0, np.int64))  # the old frame's slices are no longer shown
        if not self.isVisible():
            self.pending = True
            return
        self.pending = False
        self.status.setText("Computing…")
        self.runner.request(self.area())

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.pending or self.result is None:
            self.pending = True
            self.recompute()

    # ------------------------------------------------------------------ results
    def _show_result(self, result: AnalysisResult) -> None:
        self.result = result
        stats = result.stats
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(stats))
        for i, r in enumerate(stats.records()):
            cells = [QTableWidgetItem(r["name"]), _NumberItem(str(r["count"]), r["count"])]
            cells[0].setData(Qt.ItemDataRole.UserRole, int(stats.name_id[i]))
            for key in ("total_ns", "self_ns", "min_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns"):
                cells.append(_NumberItem(format_ns(r[key]), r[key]))
            for col, item in enumerate(cells):
                self.table.setItem(i, col, item)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)  # largest total first, as computed
        if self.butterfly_name < 0 and len(stats):
            self.butterfly_name = int(stats.name_id[0])
        self._show_tree()

    def _show_tree(self) -> None:
        if self.result is None:
            return
        td = self.result.tree
        mode = self.mode.currentIndex()
        tree = td
        if mode == 1:
            tree = bottom_up(td)
        elif mode == 2:
            tree = callers(td, self.butterfly_name)
        elif mode == 3:
            tree = callees(td, self.butterfly_name)
        self.shown_tree = tree
        self.flame.set_tree(self.model, tree)
        stats = self.result.stats
        text = f"{int(stats.count.sum())} slices, {len(stats)} names, {len(td)} call paths"
        if mode >= 2:
            text += f"; {'callers' if mode == 2 else 'callees'} of {name_text(self.model, self.butterfly_name)}"
        self.status.setText(text)

    def select_name(self, name_id: int) -> None:
        """Make ``name_id`` the butterfly's name and show its histogram."""
        self.butterfly_name = name_id
        if self.mode.currentIndex() >= 2:
            self._show_tree()
        if self.result is None:
            return
        stats = self.result.stats
        hit = np.flatnonzero(stats.name_id == name_id)
        if not len(hit):
            self.histogram.set_histogram(None)
            return
        i = int(hit[0])
        rows = self._name_rows(name_id)
        marks = {"p50": int(stats.p50_ns[i]), "p90": int(stats.p90_ns[i]), "p99": int(stats.p99_ns[i])}
        self.histogram.set_histogram(duration_histogram(self.model.slices.dur[rows]),
                                     f"{stats.names[i]}: {len(rows)} slices", marks)  # fmt: skip

    def _name_rows(self, name_id: int) -> np.ndarray:
        ar = self.result.rows
        rows = ar.rows[ar.hit]
        return rows[np.asarray(self.model.slices.name[rows]) == name_id]

    def _stats_row_selected(self) -> None:
        items = self.table.selectedItems()
        if items:
            name_item = self.table.item(items[0].row(), 0)
            self.select_name(int(name_item.data(Qt.ItemDataRole.UserRole)))

    def _bin_clicked(self, lo: float, hi: float) -> None:
        rows = self._name_rows(self.butterfly_name)
        dur = self.model.slices.dur[rows]
        self.list_slices(rows[(dur >= lo) & (dur < hi)])

    def _frame_clicked(self, node: int) -> None:
        tree = self.shown_tree
        if tree is None:
            return
        self.select_name(int(tree.name[node]))
        if self.mode.currentIndex() == 0:  # a top-down frame stands for exactly its slices
            rows = tree.slice_rows(node)
        else:
            rows = self._name_rows(int(tree.name[node]))
        self.list_slices(rows)
        self.slicesHighlighted.emit(rows)
        if len(rows):  # the earliest of them selected (its neighbours in time are the next ones outlined)
            self.sliceRequested.emit(int(rows[np.argmin(self.model.slices.ts[rows])]))

    def _slice_clicked(self, item: QListWidgetItem) -> None:
        row = item.data(Qt.ItemDataRole.UserRole)
        if row is not None:  # (not the "and N more" line)
            self.sliceRequested.emit(int(row))

    def list_slices(self, rows: np.ndarray) -> None:
        """List ``rows``, longest first (at most :data:`MAX_LISTED`); a click shows one on the timeline."""
        s = self.model.slices
        rows = np.asarray(rows, np.int64)
        rows = rows[np.lexsort((rows, -s.dur[rows]))]
        self.slices.clear()
        for row in rows[:MAX_LISTED].tolist():
            text = (f"{format_ns(int(s.dur[row]))}  {name_text(self.model, int(s.name[row]))}  at "
                    f"{format_ns(int(s.ts[row]) - self.model.start_ns)}  thread {self.model.thread_name(int(s.thread[row]))}")  # fmt: skip
            item = QListWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, row)
            self.slices.addItem(item)
        if len(rows) > MAX_LISTED:
            self.slices.addItem(f"… and {len(rows) - MAX_LISTED} more")
