"""The crash view's Disassembly tab: the instructions around a frame's address, the one at it marked (the
faulting instruction for frame 0, the call for the others), source lines interleaved where the module's
line table has them. Disassembled with capstone from the module's ELF file (binary or debug file)."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QTextBrowser, QWidget

from fxscope.core.symbolize.crash_report import BacktraceEntry, CrashReport


class DisassemblyPane(QTextBrowser):
    """``rows``: what is shown (:class:`fxscope.core.symbolize.disassembly` rows; [] when nothing is)."""

    def __init__(self, font: QFont, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(font)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.NoWrap)
        self.rows: list = []

    def show_nothing(self) -> None:
        self.rows = []
        self.setPlainText("Select a frame to see its instructions.")

    def show_entry(self, entry: BacktraceEntry, report: CrashReport, resolver,
                   source_line: Callable[[str, int], str | None]) -> None:  # fmt: skip
        """Instructions around ``entry``'s address in its module (found through ``resolver``);
        ``source_line(recorded_path, line)`` gives a source line's text, or None."""
        from fxscope.core.symbolize.disassembly import DisassemblyError, disassemble

        module = next((m for m in report.modules if m.name == entry.module), None)
        info = resolver.elf_info(module.build_id) if module is not None else None
        self.rows = []
        if info is None:
            why = report.explain(entry, None) if module else "the address is in no module"
            self.setPlainText(f"No disassembly: the module's binary is not available ({why}).")
            return

        def line_at(address: int):
            try:
                frames = resolver.code(module.build_id, address)
            except Exception:  # noqa: BLE001 - a lookup failure leaves the row without source
                return None
            return (frames[0].file, frames[0].line) if frames and frames[0].file else None

        try:
            rows = disassemble(info, entry.relative, line_at=line_at, source_line=source_line)
        except (DisassemblyError, OSError) as exc:
            self.setPlainText(f"No disassembly: {exc}")
            return
        self.rows = rows
        what = "faulting instruction" if entry.number == 0 else "call (return address - 1)"
        out = [f"<b>{html.escape(entry.module)}</b> at +0x{entry.relative:x} ({html.escape(info.path)})"]
        for row in rows:
            if row.address < 0:
                where = f"{Path(row.file).name}:{row.line}"
                out.append(f'<span style="color:#6a737d">{html.escape(where):>28}  {html.escape(row.text)}</span>')
                continue
            text = f"  0x{row.address:08x}  {row.raw:<30} {html.escape(row.text)}"
            if row.marked:
                text = (f'<span style="background:#ffb3b3;font-weight:bold">▶{text[1:]}</span>'
                        f'<span style="color:#c0392b">   ◀ {what}</span>')  # fmt: skip
            out.append(text)
        self.setHtml("<pre style='margin:4px'>" + "\n".join(out) + "</pre>")
