"""Instant events as columns, per thread in time order, for instant markers on thread tracks.

An instant's scope (the legacy scope word, spec E1) says where it belongs: its thread (0), its process
(1) or the whole system (2). Rows are sorted by (thread, ts) so one thread's instants in a window are a
binary search away; :meth:`InstantTable.scoped` lists the process- and global-scope ones for tracks of
their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fxscope.core.trace import compiled
from fxscope.core.trace.event_rows import kind_rows
from fxscope.core.trace.gathered import Gathered
from fxscope.core.trace.segments import key_rows, sorted_run_starts
from fxscope.core.trace.sorting import lexsort
from fxscope.formats.fxt.column_view import ColumnView
from fxscope.formats.fxt.columns import EventKind, FxtColumns

SCOPE_THREAD = 0
SCOPE_PROCESS = 1
SCOPE_GLOBAL = 2


@dataclass
class InstantTable:
    """One row per instant event, sorted by (thread, ts), ties in file order.

    ``ts`` is stored (the per-frame searches need it contiguous); the other columns are the reader's read
    through ``event`` or ``thread`` (:class:`~fxscope.core.trace.gathered.Gathered`, not copied). ``thread``
    is one too once :func:`build_instants` has found each thread's row range (:attr:`thread_bounds`, what
    the per-frame searches need of it: a stored int32 column was 4 bytes an instant, 3.3 MB at 10M events).
    """

    ts: np.ndarray  # int64 ns
    thread: np.ndarray | Gathered  # int16/int32 -> FxtColumns.threads_* (cols.ev_thread[event])
    pid: Gathered  # uint64 process koid of the thread (cols.threads_pid[thread], 0 for -1)
    name: Gathered  # int32 -> strings (cols.ev_name[event])
    category: Gathered  # int32 -> strings (cols.ev_category[event])
    scope: Gathered | np.ndarray  # SCOPE_* (cols.ev_data[event]: an instant's data word is its scope)
    event: np.ndarray  # int32 event row
    #: each thread's row range ``lo:hi`` (the table is sorted by thread), when known: else
    #: :meth:`thread_rows` searches :attr:`thread`
    thread_bounds: dict[int, tuple[int, int]] | None = field(default=None, repr=False)
    #: :meth:`scoped` per scope, once computed (the timeline's groups ask on the UI thread when a tab opens)
    _scoped: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    #: :meth:`scope_counts`, once counted
    _scope_counts: list[int] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.ts)

    def thread_rows(self, thread: int) -> tuple[int, int]:
        """Row range ``lo:hi`` of one thread's instants."""
        if self.thread_bounds is not None:
            return self.thread_bounds.get(int(thread), (0, 0))
        return key_rows(self.thread, thread)

    def in_window(self, thread: int, t0: int, t1: int, ns_per_px: float = 0.0) -> np.ndarray:
        """Rows of ``thread`` in [t0, t1); with ``ns_per_px``, only the first of each pixel bucket."""
        lo, hi = self.thread_rows(thread)
        a = lo + int(np.searchsorted(self.ts[lo:hi], t0, "left"))
        b = lo + int(np.searchsorted(self.ts[lo:hi], t1, "left"))
        rows = np.arange(a, max(a, b))
        if ns_per_px > 1.0 and len(rows) > 1:
            key = np.floor((self.ts[rows] - t0) / ns_per_px).astype(np.int64)
            rows = rows[np.r_[True, key[1:] != key[:-1]]]
        return rows

    def scoped(self, scope: int) -> np.ndarray:
        """Rows of one scope, by time (process scope: group them by :attr:`pid`); computed once per scope
        (a pass over every instant)."""
        rows = self._scoped.get(scope)
        if rows is None:
            # the process and global scopes from one read of the scopes (a read gathers the instants' data
            # words from the mapped file: the timeline asks for both together)
            self.find_scoped(np.asarray(self.scope), scope)
            rows = self._scoped[scope]
        return rows

    def find_scoped(self, scopes: np.ndarray, scope: int | None = None) -> None:
        """:meth:`scoped`'s rows of the process and global scopes (and of ``scope``), and the counts of
        :meth:`scope_counts`, from ``scopes``: every row's scope."""
        for s in (SCOPE_PROCESS, SCOPE_GLOBAL, scope):  # (the thread scope: most rows, asked for by no view)
            if s is not None and s not in self._scoped:
                found = np.flatnonzero(scopes == s)
                self._scoped[s] = found[np.argsort(self.ts[found], kind="stable")]
        if self._scope_counts is None:
            self._scope_counts = _counts_of_scopes(scopes)

    def scope_counts(self) -> list[int]:
        """How many instants have the thread, process and global scope (the Info tab's rows): counted when
        the scopes were read for :meth:`scoped`, else from one read of them."""
        if self._scope_counts is None:
            self._scope_counts = _counts_of_scopes(np.asarray(self.scope))
        return self._scope_counts


