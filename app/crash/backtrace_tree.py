"""The crash view's backtrace: one row per frame in llvm-symbolizer's order, inline frames included.

A backtrace entry (``{{{bt:N:...}}}``) resolves to a chain of frames: the functions inlined at the address,
innermost first, then the real frame. The tree shows them as ``#0.1``, ``#0.2``, ``#0`` (inline frames in
italics), so the first row is the crash site, as in the symbolized text; each row knows its label, frame and
entry, which is what the log's links, the source pane and "Copy frame" need.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from fxscope.core.symbolize.crash_report import BacktraceEntry, CrashReport
from fxscope.core.symbolize.resolver import Frame

#: a row: its label ("0.1"), its frame (None: unsymbolized) and the backtrace entry it belongs to
Row = tuple[str, Frame | None, BacktraceEntry]


def location_text(frame: Frame) -> str:
    """``file.c:12:5`` (the column when known)."""
    return f"{Path(frame.file).name}:{frame.line}" + (f":{frame.column}" if frame.column else "")


class BacktraceTree(QTreeWidget):
    """The rows of a report's backtrace; ``rows[i]`` is what row ``i`` shows (its item's UserRole is ``i``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(["#", "Address", "Function", "Location", "Module"])
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.copy_frame_action = QAction("Copy frame", self)
        self.copy_frame_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_frame_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.addAction(self.copy_frame_action)
        self.rows: list[Row] = []

    def fill(self, report: CrashReport) -> None:
        self.clear()
        self.rows = []
        italic = QFont()
        italic.setItalic(True)
        for entry in report.backtrace:
            # llvm-symbolizer's order, innermost first: #0.1, #0.2 (inlined), then #0 (the real frame) — the
            # crash site is the first row; inline frames are in italics and say where they are inlined
            frames = entry.frames or [None]
            for k, frame in enumerate(frames):
                inline = k < len(frames) - 1
                label = f"{entry.number}.{k + 1}" if inline else str(entry.number)
                item = QTreeWidgetItem()
                self._fill_item(item, label, entry.address, frame, entry.module, entry.relative)
                why = report.explain(entry, frame)
                if why:
                    item.setToolTip(2 if frame is None else 3, why)
                if inline:
                    item.setFont(0, italic)
                    item.setFont(2, italic)
                    item.setToolTip(2, f"inlined into {frames[k + 1].function if frames[k + 1] else '??'}")
                item.setData(0, Qt.ItemDataRole.UserRole, len(self.rows))
                self.rows.append((label, frame, entry))
                self.addTopLevelItem(item)
        for col in range(5):
            self.resizeColumnToContents(col)

    @staticmethod
    def _fill_item(item: QTreeWidgetItem, number: str, address: int, frame: Frame | None, module: str,
                   rel: int) -> None:  # fmt: skip
        location = location_text(frame) if frame is not None and frame.file else ""
        for col, text in enumerate([number, f"0x{address:x}", frame.function if frame else "??", location,
                                    f"{module}+0x{rel:x}"]):
            item.setText(col, text)
        if frame is not None and frame.file:
            item.setToolTip(3, frame.file)

    def items(self) -> list[QTreeWidgetItem]:
        return [self.topLevelItem(i) for i in range(self.topLevelItemCount())]

    def select(self, index: int) -> None:
        items = self.items()
        if 0 <= index < len(items):
            self.setCurrentItem(items[index])

    def select_label(self, label: str) -> None:
        """Select the row labelled ``label`` ("0.1"), as a ``frame:`` link of the log asks."""
        for i, (shown, _frame, _entry) in enumerate(self.rows):
            if shown == label:
                self.select(i)
                return

    def current_index(self) -> int | None:
        item = self.currentItem()
        return None if item is None else item.data(0, Qt.ItemDataRole.UserRole)

    def chain_html(self, index: int) -> str:
        """For a row of an entry with inline frames: the entry's frames, innermost to outermost, each with
        where it was inlined (links select the others); "" for an entry of one frame."""
        _label, frame, entry = self.rows[index]
        if len(entry.frames) < 2:
            return ""
        first = index - next(k for k, f in enumerate(entry.frames) if f is frame)
        parts = []
        for k, f in enumerate(entry.frames):
            shown = self.rows[first + k][0]
            text = html.escape(f"#{shown} {f.function} {location_text(f) if f.file else '??'}")
            parts.append(f"<b>{text}</b>" if f is frame else f'<a href="frame:{shown}">{text}</a>')
        return "Inlined: " + "  ←  ".join(parts)

    def frame_text(self, index: int, report_text: str) -> str:
        """Row ``index`` as the symbolized report prints it (``#0.1  0x... fn file:line:col (mod+0x..)``),
        from ``report_text`` (plain); built from the row when the text lacks it."""
        if not 0 <= index < len(self.rows):
            return ""
        label, frame, entry = self.rows[index]
        for line in report_text.splitlines():
            stripped = line.strip()
            if stripped.startswith(f"#{label} "):
                return stripped
        name = frame.function if frame else "??"
        return f"#{label} 0x{entry.address:x} {name} ({entry.module}+0x{entry.relative:x})"
