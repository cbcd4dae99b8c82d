"""Async spans: async begin/end events matched into spans, laid out in non-overlapping lanes per process.

Keying follows the FXT spec's reader rules (Part 3, E5): the format only says begin and end share a
correlation id, so open spans are keyed by (category, name, correlation id) *globally*, not per process
(Perfetto's correlation ids are global too; Fuchsia's measurement library keys pending begins by
(category, name, id)). An end closes the innermost open span of its key (a stack, like Perfetto); the
events of a key are replayed in timestamp order, ties in file order (T4).

- A begin never ended is kept up to the end of the trace, flagged :data:`FLAG_UNCLOSED`.
- An end with no open begin is kept as a span from the start of the trace, flagged
  :data:`FLAG_UNMATCHED_END` (the trace began while it was open). The spec suggests an instant; a span
  is what the thread slices do for the same case, and a timeline shows it.
- An async instant belongs to the innermost span of its key open at its timestamp; if its key has none,
  to the single span with the same correlation id (any category/name) covering its timestamp. Others
  are counted in :attr:`AsyncTable.unbound_instants`.

Spans are shown on one async track per process (the process of the begin's thread), the spans of a
track stacked into lanes: greedy first fit in start order (a span takes the lowest lane free at its
start), which keeps the lane count at the track's maximum overlap.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Iterator
from contextlib import closing
from dataclasses import InitVar, dataclass, field

import numpy as np

from fxscope.core.computed_ahead import computed_ahead
from fxscope.core.trace import compiled
from fxscope.core.trace.compiled import contiguous
from fxscope.core.trace.event_rows import event_kind_counts, kind_rows
from fxscope.core.trace.gathered import Gathered
from fxscope.core.trace.run_merge import merge_runs
from fxscope.core.trace.segments import (
    key_rows,
    pair_searchsorted,
    segment_starts,
    segmented_running_max,
    stack_depths,
)
from fxscope.core.trace.sorting import lexsort, lexsort_unless_sorted
from fxscope.core.trace.threads import thread_pids
from fxscope.formats.filled_arrays import array_to_fill
from fxscope.formats.fxt.column_view import ColumnView
from fxscope.formats.fxt.columns import EventKind, FxtColumns
from fxscope.formats.fxt.frequent_codes import FrequentCodedColumn

FLAG_UNMATCHED_END = 1
FLAG_UNCLOSED = 2


@dataclass
class AsyncInstants:
    """Async instant events bound to a span, sorted by (span, ts)."""

    ts: Gathered  # int64 ns (cols.ev_ts[event])
    span: np.ndarray  # int32 row of AsyncTable
    event: np.ndarray  # int32 event row
    name: Gathered  # int32 -> strings (cols.ev_name[event])

    def __len__(self) -> int:
        return len(self.ts)


@dataclass
class AsyncTable:
    """One row per async span, sorted by (pid, lane, start): within a lane, starts and ends both ascend.

    ``name``, ``category``, ``id`` and ``pid`` are the reader's columns read through ``event``
    (:class:`~fxscope.core.trace.gathered.Gathered`, not copied); the processes' row ranges are kept apart (one
    entry per process) for :meth:`tracks` and :meth:`lane_rows`.
    """

    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    name: Gathered  # int32 -> strings (cols.ev_name[event])
    category: Gathered  # int32 -> strings (cols.ev_category[event])
    #: uint64 process koid of the begin's thread (of the end's, for unmatched ends):
    #: cols.threads_pid[cols.ev_thread[event]], 0 for an unresolved thread
    pid: Gathered
    id: Gathered  # uint64 correlation id (cols.ev_data[event])
    flags: np.ndarray  # uint8 FLAG_*
    lane: np.ndarray  # int32 lane within the pid's async track
    event: np.ndarray  # int32 event row of the begin (of the end, for unmatched ends)
    end_event: np.ndarray  # int32 event row of the end, -1 when unclosed
    instants: AsyncInstants
    unbound_instants: int = 0
    #: (:attr:`pids`, :attr:`pid_start`) when the build knows them (else found from :attr:`pid`)
    pid_runs: InitVar[tuple[np.ndarray, np.ndarray] | None] = None
    #: the processes with spans, ascending, and where each one's rows start (plus the row count at the end)
    pids: np.ndarray = field(init=False, repr=False)
    pid_start: np.ndarray = field(init=False, repr=False)

    def __post_init__(self, pid_runs: tuple[np.ndarray, np.ndarray] | None) -> None:
        if pid_runs is not None:
            self.pids, self.pid_start = pid_runs
            return
        pid = np.asarray(self.pid, np.uint64)
        starts = segment_starts(pid)
        self.pids = pid[starts]
        self.pid_start = np.r_[starts, len(pid)].astype(np.int64)

    def __len__(self) -> int:
        return len(self.start)

    def tracks(self) -> list[tuple[int, int]]:
        """(pid, number of lanes) of every process with async spans, by pid."""
        last = self.pid_start[1:] - 1
        return list(zip(self.pids.tolist(), (self.lane[last] + 1).tolist(), strict=True))

    def lane_rows(self, pid: int, lane: int) -> tuple[int, int]:
        """Row range ``lo:hi`` of one lane (empty when the lane does not exist)."""
        i = int(np.searchsorted(self.pids, np.uint64(pid)))
        lo = int(self.pid_start[i])
        if i == len(self.pids) or int(self.pids[i]) != pid:
            return lo, lo
        hi = int(self.pid_start[i + 1])
        a, b = key_rows(self.lane[lo:hi], lane)  # (in the lanes' dtype: no int64 copy of them)
        return lo + a, lo + b

    def rows_in(self, pid: int, lane: int, t0: int, t1: int) -> np.ndarray:
        """Rows of one lane overlapping [t0, t1), by start (spans of a lane never overlap, so ends ascend)."""
        lo, hi = self.lane_rows(pid, lane)
        a = lo + int(np.searchsorted(self.end[lo:hi], t0, "left"))
        b = lo + int(np.searchsorted(self.start[lo:hi], t1, "left"))
        return np.arange(a, max(a, b))

    def instants_of(self, row: int) -> np.ndarray:
        """Rows of :attr:`instants` bound to span ``row``."""
        return np.arange(*key_rows(self.instants.span, row))


def build_async(
    cols: FxtColumns, trace_start: int | None = None, trace_end: int | None = None, check=None
) -> AsyncTable:
    """Match the async events of ``cols`` (see the module docstring for the rules). ``check()``, when
    given, is called between the stages (a Cancel raises from it)."""
    check = check or (lambda: None)
    kind = cols.ev_kind
    # (begins to ends; every kind counted once, kept for the statistics: event_kind_counts)
    n = int(event_kind_counts(cols)[EventKind.ASYNC_BEGIN : EventKind.ASYNC_END + 1].sum())
    if trace_start is None or trace_end is None:
        ts_all = cols.ev_ts
        trace_start = int(ts_all.min()) if trace_start is None and len(ts_all) else (trace_start or 0)
        trace_end = int(ts_all.max()) if trace_end is None and len(ts_all) else (trace_end or 0)
    if n == 0:
        return _empty(cols)
    check()
    paired = _pair_compiled(cols, n, trace_start, trace_end, check)
    if paired is None:  # int32 rows below 2**31 events
        paired = _pair_numpy(cols, kind_rows(kind, EventKind.ASYNC_BEGIN, EventKind.ASYNC_END), trace_start,
                             trace_end, check)  # fmt: skip
    s_start, s_end, s_flags, s_event, s_end_event, s_id, n_begins, queries, tie_keys, tracks = paired
    del paired
    check()
    laid = _layout_compiled(cols, s_start, s_end, s_event, tracks)
    if laid is None:
        pid = thread_pids(cols, cols.ev_thread[s_event])
        # Rows sorted by (pid, lane, start): lanes first need the (pid, start) order.
        o1 = lexsort((s_event, -(s_end - s_start), s_start, pid))
        lane = np.empty(len(o1), np.int32)
        lane[o1] = _lanes(pid[o1], s_start[o1], s_end[o1])
        del o1
        check()
        final = lexsort((s_start, lane, pid))
        track, ties, pid_runs, row = pid, True, None, None
    else:
        final, row, lane, track, ties, pid_runs = laid
    if ties and tie_keys is not None:  # (spans not in the numpy path's order: equal rows put in that order)
        _order_ties(final, (track, lane, s_start), functools.partial(tie_keys, s_event=s_event, s_id=s_id))
    elif ties and laid is not None:  # (the layout's order of equal rows: the numpy path's is by span)
        _order_ties(final, (track, lane, s_start), lambda rows: [rows])
    del track
    if row is None or ties:  # span -> its row
        row = np.empty(len(final), np.int32 if len(final) < 1 << 31 else np.int64)
        row[final] = np.arange(len(final), dtype=row.dtype)
    start, end = s_start[final], s_end[final]
    del s_start, s_end
    check()
    bound = _bind_compiled(cols, queries, row[:n_begins], len(start)) if tie_keys is not None else None
    if bound is None:  # (the ids by row: only the numpy path's search by id reads them)
        bound = _bind_instants(cols, queries, row[:n_begins], start, end, s_id[final], tie_keys is not None)
    instants, unbound = bound
    # (what the pairing and the binding kept is dropped before the rows are put in order, each column's
    # unordered copy as its ordered one is made: the step's peak is here, with the table's columns)
    del bound, queries, row, tie_keys, s_id
    event = s_event[final].astype(np.int32, copy=False)
    del s_event
    flags = s_flags[final]
    del s_flags
    lane = lane[final]
    end_event = s_end_event[final].astype(np.int32, copy=False)
    del s_end_event, final
    return AsyncTable(
        start=start,
        end=end,
        name=Gathered(cols.ev_name, event),
        category=Gathered(cols.ev_category, event),
        pid=Gathered(cols.threads_pid, Gathered(cols.ev_thread, event), missing=0),
        id=Gathered(cols.ev_data, event),
        flags=flags,
        lane=lane,
        event=event,
        end_event=end_event,
        instants=instants,
        unbound_instants=unbound,
        pid_runs=pid_runs,
    )


def _layout_compiled(
    cols: FxtColumns, s_start: np.ndarray, s_end: np.ndarray, s_event: np.ndarray,
    tracks: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool, tuple[np.ndarray, np.ndarray]] | None:
    """The spans' lanes and row order by the compiled kernel (span_kernels.async_layout: a counting sort
    by process, a natural merge sort of each process's spans, which come nearly in start order, first fit,
    a counting sort by lane), or None when it is not built (``tracks``: each span's process rank and the
    ranked pids when the pairing gave them): (the spans by (pid, lane, start), each span's
    row there (int32), each span's lane, each span's process rank (the pids' order), whether some rows of a lane share a start (the
    caller orders those), the processes with spans and where each one's rows start)."""
    kernels = compiled.span_kernels
    if kernels is None or len(s_start) >= 1 << 31:
        return None
    track, pids = tracks if tracks is not None else _process_ranks(cols, s_event)
    n = len(s_start)
    lane, final, row = array_to_fill(n, np.int32), array_to_fill(n, np.int64), array_to_fill(n, np.int32)
    lanes, counts = np.empty(len(pids), np.int32), np.empty(len(pids), np.int64)
    event = contiguous(s_event)
    status = kernels.async_layout(contiguous(track, np.int32), len(pids), contiguous(s_start, np.int64),
                                  contiguous(s_end, np.int64), event, event.dtype.itemsize, lane, final, row, lanes,
                                  counts)  # fmt: skip
    has = counts > 0
    pid_runs = (pids[has], np.r_[0, np.cumsum(counts[has])].astype(np.int64))
    return final, row, lane, track, status == 2, pid_runs


def _process_ranks(cols: FxtColumns, event: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int32 rank of the process of each event's thread among ``pids``, ``pids``: the processes of the
    trace's threads and 0 (an unresolved thread's), ascending): :func:`thread_pids` as small integers in the
    pids' order, looked up per thread, not per event."""
    n_threads = len(cols.threads_pid)
    if n_threads == 0:
        return np.zeros(len(event), np.int32), np.zeros(1, np.uint64)
    pids, rank_of = np.unique(thread_pids(cols, np.arange(-1, n_threads)), return_inverse=True)
    thread = cols.ev_thread[event].astype(np.int32)
    np.maximum(thread, -1, out=thread)  # (thread_pids' 0 for any negative thread)
    thread += 1
    return rank_of.astype(np.int32)[thread], pids


