"""Loading a trace off the UI thread: read and model-building in a QThread, progress and cancel.

A 10-million-event trace takes seconds to read and to match into slices; the window must stay responsive
meanwhile (the UI thread never waits on the reader) and the user must be able to give up. The reader calls
back between blocks with the fraction done; the callback raises :class:`Cancelled` once Cancel was pressed,
which unwinds the read; the model's builders check the same flag between their blocks. The window does
not wait for that: Cancel detaches the load at once (its result, if it still comes, is dropped). numpy releases the GIL in its kernels, and the reader's own Python loops run in
blocks, so the UI thread gets the interpreter often enough to repaint.
"""

from __future__ import annotations

import importlib
import threading
import time

from PySide6.QtCore import QThread, Signal

#: modules a trace tab imports when it opens (its crash-report panel, what that reads, and the symbolizer its
#: summaries start): imported by the loader thread once the model is built, so that the UI thread does not
#: stall on them (~40 ms) nor wait for the import lock while the summaries' thread imports them
TAB_MODULES = ("fxscope.app.crash.trace_reports", "fxscope.app.crash.view", "fxscope.core.reports.summary",
               "fxscope.core.reports.crash_log", "fxscope.core.symbolize.crash_report")  # fmt: skip


def warm_imports() -> None:
    """Import :data:`TAB_MODULES` (in the calling thread: the loader's)."""
    for name in TAB_MODULES:
        importlib.import_module(name)


class Cancelled(Exception):
    """The user cancelled the load."""


class TraceLoader(QThread):
    """Reads ``path`` and builds its :class:`fxscope.core.trace.model.TraceModel` in a thread of its own."""

    progressed = Signal(float)  # 0..1
    loaded = Signal(object)  # the TraceModel
    failed = Signal(str)  # a message for the user
    cancelled = Signal()

    #: shares of the work: reading the file, then building the model (slices, tracks)
    READ_SHARE = 0.8
    #: the least time between two progress updates the window hears of (seconds; the first and the last are
    #: always sent). The reader calls back after every block, every ~4 ms, and each update crosses to the UI
    #: thread and repaints the progress bar there, taking the interpreter's lock from the reader meanwhile:
    #: measured at 10M events (the window offscreen, three alternating pairs), the loader's read took
    #: 1.17-1.21 s with an update a block and 0.93-1.07 s at most 20 a second, the tab 2.13-2.18 -> 1.83-2.01 s.
    #: Cancel is still checked at every block.
    PROGRESS_INTERVAL_S = 0.05

    def __init__(self, path: str, parent=None) -> None:
        super().__init__(parent)
        self.path = path
        self._cancel = threading.Event()
        self._progress_at: float | None = None  # (when the last update was sent: none yet)

    def cancel(self) -> None:
        self._cancel.set()

    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    def _check(self) -> None:
        """Between blocks of the model's builders: unwind once Cancel was pressed."""
        if self._cancel.is_set():
            raise Cancelled

    def _tick(self, fraction: float) -> None:
        """Between blocks: unwind on Cancel, and send the progress unless one went out less than
        :data:`PROGRESS_INTERVAL_S` ago (the first and the end, 1.0, always go)."""
        self._check()
        now = time.monotonic()
        if self._progress_at is not None and now - self._progress_at < self.PROGRESS_INTERVAL_S and fraction < 1.0:
            return
        self._progress_at = now
        self.progressed.emit(fraction)

    def run(self) -> None:
        from fxscope.core.freed_memory import return_freed_memory
        from fxscope.core.timeline.track_order import prebuild_groups
        from fxscope.core.trace.model import TraceModel
        from fxscope.core.trace.prepare import defers_later_steps, prepare_model
        from fxscope.core.trace.reading import read_trace

        try:
            cols = read_trace(self.path, progress=lambda f: self._tick(f * self.READ_SHARE))
            self._tick(self.READ_SHARE)
            with cols.holding_pages():  # (the file pages the steps map, the slices first, kept until the last ends)
                model = TraceModel(cols, check=self._check)
                # every table the first frame reads, built here rather than on the UI thread when the tab opens
                # (a large trace's flows and statistics: in the background after it, app/deferred_tables.py)
                prepare_model(model, lambda f: self._tick(self.READ_SHARE + (1 - self.READ_SHARE) * f),
                              first_frame_only=defers_later_steps(model))  # fmt: skip
            # and what the tab's first turn on the UI thread would do: the timeline's tracks, its modules
            prebuild_groups(model)
            self._check()
            warm_imports()
            model.done_checking()
            return_freed_memory()  # (this thread's heap: what the track list and the imports freed)
        except Cancelled:
            self.cancelled.emit()
            return
        except Exception as exc:  # noqa: BLE001 - any reader or model failure is a message, never a dead window
            self.failed.emit(str(exc))
            return
        self.loaded.emit(model)
