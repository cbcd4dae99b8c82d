"""Crash view: the symbolized log, a backtrace you can click, modules, registers, and the source at a frame.

The model is :class:`fxscope.core.symbolize.crash_report.CrashReport`; this widget lays out the panes that
show it and ties them together (a frame chosen in the tree or the log shows its source, disassembly and
inline chain), loads logs (in worker threads for big ones), and copies or saves the report. The panes are
their own modules: :mod:`~fxscope.app.crash.backtrace_tree`, :mod:`~fxscope.app.crash.report_tabs`,
:mod:`~fxscope.app.crash.disassembly_pane`, :mod:`~fxscope.app.crash.source_pane` and
:mod:`~fxscope.app.crash.log_html`. Source paths recorded at build time (``/build/...``) are mapped through
"source roots" (prefix -> local directory), and the log's own directory and its parents are tried as roots
too, so a checkout next to the log just works.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.crash import report_tabs
from fxscope.app.crash.backtrace_tree import BacktraceTree
from fxscope.app.crash.disassembly_pane import DisassemblyPane
from fxscope.app.crash.editor import NO_EDITOR, editor_command
from fxscope.app.crash.log_html import report_html, strip_ansi
from fxscope.app.crash.reports_list import ReportsList
from fxscope.app.crash.source_pane import CHighlighter, SourceEdit, map_source, source_line
from fxscope.app.theme import is_dark
from fxscope.core.reports.crash_log import CrashLog
from fxscope.core.symbolize.crash_report import CrashReport, build_report
from fxscope.core.symbolize.dumpfiles import DumpTarget, resolve_dumps
from fxscope.core.symbolize.resolver import SymbolFileResolver


def default_resolver(
    log_path: Path, debug_dirs: list[str] | None = None, debuginfod_urls: list[str] | None = None,
    cache_dir: str = "",
) -> SymbolFileResolver:
    """Symbols from the user's directories plus the log's own directory (a .build-id tree next to it), and
    debuginfod servers (``None``: ``$DEBUGINFOD_URLS``); ``cache_dir`` "" is the default cache."""
    from fxscope.core.symbols.store import SymbolStore

    dirs = [Path(d) for d in (debug_dirs or [])] + [log_path.parent]
    store = SymbolStore(dirs, debuginfod_urls, Path(cache_dir) if cache_dir else None)
    return SymbolFileResolver(debug_file_directories=dirs, store=store)


class CrashView(QWidget):
    """A crash log: its reports listed (when there are several), one report shown at a time.
    ``frameSelected(index)`` is emitted when a backtrace row is chosen."""

    frameSelected = Signal(int)
    #: "Show on timeline" for a report from a trace's log records
    showOnTimeline = Signal()
    #: the reports list is filled (background loads: the split is done)
    reportsListed = Signal(int)
    #: a report was symbolized and shown
    reportShown = Signal(int)
    #: a dumpfile trigger whose file is an FXT trace was opened: the path, for the main window's timeline
    openTrace = Signal(str)

    def __init__(self, parent: QWidget | None = None, source_roots: list[tuple[str, str]] | None = None,
                 debug_dirs: list[str] | None = None, dump_dirs: list[str] | None = None,
                 debuginfod_urls: list[str] | None = None, cache_dir: str = "") -> None:
        super().__init__(parent)
        from fxscope.app.crash.workers import ViewWorkers

        #: background work of this view: cancelled when the view is closed or destroyed
        self._workers = ViewWorkers(self)
        self.cache_dir = cache_dir
        self.source_roots = list(source_roots or [])
        self.debug_dirs = list(debug_dirs or [])
        self.dump_dirs = list(dump_dirs or [])
        self.debuginfod_urls = debuginfod_urls
        self.dump_targets: list[DumpTarget] = []
        self.report: CrashReport | None = None
        self.crash_log: CrashLog | None = None
        self.report_index = -1
        self.log_path = Path(".")
        self.current_source: tuple[Path, int] | None = None
        self._token = 0
        self._splitter = None  # the worker reading the log shown now
        self._background = False

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()
        self.timeline_button = QPushButton("Show on timeline")
        self.timeline_button.setToolTip("Select the report's time and thread in the trace it came from")
        self.timeline_button.clicked.connect(self.showOnTimeline.emit)
        self.timeline_button.hide()
        self.copy_button = QPushButton("Copy report")
        self.copy_button.setToolTip("Copy the symbolized report as text")
        self.copy_button.clicked.connect(self.copy_report)
        self.save_button = QPushButton("Save report…")
        self.save_button.clicked.connect(lambda: self.save_report())
        self.reports_list = ReportsList()
        self.reports_list.reportChosen.connect(self.open_report)
        self.reports_list.hide()

        self.log = QTextBrowser()
        self.log.setOpenLinks(False)
        self.log.anchorClicked.connect(self._anchor)
        mono = QFont("Monospace")
        mono.setStyleHint(QFont.StyleHint.TypeWriter)
        self.log.setFont(mono)

        self.backtrace = BacktraceTree()
        self.backtrace.currentItemChanged.connect(self._frame_changed)
        self.backtrace.copy_frame_action.triggered.connect(self.copy_frame)
        self.modules = report_tabs.modules_table()
        self.registers = report_tabs.registers_table()
        side = QTabWidget()
        side.addTab(self.backtrace, "Backtrace")
        side.addTab(self.registers, "Registers")
        side.addTab(self.modules, "Modules")
        self.dumps = report_tabs.dumps_table()
        self.dumps.cellDoubleClicked.connect(lambda row, _col: self.open_dump(row))
        side.addTab(self.dumps, "Dumps")
        self.diagnostics = report_tabs.diagnostics_pane()
        side.addTab(self.diagnostics, "Diagnostics")
        self.disassembly = DisassemblyPane(mono)
        self.disassembly_index = side.addTab(self.disassembly, "Disassembly")
        side.currentChanged.connect(lambda _i: self._update_disassembly())
        self.side = side
        self._ui_resolver: SymbolFileResolver | None = None  # for disassembly on the UI thread (small lookups)

        self.source_title = QLabel("Click a frame to see its source.")
        self.source_title.setWordWrap(True)
        self.source_title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button = QPushButton("Open in editor")
        self.open_button.setEnabled(False)
        self.open_button.clicked.connect(self.open_in_editor)
        self.source = SourceEdit()
        self.source.setFont(mono)
        self.source.highlighter = CHighlighter(self.source.document(), dark=is_dark(self.source.palette()))
        #: the selected entry's inline chain: each frame and where it was inlined (links select the frame)
        self.call_chain = QLabel()
        self.call_chain.setWordWrap(True)
        self.call_chain.linkActivated.connect(lambda link: self._anchor(QUrl(link)))
        self.call_chain.hide()
        source_box = QWidget()
        sl = QVBoxLayout(source_box)
        sl.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        bar.addWidget(self.source_title, 1)
        bar.addWidget(self.open_button)
        sl.addLayout(bar)
        sl.addWidget(self.call_chain)
        sl.addWidget(self.source)
        self.editor = ""  # the editor command template (Preferences); "": $VISUAL/$EDITOR
        self.current_column = 0

        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(side)
        right.addWidget(source_box)
        right.setStretchFactor(0, 2)
        right.setStretchFactor(1, 3)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.reports_list)
        left.addWidget(self.log)
        left.setStretchFactor(0, 1)
        left.setStretchFactor(1, 3)
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(left)
        main.addWidget(right)
        main.setStretchFactor(0, 1)
        main.setStretchFactor(1, 1)
        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 0)
        top.addWidget(self.message, 1)
        top.addWidget(self.timeline_button)
        top.addWidget(self.copy_button)
        top.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(main)

    # ------------------------------------------------------------------ loading
    def open_log(self, path: str | os.PathLike[str], background: bool = False) -> None:
        """Open a log file: its reports are listed and the first is shown. ``background``: read, split and
        summarize in a thread (``reportsListed`` when the list is there), symbolize the shown report in one."""
        self.log_path = Path(path).resolve()
        self._clear()
        self._background = background
        if background:
            from fxscope.app.crash.workers import LogSplitter

            worker = LogSplitter(str(self.log_path), self.resolver_factory())
            self._splitter = worker
            worker.split.connect(self._split_done)
            worker.summarized.connect(self._summaries)
            worker.failed.connect(self._read_failed)
            self._start(worker)
            return
        log = CrashLog.from_path(self.log_path)
        self._set_log(log)
        resolver = self._resolver()
        self.reports_list.reports_model.set_summaries(0, [log.summary(i, resolver) for i in range(len(log.reports))])

    def _split_done(self, log: CrashLog, times: list[str]) -> None:
        if self.sender() is self._splitter:  # not a log opened before this one
            self._set_log(log, background=True, times=times)

    def _summaries(self, first: int, summaries: list) -> None:
        if self.sender() is self._splitter:
            self.reports_list.reports_model.set_summaries(first, summaries)

    def _read_failed(self, message: str) -> None:
        self._say(f"Cannot read {self.log_path}: {message}")

    def _build_failed(self, _token: int, message: str) -> None:
        self._say(f"Cannot symbolize this report: {message}")

    def _start(self, worker) -> None:
        self._workers.start(worker)

    def wait_for_workers(self, timeout_ms: int = 60_000) -> None:
        """Block until the background work started so far is done (tests, screenshots, closing)."""
        self._workers.wait(timeout_ms)
        QApplication.processEvents()

    def _clear(self) -> None:
        self._workers.cancel_all()  # the log shown before: its list and report are not wanted any more
        self._splitter = None
        self._token += 1
        self._ui_resolver = None
        self.crash_log, self.report, self.report_index = None, None, -1
        self.reports_list.reports_model.set_reports([], [])
        self.reports_list.hide()
        self.message.hide()
        self.copy_button.setEnabled(False)
        self.save_button.setEnabled(False)

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def _set_log(self, log: CrashLog, background: bool = False, times: list[str] | None = None) -> None:
        self.crash_log = log
        notes = ["; ".join(span.warnings) for span in log.reports]
        if times is None:
            times = [log.report_time(i) for i in range(len(log.reports))]
        self.reports_list.reports_model.set_reports(times, notes)
        self.reports_list.setVisible(len(log.reports) > 1)
        self.reportsListed.emit(len(log.reports))
        if not log.reports:
            # a log without symbolizer markup: say so, and show the log as it is
            self.report = None
            self.log.setPlainText(log.text_of(0, min(log.line_count, 20000)))
            self._say(f"{self.log_path.name}: no crash report in this log (no symbolizer markup such as "
                      "{{{bt:...}}} or {{{module:...}}}); it is shown as plain text.")
            self._fill_tables(CrashReport("", ""))
            self._no_source("")
            return
        if len(log.reports) > 1:
            self._say(f"{len(log.reports)} crash reports in {self.log_path.name}: click one to open it.")
        self.open_report(0, background)

    def open_report(self, index: int, background: bool | None = None) -> None:
        """Show report ``index`` of the open log (symbolized now, or in a thread with ``background``; None:
        as the log was opened)."""
        if self.crash_log is None or not 0 <= index < len(self.crash_log.reports):
            return
        if background is None:
            background = self._background
        self.report_index = index
        self.reports_list.select_report(index)
        text = self.crash_log.report_text(index)
        self._token += 1
        if background:
            from fxscope.app.crash.workers import ReportBuilder

            for older in self._workers:  # a report chosen before this one is not wanted any more
                if isinstance(older, ReportBuilder):
                    older.cancel()
            worker = ReportBuilder(self._token, text, self.resolver_factory())
            worker.built.connect(self._built)
            worker.failed.connect(self._build_failed)
            self._start(worker)
            return
        self._built(self._token, build_report(text, self._resolver(), color=True))

    def _built(self, token: int, report: CrashReport) -> None:
        if token != self._token:  # another report was chosen meanwhile
            return
        self.report = report
        self._show()
        self.copy_button.setEnabled(True)
        self.save_button.setEnabled(True)
        self.reportShown.emit(self.report_index)
        for worker in self._workers:  # the list's summaries may go on now
            if hasattr(worker, "first_shown"):
                QTimer.singleShot(50, worker.first_shown.set)  # after the report's first paint

    def open_text(self, text: str, base_dir: str | os.PathLike[str], background: bool = False) -> None:
        """A crash report that is not a file of its own (log records of a trace); ``base_dir`` stands for the
        log's directory (symbols, sources and dumps are looked for there); ``background``: symbolized in a
        thread (``reportShown`` when it is on screen)."""
        self.log_path = Path(base_dir).resolve() / "log"
        self._clear()
        self._background = background
        self._set_log(CrashLog.from_text(text), background)

    def _resolver(self) -> SymbolFileResolver:
        return self.resolver_factory()()

    def resolver_factory(self) -> Callable[[], SymbolFileResolver]:
        """A resolver factory of plain data (the view's current settings), safe to call from a worker
        thread: it reads nothing of the view, which may be gone by then."""
        urls = list(self.debuginfod_urls) if self.debuginfod_urls is not None else None
        return partial(default_resolver, self.log_path, list(self.debug_dirs), urls, self.cache_dir)

    def open_dump(self, index: int) -> bool:
        """Open dump ``index`` with its handler (a trace: ``openTrace``); False when nothing can open it."""
        if not 0 <= index < len(self.dump_targets):
            return False
        target = self.dump_targets[index]
        if target.handler is not None and target.handler.name == "trace":
            self.openTrace.emit(str(target.path))
            return True
        self.source_title.setText(f"dump {target.dump.kind}:{target.dump.name}: {target.status}")
        return False

    def _show(self) -> None:
        report = self.report
        assert report is not None
        self.log.setHtml(report_html(report.text))
        self._fill_tables(report)
        if self.backtrace.rows:
            self.select_frame(0)

    def _fill_tables(self, report: CrashReport) -> None:
        self.dump_targets = resolve_dumps(report, self.log_path.parent, self.dump_dirs)
        self.backtrace.fill(report)
        report_tabs.fill_modules(self.modules, report)
        report_tabs.fill_diagnostics(self.diagnostics, report)
        report_tabs.fill_registers(self.registers, report)
        report_tabs.fill_dumps(self.dumps, self.dump_targets)

    # ------------------------------------------------------------------ selection and source
    @property
    def disassembly_lines(self) -> list:
        """The rows the Disassembly tab shows ([] when it shows none)."""
        return self.disassembly.rows

    def frame_items(self) -> list:
        return self.backtrace.items()

    def select_frame(self, index: int) -> None:
        self.backtrace.select(index)

    def _anchor(self, url) -> None:
        text = url.toString()
        if text.startswith("dump:"):
            self.open_dump(int(text.split(":", 1)[1]))
        elif text.startswith("frame:"):
            self.backtrace.select_label(text.split(":", 1)[1])

    def _frame_changed(self, current, _previous) -> None:
        if current is None:
            return
        index = current.data(0, Qt.ItemDataRole.UserRole)
        _label, frame, entry = self.backtrace.rows[index]
        self.frameSelected.emit(index)
        self._update_disassembly()
        if frame is None or not frame.file:
            self.call_chain.hide()
            why = self.report.explain(entry, frame) if self.report is not None else ""
            self._no_source(f"Not symbolized: {why}." if why else "No source location for this frame.")
            return
        self._show_chain(index)
        local = map_source(frame.file, self.source_roots, self.log_path.parent)
        if local is None:
            self._no_source(f"{frame.file}:{frame.line} — source not found (add a source root in Preferences).")
            return
        others = [f.line for f in entry.frames if f is not frame and f.file == frame.file]
        self.show_source(local, frame.line, frame.file, frame.column, others)

    def _show_chain(self, index: int) -> None:
        """For an entry with inline frames: innermost to outermost, each with where it was inlined."""
        chain = self.backtrace.chain_html(index)
        if not chain:
            self.call_chain.hide()
            return
        self.call_chain.setText(chain)
        self.call_chain.setToolTip("Each frame was inlined into the next one, at the next one's line")
        self.call_chain.show()

    def _update_disassembly(self) -> None:
        """The selected frame's instructions, when the Disassembly tab is showing."""
        if self.side.currentIndex() != self.disassembly_index:
            return
        index = self.backtrace.current_index()
        if index is None or self.report is None:
            self.disassembly.show_nothing()
            return
        self.show_disassembly(index)

    def show_disassembly(self, index: int) -> None:
        """Instructions around frame ``index``'s address, the one at it marked, source lines between."""
        if self._ui_resolver is None:
            self._ui_resolver = self._resolver()
        entry = self.backtrace.rows[index][2]
        self.disassembly.show_entry(entry, self.report, self._ui_resolver,
                                    partial(source_line, roots=self.source_roots, log_dir=self.log_path.parent))

    def refresh_source(self) -> None:
        """Show the selected frame's source again (after the source roots changed)."""
        self._frame_changed(self.backtrace.currentItem(), None)

    def _no_source(self, message: str) -> None:
        self.current_source = None
        self.source.setPlainText("")
        self.source.unmark()  # no line of the previous frame's source stays marked on the empty pane
        self.source_title.setText(message)
        self.open_button.setEnabled(False)

    def show_source(self, path: Path, line: int, recorded: str | None = None, column: int = 0,
                    call_sites: list[int] | None = None) -> None:
        """Show ``path`` with ``line`` (and ``column``) marked, ``call_sites`` (other frames' lines) tinted."""
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self._no_source(f"{path}: {exc.strerror}")
            return
        self.current_source = (path, line)
        self.current_column = column
        self.source.setPlainText(text)
        where = f"{recorded or path}:{line}" + (f":{column}" if column else "")
        self.source_title.setText(where + (f"  →  {path}" if recorded else ""))
        self.open_button.setEnabled(True)
        has_editor = editor_command(path, line, column, self.editor) is not None
        self.open_button.setToolTip(" ".join(editor_command(path, line, column, self.editor) or [])
                                    if has_editor else NO_EDITOR)  # fmt: skip
        self.source.mark(line, column, call_sites)

    def current_line_text(self) -> str:
        return self.source.textCursor().block().text()

    def open_in_editor(self) -> list[str] | None:
        """Open the shown source at its line in the editor; without one configured, say how to set it."""
        if self.current_source is None:
            return None
        path, line = self.current_source
        argv = editor_command(path, line, self.current_column, self.editor)
        if not argv:
            self._say(NO_EDITOR)
            return None
        try:
            subprocess.Popen(argv, start_new_session=True)
        except OSError as exc:
            self._say(f"Cannot start the editor ({' '.join(argv)}): {exc.strerror or exc}")
            return None
        return argv

    # ------------------------------------------------------------------ copy and save
    def report_plain_text(self) -> str:
        """The shown report, symbolized, without colour codes (what Copy and Save write)."""
        return strip_ansi(self.report.text) if self.report is not None else ""

    def copy_report(self) -> None:
        QApplication.clipboard().setText(self.report_plain_text())

    def frame_text(self, index: int) -> str:
        """Backtrace row ``index`` as the symbolized report prints it (``#0.1  0x... fn file:line:col (mod+0x..)``)."""
        return self.backtrace.frame_text(index, self.report_plain_text())

    def copy_frame(self) -> None:
        index = self.backtrace.current_index()
        if index is not None:
            QApplication.clipboard().setText(self.frame_text(index))

    def save_report(self, path: str | os.PathLike[str] | None = None) -> bool:
        """Write the symbolized report to ``path`` (asked for when None), atomically."""
        if self.report is None:
            return False
        if path is None:
            suggested = str(self.log_path.with_suffix(f".report{max(self.report_index, 0) + 1}.txt"))
            path, _ = QFileDialog.getSaveFileName(self, "Save symbolized report", suggested, "Text (*.txt);;All (*)")
            if not path:
                return False
        from fxscope.core.atomic_file import write_atomic

        try:
            write_atomic(path, self.report_plain_text().encode())
        except OSError as exc:
            self._say(f"Cannot save {path}: {exc.strerror or exc}")
            return False
        return True

    def closeEvent(self, event) -> None:
        """Background work for a closed view is cancelled (not waited for: the workers belong to no widget,
        their results go nowhere once the view is gone; a destroyed view cancels them too)."""
        self._workers.cancel_all()
        super().closeEvent(event)
