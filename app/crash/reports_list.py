"""The reports of a log or trace as a table (time, signal, fault address, thread, top frame, module).

Rows are answered from lists (a summary per report, filled in as the background worker delivers them), so
a log with thousands of reports lists at once and the rows fill in afterwards; one click opens one report.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import QHeaderView, QTableView, QWidget

from fxscope.core.reports.summary import ReportSummary


class ReportsModel(QAbstractTableModel):
    HEADERS = ("#", "Time", "Signal", "Fault address", "Thread", "Top frame", "Module", "Notes")

    def __init__(self) -> None:
        super().__init__()
        self.times: list[str] = []
        self.summaries: list[ReportSummary | None] = []
        self.notes: list[str] = []

    def set_reports(self, times: list[str], notes: list[str]) -> None:
        self.beginResetModel()
        self.times, self.notes = list(times), list(notes)
        self.summaries = [None] * len(times)
        self.endResetModel()

    def set_summaries(self, first: int, summaries: list[ReportSummary]) -> None:
        last = min(first + len(summaries), len(self.summaries))
        self.summaries[first:last] = summaries[: last - first]
        if last > first:
            self.dataChanged.emit(self.index(first, 2), self.index(last - 1, len(self.HEADERS) - 1))

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self.times)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return None

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        row, col = index.row(), index.column()
        if col == 0:
            return str(row + 1)
        if col == 1:
            return self.times[row]
        if col == 7:
            return self.notes[row]
        s = self.summaries[row]
        if s is None:
            return "…"
        return (s.signal, s.fault_address, s.thread, s.top_frame, s.module)[col - 2]


class ReportsList(QTableView):
    """``reportChosen(index)``: a row was clicked (or activated with the keyboard)."""

    reportChosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.reports_model = ReportsModel()
        self.setModel(self.reports_model)
        self.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.setWordWrap(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        metrics = self.fontMetrics()
        # (a thread is its name and koid: a trace's are as long as "compositor-worker-0 1010")
        for col, sample in enumerate(("0000", "0.000000 s", "11 (SEGV)", "0x7f5cdd5de020", "compositor-worker-0 1010",
                                      "payload_weight", "libdemo.so+0x1130")):  # fmt: skip
            header.resizeSection(col, metrics.horizontalAdvance(sample) + 18)
        self.clicked.connect(lambda index: self.reportChosen.emit(index.row()))
        self.activated.connect(lambda index: self.reportChosen.emit(index.row()))

    def select_report(self, index: int) -> None:
        if 0 <= index < self.reports_model.rowCount():
            self.selectRow(index)
