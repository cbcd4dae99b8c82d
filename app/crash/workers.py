"""Splitting and symbolizing crash logs off the UI thread.

A 100,000-line log with 1,800 reports takes a while to read, split and summarize (each summary resolves a
frame or two); the UI thread only receives finished pieces: the split log first (the list appears), then
summaries in batches (rows fill in). Each worker makes its own resolver: resolvers cache open files and are
not shared between threads.

Lifetimes. A worker outlives nothing it talks to:

- it holds plain data only (paths, texts, a resolver factory that is a plain function): it never calls into
  a widget from its thread, where the widget may be half destroyed by the UI thread at that moment
  (:class:`CrashWorker` refuses a factory bound to a QObject);
- its results go out as signals of the worker (a QThread object kept alive by
  :func:`fxscope.app.worker_threads.start_worker` until the thread ends) to bound methods of the view; Qt drops those connections, and the calls already queued, when the
  view is destroyed;
- a worker's signals are never connected to a bound method of a plain Python object: PySide (6.11) holds
  such a method weakly, and a queued call delivered after the object was freed runs on freed memory (a
  segfault in the event loop); lambdas hold what they call;
- the view's :class:`ViewWorkers` cancels its workers when the view is closed or destroyed (a tab closed,
  the window closed, a test's widget deleted); the workers check the flag between reports, and the flag
  reaches the symbol store, which cuts a debuginfod download in progress at once.

Handing over the interpreter: the UI thread calls into Python for every cell it paints, and each call
would wait out a whole switch interval (5 ms) behind a worker summarizing in a tight loop (a GIL convoy:
400-700 ms stalls while 1,800 reports were summarized). The summary loops yield the GIL every
:data:`YIELD_EVERY` summaries.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QThread, Signal

from fxscope.app.ui_thread_gc import collection_paused
from fxscope.app.worker_threads import _LIVE, QUIT_BUDGET_S, start_worker, stop_all  # noqa: F401 - re-exported
from fxscope.core.reports.crash_log import CrashLog

#: summaries sent to the UI thread at once (one signal each, so the list fills in without a stall)
SUMMARY_BATCH = 200
#: summaries between two hand-overs of the GIL to the UI thread (see the module's docstring; 0: never)
YIELD_EVERY = 1


def hand_over_gil() -> None:
    """Let a waiting thread (the UI's) take the interpreter now rather than at the end of the switch
    interval."""
    time.sleep(0)


class ViewWorkers:
    """The workers one view started: cancelled when the view closes (:meth:`cancel_all`) or is destroyed.

    This object holds no reference to the view (the view's ``destroyed`` signal calls it), so it can act
    while the view is going."""

    def __init__(self, owner: QObject) -> None:
        self._workers: list[CrashWorker] = []
        # lambdas, not bound methods of this object: PySide holds a plain object's bound method weakly, and a
        # queued call to it delivered after the object was freed crashes the process (PySide6 6.11)
        owner.destroyed.connect(lambda *_: self.cancel_all())

    def start(self, worker: CrashWorker) -> None:
        self._workers.append(worker)
        worker.finished.connect(lambda: self._forget_finished())
        start_worker(worker)

    def _forget_finished(self) -> None:
        self._workers = [w for w in self._workers if not w.isFinished()]

    def __iter__(self):
        return iter(list(self._workers))

    def cancel_all(self) -> None:
        for worker in list(self._workers):
            worker.cancel()

    def wait(self, timeout_ms: int = 60_000) -> bool:
        """Until every worker started so far has ended; False when one still runs after ``timeout_ms``."""
        end = time.monotonic() + timeout_ms / 1000
        return all(w.wait(max(int((end - time.monotonic()) * 1000), 0)) for w in list(self._workers))


class CrashWorker(QThread):
    """A worker's cancel flag, checked between reports and shared with its resolver's symbol store."""

    def __init__(self, resolver_factory: Callable[[], object]) -> None:
        super().__init__()
        if isinstance(getattr(resolver_factory, "__self__", None), QObject):
            raise TypeError("a worker's resolver factory must not be a method of a Qt object: the worker would "
                            "call into it from its thread while the UI thread may be destroying it")
        self.resolver_factory = resolver_factory
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def make_resolver(self):
        """A resolver of this thread; its store gives up when the worker is cancelled."""
        resolver = self.resolver_factory()
        store = getattr(resolver, "store", None)
        if store is not None:
            store.cancel = self._cancel
        return resolver


class LogSplitter(CrashWorker):
    """Reads and splits a crash log, then summarizes its reports."""

    split = Signal(object, list)  # the CrashLog, each report's time as the log prints it
    summarized = Signal(int, list)  # first report index, its summaries
    failed = Signal(str)

    def __init__(self, path: str, resolver_factory: Callable[[], object]) -> None:
        super().__init__(resolver_factory)
        self.path = path
        #: set when the first report is on screen: summarizing waits for it, so that it does not compete
        #: with symbolizing and showing that report for the interpreter
        self.first_shown = threading.Event()

    def cancel(self) -> None:
        super().cancel()
        self.first_shown.set()

    def run(self) -> None:
        # the split makes a string per line (100,000s, no reference cycles); the collections they would
        # trigger walk every object of the process with the GIL held and stall the UI thread ~100 ms
        try:
            with collection_paused():
                log = CrashLog.from_path(self.path)
        except (OSError, ValueError) as exc:
            self.failed.emit(str(exc))
            return
        if self.cancelled():
            return
        self.split.emit(log, [log.report_time(i) for i in range(len(log.reports))])
        self.first_shown.wait(10.0)
        if self.cancelled():
            return
        try:
            resolver = self.make_resolver()
        except Exception:  # noqa: BLE001 - no symbols is a list of raw frames, not a failure
            resolver = None
        batch: list = []
        first = 0
        for i in range(len(log.reports)):
            if self.cancelled():
                return
            batch.append(log.summary(i, resolver))
            if YIELD_EVERY and (i + 1) % YIELD_EVERY == 0:
                hand_over_gil()
            if len(batch) == SUMMARY_BATCH:
                self.summarized.emit(first, batch)
                first, batch = i + 1, []
        if batch:
            self.summarized.emit(first, batch)


class ReportBuilder(CrashWorker):
    """Symbolizes one report (``build_report``) in a thread; ``built(token, report)`` when done (not when
    cancelled)."""

    built = Signal(int, object)
    failed = Signal(int, str)

    def __init__(self, token: int, text: str, resolver_factory: Callable[[], object]) -> None:
        super().__init__(resolver_factory)
        self.token, self.text = token, text

    def run(self) -> None:
        from fxscope.core.symbolize.crash_report import build_report

        try:
            report = build_report(self.text, self.make_resolver(), color=True)
        except Exception as exc:  # noqa: BLE001 - a report that cannot be built is a message in the view
            if not self.cancelled():
                self.failed.emit(self.token, str(exc))
            return
        if not self.cancelled():
            self.built.emit(self.token, report)


class ReportSummarizer(CrashWorker):
    """Summaries of ``count`` reports whose texts ``text_of(i)`` gives (a trace's reports), in a thread:
    first without symbols (quick), then with them."""

    summarized = Signal(int, list)

    def __init__(self, count: int, text_of: Callable[[int], str], resolver_factory: Callable[[], object]) -> None:
        super().__init__(resolver_factory)
        self.count, self.text_of = count, text_of

    def run(self) -> None:
        from fxscope.core.reports.summary import summarize

        texts = [self.text_of(i).splitlines() for i in range(self.count)]
        for resolver in (None, "symbols"):
            if resolver == "symbols":
                try:
                    resolver = self.make_resolver()
                except Exception:  # noqa: BLE001 - no symbols: the raw frames stay
                    return
            for first in range(0, self.count, SUMMARY_BATCH):
                batch = []
                for k, text in enumerate(texts[first : first + SUMMARY_BATCH]):
                    if self.cancelled():
                        return
                    batch.append(summarize(text, resolver))
                    if YIELD_EVERY and (k + 1) % YIELD_EVERY == 0:
                        hand_over_gil()
                self.summarized.emit(first, batch)