def _pair_numpy(cols: FxtColumns, sel: np.ndarray, trace_start: int, trace_end: int, check) -> tuple:
    """The spans of the async events ``sel`` (see :func:`_spans`), matched with numpy: the events sorted by
    key, then time, each key's stack replayed by running sums."""
    m = _KeyMarkers(cols, sel)
    check()
    b_idx, _closed, e_idx, u_idx = _pair(m)
    m.is_begin = m.is_end = m.unmatched = m.starts = None  # type: ignore[assignment]  # (paired: done with)
    check()
    queries = _InstantQueries.of_markers(m, b_idx)  # what binding the instants needs of the markers
    s_id = m.cid_of(np.r_[b_idx, u_idx])
    m.keep_times_and_rows()  # (the markers' other columns, ~30 bytes an async event, are done with)
    return (*_spans(m.ts, m.ev, b_idx, e_idx, u_idx, trace_start, trace_end), s_id, len(b_idx), queries, None, None)


def _spans(ts: np.ndarray, ev: np.ndarray, b_idx: np.ndarray, e_idx: np.ndarray, u_idx: np.ndarray,
           trace_start: int, trace_end: int) -> tuple[np.ndarray, ...]:  # fmt: skip
    """(start, end, flags, event row, end's event row) of the spans of the begins at positions ``b_idx``
    (of the events ``ev`` at times ``ts``), closed by the ends at ``e_idx`` (-1: unclosed), then of the
    unmatched ends at ``u_idx``."""
    closed = e_idx >= 0
    s_start = np.r_[ts[b_idx], np.full(len(u_idx), trace_start, np.int64)]
    s_end = np.r_[np.where(closed, ts[np.maximum(e_idx, 0)], max(trace_end, 0)), ts[u_idx]]
    s_start = np.minimum(s_start, s_end)
    s_end = np.maximum(s_end, s_start)
    s_flags = np.r_[np.where(closed, 0, FLAG_UNCLOSED), np.full(len(u_idx), FLAG_UNMATCHED_END)].astype(
        np.uint8
    )
    s_event = ev[np.r_[b_idx, u_idx]]
    s_end_event = np.r_[np.where(closed, ev[np.maximum(e_idx, 0)], -1), ev[u_idx]]
    return s_start, s_end, s_flags, s_event, s_end_event


