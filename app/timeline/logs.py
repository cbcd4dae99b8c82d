"""The log panel under the timeline: every log record (time, thread, message) in a lazily drawn table,
with a text filter and a severity filter; terminal colour escapes are stripped and a record of several
lines shows all of them.

Records with symbolizer markup are shown symbolized and highlighted; activating one (double click or Enter)
asks for the crash view of its report (``crashRequested(text)``). Rows are never Python objects: the model
answers Qt's data() calls from :class:`fxscope.core.trace.logs.LogTable`'s columns.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.theme import severity_colour, tinted
from fxscope.app.timeline.details import format_ns
from fxscope.core.trace.log_filter import SEVERITIES, filter_rows, log_facts, strip_ansi
from fxscope.core.trace.logs import LogTable
from fxscope.core.trace.model import TraceModel


class LogModel(QAbstractTableModel):
    """The records ``rows`` (ascending log rows: all of them, or those a filter keeps) as table rows."""

    HEADERS = ("Time", "Thread", "Message")
    #: a row's text turned out to have more lines than its height shows (a symbolized report line): (view
    #: row, lines); the panel makes the row taller
    rowLines = Signal(int, int)

    def __init__(self, model: TraceModel, logs: LogTable, resolver: Callable[[], object]) -> None:
        super().__init__()
        self.model, self.logs, self._resolver_factory = model, logs, resolver
        self._resolver = None
        self.facts = log_facts(logs)
        self.rows = np.arange(len(logs), dtype=np.int64)
        self._lines_told: set[int] = set()

    def set_rows(self, rows: np.ndarray) -> None:
        self.beginResetModel()
        self.rows = np.asarray(rows, np.int64)
        self._lines_told = set()
        self.endResetModel()

    def view_row(self, row: int) -> int:
        """The table row showing log row ``row``, or -1 when the filter hides it."""
        k = int(np.searchsorted(self.rows, row))
        return k if k < len(self.rows) and int(self.rows[k]) == row else -1

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else 3

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return None

    def resolver(self):
        if self._resolver is None:
            self._resolver = self._resolver_factory()
        return self._resolver

    def message(self, row: int) -> str:
        """What the Message column shows for log row ``row``: symbolized when it has markup, every line,
        terminal escapes stripped."""
        if self.logs.markup[row]:
            # context elements (module, mmap) print nothing of their own: show them as written
            text = self.logs.symbolized(row, self.resolver()) or self.logs.text(row)
        else:
            text = self.logs.text(row)
        return strip_ansi(text).rstrip("\n")

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        view_row, col = index.row(), index.column()
        if not 0 <= view_row < len(self.rows):
            return None
        row = int(self.rows[view_row])
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return format_ns(int(self.logs.ts[row]) - self.model.start_ns)
            if col == 1:
                thread = int(self.logs.thread[row])
                return self.model.thread_name(thread) if thread >= 0 else "?"
            text = self.message(row)
            lines = text.count("\n") + 1
            if lines > int(self.facts.lines[row]) and view_row not in self._lines_told:
                self._lines_told.add(view_row)
                self.rowLines.emit(view_row, lines)
            return text
        if role == Qt.ItemDataRole.BackgroundRole and self.logs.markup[row]:
            return tinted("markup")[0]  # (the theme's at each paint: a switch recolours the rows)
        if role == Qt.ItemDataRole.ForegroundRole and col == 2:
            return severity_colour(SEVERITIES[int(self.facts.severity[row])])
        if role == Qt.ItemDataRole.ToolTipRole and col == 2:
            shown = self.message(row)
            if self.logs.markup[row]:
                return f"{shown}\n\nCrash report (symbolizer markup): double-click to open it in the crash view"
            return shown if "\n" in shown or len(shown) > 100 else None
        return None


class LogPanel(QTableView):
    """``crashRequested(text)``: the crash report around an activated markup record."""

    crashRequested = Signal(str)
    #: a record was clicked: its timestamp (ns), for the timeline to show
    timeSelected = Signal(object)  # a Python int: a Qt int is 32 bits, a boot-stamped time is more
    #: a record was clicked: its row in the log table, for the timeline to select and bring into view
    recordSelected = Signal(int)

    def __init__(self, model: TraceModel, resolver: Callable[[], object], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.logs = model.logs
        self.log_model = LogModel(model, self.logs, resolver)
        self.setModel(self.log_model)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.line_height = self.fontMetrics().height()
        self.verticalHeader().setDefaultSectionSize(self.line_height + 4)
        # fixed widths from the font, not ResizeToContents: that asks the model for every row's text
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        mono = QFont("Monospace")
        mono.setStyleHint(QFont.StyleHint.TypeWriter)
        self.setFont(mono)
        metrics = QFontMetrics(mono)
        self.line_height = metrics.height()
        self.verticalHeader().setDefaultSectionSize(self.line_height + 4)
        header.resizeSection(0, metrics.horizontalAdvance("000.000 ms") + 16)
        # the thread column as wide as the longest name of a thread that logs (few distinct threads)
        threads = np.unique(np.asarray(self.logs.thread, np.int64)).tolist()
        names = [model.thread_name(t) if t >= 0 else "?" for t in threads[:2000]]
        widest = max((metrics.horizontalAdvance(n) for n in names), default=0)
        header.resizeSection(1, min(max(widest, metrics.horizontalAdvance("thread")) + 16, 480))
        self.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.activated.connect(lambda index: self.open_crash(self.log_row(index.row())))
        self.clicked.connect(self._clicked)
        self.log_model.rowLines.connect(self._fit_row, Qt.ConnectionType.QueuedConnection)
        self._fit_multiline_rows()

    def log_row(self, view_row: int) -> int:
        rows = self.log_model.rows
        return int(rows[view_row]) if 0 <= view_row < len(rows) else -1

    def _clicked(self, index) -> None:
        row = self.log_row(index.row())
        if row >= 0:
            self.timeSelected.emit(int(self.logs.ts[row]))
            self.recordSelected.emit(row)

    MAX_FITTED_ROWS = 5000  # rows made taller up front (a log of long reports fits the rest as they show)

    def _fit_multiline_rows(self) -> None:
        """Rows whose message has several lines are as tall as their lines (a symbolized report line
        is known when it is first shown: :meth:`_fit_row`)."""
        lines = self.log_model.facts.lines[self.log_model.rows]
        for view_row in np.flatnonzero(lines > 1)[: self.MAX_FITTED_ROWS].tolist():
            self._fit_row(view_row, int(lines[view_row]))

    def _fit_row(self, view_row: int, lines: int) -> None:
        if 0 <= view_row < self.log_model.rowCount():
            self.verticalHeader().resizeSection(view_row, lines * self.line_height + 4)

    def set_filter(self, text: str = "", min_severity: int = 0) -> None:
        """Show the records at ``min_severity`` or above whose message contains ``text``."""
        m = self.log_model
        m.set_rows(filter_rows(self.logs, m.facts, text, min_severity))
        self._fit_multiline_rows()

    def show_row(self, row: int) -> None:
        """Select record ``row`` and scroll it into the middle (a log mark was clicked on the timeline);
        a record the filter hides is shown by clearing the filter."""
        if not 0 <= row < len(self.logs):
            return
        view_row = self.log_model.view_row(row)
        if view_row < 0:
            self.filterCleared.emit()
            self.set_filter()
            view_row = row
        index = self.log_model.index(view_row, 0)
        self.selectRow(view_row)
        self.scrollTo(index, QTableView.ScrollHint.PositionAtCenter)

    #: :meth:`show_row` had to clear the filter to show a record
    filterCleared = Signal()

    def open_crash(self, row: int) -> bool:
        if not 0 <= row < len(self.logs) or not self.logs.markup[row]:
            return False
        self.crashRequested.emit(self.logs.report_text(row))
        return True


class LogsTab(QWidget):
    """The Logs tab: a filter box and a severity filter over the :class:`LogPanel`."""

    def __init__(self, panel: LogPanel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.panel = panel
        self.filter_box = QLineEdit()
        self.filter_box.setPlaceholderText("Filter log messages")
        self.filter_box.setClearButtonEnabled(True)
        self.severity = QComboBox()
        for name in SEVERITIES:
            self.severity.addItem(f"{name.capitalize()} and above" if name != "TRACE" else "All severities")
        self.count = QLabel("")
        row = QHBoxLayout()
        row.setContentsMargins(2, 2, 2, 2)
        row.addWidget(self.filter_box, 1)
        row.addWidget(self.severity)
        row.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(panel)
        self.filter_box.textChanged.connect(self._apply)
        self.severity.currentIndexChanged.connect(self._apply)
        panel.filterCleared.connect(self._cleared)
        self._apply()

    def _apply(self, *_args) -> None:
        self.panel.set_filter(self.filter_box.text(), self.severity.currentIndex())
        shown, total = self.panel.log_model.rowCount(), len(self.panel.logs)
        self.count.setText(f"{shown} of {total}" if shown != total else f"{total} records")

    def _cleared(self) -> None:
        for w in (self.filter_box, self.severity):
            w.blockSignals(True)
        self.filter_box.clear()
        self.severity.setCurrentIndex(0)
        for w in (self.filter_box, self.severity):
            w.blockSignals(False)
        self.count.setText(f"{len(self.panel.logs)} records")
