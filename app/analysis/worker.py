"""Analysis off the UI thread: the area's rows, per-name statistics and top-down tree are computed in the
global thread pool and delivered by a queued signal; a newer request makes an older result stale (its
generation number no longer matches) so a slow result never overwrites a newer one.

Lifetimes: a job may outlive the panel that asked for it (the tab closed meanwhile). The object a job emits
from belongs to the job (never to the panel, whose deletion would pull it from under the emitting thread),
and what receives it on the UI thread is a child of the panel (its deletion drops the connection and any call
already queued). The function a job runs must read no widget: it is given plain data (the model)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from fxscope.core.analysis.call_tree import CallTree, top_down
from fxscope.core.analysis.selection import Area, AreaRows, area_names, area_rows
from fxscope.core.analysis.stats import NameStats, name_stats


@dataclass
class AnalysisResult:
    area: Area
    rows: AreaRows
    stats: NameStats
    tree: CallTree


class _Signals(QObject):
    done = Signal(int, object)  # generation, AnalysisResult
    failed = Signal(int, str)


class _Superseded(Exception):
    """A newer analysis was requested: this one stops."""


class _Job(QRunnable):
    """One analysis. ``superseded`` is set when a newer one is requested: the job then stops at its next
    step (each is a few passes over the area's rows, up to ~1 s at 100M events) rather than computing a
    result nobody will see while the newer one waits for the interpreter and the cores."""

    def __init__(self, model, area: Area, generation: int, signals: _Signals, superseded: threading.Event) -> None:
        super().__init__()
        self.model, self.area, self.generation, self.signals = model, area, generation, signals
        self.superseded = superseded
        #: the steps this job ran to their end ("rows", "names", "stats", "tree", then "nodes" after the result
        #: went out): tests read it
        self.steps: list[str] = []

    def _step(self, name: str, build):
        if self.superseded.is_set():
            raise _Superseded
        out = build()
        self.steps.append(name)
        return out

    def run(self) -> None:
        model = self.model
        try:
            ar = self._step("rows", lambda: area_rows(model, self.area))
            # made once for both: a pass over every row each
            names = self._step("names", lambda: area_names(model, ar))
            stats = self._step("stats", lambda: name_stats(model, ar=ar, names=names))
            tree = self._step("tree", lambda: top_down(model, ar=ar, names=names))
            result = AnalysisResult(self.area, ar, stats, tree)
        except _Superseded:
            return
        except Exception as exc:  # noqa: BLE001 - a failure is a message in the panel, never a dead window
            self.signals.failed.emit(self.generation, f"{type(exc).__name__}: {exc}")
            return
        self.signals.done.emit(self.generation, result)
        # the flame graph shows without the node of each row; a click on a frame needs it: made now, while
        # the user looks (a click before waits for it), unless a newer analysis came
        try:
            self._step("nodes", lambda: tree.node_of)
        except _Superseded:
            return
        except Exception as exc:  # noqa: BLE001 - (as above: a message, never a dead window)
            self.signals.failed.emit(self.generation, f"{type(exc).__name__}: {exc}")


class AnalysisRunner(QObject):
    """Starts analyses; ``finished`` carries the result of the latest request only."""

    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, model, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.generation = 0
        self.signals = _Signals()
        self.signals.done.connect(self._done)
        self.signals.failed.connect(self._failed)
        self._superseded = threading.Event()
        self.last_job: _Job | None = None  # (the pool owns it; its Python attributes stay readable: tests)

    def request(self, area: Area) -> int:
        """Analyse ``area`` in the pool; a running older request stops at its next step."""
        self.generation += 1
        self._superseded.set()
        self._superseded = threading.Event()
        self.last_job = _Job(self.model, area, self.generation, self.signals, self._superseded)
        QThreadPool.globalInstance().start(self.last_job)
        return self.generation

    def _done(self, generation: int, result: AnalysisResult) -> None:
        if generation == self.generation:
            self.finished.emit(result)

    def _failed(self, generation: int, message: str) -> None:
        if generation == self.generation:
            self.failed.emit(message)


class _CallSignals(QObject):
    done = Signal(object)
    failed = Signal(str)


class _Call(QRunnable):
    def __init__(self, fn, signals: _CallSignals) -> None:
        super().__init__()
        self.fn, self.signals = fn, signals

    def run(self) -> None:
        try:
            out = self.fn()
        except Exception as exc:  # noqa: BLE001 - a message, never a dead window
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        self.signals.done.emit(out)


class _Relay(QObject):
    """The UI thread's end of one :func:`run_in_pool` call: a child of the asking widget, so the callbacks
    (often lambdas over the widget) run only while it exists."""

    def __init__(self, on_done, on_failed, parent: QObject) -> None:
        super().__init__(parent)
        self.on_done, self.on_failed = on_done, on_failed

    def deliver(self, result) -> None:
        self.on_done(result)
        self.deleteLater()

    def fail(self, message: str) -> None:
        self.on_failed(message)
        self.deleteLater()


def run_in_pool(fn, on_done, on_failed, parent: QObject) -> _CallSignals:
    """Call ``fn()`` in the global thread pool; ``on_done(result)`` / ``on_failed(message)`` run on the UI
    thread while ``parent`` exists (nothing runs once it is destroyed). ``fn`` must not read ``parent``: it
    runs while the UI thread may be destroying it."""
    signals = _CallSignals()  # owned by the job: it outlives ``parent`` when the job does
    relay = _Relay(on_done, on_failed, parent)
    signals.done.connect(relay.deliver)
    signals.failed.connect(relay.fail)
    QThreadPool.globalInstance().start(_Call(fn, signals))
    return signals