#: event rows whose async events are picked, their times and ids read from the file and walked at once by
#: the compiled pairing (the next block's read on a second thread meanwhile): at most 1M async events, 20 MB
#: of rows, times and ids a block, reused from one block to the next, not whole columns of them (20 bytes an
#: async event: ~150 MB at 30M events, fresh pages faulted in and zeroed)
PAIR_BLOCK = 1 << 20


def _pair_compiled(cols: FxtColumns, n: int, trace_start: int, trace_end: int, check) -> tuple | None:
    """:func:`_pair_numpy`'s spans of the ``n`` async events (begins, instants, ends) of ``cols`` by the
    compiled kernel (span_kernels.async_spans: the events in time order, one walk with each key's stack in a
    hash table, writing the spans' and instants' columns and each span's process rank as it goes), or None
    when it is not built or the columns do not fit it. The spans and instants come in time order, not by
    key: the returned tie keys let the sorts after it order equal rows as the numpy path's order does. The ids
    are the events' data words read again where needed (not columns: 8 bytes a span and an instant, for ties
    and the rare search by id).

    The events are walked in file order, those of a block of :data:`PAIR_BLOCK` rows at a time
    (:func:`_walk_blocks`): a trace's async events come in time order as a rule. When some do not (the kernel
    finds a time before the one before it), the walk starts again on every event's time and id read at once
    and sorted."""
    kernels = compiled.span_kernels
    # (the kernel reads the rows it is given and only tells the values apart: a one-byte code column's index;
    # names coded by frequency are expanded a block at a time, _name_keys)
    cat = compiled.key_values(cols.ev_category)
    whole_names = None if isinstance(cols.ev_name, FrequentCodedColumn) else compiled.key_values(cols.ev_name)
    if kernels is None or n >= 1 << 31 or not all(
        isinstance(c, np.ndarray) and c.dtype.kind in "iu" and c.dtype.itemsize <= 4
        for c in (cat, np.zeros(0, np.int16) if whole_names is None else whole_names)
    ):
        return None
    names = functools.partial(_name_keys, cols.ev_name, None if whole_names is None else contiguous(whole_names))
    thread = _thread_tracks(cols)
    if thread is None:
        return None
    row_type = np.dtype(np.int32 if len(cols.ev_kind) < 1 << 31 else np.int64)
    # (room for every event as a span and as an instant: the pages of rows never written are never touched;
    # the ids not written: the event's data word, read again for the rows that need them, ties and the search
    # by id, not kept for every span and instant)
    no_ids = np.zeros(0, np.uint64)
    spans = (np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.uint8), np.empty(n, row_type),
             np.empty(n, row_type), no_ids, np.empty(n, np.int32), np.empty(n, np.int32))  # fmt: skip
    thread_col, track_of, offset, pids = thread
    inst = (np.empty(n, row_type), np.empty(n, np.int64), no_ids, np.empty(n, np.int64))
    fixed = (contiguous(cols.ev_kind, np.uint8), contiguous(cat), thread_col, track_of, offset)
    walk = functools.partial(_walk_block, kernels, fixed, int(trace_start), (*spans, *inst))
    state = kernels.async_state(n)
    runs = _section_runs(cols)
    named = functools.partial(_names_of_rows, cols.ev_name, whole_names)
    if runs is not None:  # (a trace saved one provider after the other: its sections merged from the start)
        unordered_at = None if _walk_merged(cols, row_type, runs, named, functools.partial(walk, state), check) else 0
    else:
        unordered_at = _walk_blocks(cols, row_type, names, functools.partial(walk, state), check)
    if unordered_at is not None:
        del state  # (its stack links: 4 bytes an async event, freed before the next walk's are made)
        state = kernels.async_state(n)
        runs = _time_ordered_runs(cols, row_type, check, unordered_at)
        if runs is not None:  # (few time-ordered runs, as a one-shot trace's providers give)
            if not _walk_merged(cols, row_type, runs, named, functools.partial(walk, state), check):
                raise AssertionError("async spans: events merged in time order walked out of time order")
        else:
            sel = kind_rows(cols.ev_kind, EventKind.ASYNC_BEGIN, EventKind.ASYNC_END).astype(row_type, copy=False)
            ts, cid = cols.times_and_data(sel)  # (one pass over the records for both)
            order = lexsort_unless_sorted((sel, ts))  # timestamp order, ties in file order
            if order is not None:
                sel, ts, cid = sel[order], ts[order], cid[order]
            del order
            check()
            if not walk(state, contiguous(sel), ts, cid, *names(0, len(cols.ev_kind))):
                raise AssertionError("async spans: events sorted by time walked out of time order")
            del sel, ts, cid
    del walk
    n_begins, n_unmatched, n_instants = kernels.async_spans_end(state, row_type.itemsize, int(trace_end), *spans)
    del state
    *spans, _, s_level, s_track = (a[: n_begins + n_unmatched] for a in spans)
    s_id = Gathered(cols.ev_data, spans[3])
    i_event, i_ts, _, i_open = (a[:n_instants] for a in inst)
    queries = _InstantQueries(i_event, i_ts, Gathered(cols.ev_data, i_event), i_open)
    del inst

    def tie_keys(rows: np.ndarray, s_event: np.ndarray, s_id: np.ndarray) -> list[np.ndarray]:
        # the numpy path's order of spans: the begins by (category, name, id, stack level, time, row), then
        # the unmatched ends by (category, name, id, time, row) (np.lexsort's order: least significant first)
        ev = s_event[rows]
        return [ev, cols.ev_ts[ev], s_level[rows], s_id[rows], cols.ev_name[ev], cols.ev_category[ev],
                rows >= n_begins]  # fmt: skip

    return (*spans, s_id, n_begins, queries, tie_keys, (s_track, pids))


