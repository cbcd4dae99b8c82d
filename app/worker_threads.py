"""Worker threads that belong to no widget: kept alive until they end, stopped when the application quits.

A view may close while its worker runs, so the worker (a QThread) cannot be the view's child; and a QThread
destroyed while it runs aborts the process. :func:`start_worker` keeps each one in :data:`_LIVE` until it
finishes, and :func:`stop_all` (at the event loop's end, or the interpreter's) cancels them (their
``cancel()``) and waits. Used by the crash view's workers (:mod:`fxscope.app.crash.workers`), the
timeline's search-index build (:mod:`fxscope.app.timeline.search_indexing`) and the tables a large trace's
tab builds after its first frame (:mod:`fxscope.app.deferred_tables`), the latter two a :class:`ModelBuild`.
"""

from __future__ import annotations

import atexit
import sys
import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QThread, Signal

from fxscope.core.freed_memory import return_freed_memory

#: how long quitting waits for cancelled workers before it waits without a bound (a QThread destroyed while
#: it runs aborts the process); cancelled workers end within milliseconds unless converting DWARF
QUIT_BUDGET_S = 5.0
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


def stop_all(budget_s: float = QUIT_BUDGET_S) -> None:
    """Cancel every running worker and wait for them (the application is quitting): ``budget_s`` in all,
    then without a bound for any still running."""
    workers = list(_LIVE)
    for worker in workers:
        cancel = getattr(worker, "cancel", None)
        if cancel is not None:
            cancel()
    end = time.monotonic() + budget_s
    for worker in workers:
        if not worker.wait(max(int((end - time.monotonic()) * 1000), 0)):
            worker.wait()


#: a build that yields to the UI (:class:`ModelBuild` with ``yields``) pauses while the UI thread has drawn
#: a frame, or taken input, within this long: navigation's frames do not wait for the interpreter's lock
UI_QUIET_S = 0.05
#: the longest such a build pauses at once; it then runs at least :data:`RUN_S` before it pauses again, so that
#: a UI drawing frame after frame (a key held down) slows the build, never stops it
MAX_PAUSE_S = 0.5
RUN_S = 0.05
#: when the UI thread last drew a timeline frame or took input over it (``time.monotonic()``)
_ui_active_at = [float("-inf")]


def note_ui_activity() -> None:
    """The UI thread is drawing a frame or taking input: builds that yield pause (see :class:`ModelBuild`)."""
    _ui_active_at[0] = time.monotonic()


def ui_recently_active() -> bool:
    return time.monotonic() - _ui_active_at[0] < UI_QUIET_S


class BuildCancelled(Exception):
    """A :class:`ModelBuild` was cancelled (its owner went away): stop building."""


class ModelBuild(QThread):
    """Builds tables of a model in the background: ``build(check)``, where ``check()`` raises
    :class:`BuildCancelled` once :meth:`cancel` was called (the build leaves the table unbuilt); ``built``
    when done (its return value in :attr:`result`), ``failed(message)`` on an error, nothing when cancelled. The thread holds the model only
    (plain data); its signals belong to it, and what receives them is a QObject of the UI, which Qt
    disconnects when it is destroyed. The build's freed temporaries are given back to the system after it.
    With ``yields``, the build pauses while the UI draws frames (:meth:`_yield_to_ui`): the builds a tab
    starts by itself after its first frame; not a search the user waits for."""

    built = Signal()
    failed = Signal(str)
    #: what the build reports on the way (a step's name and its result: the tables a large trace's tab
    #: builds after its first frame, :mod:`fxscope.app.deferred_tables`), queued to the receiver's thread
    stepped = Signal(str, object)

    def __init__(self, build: Callable[[Callable[[], None]], object], yields: bool = False) -> None:
        super().__init__()
        self._build = build
        self._cancel = threading.Event()
        self.result: object = None
        self._yields = yields
        self._held = threading.Event()
        self._running_since = float("-inf")
        #: seconds the build spent paused for the UI (benchmarks report it)
        self.paused_s = 0.0

    def cancel(self) -> None:
        self._cancel.set()

    def check(self) -> None:
        if self._cancel.is_set():
            raise BuildCancelled

    def hold(self) -> None:
        """A build that yields pauses at its next function call until :meth:`release` (or its cancel), with
        no bound: for the argument index's build while a search runs, which never waits for it. (The UI's
        pauses are bounded, :data:`MAX_PAUSE_S`, and a search that outlasted one shared the machine's
        two cores and the interpreter with the build: at 100M events its first count came after 1.5 s
        instead of 1.1 s, its wall time 1.3 s for 0.85 s of CPU.) Nothing for a build that does not yield."""
        self._held.set()

    def release(self) -> None:
        """End :meth:`hold`."""
        self._held.clear()

    def _yield_to_ui(self, _frame, _event, _arg) -> None:
        """This thread's profile hook (a build that ``yields``), called at each function call and return of
        the build: while the UI thread is drawing frames (:func:`note_ui_activity`), sleep, which hands the
        interpreter's lock to it. Two threads that both want the lock share it in 5 ms turns, so a
        navigation frame drawn while a build ran took up to twice as long; the build's own progress checks
        are 0.1-0.3 s apart, too far apart to pause at. Held (:meth:`hold`), it sleeps until released."""
        if self._held.is_set():
            now = time.monotonic()
            while self._held.is_set() and not self._cancel.is_set():
                time.sleep(0.002)
            self._running_since = time.monotonic()
            self.paused_s += self._running_since - now
            return
        if not ui_recently_active():
            return
        now = time.monotonic()
        if now - self._running_since < RUN_S or self._cancel.is_set():
            return
        while ui_recently_active() and time.monotonic() - now < MAX_PAUSE_S and not self._cancel.is_set():
            time.sleep(0.002)
        self._running_since = time.monotonic()
        self.paused_s += self._running_since - now

    def run(self) -> None:
        if self._yields:
            sys.setprofile(self._yield_to_ui)  # (this thread's only)
        try:
            self.result = self._build(self.check)
        except BuildCancelled:
            return_freed_memory()
            return
        except Exception as exc:  # noqa: BLE001 - a message for the user, never a dead window
            self.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        finally:
            sys.setprofile(None)
        return_freed_memory()  # the build's temporaries (tens of MB at 10M events), as after the load
        self.built.emit()
