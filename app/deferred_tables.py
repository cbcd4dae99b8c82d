"""The tables of a large trace that its first frame does not need, built in a background thread after it.

First the tables of the track kinds other than the thread slices (async spans, counters, CPUs and thread
states, instants, the overview's density: ~20 s of a 100M-event trace's first frame before): their tracks
draw "building…" (:mod:`fxscope.app.timeline.building_track`) until ``tablesBuilt`` says that kind is in.
Then those no track draws: the flow links (drawn for a selected slice) and the Info tab's statistics (which count the flows) take ~1.2 s
of the ~5 s a 10M-event model's build takes, and grow with the trace: a 100M-event trace's window would
wait ~12 s more for its first frame. The loader leaves them out for a trace of
:data:`fxscope.core.trace.prepare.DEFER_EVENTS` events or more; the tab starts this build once it is up. The
Info tab says "computing…" until the statistics are in; a click that asks for a slice's flows meanwhile
waits for the build in progress (:class:`fxscope.core.trace.built_once.BuiltOnce`) rather than making its own.

The build's steps run two at once on worker threads of a lower OS priority than the UI thread
(:func:`fxscope.core.trace.prepare.prepare_later`): a kind of track comes in when its own table is done, in
the order they finish.

Lifetimes as :mod:`fxscope.app.timeline.search_indexing`: the thread holds the model only, and
:class:`DeferredTables`, a child of the tab, receives its signals; its destruction (the tab closed) cancels
the build, which checks the flag between the flows' stages.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from fxscope.app.worker_threads import ModelBuild, start_worker
from fxscope.core.freed_memory import return_freed_memory
from fxscope.core.timeline.track_order import build_groups, groups_change
from fxscope.core.trace.prepare import defers_later_steps, pending_tables, prepare_later

#: how long after the tab is made the build starts: after its first frame, whose painting it would otherwise
#: compete with for the interpreter
START_DELAY_MS = 300
#: how long after a kind of track came in (its tracks made and drawn) the memory freed meanwhile is given back
#: to the system (:func:`~fxscope.core.freed_memory.return_freed_memory`, 1-3 ms at 10M events): while a
#: build runs freed memory stays in the process (:func:`~fxscope.core.freed_memory.hold_freed_memory`), and
#: what the UI thread freed showing a table stayed there until the end of the next step, on top of its
#: temporaries (at 10M events 12-43 MB after a table, the window's peak 1.48-1.61x the file in the order
#: counters, async spans)
TRIM_AFTER_MS = 50


class DeferredTables(QObject):
    """The later tables (:data:`fxscope.core.trace.prepare.LATER_STEPS`) of one tab's model: :meth:`pending`
    says whether they are still to come; :meth:`start` builds them in the background and ``done`` (or
    ``failed(message)``) follows on the UI thread."""

    done = Signal()
    failed = Signal(str)
    #: (step name, the track list built after it or None): a kind of track's table is in
    #: (:func:`fxscope.core.trace.prepare.prepare_tracks`); the timeline shows it (``tables_built``)
    tablesBuilt = Signal(str, object)

    def __init__(self, model, parent: QObject) -> None:
        super().__init__(parent)
        self.model = model
        self.worker: ModelBuild | None = None
        self._trim = QTimer(self)  # (restarted by each table that comes in)
        self._trim.setSingleShot(True)
        self._trim.setInterval(TRIM_AFTER_MS)
        self._trim.timeout.connect(self._return_freed_memory)

    @staticmethod
    def wanted(model) -> bool:
        """Whether a tab of ``model`` leaves these tables to a background build: a large trace whose loader
        did not build them (a small one's tab builds them as it opens, in tens of milliseconds)."""
        return defers_later_steps(model) and (not model.stats_ready or bool(pending_tables(model)))

    def pending(self) -> bool:
        return not self.model.stats_ready or bool(pending_tables(self.model))

    def _table_came_in(self, *_step) -> None:
        self._trim.start()  # (again: the memory is given back once the tables stop coming for a while)

    @staticmethod
    def _return_freed_memory() -> None:
        """(On the UI thread, :data:`TRIM_AFTER_MS` after the last table came in.)"""
        return_freed_memory()

    def start(self) -> None:
        """Build the tables in a background thread (once; nothing when they are built)."""
        if self.worker is not None or not self.pending():
            return
        model = self.model  # (the thread holds the model, not this object)
        # yields to the UI: navigating the new tab while it runs keeps its frame rate

        def step_done(name: str) -> None:
            """(In the build's thread) the track list with this step's tracks, made there, not on the UI thread."""
            worker.stepped.emit(name, build_groups(model) if groups_change(model, name) else None)

        self.worker = worker = ModelBuild(lambda check: prepare_later(model, check, step_done), yields=True)
        worker.built.connect(self.done)  # queued to this object's (UI) thread; dropped when it is destroyed
        worker.stepped.connect(self.tablesBuilt)
        worker.stepped.connect(self._table_came_in)  # (after the timeline's own slot: its tracks made first)
        worker.failed.connect(self.failed)
        self.destroyed.connect(lambda *_: worker.cancel())
        start_worker(worker)