def _name_keys(column, whole: np.ndarray | None, start: int, stop: int) -> tuple[np.ndarray, int]:
    """The name keys the pairing kernel reads for event rows ``start..stop-1`` and the row of their first:
    ``whole`` (the column's keys, :func:`compiled.key_values`: a view, nothing built) and 0 when given; else
    the column's values of those rows (a :class:`FrequentCodedColumn`: its one-byte codes do not tell its rare
    names apart, and its whole int16 values would be 2 bytes an event built, 200 MB at 100M events)."""
    if whole is not None:
        return whole, 0
    return contiguous(np.asarray(column[start:stop])), start


def _walk_block(kernels, fixed: tuple, trace_start: int, outputs: tuple[np.ndarray, ...], state, rows: np.ndarray,
                ts: np.ndarray, cid: np.ndarray, name: np.ndarray, name_base: int) -> bool:  # fmt: skip
    """span_kernels.async_spans of one block of events (``rows``, their times and ids) in the walk ``state``
    (``fixed``: the kind and category columns and the thread column, its ranks and offset, as
    :func:`_pair_compiled` gives them; ``name``: the name keys from event row ``name_base`` on,
    :func:`_name_keys`): False when their times go back (not one walk in time order)."""
    kind, cat, thread_col, track_of, offset = fixed
    return kernels.async_spans(
        state, kind, rows, rows.dtype.itemsize, cat, cat.dtype.itemsize, name, name.dtype.itemsize, name_base,
        contiguous(cid, np.uint64), contiguous(ts, np.int64), thread_col, thread_col.dtype.itemsize, track_of,
        offset, int(EventKind.ASYNC_BEGIN), int(EventKind.ASYNC_INSTANT), int(EventKind.ASYNC_END), trace_start,
        *outputs,
    )  # fmt: skip


def _async_block(cols: FxtColumns, row_type: np.dtype, names, start: int, stop: int) -> tuple:
    """(rows, times, ids, name keys, their first row) of the async events among event rows ``start..stop-1``
    (rows of ``row_type``; the names' keys by ``names(start, stop)``, :func:`_name_keys`)."""
    rows = kind_rows(cols.ev_kind[start:stop], EventKind.ASYNC_BEGIN, EventKind.ASYNC_END).astype(row_type, copy=False)
    rows += row_type.type(start)
    if not len(rows):
        return rows, np.zeros(0, np.int64), np.zeros(0, np.uint64), np.zeros(0, np.int16), start
    return (rows, *cols.times_and_data(rows), *names(start, stop))


def _walk_blocks(cols: FxtColumns, row_type: np.dtype, names, walk, check) -> int | None:
    """``walk(rows, ts, cid, name, name_base)`` of the async events of ``cols`` (rows of ``row_type``,
    ascending), those of a block of :data:`PAIR_BLOCK` event rows at a time, with their times and ids read
    from the file and their names' keys (``names(start, stop)``) (the next block's on a worker thread while
    this one is walked), until a walk returns False (events out of time order): then the first event row of
    that block (the async events before it are in time order), else None. ``check()`` before each block (a
    Cancel raises from it and stops the reading)."""
    n = len(cols.ev_kind)
    read = functools.partial(_async_block, cols, row_type, names)
    if n <= PAIR_BLOCK:  # (one block: read here, no thread)
        check()
        block = read(0, n)
        return None if not len(block[0]) or walk(*block) else 0
    starts = range(0, n, PAIR_BLOCK)
    with closing(computed_ahead(lambda a: read(a, min(a + PAIR_BLOCK, n)), starts, "fxscope-async", check)) as blocks:
        for a, block in zip(starts, blocks, strict=False):
            if len(block[0]) and not walk(*block):
                return a
            del block
    return None


#: time-ordered runs of async events (their file order broken that many times, less one) up to which the
#: compiled pairing merges them a block at a time (:func:`_walk_merged`); past it, every async event's time,
#: id and row is read at once and sorted (~40 bytes an async event at the step's peak: +130 MB at 10M events)
MERGE_RUNS = 64
#: about how many async events a merged block holds (the runs' next events read ahead: ~20 bytes each, at
#: most three blocks' worth in all)
MERGE_BLOCK = 1 << 17
#: event rows a run's next async events are read from at once, at most (twice a run's share of a block)
MERGE_READ = 1 << 18


