"""The crash view's tables beside the backtrace: registers (annotated with what they point into), modules
(whether symbols were found, and why not), the dumpfiles the report names, and the symbolizer's
diagnostics. Each is filled from a :class:`~fxscope.core.symbolize.crash_report.CrashReport` and holds no
state of its own."""

from __future__ import annotations

from PySide6.QtWidgets import QHeaderView, QPlainTextEdit, QTableWidget, QTableWidgetItem, QWidget

from fxscope.app.crash.log_html import strip_ansi
from fxscope.app.theme import is_dark, tinted
from fxscope.core.symbolize.crash_report import CrashReport
from fxscope.core.symbolize.dumpfiles import DumpTarget

NO_DIAGNOSTICS = "No diagnostics: every element of this report was understood and every frame looked up."


def read_only_table(headers: list[str], parent: QWidget | None = None) -> QTableWidget:
    """A table of text cells sized to their contents, the last column stretched, no row numbers."""
    table = QTableWidget(0, len(headers), parent)
    table.setHorizontalHeaderLabels(headers)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    return table


def modules_table() -> QTableWidget:
    return read_only_table(["Module", "Build ID", "Mappings", "Symbols"])


def registers_table() -> QTableWidget:
    return read_only_table(["Register", "Value", "Points into"])


def dumps_table() -> QTableWidget:
    return read_only_table(["Type", "Name", "Handler", "Module context"])


def diagnostics_pane() -> QPlainTextEdit:
    pane = QPlainTextEdit()
    pane.setReadOnly(True)
    pane.setToolTip("What the symbolizing filter reported for this report (as llvm-symbolizer prints it on stderr)")
    return pane


def fill_modules(table: QTableWidget, report: CrashReport) -> None:
    """A row per module: name, build ID, its mappings, "found"/"not found" (the tooltip says where we looked)."""
    table.setRowCount(len(report.modules))
    for row, m in enumerate(report.modules):
        maps = [f"[0x{x.addr:x}-0x{x.addr + x.size - 1:x}]({x.mode})" for x in report.mmaps if x.module is m]
        known = "found" if report.symbols_found.get(m.build_id) else "not found"
        for col, text in enumerate([m.name, m.build_id.hex(), " ".join(maps), known]):
            table.setItem(row, col, QTableWidgetItem(text))
        if m.build_id in report.missing:
            table.item(row, 3).setToolTip(report.missing[m.build_id])


def fill_registers(table: QTableWidget, report: CrashReport) -> None:
    """A row per register; the ones pointing into a module are tinted and say where."""
    table.setRowCount(len(report.registers))
    for row, reg in enumerate(report.registers):
        for col, text in enumerate([reg.name, f"0x{reg.value:x}", reg.annotation]):
            item = QTableWidgetItem(text)
            if reg.annotation:  # a register that points into a module: tinted, its text in the tint's colour
                background, text = tinted("markup", is_dark(table.palette()))
                item.setBackground(background)
                item.setForeground(text)
            table.setItem(row, col, item)


def fill_dumps(table: QTableWidget, targets: list[DumpTarget]) -> None:
    table.setRowCount(len(targets))
    for row, target in enumerate(targets):
        texts = [target.dump.kind, target.dump.name, target.status, "; ".join(target.modules)]
        for col, text in enumerate(texts):
            table.setItem(row, col, QTableWidgetItem(text))


def fill_diagnostics(pane: QPlainTextEdit, report: CrashReport) -> None:
    pane.setPlainText(strip_ansi(report.diagnostics) or NO_DIAGNOSTICS)
