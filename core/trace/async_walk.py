"""The compiled pairing of async begins and ends, fed a block of events at a time (span_kernels.async_spans).

The kernel walks the async events in time order with each key's stack of open begins in a hash table; its
state (the open keys, the stacks, the counts written) lives between calls, so the events can come a block at
a time: from :func:`fxscope.core.trace.async_spans.build_async` reading their times and ids block by block,
or from the model's constructor, which reads every event's time from the file once anyway (the slices'
grouping pass) and hands the async events of each block over while their records are fresh (their times
already read, their pages mapped): the async table's build then reads nothing from the file again.

A walk stops being one as soon as a time goes back (file order is not time order in that trace): its owner
then pairs the events sorted by time instead (build_async's path for it).
"""

from __future__ import annotations

import numpy as np

from fxscope.core.trace import compiled
from fxscope.core.trace.compiled import contiguous
from fxscope.core.trace.threads import thread_pids
from fxscope.formats.fxt.column_view import ColumnView
from fxscope.formats.fxt.columns import EventKind, FxtColumns


class AsyncWalk:
    """One walk of span_kernels.async_spans over at most ``n`` async events (:meth:`start` makes it), fed
    blocks of them in time order (:meth:`feed`), ended once (:meth:`end`). The outputs have room for every
    event as a span and as an instant: the pages of rows never written are never touched."""

    def __init__(self, kernels, cols: FxtColumns, n: int, row_type, keys: tuple[np.ndarray, np.ndarray],
                 thread: tuple[np.ndarray, np.ndarray, int, np.ndarray], trace_start: int) -> None:  # fmt: skip
        self._kernels = kernels
        self.n = n
        self.row_type = np.dtype(row_type)
        # (the ids not written: the event's data word, read again for the rows that need them, ties and the
        # search by id, not kept for every span and instant)
        no_ids = np.zeros(0, np.uint64)
        rt = self.row_type
        #: start, end, flags, event, end event, (ids), level, process rank of each span
        self.spans = (np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.uint8), np.empty(n, rt),
                      np.empty(n, rt), no_ids, np.empty(n, np.int32), np.empty(n, np.int32))  # fmt: skip
        #: event, time, (ids), open begin of each instant
        self.instants = (np.empty(n, rt), np.empty(n, np.int64), no_ids, np.empty(n, np.int64))
        thread_col, track_of, offset, self.pids = thread
        cat, name = keys
        self._fixed = (contiguous(cols.ev_kind, np.uint8), cat, name, thread_col, track_of, offset)
        self._trace_start = int(trace_start)
        self._state = kernels.async_state(n)
        self.fed = 0  # events walked
        self.in_order = True  # False once a block's times went back: the walk is no longer one

    @classmethod
    def start(cls, cols: FxtColumns, n: int, trace_start: int) -> AsyncWalk | None:
        """A walk for ``n`` async events of ``cols``, or None when the kernels are not built or the columns do
        not fit them (the numpy path then)."""
        kernels = compiled.span_kernels
        # (the kernel reads the rows it is given and only tells the values apart: a one-byte code column's index)
        cat, name = (compiled.key_values(c) for c in (cols.ev_category, cols.ev_name))
        if kernels is None or n >= 1 << 31 or not all(
            isinstance(c, np.ndarray) and c.dtype.kind in "iu" and c.dtype.itemsize <= 4 for c in (cat, name)
        ):
            return None
        thread = thread_tracks(cols)
        if thread is None:
            return None
        row_type = np.int32 if len(cols.ev_kind) < 1 << 31 else np.int64
        return cls(kernels, cols, n, row_type, (contiguous(cat), contiguous(name)), thread, trace_start)

    def feed(self, rows: np.ndarray, ts: np.ndarray, cid: np.ndarray) -> bool:
        """Walk the events ``rows`` (ascending, after those fed before) at times ``ts`` with ids ``cid``; False
        (and the walk is over) when a time goes back."""
        if not self.in_order:
            return False
        kind, cat, name, thread_col, track_of, offset = self._fixed
        rows = contiguous(rows, self.row_type)
        self.in_order = self._kernels.async_spans(
            self._state, kind, rows, rows.dtype.itemsize, cat, cat.dtype.itemsize, name, name.dtype.itemsize,
            contiguous(cid, np.uint64), contiguous(ts, np.int64), thread_col, thread_col.dtype.itemsize, track_of,
            offset, int(EventKind.ASYNC_BEGIN), int(EventKind.ASYNC_INSTANT), int(EventKind.ASYNC_END),
            self._trace_start, *self.spans, *self.instants,
        )  # fmt: skip
        self.fed += len(rows)
        return self.in_order

    def end(self, trace_end: int) -> tuple[int, int, int]:
        """End the walk: the spans laid out (unclosed ones ended at ``max(trace_end, 0)``, the unmatched ends
        after the begins); (number of begins, of unmatched ends, of instants)."""
        counts = self._kernels.async_spans_end(self._state, self.row_type.itemsize, int(trace_end), *self.spans)
        self._state = None
        return counts


def thread_tracks(cols: FxtColumns) -> tuple[np.ndarray, np.ndarray, int, np.ndarray] | None:
    """What the pairing kernel reads to give each span its process's rank (per thread, not gathered per
    span): (the thread column as it takes it: a one-byte code column's index, else the thread numbers; each
    value's rank, int32, at value + offset (the numbers' -1 at 0); the offset; the ranked pids: the processes
    of the trace's threads and 0, an unresolved thread's, ascending), or None when the column is neither (or
    codes a thread past the table: the numpy path)."""
    n_threads = len(cols.threads_pid)
    column = cols.ev_thread
    if n_threads == 0:
        return None
    pids, rank_of = np.unique(thread_pids(cols, np.arange(-1, n_threads)), return_inverse=True)
    rank_of = rank_of.astype(np.int32)
    index = getattr(column, "index", None)
    if isinstance(column, ColumnView) and compiled.plain(index, np.uint8) and len(index) == len(column):
        values = np.asarray(column.values)
        if len(values) and int(values.max()) >= n_threads:
            return None
        return index, rank_of[np.maximum(values, -1) + 1], 0, pids
    if compiled.plain(column, np.int16, np.int32):
        return column, rank_of, 1, pids
    return None