def _section_runs(cols: FxtColumns) -> list[tuple[int, int]] | None:
    """The event-row ranges ``[a, b)`` between the provider segments whose first event is earlier than the
    event before it (:meth:`~fxscope.formats.fxt.columns.FxtColumns.segment_rows`), when there are such
    segments and at most :data:`MERGE_RUNS` ranges: a trace saved one provider after the other, whose sections
    the pairing merges from the start (no first walk in file order to find where its times go back). Within a
    range the events may still go back (the merged walk then says so); None: walk in file order."""
    rows = cols.segment_rows()
    if not len(rows):
        return None
    back = rows[np.asarray(cols.ev_ts[rows], np.int64) < np.asarray(cols.ev_ts[rows - 1], np.int64)]
    if not len(back) or len(back) + 1 > MERGE_RUNS:
        return None
    starts = [0, *back.tolist()]
    return list(zip(starts, [*starts[1:], len(cols.ev_kind)], strict=True))


def _time_ordered_runs(cols: FxtColumns, row_type: np.dtype, check, ordered_to: int = 0,
                       ) -> list[tuple[int, int]] | None:  # fmt: skip
    """The event-row ranges ``[a, b)`` over which the async events of ``cols`` come in time order (ties in file
    order), in file order, covering every row; None past :data:`MERGE_RUNS` of them. A trace saved one provider
    after the other (Fuchsia's one-shot traces) has one run a provider. Read from the block of
    :data:`PAIR_BLOCK` event rows before ``ordered_to`` on (those before it are known to be in order: the
    first walk's), a block at a time (their times only)."""
    n = len(cols.ev_kind)
    starts = [0]
    last = None
    for a in range(max(0, ordered_to - PAIR_BLOCK), n, PAIR_BLOCK):
        check()
        rows = kind_rows(cols.ev_kind[a : a + PAIR_BLOCK], EventKind.ASYNC_BEGIN, EventKind.ASYNC_END)
        if not len(rows):
            continue
        rows = rows.astype(row_type, copy=False) + row_type.type(a)
        ts = np.asarray(cols.ev_ts[rows], np.int64)
        if last is not None and ts[0] < last:
            starts.append(int(rows[0]))
        starts.extend((rows[1:][ts[1:] < ts[:-1]]).tolist())
        if len(starts) > MERGE_RUNS:
            return None
        last = int(ts[-1])
    return list(zip(starts, [*starts[1:], n], strict=True))


class _Unordered(Exception):
    """A run given to the merged walk is not in time order (a provider's section whose times go back)."""


