"""Analysis off the UI thread: the area's rows, per-name statistics and top-down tree are computed in the
global thread pool and delivered by a queued signal; a newer request makes an older result stale (its
generation number no longer matches) so a slow result never overwrites a newer one."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from fxscope.core.analysis.call_tree import CallTree, top_down
from fxscope.core.analysis.selection import Area, AreaRows, area_rows
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


class _Job(QRunnable):
    def __init__(self, model, area: Area, generation: int, signals: _Signals) -> None:
        super().__init__()
        self.model, self.area, self.generation, self.signals = model, area, generation, signals

    def run(self) -> None:
        try:
            ar = area_rows(self.model, self.area)
            result = AnalysisResult(self.area, ar, name_stats(self.model, ar=ar), top_down(self.model, ar=ar))
        except Exception as exc:  # noqa: BLE001 - a failure is a message in the panel, never a dead window
            self.signals.failed.emit(self.generation, f"{type(exc).__name__}: {exc}")
            return
        self.signals.done.emit(self.generation, result)


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

    def request(self, area: Area) -> int:
        self.generation += 1
        QThreadPool.globalInstance().start(_Job(self.model, area, self.generation, self.signals))
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


def run_in_pool(fn, on_done, on_failed, parent: QObject) -> _CallSignals:
    """Call ``fn()`` in the global thread pool; ``on_done(result)`` / ``on_failed(message)`` run on the UI
    thread (queued signals of an object living there, kept alive by ``parent``)."""
    signals = _CallSignals(parent)
    signals.done.connect(on_done)
    signals.failed.connect(on_failed)
    QThreadPool.globalInstance().start(_Call(fn, signals))
    return signals
