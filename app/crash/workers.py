"""Splitting and symbolizing crash logs off the UI thread.

A 100,000-line log with 1,800 reports takes a while to read, split and summarize (each summary resolves a
frame or two); the UI thread only receives finished pieces: the split log first (the list appears), then
summaries in batches (rows fill in). Each worker makes its own resolver: resolvers cache open files and are
not shared between threads.
"""

from __future__ import annotations

import atexit
import gc
import threading
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QThread, Signal

from fxscope.core.reports.crash_log import CrashLog

#: summaries sent to the UI thread at once (one signal each, so the list fills in without a stall)
SUMMARY_BATCH = 200
#: workers running: they belong to no widget (a view may close while one runs) and are stopped when the
#: application quits or the interpreter exits (a QThread destroyed while running aborts the process)
_LIVE: set[QThread] = set()
_hooked = False


def start_worker(worker: QThread) -> None:
    """Start ``worker``, kept alive until it finishes; connect its signals to bound methods of the
    receiving widget (Qt drops them when the widget is gone)."""
    global _hooked
    _LIVE.add(worker)
    worker.finished.connect(lambda: _LIVE.discard(worker))
    if not _hooked:  # the event loop's end, or the interpreter's (a screenshot never runs the loop)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(stop_all)
        atexit.register(stop_all)
        _hooked = True
    worker.start()


def stop_all(timeout_ms: int = 30_000) -> None:
    """Cancel every running worker and wait for it (the application is quitting)."""
    for worker in list(_LIVE):
        cancel = getattr(worker, "cancel", None)
        if cancel is not None:
            cancel()
    for worker in list(_LIVE):
        worker.wait(timeout_ms)


class LogSplitter(QThread):
    """Reads and splits a crash log, then summarizes its reports."""

    split = Signal(object, list)  # the CrashLog, each report's time as the log prints it
    summarized = Signal(int, list)  # first report index, its summaries
    failed = Signal(str)

    def __init__(self, path: str, resolver_factory: Callable[[], object], parent=None) -> None:
        super().__init__(parent)
        self.path = path
        self.resolver_factory = resolver_factory
        self._cancel = threading.Event()
        #: set when the first report is on screen: summarizing waits for it, so that it does not compete
        #: with symbolizing and showing that report for the interpreter
        self.first_shown = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()
        self.first_shown.set()

    def run(self) -> None:
        # the split makes a string per line (100,000s, no reference cycles); the collections they would
        # trigger walk every object of the process with the GIL held and stall the UI thread ~100 ms
        gc.disable()
        try:
            log = CrashLog.from_path(self.path)
        except (OSError, ValueError) as exc:
            self.failed.emit(str(exc))
            return
        finally:
            gc.enable()
        self.split.emit(log, [log.report_time(i) for i in range(len(log.reports))])
        self.first_shown.wait(10.0)
        try:
            resolver = self.resolver_factory()
        except Exception:  # noqa: BLE001 - no symbols is a list of raw frames, not a failure
            resolver = None
        batch: list = []
        first = 0
        for i in range(len(log.reports)):
            if self._cancel.is_set():
                return
            batch.append(log.summary(i, resolver))
            if len(batch) == SUMMARY_BATCH:
                self.summarized.emit(first, batch)
                first, batch = i + 1, []
        if batch:
            self.summarized.emit(first, batch)


class ReportBuilder(QThread):
    """Symbolizes one report (``build_report``) in a thread; ``built(token, report)`` when done."""

    built = Signal(int, object)
    failed = Signal(int, str)

    def __init__(self, token: int, text: str, resolver_factory: Callable[[], object], parent=None) -> None:
        super().__init__(parent)
        self.token, self.text, self.resolver_factory = token, text, resolver_factory

    def run(self) -> None:
        from fxscope.core.symbolize.crash_report import build_report

        try:
            report = build_report(self.text, self.resolver_factory(), color=True)
        except Exception as exc:  # noqa: BLE001 - a report that cannot be built is a message in the view
            self.failed.emit(self.token, str(exc))
            return
        self.built.emit(self.token, report)


class ReportSummarizer(QThread):
    """Summaries of ``count`` reports whose texts ``text_of(i)`` gives (a trace's reports), in a thread:
    first without symbols (quick), then with them."""

    summarized = Signal(int, list)

    def __init__(self, count: int, text_of: Callable[[int], str], resolver_factory: Callable[[], object],
                 parent=None) -> None:  # fmt: skip
        super().__init__(parent)
        self.count, self.text_of, self.resolver_factory = count, text_of, resolver_factory
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def run(self) -> None:
        from fxscope.core.reports.summary import summarize

        texts = [self.text_of(i).splitlines() for i in range(self.count)]
        for resolver in (None, "symbols"):
            if resolver == "symbols":
                try:
                    resolver = self.resolver_factory()
                except Exception:  # noqa: BLE001 - no symbols: the raw frames stay
                    return
            for first in range(0, self.count, SUMMARY_BATCH):
                if self._cancel.is_set():
                    return
                chunk = texts[first : first + SUMMARY_BATCH]
                self.summarized.emit(first, [summarize(t, resolver) for t in chunk])
