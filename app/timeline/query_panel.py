"""The Query tab: SQL over the trace (core/sql) with a history, a results grid and a link to the timeline.

A query runs on a worker thread (building a table for the first time, or a long aggregation, must not
freeze the window) and can be cancelled (DuckDB's interrupt). A result row with ``ts`` and ``dur`` selects
its slice on the timeline when it names one (its ``id`` in ``slice``, or its thread by ``utid`` /
``track_id``), else zooms the timeline to its span. A result with ``ts`` and ``dur`` (slices, labelled by
``name``) or ``ts`` and ``value`` (a counter) can be added to the timeline as a debug track, Perfetto's
"add debug track" (the columns are turned into a track by :mod:`fxscope.core.sql.debug_track`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from fxscope.core.sql.debug_track import SLICES, DebugTrackError, debug_track, debug_track_kind
from fxscope.core.trace.model import TraceModel

if TYPE_CHECKING:  # (imported by a query's first result: the window holds no pyarrow, ~9 MB, before one)
    import pyarrow as pa

EXAMPLE = "SELECT name, count(*) AS n, sum(dur) AS total_ns\nFROM slice\nGROUP BY name\nORDER BY total_ns DESC"
HISTORY_MAX = 50


class ArrowTableModel(QAbstractTableModel):
    """A read-only Qt model over an Arrow table: cells are converted when the view asks for them (a
    result of millions of rows costs nothing until it is scrolled to)."""

    def __init__(self, table: pa.Table | None = None) -> None:
        super().__init__()
        self.table = table  # (None: no result yet)

    def set_table(self, table: pa.Table) -> None:
        self.beginResetModel()
        self.table = table.combine_chunks()
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() or self.table is None else self.table.num_rows

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() or self.table is None else self.table.num_columns

    def value(self, row: int, column: int):
        return self.table.column(column)[row].as_py()

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            v = self.value(index.row(), index.column())
            return "NULL" if v is None else str(v)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            import pyarrow as pa

            t = self.table.schema.field(index.column()).type
            if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.table.column_names[section] if section < self.columnCount() else None
        return str(section + 1)


class _Runner(QObject):
    """Runs one query (or builds one debug track) on a worker thread and reports back through queued
    signals."""

    finished = Signal(object, float)  # pa.Table, seconds
    failed = Signal(str)
    track_built = Signal(object)  # DebugSlices or DebugCounter
    track_failed = Signal(str)


class QueryPanel(QWidget):
    """Editor, history, Run/Cancel, results; ``sliceRequested(row)``, ``itemRequested(kind, row)`` and
    ``rangeRequested(t0, t1)`` and ``debugTrackRequested(track)`` go to the timeline."""

    sliceRequested = Signal(int)
    itemRequested = Signal(str, int)  # ("async", row of the model's async spans)
    rangeRequested = Signal(object, object)  # ns (64-bit)
    debugTrackRequested = Signal(object)  # DebugSlices or DebugCounter

    def __init__(self, model: TraceModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._engine = None
        self._thread: threading.Thread | None = None
        self.history = QComboBox()
        self.history.setPlaceholderText("History")
        self.history.activated.connect(lambda i: self.editor.setPlainText(self.history.itemData(i)))
        self.editor = QPlainTextEdit(EXAMPLE)
        self.editor.setFont(QFont("monospace"))
        self.run_button = QPushButton("Run (Ctrl+Enter)")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.debug_button = QPushButton("Add as debug track")
        self.debug_button.setToolTip("Draw the result on the timeline: ts and dur (and name) as slices, "
                                     "ts and value as a counter")  # fmt: skip
        self.debug_button.setEnabled(False)
        self.debug_button.clicked.connect(self.add_debug_track)
        self._sql_of_result = self._running_sql = ""
        self._debug_count = 0
        self.status = QLabel("Tables: slice, thread, process, counter, sched, thread_state, args, log, ... "
                             "(Perfetto's names; docs/sql.md)")  # fmt: skip
        self.results = ArrowTableModel()
        self.view = QTableView()
        self.view.setModel(self.results)
        self.view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.clicked.connect(lambda index: self.show_row(index.row()))
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self.editor, activated=self.run)
        bar = QHBoxLayout()
        bar.addWidget(self.history, 1)
        bar.addWidget(self.run_button)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.debug_button)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(bar)
        top_layout.addWidget(self.editor)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(top)
        split.addWidget(self.view)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        self._runner = _Runner()
        self._runner.finished.connect(self._finished)
        self._runner.failed.connect(self._failed)
        self._runner.track_built.connect(self._track_built)
        self._runner.track_failed.connect(self._track_failed)
        self._building = False  # a debug track is being built (until its signal arrives here)

    @property
    def engine(self):
        if self._engine is None:
            from fxscope.core.sql.engine import TraceSQL

            self._engine = TraceSQL(self.model)
        return self._engine

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def run(self, sql: str | None = None) -> None:
        """Run ``sql`` (default: the editor's text) on a worker thread."""
        if self.running:
            return
        sql = (sql if isinstance(sql, str) else self.editor.toPlainText()).strip()
        if not sql:
            return
        self._remember(sql)
        self._running_sql = sql
        self.run_button.setEnabled(False)
        self.debug_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText("Running...")
        engine, runner = self.engine, self._runner

        def work() -> None:
            import time

            from fxscope.core.sql.engine import QueryError

            t0 = time.perf_counter()
            try:
                table = engine.query(sql)
            except QueryError as exc:
                runner.failed.emit(str(exc))
            except Exception as exc:  # noqa: BLE001 - a bad table build must not kill the window
                runner.failed.emit(f"{type(exc).__name__}: {exc}")
            else:
                runner.finished.emit(table, time.perf_counter() - t0)

        self._thread = threading.Thread(target=work, name="fxscope-query", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        if self.running:
            self.engine.interrupt()
            self.status.setText("Cancelling...")

    def _remember(self, sql: str) -> None:
        i = self.history.findData(sql)
        if i >= 0:
            self.history.removeItem(i)
        self.history.insertItem(0, " ".join(sql.split())[:120], sql)
        while self.history.count() > HISTORY_MAX:
            self.history.removeItem(self.history.count() - 1)
        self.history.setCurrentIndex(-1)

    def _done(self) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def _finished(self, table: pa.Table, seconds: float) -> None:
        self._done()
        self.results.set_table(table)
        self._sql_of_result = self._running_sql
        self.view.resizeColumnsToContents()
        self.debug_button.setEnabled(debug_track_kind(table.column_names) is not None and table.num_rows > 0)
        self.status.setText(f"{table.num_rows} rows in {seconds * 1000:.0f} ms")

    def _failed(self, message: str) -> None:
        self._done()
        self.debug_button.setEnabled(False)
        self.status.setText(f"Error: {message}")

    @property
    def building(self) -> bool:
        """Whether a debug track is being built (cleared when its result or failure reaches the UI thread;
        the worker may still be winding down)."""
        return self._building

    def add_debug_track(self) -> None:
        """The current result as a debug track (``debugTrackRequested``), named after its query, built on a
        worker thread (laying out millions of overlapping rows takes seconds); a result that makes none says
        why in the status line."""
        if self.building:
            return
        self._debug_count += 1
        title = f"{self._debug_count}: {' '.join(self._sql_of_result.split())}"[:80]
        table, runner, start, end = self.results.table, self._runner, self.model.start_ns, self.model.end_ns
        self.debug_button.setEnabled(False)
        self.status.setText(f"Building the debug track of {table.num_rows} rows...")

        def work() -> None:
            try:
                track = debug_track(table, title, start, end)
            except DebugTrackError as exc:
                runner.track_failed.emit(str(exc))
            except Exception as exc:  # noqa: BLE001 - a result the track cannot take must not kill the window
                runner.track_failed.emit(f"{type(exc).__name__}: {exc}")
            else:
                runner.track_built.emit(track)

        self._building = True
        threading.Thread(target=work, name="fxscope-debug-track", daemon=True).start()

    def _track_built(self, track) -> None:
        self._building = False
        self.debug_button.setEnabled(not self.running)
        dropped = f" ({track.dropped} rows without ts or {'dur' if track.kind == SLICES else 'value'} left out)"
        self.status.setText(f"Debug track added: {len(track)} {track.kind}" + (dropped if track.dropped else ""))
        self.debugTrackRequested.emit(track)

    def _track_failed(self, message: str) -> None:
        self._building = False
        self.debug_button.setEnabled(not self.running)
        self.status.setText(f"Not a debug track: {message}")

    # ------------------------------------------------------------------ to the timeline
    def show_row(self, row: int) -> None:
        """Select the result row's slice on the timeline, or zoom to its span (see the module docstring)."""
        names = self.results.table.column_names if self.results.table is not None else []
        if "ts" not in names:
            return
        get = lambda c: self.results.value(row, names.index(c)) if c in names else None  # noqa: E731
        ts, dur = get("ts"), get("dur")
        if ts is None:
            return
        sid = get("id")
        spans, n = self.model.async_spans, len(self.model.slices)
        if sid is not None and n <= int(sid) < n + len(spans) and int(spans.start[int(sid) - n]) == int(ts):
            self.itemRequested.emit("async", int(sid) - n)  # slice ids past the thread slices: async spans
            return
        slice_row = self._slice_row(int(ts), None if dur is None else int(dur), get("id"), get("utid"), get("track_id"))
        if slice_row >= 0:
            self.sliceRequested.emit(slice_row)
        else:
            self.rangeRequested.emit(int(ts), int(ts) + max(int(dur or 0), 1))

    def _slice_row(self, ts: int, dur: int | None, sid, utid, track_id) -> int:
        s = self.model.slices
        if sid is not None and 0 <= int(sid) < len(s) and int(s.ts[int(sid)]) == ts:
            return int(sid)
        thread = utid if utid is not None else track_id
        if thread is None or not 0 <= int(thread) < len(self.model.cols.threads_tid):
            return -1
        track = next((t for t in self.model.tracks if t.thread == int(thread)), None)
        if track is None:
            return -1
        lo = track.lo + int(np.searchsorted(s.ts[track.lo : track.hi], ts, "left"))
        hi = track.lo + int(np.searchsorted(s.ts[track.lo : track.hi], ts, "right"))
        for r in range(lo, hi):
            if dur is None or int(s.dur[r]) == dur:
                return r
        return -1
