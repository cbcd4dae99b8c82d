"""The log panel under the timeline: every log record (time, thread, message) in a lazily drawn table.

Records with symbolizer markup are shown symbolized and highlighted; activating one (double click or Enter)
asks for the crash view of its report (``crashRequested(text)``). Rows are never Python objects: the model
answers Qt's data() calls from :class:`core.trace.logs.LogTable`'s columns.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QHeaderView, QTableView, QWidget

from app.timeline.details import format_ns
from core.trace.logs import LogTable
from core.trace.model import TraceModel


class LogModel(QAbstractTableModel):
    HEADERS = ("Time", "Thread", "Message")

    def __init__(self, model: TraceModel, logs: LogTable, resolver: Callable[[], object]) -> None:
        super().__init__()
        self.model, self.logs, self._resolver_factory = model, logs, resolver
        self._resolver = None
        self._highlight = QColor("#fff4c2")

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.logs)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else 3

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802 - Qt API
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return None

    def resolver(self):
        if self._resolver is None:
            self._resolver = self._resolver_factory()
        return self._resolver

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        row, col = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return format_ns(int(self.logs.ts[row]) - self.model.start_ns)
            if col == 1:
                thread = int(self.logs.thread[row])
                return self.model.thread_name(thread) if thread >= 0 else "?"
            if self.logs.markup[row]:
                # context elements (module, mmap) print nothing of their own: show them as written
                return self.logs.symbolized(row, self.resolver()) or self.logs.text(row)
            return self.logs.text(row)
        if role == Qt.ItemDataRole.BackgroundRole and self.logs.markup[row]:
            return self._highlight
        if role == Qt.ItemDataRole.ToolTipRole and col == 2 and self.logs.markup[row]:
            shown = self.logs.symbolized(row, self.resolver()) or self.logs.text(row)
            return f"{shown}\n\nCrash report (symbolizer markup): double-click to open it in the crash view"
        return None


class LogPanel(QTableView):
    """``crashRequested(text)``: the crash report around an activated markup record."""

    crashRequested = Signal(str)
    #: a record was clicked: its timestamp (ns), for the timeline to show
    timeSelected = Signal(object)  # a Python int: a Qt int is 32 bits, a boot-stamped time is more

    def __init__(self, model: TraceModel, resolver: Callable[[], object], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.logs = model.logs
        self.log_model = LogModel(model, self.logs, resolver)
        self.setModel(self.log_model)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        # fixed widths from the font, not ResizeToContents: that asks the model for every row's text
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        metrics = self.fontMetrics()
        header.resizeSection(0, metrics.horizontalAdvance("000.000 ms") + 16)
        header.resizeSection(1, metrics.horizontalAdvance("compositor-worker-0 1010") + 16)
        self.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        mono = QFont("Monospace")
        mono.setStyleHint(QFont.StyleHint.TypeWriter)
        self.setFont(mono)
        self.activated.connect(lambda index: self.open_crash(index.row()))
        self.clicked.connect(lambda index: self.timeSelected.emit(int(self.logs.ts[index.row()])))

    def show_row(self, row: int) -> None:
        """Select record ``row`` and scroll it into the middle (a log mark was clicked on the timeline)."""
        if not 0 <= row < len(self.logs):
            return
        index = self.log_model.index(row, 0)
        self.selectRow(row)
        self.scrollTo(index, QTableView.ScrollHint.PositionAtCenter)

    def open_crash(self, row: int) -> bool:
        if not 0 <= row < len(self.logs) or not self.logs.markup[row]:
            return False
        self.crashRequested.emit(self.logs.report_text(row))
        return True