class _Run:
    """One time-ordered run of async events (:func:`_time_ordered_runs`) as a merged walk takes it: the rows,
    times and ids of its next events read ahead, and the event row its reading is at. Its times are checked as
    they are read (:class:`_Unordered`): the merge is right only for runs in time order."""

    def __init__(self, row_type: np.dtype, start: int, stop: int) -> None:
        self.rows = np.zeros(0, row_type)
        self.ts = np.zeros(0, np.int64)
        self.cid = np.zeros(0, np.uint64)
        self.at, self.stop = start, stop
        self.last: int | None = None  # the time of the last event read

    def read(self, cols: FxtColumns, want: int, chunk: int) -> None:
        """Read ahead, ``chunk`` event rows at a time, until ``want`` events are held or the run is read."""
        parts = [(self.rows, self.ts, self.cid)]
        held = len(self.rows)
        while held < want and self.at < self.stop:
            b = min(self.stop, self.at + chunk)
            rows = kind_rows(cols.ev_kind[self.at : b], EventKind.ASYNC_BEGIN, EventKind.ASYNC_END)
            rows = rows.astype(self.rows.dtype, copy=False) + self.rows.dtype.type(self.at)
            self.at = b
            if len(rows):
                ts, cid = cols.times_and_data(rows)
                if (self.last is not None and ts[0] < self.last) or np.any(ts[1:] < ts[:-1]):
                    raise _Unordered
                self.last = int(ts[-1])
                parts.append((rows, ts, cid))
                held += len(rows)
        if len(parts) > 1:
            self.rows, self.ts, self.cid = (np.concatenate(c) for c in zip(*parts, strict=True))

    @property
    def read_whole(self) -> bool:
        return self.at >= self.stop

    def take(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The next ``k`` events held (rows, times, ids), dropped from the run."""
        out = self.rows[:k], self.ts[:k], self.cid[:k]
        self.rows, self.ts, self.cid = self.rows[k:], self.ts[k:], self.cid[k:]
        return out


def _names_of_rows(column, whole: np.ndarray | None, rows: np.ndarray) -> tuple[np.ndarray, int]:
    """The name keys the pairing kernel reads for a merged block's ``rows`` (from several parts of the file):
    ``whole`` and 0 (:func:`_name_keys`), else the names of the rows themselves, one a row (``name_base`` -1:
    by position)."""
    if whole is not None:
        return whole, 0
    return contiguous(np.asarray(column[rows])), -1


def _walk_merged(cols: FxtColumns, row_type: np.dtype, runs: list[tuple[int, int]], names, walk, check) -> bool:
    """``walk(rows, ts, cid, name, name_base)`` of every async event of ``cols`` in time order, ties in file order,
    a block at a time (:func:`_merged_blocks`, the next block merged on a worker thread while this one is
    walked): False when a walk returns False or a run is not in time order (the walk's state is then no
    longer any walk's: start again with a new one)."""
    blocks = _merged_blocks(cols, row_type, runs, names)
    ahead = computed_ahead(lambda _: next(blocks, None), itertools.repeat(None), "fxscope-async-merge", check)
    with closing(ahead):
        try:
            for block in ahead:
                if block is None:
                    return True
                if not walk(*block):
                    return False
        except _Unordered:  # (a run's times go back: not runs to merge)
            return False
    return True


def _merged_blocks(cols: FxtColumns, row_type: np.dtype, runs: list[tuple[int, int]], names) -> Iterator[tuple]:
    """The async events of ``cols`` in time order, ties in file order, a block at a time: (rows, times, ids,
    name keys, their base), merged from the time-ordered ``runs`` (:func:`_time_ordered_runs`). Each run's next
    events are read ahead (:class:`_Run`); a block takes from every run its events before the earliest of the
    times the runs' read-ahead reaches (none later can come before them), put in time order by one stable sort
    (the runs are in file order), ``names(rows)`` their name keys (:func:`_names_of_rows`). Its memory is a
    block's, never a multiple of the trace's async events."""
    active = [_Run(row_type, a, b) for a, b in runs]
    while True:
        active = [r for r in active if len(r.rows) or not r.read_whole]
        if not active:
            return
        per = max(MERGE_BLOCK // len(active), 1)
        chunk = min(MERGE_READ, 2 * per)
        for r in active:
            r.read(cols, per, chunk)
        # runs not all held: their events past the read-ahead are no earlier than its last one (in order)
        bounds = [int(r.ts[min(per, len(r.ts)) - 1]) for r in active if not r.read_whole and len(r.ts)]
        if not bounds:
            counts = [len(r.rows) for r in active]
        else:
            t = min(bounds)
            counts = [int(np.searchsorted(r.ts, t, "left")) for r in active]
            if not any(counts):  # every run's next event at t: those at t, with each run read past it
                for r in active:
                    while not r.read_whole and len(r.ts) and r.ts[-1] <= t:
                        r.read(cols, len(r.rows) + chunk, chunk)
                counts = [int(np.searchsorted(r.ts, t, "right")) for r in active]
        parts = [r.take(k) for r, k in zip(active, counts, strict=True) if k]
        if not parts:
            continue
        starts = np.cumsum([0] + [len(p[0]) for p in parts], dtype=np.int64)
        rows, ts, cid = (np.concatenate(c) for c in zip(*parts, strict=True))
        del parts
        # (the parts in file order, each in time order: merged, ties in file order)
        rows, ts, cid = merge_runs(starts, ts, rows, cid)
        yield (contiguous(rows), ts, cid, *names(rows))


def _thread_tracks(cols: FxtColumns) -> tuple[np.ndarray, np.ndarray, int, np.ndarray] | None:
    """What the pairing kernel reads to give each span its process's rank (:func:`_process_ranks`, per
    thread, not gathered per span): (the thread column as it takes it: a one-byte code column's index, else
    the thread numbers; each value's rank, int32, at value + offset (the numbers' -1 at 0); the offset; the
    ranked pids), or None when the column is neither (or codes a thread past the table: the numpy path)."""
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


def _order_ties(order: np.ndarray, primary: tuple[np.ndarray, ...], extra) -> None:
    """Reorder, in place, the runs of ``order`` (a stable order by the ``primary`` columns) equal in all of
    them by the keys ``extra(rows)`` gives for their rows (np.lexsort's order: least significant first)."""
    n = len(order)
    if n < 2:
        return
    same = np.ones(n - 1, bool)
    for key in primary:
        ks = np.asarray(key)[order]
        same &= ks[1:] == ks[:-1]
        del ks
    if not same.any():
        return
    in_run = np.zeros(n, bool)
    in_run[:-1] = same
    in_run[1:] |= same
    at = np.flatnonzero(in_run)
    run = np.cumsum(np.r_[True, ~same[at[1:] - 1]])
    rows = order[at]
    order[at] = rows[np.lexsort([*extra(rows), run])]


class _KeyMarkers:
    """The async events sorted by key (category, name, id), then time, then file order (``ev``: their
    rows), with the stack of each key replayed: ``after`` the depth after each event, ``unmatched`` the ends
    that found their key's stack empty (all False when none did)."""

    def __init__(self, cols: FxtColumns, sel: np.ndarray) -> None:
        ts, cid = cols.times_and_data(sel)
        cat = cols.ev_category[sel]
        name = cols.ev_name[sel]
        order = lexsort((sel, ts, cid, name, cat))  # (file order and time: in order as a rule, not sorted)
        # gathered one column at a time, each unsorted one dropped as its sorted copy is made
        self.ev = sel[order]
        self.ts = ts[order]
        del ts
        cid = cid[order]
        cat = cat[order]
        name = name[order]
        del order
        self.k = cols.ev_kind[self.ev]
        n = len(self.ev)
        new_key = np.r_[True, (cat[1:] != cat[:-1]) | (name[1:] != name[:-1]) | (cid[1:] != cid[:-1])]
        del cat, name
        self.starts = np.flatnonzero(new_key)
        #: each key's id (the events' ids are their key's: :meth:`cid_of`, not a column of 8 bytes an event)
        self.key_cid = cid[self.starts]
        del cid
        #: key number of each event (int32: half the memory of an int64 one; widened where multiplied)
        self.seg = np.cumsum(new_key, dtype=np.int32)
        self.seg -= 1
        del new_key
        self.is_begin = self.k == EventKind.ASYNC_BEGIN
        self.is_end = self.k == EventKind.ASYNC_END
        self.after, unmatched = stack_depths(
            self.is_begin.view(np.int8) - self.is_end.view(np.int8), self.starts, self.seg
        )
        self.unmatched = unmatched if unmatched is not None else np.zeros(n, bool)

    def cid_of(self, rows: np.ndarray) -> np.ndarray:
        """uint64 correlation id of the events at sorted positions ``rows``."""
        return self.key_cid[self.seg[rows]]

    def keep_times_and_rows(self) -> None:
        """Drop every column but :attr:`ts` and :attr:`ev` (paired and bound, the spans need only those)."""
        self.key_cid = self.k = self.seg = self.starts = self.is_begin = self.is_end = self.after = None  # type: ignore[assignment]
        self.unmatched = None  # type: ignore[assignment]


def _pair(m: _KeyMarkers) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(begin markers grouped by (key, level they open), by marker; whether each is closed; the marker
    closing it, -1 if none; the ends that found their stack empty).

    Begins and ends of one (key, stack level) alternate, so a stable sort and a shift pair them.
    """
    pairable = np.flatnonzero((m.is_begin | m.is_end) & ~m.unmatched)
    level = np.where(m.is_begin[pairable], m.after[pairable] - 1, m.after[pairable])
    o = lexsort((pairable, level, m.seg[pairable]))
    g = pairable[o]
    g_level, g_seg = level[o], m.seg[g]
    del pairable, level, o
    same_next = np.r_[(g_seg[1:] == g_seg[:-1]) & (g_level[1:] == g_level[:-1]) & m.is_end[g[1:]], False]
    b_at = np.flatnonzero(m.is_begin[g])
    closed = same_next[b_at]
    e_idx = np.where(closed, g[np.minimum(b_at + 1, len(g) - 1)], -1)
    return g[b_at], closed, e_idx, np.flatnonzero(m.unmatched)


class _InstantQueries:
    """The async instants' event rows, times and ids, and for each the position (among the begins of the
    spans, ``begins``) of the innermost span of its key open at its timestamp, or -1: what
    :func:`_bind_instants` needs of the markers, taken before they are dropped."""

    def __init__(self, ev: np.ndarray, ts: np.ndarray, cid: np.ndarray, pos: np.ndarray) -> None:
        self.ev, self.ts, self.cid, self.pos = ev, ts, cid, pos

    @classmethod
    def of_markers(cls, m: _KeyMarkers, begins: np.ndarray) -> _InstantQueries:
        """The instants of markers ``m``, ``begins`` grouped by (key, stack level they open)."""
        inst = np.flatnonzero(m.k == EventKind.ASYNC_INSTANT)
        pos = np.full(len(inst), -1, np.int64)
        # Innermost open span of the key = the latest begin before the instant at stack level after - 1.
        after = m.after
        open_ = after[inst] > 0
        if open_.any():
            levels = int(after.max()) + 1
            lane_key = m.seg[begins].astype(np.int64) * levels + after[begins] - 1  # (key, level), ascending
            q = inst[open_]
            q_key = m.seg[q].astype(np.int64) * levels + after[q] - 1
            pos[open_] = np.maximum(pair_searchsorted(lane_key, begins, q_key, q, "right") - 1, 0)
        return cls(m.ev[inst], m.ts[inst], m.cid_of(inst), pos)


def _bind_instants(
    cols: FxtColumns,
    q: _InstantQueries,
    begin_row: np.ndarray,
    span_start: np.ndarray,
    span_end: np.ndarray,
    span_id: np.ndarray,
    time_ordered: bool = False,
) -> tuple[AsyncInstants, int]:
    """Span row of every async instant: the innermost open span of its key, else the single span of its id.

    ``begin_row``: the spans' rows of the begins that ``q.pos`` indexes. ``time_ordered``: the queries come
    in time order, not by key (the compiled pairing's): instants of one span at one time are then put in
    the numpy path's order, by (category, name, id, row).
    """
    span = np.where(q.pos >= 0, begin_row[np.maximum(q.pos, 0)], -1) if len(begin_row) else q.pos.copy()
    # Fallback: exactly one span with the same id covers the instant's timestamp.
    loose = np.flatnonzero(span < 0)
    if len(loose) and len(span_start):
        span[loose] = _single_cover(span_id, span_start, span_end, q.cid[loose], q.ts[loose])
    bound = span >= 0
    b_span, b_ts = span[bound], q.ts[bound]
    o = _instant_order(b_span, b_ts, len(span_start)) if time_ordered else lexsort((b_ts, b_span))
    if time_ordered:
        b_ev, b_cid = q.ev[bound], q.cid[bound]
        _order_ties(o, (b_span, b_ts),
                    lambda rows: [b_ev[rows], b_cid[rows], cols.ev_name[b_ev[rows]], cols.ev_category[b_ev[rows]]])  # fmt: skip
    event = q.ev[bound][o].astype(np.int32)
    out = AsyncInstants(
        ts=Gathered(cols.ev_ts, event),
        span=b_span[o].astype(np.int32),
        event=event,
        name=Gathered(cols.ev_name, event),
    )
    return out, int((~bound).sum())


def _bind_compiled(
    cols: FxtColumns, q: _InstantQueries, begin_row: np.ndarray, n_spans: int
) -> tuple[AsyncInstants, int] | None:
    """:func:`_bind_instants` of instants in time order by the compiled kernel (span_kernels.async_instant_order:
    each instant's span and a counting sort by span, in one pass), or None when it is not built or some
    instant has no open span of its key (the search by id is the numpy path's)."""
    kernels = compiled.span_kernels
    if kernels is None or not len(q.pos) or n_spans >= 1 << 31:
        return None
    span = array_to_fill(len(q.pos), np.int32)
    order = array_to_fill(len(q.pos), np.int64)
    status = kernels.async_instant_order(contiguous(q.pos, np.int64), contiguous(begin_row, np.int32),
                                         contiguous(q.ts, np.int64), n_spans, span, order)  # fmt: skip
    if status == 1:
        return None
    if status == 2:
        _order_ties(order, (span, q.ts),
                    lambda rows: [q.ev[rows], q.cid[rows], cols.ev_name[q.ev[rows]], cols.ev_category[q.ev[rows]]])  # fmt: skip
    event = q.ev[order].astype(np.int32, copy=False)
    out = AsyncInstants(
        ts=Gathered(cols.ev_ts, event), span=span[order], event=event, name=Gathered(cols.ev_name, event)
    )
    return out, 0


def _instant_order(span: np.ndarray, ts: np.ndarray, n_spans: int) -> np.ndarray:
    """The stable order of instants (given in time order) by (span, time): by the compiled kernel (a
    counting sort by span, the few instants of a span by insertion) when it takes them, else by lexsort."""
    kernels = compiled.span_kernels
    if kernels is not None and len(span) and n_spans < 1 << 31:
        order = np.empty(len(span), np.int64)
        if kernels.group_order(contiguous(span, np.int32), contiguous(ts, np.int64), _NO_KEYS, _NO_KEYS, n_spans, order) == 0:
            return order
    return lexsort((ts, span))


#: (no keys after the time for :func:`_instant_order`'s kernel)
_NO_KEYS = np.zeros(0, np.uint64)


def _single_cover(
    span_id: np.ndarray, start: np.ndarray, end: np.ndarray, q_id: np.ndarray, q_ts: np.ndarray
) -> np.ndarray:
    """For each query (id, ts): the row of the only span with that id and start <= ts <= end, else -1."""
    m = len(start)
    by_start = lexsort((start, span_id))
    by_end = lexsort((end, span_id))
    s_id, s_start = span_id[by_start], start[by_start]
    first = np.searchsorted(s_id, q_id, "left")
    started = pair_searchsorted(s_id, s_start, q_id, q_ts, "right")  # rows of the id with start <= ts
    e_id = span_id[by_end]
    ended = pair_searchsorted(e_id, end[by_end], q_id, q_ts, "left") - np.searchsorted(e_id, q_id, "left")
    covering = (started - first) - ended
    # The only covering span is the started one with the latest end: a segmented running argmax.
    end_rank = np.empty(m, np.int64)
    end_rank[np.argsort(end[by_start], kind="stable")] = np.arange(m)
    group = np.cumsum(np.r_[True, s_id[1:] != s_id[:-1]]) - 1
    val = np.maximum.accumulate(group * (m + 1) + end_rank)
    pos_of_rank = np.empty(m, np.int64)
    pos_of_rank[end_rank] = np.arange(m)
    best = pos_of_rank[val - group * (m + 1)]
    last = np.maximum(started - 1, 0)
    return np.where(covering == 1, by_start[best[last]], -1)


def _lanes(group: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """:func:`assign_lanes`'s lanes, by the compiled kernel (one walk, the busy and free lanes in heaps)
    when it is built and takes the spans, else by :func:`assign_lanes`."""
    kernels = compiled.span_kernels
    if kernels is not None and len(start) < 1 << 31:
        lane = np.empty(len(start), np.int32)
        if kernels.first_fit_lanes(contiguous(group, np.uint64), contiguous(start, np.int64), contiguous(end, np.int64), lane) == 0:
            return lane
    return assign_lanes(group, start, end)


def assign_lanes(group: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Greedy first-fit lanes (lowest lane free at the start) for spans sorted by (group, start).

    A lane is free again at its last span's end (touching spans share a lane). Spans that overlap nothing
    before them in their group start a "cluster" with every lane free: a lone span gets lane 0. Most
    clusters need two lanes at most (a span overlaps at most one span open before it, the one with the
    latest end): there each span takes the other lane than that one's, so a span's lane flips exactly when
    the span before it raised the cluster's latest end, a parity computed for every cluster at once
    (:func:`_two_lane_parity`). A cluster where that layout overlaps itself in a lane has three spans
    open at once somewhere (no two-lane layout exists); only those are walked (:func:`_first_fit`).
    """
    n = len(start)
    if n == 0:
        return np.zeros(0, np.int32)
    gstart = segment_starts(group)
    latest = segmented_running_max(end, gstart)  # the latest end so far in the group
    fresh = np.ones(n, bool)
    fresh[1:] = start[1:] >= latest[:-1]
    fresh[gstart] = True
    cluster = np.cumsum(fresh) - 1
    lane = _two_lane_parity(fresh, latest, cluster)
    bad = _clusters_overlapping_in_a_lane(lane, start, end, cluster)
    if bad.any():
        rows = np.flatnonzero(bad)
        sub_group = segment_starts(group[rows])
        for a, b in zip(sub_group.tolist(), np.r_[sub_group[1:], len(rows)].tolist(), strict=True):
            part = rows[a:b]
            lane[part] = _first_fit(start[part], end[part], fresh[part])
    return lane


def _two_lane_parity(fresh: np.ndarray, latest: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    """int32 lanes 0/1: 0 at each cluster's first span, then flipped after every span that raised the
    cluster's latest end (the first span of a cluster raises it)."""
    n = len(fresh)
    raised = np.ones(n, bool)
    raised[1:] = latest[1:] > latest[:-1]
    raised |= fresh
    flip = np.zeros(n, np.int64)
    flip[1:] = raised[:-1] & ~fresh[1:]
    np.cumsum(flip, out=flip)
    flip -= flip[np.flatnonzero(fresh)][cluster]  # restart at every cluster
    return (flip & 1).astype(np.int32)


def _clusters_overlapping_in_a_lane(
    lane: np.ndarray, start: np.ndarray, end: np.ndarray, cluster: np.ndarray
) -> np.ndarray:
    """Which spans belong to a cluster where some span starts before the end of the one before it in its
    lane (spans of a lane, in start order, must not overlap: checking each against the previous one is
    enough)."""
    bad_cluster = np.zeros(int(cluster[-1]) + 1, bool)
    for value in (0, 1):
        rows = np.flatnonzero(lane == value)
        a, b = rows[:-1], rows[1:]
        clash = (cluster[a] == cluster[b]) & (start[b] < end[a])
        bad_cluster[cluster[b[clash]]] = True
    return bad_cluster[cluster]


def _first_fit(start: np.ndarray, end: np.ndarray, fresh: np.ndarray) -> np.ndarray:
    """Lowest free lane at each start, for spans of one group sorted by start, with ``fresh`` at each
    cluster's first span (every lane free there): a plain loop, the free lanes in a heap.

    Lanes free up as the spans' ends pass, walked in end order (ties in row order) alongside the starts,
    so the loop does no heap work for the busy lanes. An end reached before its span has begun (a span of
    length zero, at the start being placed) frees its lane right after that span is placed, as the ends
    of the spans placed earlier do. About 0.4 us a span (1M spans needing 5,000 lanes: 0.4 s).
    """
    by_end = np.argsort(end, kind="stable")
    passed = np.searchsorted(end[by_end], start, "right").tolist()  # ends <= each start
    ends = by_end.tolist()
    lane = [0] * len(start)
    free: list[int] = []
    waiting: list[int] = []  # spans whose end passed before they began
    push, pop = heapq.heappush, heapq.heappop
    used = p = 0
    for i, (limit, new_cluster) in enumerate(zip(passed, fresh.tolist(), strict=True)):
        if waiting:
            for j in [j for j in waiting if j < i]:
                push(free, lane[j])
            waiting = [j for j in waiting if j >= i]
        while p < limit:
            j = ends[p]
            p += 1
            if j < i:
                push(free, lane[j])
            else:
                waiting.append(j)
        if new_cluster:
            free.clear()
            used = 0
        if free:
            lane[i] = pop(free)
        else:
            lane[i] = used
            used += 1
    return np.array(lane, np.int32)


def _empty(cols: FxtColumns) -> AsyncTable:
    z = np.zeros(0, np.int64)
    i32 = np.zeros(0, np.int32)
    return AsyncTable(
        start=z, end=z.copy(), name=Gathered(cols.ev_name, i32), category=Gathered(cols.ev_category, i32),
        pid=Gathered(cols.threads_pid, i32, missing=0), id=Gathered(cols.ev_data, i32), flags=np.zeros(0, np.uint8),
        lane=i32.copy(), event=i32, end_event=i32.copy(),
        instants=AsyncInstants(Gathered(cols.ev_ts, i32), i32.copy(), i32, Gathered(cols.ev_name, i32)),
    )  # fmt: skip
