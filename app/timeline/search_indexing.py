"""The timeline's search index, built in a background thread so that the first search never freezes the window,
and a large trace's searches, run in one too.

The index (:attr:`fxscope.core.trace.model.TraceModel.search_index`) is left out of the load to keep its peak
memory down; built on the UI thread by the first keystroke it froze the window 1-3 s at 10M events. The
timeline starts this build once its tab is up; a search typed before it is done waits for it (the search
bar says "indexing…") and the latest text is searched when it is.

Lifetimes, as :mod:`fxscope.app.crash.workers`: :func:`fxscope.app.worker_threads.start_worker` keeps the
thread alive until it ends and stops it when the application quits; the thread holds the model only (plain
data), its signals belong to the thread, and what receives it is :class:`SearchIndexing`, a child of the timeline: Qt drops the
connection, and a call already queued, when the timeline is destroyed. Its destruction (the tab closed)
cancels the build: the build checks the flag between its batches of slices.

A search of a trace with :data:`SYNC_INDEX_SLICES` slices or more runs in a background thread too
(:meth:`SearchIndexing.search`: ~0.1 s at 10M events, ~1 s at 100M, which would freeze the window): the search bar
says "searching…", text typed meanwhile cancels it (one search runs at a time; the latest text is searched next),
Esc cancels it too, and ``found(text, hits)`` brings the result to the UI thread. Such a search does not wait
for the index: until it is built, the hits leave the slices' argument matches out (the count says so) and the
timeline searches the arguments when it is (the index takes 0.3-1.0 s at 30M-100M events, 3-12 s when this
was written: a search waiting for it took 5-70 s to show its count). That second search only adds the
argument matches: when they add no slice (a search by a name, as a rule) the first hits stay, complete.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from fxscope.app.worker_threads import ModelBuild, note_ui_activity, start_worker
from fxscope.core.trace.prepare import pending_tables
from fxscope.core.trace.search_hits import search_all

#: how long after the timeline is made the build starts (unless a search asks first): after the tab's first
#: frame, whose painting it would otherwise compete with for the interpreter
START_DELAY_MS = 500
#: models with fewer slices build their index on the first search, on the UI thread (tens of ms): no thread
#: and no "indexing…" flash for a small trace
SYNC_INDEX_SLICES = 50_000


#: while a search runs, how often the UI thread tells the builds that yield to pause (they resume
#: :data:`~fxscope.app.worker_threads.UI_QUIET_S` after the last time)
HOLD_BUILDS_MS = 20


class SearchIndexing(QObject):
    """The search index of one timeline's model: :meth:`ready` says whether a search can run now; otherwise
    :meth:`start` builds it in the background and ``done`` (or ``failed``) follows on the UI thread."""

    done = Signal()
    failed = Signal(str)
    #: a background search's (text, :class:`~fxscope.core.trace.search_hits.SearchHits`), the latest text's only
    found = Signal(str, object)
    #: True: a search's hits are shown without the argument matches, which wait for the index being built (the
    #: tab holds its other background build meanwhile, :mod:`fxscope.app.trace_tab`: the index's build then
    #: has the machine); False once it is built or failed, or that search was stopped
    awaited = Signal(bool)

    def __init__(self, model, parent: QObject) -> None:
        super().__init__(parent)
        self.model = model
        self.worker: ModelBuild | None = None
        self.held = self.start_on_release = False
        self.searching: ModelBuild | None = None  # the search running
        self._searching_text = ""
        self._next_text: str | None = None  # the text to search once it is done
        self._next_without = None  # (its hits without the arguments, if any: search_all's without_arguments)
        self._awaited = False  # (what awaited said last)
        # while a search runs, the builds that yield to the UI (the argument index, the tab's later tables)
        # pause as they do while frames are drawn: the search is what the user waits for. Beside two such
        # builds on this 2-core machine a search's first count at 100M events came after 6.8 s, alone ~2 s
        # (they still run 50 ms in every 0.55 s: worker_threads.RUN_S, MAX_PAUSE_S; the argument index's build
        # is held for the whole search: :func:`_search_holding`)
        self._holding_builds = QTimer(self)
        self._holding_builds.setInterval(HOLD_BUILDS_MS)
        self._holding_builds.timeout.connect(note_ui_activity)

    def ready(self) -> bool:
        """A search can run now without waiting: the index is built, or the trace is small enough to build
        it at once."""
        return self.model.search_index_ready or len(self.model.slices) < SYNC_INDEX_SLICES

    def start_soon(self) -> None:
        """The timeline's own start, after its first frame: :meth:`start`, unless :meth:`hold` put it off."""
        if self.held:
            self.start_on_release = True
        else:
            self.start()

    def hold(self) -> None:
        """Put off :meth:`start_soon` until :meth:`release` (the tab builds other tables in the background
        first: built together they would hold both builds' temporaries at once). A search typed meanwhile
        starts the build at once."""
        self.held = True

    def release(self) -> None:
        self.held = False
        if self.start_on_release:
            self.start()

    def start(self) -> None:
        """Build the index in a background thread (once; nothing when a search can already run)."""
        if self.worker is not None or self.ready():
            return
        self.worker = worker = ModelBuild(self.model.build_search_index, yields=True)  # (as the later tables)
        worker.built.connect(self.done)  # queued to this object's (UI) thread; dropped when it is destroyed
        worker.failed.connect(self.failed)
        worker.built.connect(lambda: self._await(False))
        worker.failed.connect(lambda _message: self._await(False))
        # a lambda holding the worker, not this object: it runs while this object is being destroyed
        self.destroyed.connect(lambda *_: worker.cancel())
        start_worker(worker)

    def searches_in_background(self) -> bool:
        """Whether a search of this model runs in a background thread: a large trace (hundreds of ms or
        more), or one whose track tables the tab is still building (a search reads the async spans,
        instants and counters: on the UI thread it would build them there, seconds for a trace of a few
        slices and millions of counter samples)."""
        return len(self.model.slices) >= SYNC_INDEX_SLICES or bool(pending_tables(self.model))

    def search(self, text: str, without_arguments=None) -> None:
        """Search ``text`` in a background thread: ``found(text, hits)`` follows, unless another text is
        searched before it is done: the running search is then cancelled (it stops at its next check, tens
        of ms) and only the latest text's result comes. Until the index is built the search leaves the
        slices' argument matches out (``hits.complete`` is False: the timeline searches again on ``done``,
        giving those hits as ``without_arguments``: :func:`~fxscope.core.trace.search_hits.search_all`)."""
        self._next_text, self._next_without = text, without_arguments
        if self.searching is not None:
            self.searching.cancel()  # (its end starts the latest text's search)
            return
        self._start_search()

    def cancel_search(self) -> None:
        """Stop the running search, if any (Esc): nothing is found for it (and no argument matches are
        awaited for an earlier one)."""
        self._next_text = None
        self._await(False)
        if self.searching is not None:
            self.searching.cancel()

    def _await(self, awaited: bool) -> None:
        if awaited != self._awaited:
            self._awaited = awaited
            self.awaited.emit(awaited)

    def _start_search(self) -> None:
        model, text, without = self.model, self._next_text, self._next_without  # (the thread holds the model)
        self._searching_text, self._next_text, self._next_without = text, None, None
        arguments = model.search_index_ready
        # the argument index's build (which the search never waits for) is paused for the whole search, and
        # released by the search's thread as it ends (not by the UI thread: one waiting for the build would
        # never release it)
        index_build = self.worker
        if index_build is not None:
            index_build.hold()
        self.searching = worker = ModelBuild(
            lambda check: _search_holding(index_build, model, text, check, arguments, without)
        )
        worker.finished.connect(self._search_ended)  # (done, failed or cancelled)
        note_ui_activity()
        self._holding_builds.start()
        worker.failed.connect(self.failed)
        self.destroyed.connect(lambda *_: worker.cancel())
        start_worker(worker)

    def _search_ended(self) -> None:
        worker, self.searching = self.searching, None
        self._holding_builds.stop()
        if self._next_text is not None:
            self._start_search()  # superseded: the latest text's search now
            return
        if worker is not None and worker.result is not None:
            self.found.emit(self._searching_text, worker.result)
            # (hits without the argument matches, the index still being built: the user waits for it)
            self._await(not worker.result.complete and not self.model.search_index_ready and self.worker is not None)


def _search_holding(index_build: ModelBuild | None, model, text: str, check, arguments: bool, without=None):
    """:func:`search_all` in a search's thread, then ``index_build`` (held while it ran) released, whether the
    search ended, failed or was cancelled."""
    try:
        return search_all(model, text, check, arguments=arguments, without_arguments=without)
    finally:
        if index_build is not None:
            index_build.release()