def _counts_of_scopes(scopes: np.ndarray) -> list[int]:
    """Rows of each scope value 0..2 (a value past them, from a damaged record, counts in none; no bincount
    as long as the largest value)."""
    return [int(np.count_nonzero(scopes == s)) for s in (SCOPE_THREAD, SCOPE_PROCESS, SCOPE_GLOBAL)]


def build_instants(cols: FxtColumns) -> InstantTable:
    by_thread = _by_thread_time_compiled(cols)
    if by_thread is not None:
        event, ts, thread = by_thread
    else:
        rows = np.flatnonzero(cols.ev_kind == EventKind.INSTANT)
        thread = cols.ev_thread[rows]
        ts = cols.ev_ts[rows]
        event = rows[lexsort((rows, ts, thread))].astype(np.int32)
        thread = cols.ev_thread[event].astype(np.int32)
        ts = cols.ev_ts[event]
    scope = Gathered(cols.ev_data, event)  # an instant's data word is its scope (FxtColumns.ev_scope)
    bounds = _thread_bounds(thread)
    del thread  # (read through the rows from here: cols.ev_thread[event])
    thread = Gathered(cols.ev_thread, event)
    return InstantTable(
        ts=ts,
        thread=thread,
        thread_bounds=bounds,
        pid=Gathered(cols.threads_pid, thread, missing=0),
        name=Gathered(cols.ev_name, event),
        category=Gathered(cols.ev_category, event),
        scope=scope,
        event=event,
    )


def _thread_bounds(thread: np.ndarray) -> dict[int, tuple[int, int]]:
    """Each thread's row range in ``thread``, an ascending column (a dict: a trace has few threads)."""
    starts = sorted_run_starts(thread).tolist()
    ends = [*starts[1:], len(thread)] if starts else []
    return {int(thread[a]): (a, b) for a, b in zip(starts, ends, strict=True)}


#: thread values told apart by the compiled grouping, at most (a counting sort: one slot a value)
COMPILED_THREAD_SPAN = 1 << 24


def _by_thread_time_compiled(cols: FxtColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The instants' (event, ts, thread) by (thread, time, row) from the compiled loops (slice_kernels.c: a
    counting sort by thread writing the three columns in one pass, then each thread's run sorted by time
    only when it is not already), or None when they are not built or do not take these columns. (Their
    times are read alone: an instant's data word, its scope, is an exception of the reader's, few, or 0
    without a read of the file; a read of both cost more at 30M events, in the scopes' array.)"""
    kernels = compiled.slice_kernels
    kind, ts, thread = cols.ev_kind, cols.ev_ts, cols.ev_thread
    rows = None
    if kernels is not None and compiled.plain(kind, np.uint8) and len(kind) < 1 << 31 and not (
        compiled.plain(ts, np.int64) and compiled.plain(thread, np.int16, np.int32)
    ) and isinstance(ts, ColumnView):  # times read from the file: the loops take the instants' rows only
        rows = kind_rows(kind, EventKind.INSTANT, EventKind.INSTANT)  # (int32, a block at a time)
        kind, ts, thread = kind[rows], ts[rows], compiled.values(thread[rows], np.int16, np.int32)
    if kernels is None or not (compiled.plain(kind, np.uint8) and compiled.plain(ts, np.int64)
                               and compiled.plain(thread, np.int16, np.int32) and len(kind) < 1 << 31):  # fmt: skip
        return None
    wide = thread.dtype == np.int32
    n, _, lo, hi = kernels.duration_threads(kind, thread, wide, int(EventKind.INSTANT), int(EventKind.INSTANT))
    if hi - lo >= COMPILED_THREAD_SPAN:
        return None
    event, ts_out, thread_out = np.empty(n, np.int32), np.empty(n, np.int64), np.empty(n, np.int32)
    kernels.group_by_thread_time(kind, ts, thread, wide, int(EventKind.INSTANT), lo, max(hi - lo + 1, 0),
                                 event, ts_out, thread_out)  # fmt: skip
    if rows is not None:  # (positions among the instants' rows, ascending: the same order of ties)
        event = rows[event]
    return event, ts_out, thread_out
