"""The Info tab: a trace's vital statistics and problems (Perfetto's "Info and stats"), and its blobs.

The statistics are :func:`fxscope.core.trace.stats.trace_stats` rows, grouped by section in a tree; rows that are
problems (reader warnings, ends without a begin, flow events bound to nothing, ...) are highlighted and
also gathered in a "Warnings" group at the top. The blob records are listed beside them; a double click
(or "Save blob as…" in the context menu) writes a blob's payload, read from the trace file, to a file.
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QSplitter,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.timeline.details import format_ns
from fxscope.core.atomic_file import write_atomic
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.stats import READER_WARNINGS, WARNING, Stat, blob_type_name, model_stats, read_blob
from fxscope.core.units import format_bytes

WARNING_BACKGROUND = QColor("#ffe3a3")  # amber


def format_value(stat: Stat) -> str:
    """How a statistic reads in the table: counts with thousands separators, times and sizes in units."""
    v = stat.value
    if not isinstance(v, int) or isinstance(v, bool):
        return str(v)
    if stat.unit == "ns":
        return f"{v:,} ns"
    if stat.unit == "duration":
        return f"{format_ns(v)}  ({v:,} ns)" if v >= 1000 else format_ns(v)
    if stat.unit == "bytes":
        return format_bytes(v)
    return f"{v:,}"


class InfoPanel(QSplitter):
    """Statistics (left) and blobs (right) of one trace. ``reportRequested(index)``: a crash report's row was
    activated."""

    reportRequested = Signal(int)

    STAT_COLUMNS = ("Statistic", "Value")
    BLOB_COLUMNS = ("Blob", "Type", "Size", "Time", "Thread")

    #: the tree's only row while the statistics are built in the background (a large trace)
    PENDING_TEXT = "Statistics: computing…"

    def __init__(self, model: TraceModel, parent: QWidget | None = None, pending: bool = False) -> None:
        """``pending``: the statistics are being built in the background (a large trace's, after its first
        frame: :mod:`fxscope.app.deferred_tables`); :meth:`show_stats` fills the tree when they are in."""
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.model = model
        self.pending = pending
        self.stats = [] if pending else model_stats(model)
        self.warnings = [s for s in self.stats if s.severity == WARNING]
        self.warning_icon = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(self.STAT_COLUMNS)
        self.tree.setAlternatingRowColors(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._stats_menu)
        self.tree.itemActivated.connect(self._report_activated)
        self._fill_stats()
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.addWidget(self.tree)

        blobs = model.cols.blobs
        self.blob_box = QWidget()
        layout = QVBoxLayout(self.blob_box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.blob_label = QLabel(f"Blobs ({len(blobs)}): double-click one to save its bytes")
        self.blob_table = QTreeWidget()
        self.blob_table.setHeaderLabels(self.BLOB_COLUMNS)
        self.blob_table.setRootIsDecorated(False)
        self.blob_table.setUniformRowHeights(True)
        self.blob_table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.blob_table.customContextMenuRequested.connect(self._blob_menu)
        self.blob_table.itemActivated.connect(
            lambda item, _col: self.save_blob_dialog(self._blob_index(item))
        )
        self._fill_blobs()
        self.blob_table.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.blob_label)
        layout.addWidget(self.blob_table)
        self.addWidget(self.blob_box)
        self.blob_box.setVisible(bool(blobs))
        self.setStretchFactor(0, 3)
        self.setStretchFactor(1, 2)

    # ------------------------------------------------------------------ statistics
    @property
    def warning_count(self) -> int:
        return len(self.warnings)

    def show_stats(self) -> None:
        """The statistics are built: the tree shows them (in place of :data:`PENDING_TEXT`)."""
        self.pending = False
        self.stats = model_stats(self.model)
        self.warnings = [s for s in self.stats if s.severity == WARNING]
        self.tree.clear()
        self._fill_stats()

    def show_failure(self, message: str) -> None:
        """The background build of the statistics failed: the tree says so."""
        self.pending = False
        self.tree.clear()
        QTreeWidgetItem(self.tree, [f"Statistics failed: {message}"])

    def _fill_stats(self) -> None:
        if self.pending:
            item = QTreeWidgetItem(self.tree, [self.PENDING_TEXT])
            item.setToolTip(0, "A large trace's flows and statistics are built in the background after its first frame")
            return
        bold = QFont(self.tree.font())
        bold.setBold(True)

        def section(title: str, value: str = "") -> QTreeWidgetItem:
            item = QTreeWidgetItem(self.tree, [title, value])
            item.setFont(0, bold)
            item.setFirstColumnSpanned(not value)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            return item

        if self.warnings:
            head = section("Warnings", f"{len(self.warnings)}")
            head.setIcon(0, self.warning_icon)
            for s in self.warnings:
                name = s.name if s.section == READER_WARNINGS else f"{s.section}: {s.name}"
                self._row(head, name, s)
        self._crash_reports(section)
        current: QTreeWidgetItem | None = None
        for s in self.stats:
            if s.section == READER_WARNINGS:  # shown in the Warnings group only
                continue
            if current is None or current.text(0) != s.section:
                current = section(s.section)
            self._row(current, s.name, s)
        self.tree.expandAll()

    #: crash reports listed by name in the Info tab (all are in the Crash reports tab)
    CRASH_ROWS = 50

    def _crash_reports(self, section) -> None:
        """A trace whose logs hold crash reports says so at the top: when, which thread, what signal."""
        from fxscope.core.reports.summary import summarize

        logs = self.model.logs
        if not logs.reports:
            return
        head = section("Crash reports", f"{len(logs.reports)}")
        head.setToolTip(0, "Symbolizer-markup crash reports in the log records: see the Crash reports tab, "
                           "or click a report's red mark on its thread's track")
        ts, threads = logs.report_marks()
        for i in range(min(len(logs.reports), self.CRASH_ROWS)):
            summary = summarize(logs.report_text_at(i).splitlines())
            thread = self.model.thread_name(int(threads[i])) if threads[i] >= 0 else "?"
            what = ", ".join(x for x in (f"signal {summary.signal}" if summary.signal else "",
                                         f"fault address {summary.fault_address}" if summary.fault_address else "",
                                         f"at {summary.module}" if summary.module else "") if x)  # fmt: skip
            row = QTreeWidgetItem(head, [f"{format_ns(int(ts[i]) - self.model.start_ns)}  {thread}", what or "—"])
            row.setData(0, Qt.ItemDataRole.UserRole, i)
            row.setToolTip(0, "Double-click to open this crash report")

    def _report_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        parent = item.parent()
        index = item.data(0, Qt.ItemDataRole.UserRole)
        if parent is not None and parent.text(0) == "Crash reports" and isinstance(index, int):
            self.reportRequested.emit(index)

    def _row(self, parent: QTreeWidgetItem, name: str, s: Stat) -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent, [name, format_value(s)])
        if s.severity == WARNING:
            item.setIcon(0, self.warning_icon)
            for col in range(2):
                item.setBackground(col, QBrush(WARNING_BACKGROUND))
                item.setForeground(col, QBrush(QColor("black")))  # readable on amber in a dark theme too
            item.setToolTip(1, f"{name}: {format_value(s)}")
        if s.note:
            item.setToolTip(0, s.note)
        return item

    def _stats_menu(self, pos) -> None:
        items = self.tree.selectedItems() or [i for i in [self.tree.itemAt(pos)] if i is not None]
        if not items:
            return
        menu = QMenu(self)
        menu.addAction("Copy", lambda: self.copy_rows(items))
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    def copy_rows(self, items: list[QTreeWidgetItem]) -> str:
        text = "\n".join(f"{i.text(0)}: {i.text(1)}" if i.text(1) else i.text(0) for i in items)
        QGuiApplication.clipboard().setText(text)
        return text

    # ------------------------------------------------------------------ blobs
    def _fill_blobs(self) -> None:
        m = self.model
        for i, b in enumerate(m.cols.blobs):
            when = f"{format_ns(b.ts - m.start_ns)}  ({b.ts} ns)" if b.ts is not None else ""
            thread = m.thread_name(b.thread) if b.thread >= 0 else ""
            item = QTreeWidgetItem(
                self.blob_table, [b.name or "(unnamed)", blob_type_name(b), f"{b.size:,}", when, thread]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, i)
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setToolTip(0, f"payload at byte offset {b.offset:,} of the trace file")

    @staticmethod
    def _blob_index(item: QTreeWidgetItem) -> int:
        return int(item.data(0, Qt.ItemDataRole.UserRole))

    def _blob_menu(self, pos) -> None:
        item = self.blob_table.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        menu.addAction("Save blob as…", lambda: self.save_blob_dialog(self._blob_index(item)))
        menu.exec(self.blob_table.viewport().mapToGlobal(pos))

    def default_blob_name(self, index: int) -> str:
        b = self.model.cols.blobs[index]
        stem = re.sub(r"[^\w.-]+", "_", b.name).strip("._") or f"blob{index}"
        return f"{stem}.bin"

    def save_blob_dialog(self, index: int) -> None:
        start = Path(self.model.cols.path).resolve().parent / self.default_blob_name(index)
        path, _ = QFileDialog.getSaveFileName(self, "Save blob as", str(start), "All files (*)")
        if path:
            self.save_blob(index, path)

    def save_blob(self, index: int, path: str) -> bool:
        """Write blob ``index``'s payload (read from the trace file) to ``path`` atomically."""
        b = self.model.cols.blobs[index]
        try:
            write_atomic(path, read_blob(self.model.cols.path, b))
        except OSError as exc:
            box = QMessageBox(
                QMessageBox.Icon.Warning, "fxscope", f"Cannot save blob {b.name!r}:\n{exc}", parent=self
            )
            box.setModal(False)
            box.open()
            return False
        return True
