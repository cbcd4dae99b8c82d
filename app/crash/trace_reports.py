"""The crash reports in a trace's log records, as a list under the timeline.

Rows come from :attr:`fxscope.core.trace.logs.LogTable.reports` (split per process); the thread column names the
thread that logged the report, and the top frames are symbolized in a thread after the list is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QTimer

from fxscope.app.crash.reports_list import ReportsList
from fxscope.app.timeline.details import format_ns
from fxscope.core.trace.model import TraceModel


class TraceReportsPanel(ReportsList):
    """``reportChosen(index)``: index into ``model.logs.reports``."""

    def __init__(self, model: TraceModel, resolver_factory: Callable[[], object], parent=None) -> None:
        super().__init__(parent)
        self.model = model
        logs = model.logs
        ts, threads = logs.report_marks()
        self.thread_names = [model.thread_name(int(t)) if t >= 0 else "?" for t in threads.tolist()]
        self.reports_model.set_reports([format_ns(int(t) - model.start_ns) for t in ts.tolist()],
                                       ["; ".join(r.span.warnings) for r in logs.reports])  # fmt: skip
        from fxscope.app.crash.workers import ReportSummarizer, ViewWorkers

        #: cancelled when the panel is closed or destroyed (its trace tab closed)
        self._workers = ViewWorkers(self)
        self._pending = None
        if logs.reports:  # summaries (raw, then symbolized) in a thread: the list shows at once
            worker = ReportSummarizer(len(logs.reports), logs.report_text_at, resolver_factory)
            worker.summarized.connect(self._summaries)
            # started a moment after the tab opens: its Python (symbolizing) would take the interpreter from
            # the UI thread while it paints the tab's first frame (a stall of a few hundred ms on a busy machine)
            self._pending = worker
            QTimer.singleShot(self.START_DELAY_MS, self, self._start_pending)

    #: how long after the panel is made its summaries start
    START_DELAY_MS = 800

    def _start_pending(self) -> None:
        worker, self._pending = self._pending, None
        if worker is not None:
            self._workers.start(worker)

    def _summaries(self, first: int, summaries: list) -> None:
        named = [replace(s, thread=self.thread_names[first + k]) for k, s in enumerate(summaries)]
        self.reports_model.set_summaries(first, named)

    def wait(self, timeout_ms: int = 60_000) -> None:
        """Until the symbolized summaries are in (tests, screenshots, closing the tab)."""
        self._start_pending()
        self._workers.wait(timeout_ms)

    def closeEvent(self, event) -> None:
        self._pending = None
        self._workers.cancel_all()
        super().closeEvent(event)
