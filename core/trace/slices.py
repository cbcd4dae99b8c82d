"""Thread slices: duration begin/end events matched as a stack, plus complete events, with depth and self time.

Everything is vectorized over numpy columns (no Python object per event), because a timeline must build
this for tens of millions of events. The matching follows what a trace viewer user expects:

- On each thread, an end closes the innermost open slice (a stack), by timestamp order; ties keep file
  order, except that the end of a complete event comes before anything else at the same timestamp
  (unless the complete event has zero length: then its end follows its own begin).
- An end with no open slice (the trace started mid-stack, as magic-trace output does) is kept: it becomes
  a slice from the thread's first timestamp to that end, flagged :data:`FLAG_UNMATCHED_END`. A later such
  end is the outer one, as it would be on a real stack.
- A begin never closed is kept up to the end of the trace, flagged :data:`FLAG_UNCLOSED`.

Depth and nesting come from the running stack depth: a begin at stack level L opens a slice at depth L,
and within one (thread, level) begins and ends alternate, so pairing is a stable sort plus a shift.
"""

from __future__ import annotations

import bisect
import collections
import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from fxscope.core.released_rows import RecycledPages
from fxscope.core.trace import compiled
from fxscope.core.trace.column_blocks import column_blocks
from fxscope.core.trace.complete_ends import CompleteEnds
from fxscope.core.trace.gathered import Gathered
from fxscope.core.trace.segments import segment_ids, segment_starts, stack_depths
from fxscope.core.trace.sorting import lexsort
from fxscope.formats.filled_arrays import array_to_fill
from fxscope.formats.fxt.column_view import ColumnView
from fxscope.formats.fxt.columns import EventKind, FxtColumns

FLAG_UNMATCHED_END = 1
FLAG_UNCLOSED = 2


@dataclass
class SliceTable:
    """One row per slice, sorted by (thread, start). Column ``event`` indexes the reader's event rows.

    ``thread``, ``name`` and ``category`` are the reader's ``ev_thread``/``ev_name``/``ev_category`` read
    through ``event`` (:class:`~fxscope.core.trace.gathered.Gathered`: not copied, 12 bytes a slice saved; a
    slice's thread is its begin's, complete event's or unmatched end's); self time is computed from
    ``parent`` for the rows asked for (:meth:`self_dur_of`), not stored.
    """

    ts: np.ndarray  # int64 ns
    dur: np.ndarray  # int64 ns
    thread: Gathered  # int16/int32 -> FxtColumns.threads_* (cols.ev_thread[event])
    depth: np.ndarray  # uint16
    name: Gathered  # int32 -> strings (cols.ev_name[event])
    category: Gathered  # int32 -> strings (cols.ev_category[event])
    event: np.ndarray  # int32 event row of the begin (or complete, or unmatched end) record
    flags: np.ndarray  # uint8 FLAG_*
    parent: np.ndarray  # int32 row of the enclosing slice, -1 at depth 0

    def __len__(self) -> int:
        return len(self.ts)

    @property
    def end(self) -> np.ndarray:
        return self.ts + self.dur

    def self_dur_of(self, rows: np.ndarray) -> np.ndarray:
        """int64 ns self time of ``rows``: duration minus the children's durations (at least 0).

        One vectorized pass over :attr:`parent` whatever the number of rows (about 10 ms per million
        slices): the children of the rows are the slices whose parent is one of them.
        """
        rows = np.asarray(rows, np.int64).reshape(-1)
        n = len(self.parent)
        if len(rows) * 4 >= n:  # most of the table: every slice's children at once, then the rows
            return self.self_dur[rows]
        where = np.full(n + 1, -1, np.int32)  # 1 + slice row -> position in ``rows`` (parent -1 -> none)
        where[rows + 1] = np.arange(len(rows), dtype=np.int32)
        slot = where[self.parent + 1]
        take = slot >= 0
        # float weights sum exactly below 2**53 ns (104 days): children never outlast their parent
        child = np.bincount(slot[take], weights=self.dur[take], minlength=len(rows)).astype(np.int64)
        return np.maximum(self.dur[rows] - child, 0)

    @property
    def self_dur(self) -> np.ndarray:
        """int64 ns self time of every slice (computed on each access: see :meth:`self_dur_of`)."""
        child = np.bincount(self.parent + 1, weights=self.dur, minlength=len(self.parent) + 1)[1:]
        return np.maximum(self.dur - child.astype(np.int64), 0)

    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in self.__dataclass_fields__)


def _empty(cols: FxtColumns) -> SliceTable:
    z = np.zeros(0, np.int64)
    event = np.zeros(0, np.int32)
    return SliceTable(
        z, z.copy(), Gathered(cols.ev_thread, event), np.zeros(0, np.uint16), Gathered(cols.ev_name, event),
        Gathered(cols.ev_category, event), event, np.zeros(0, np.uint8), np.zeros(0, np.int32),
    )  # fmt: skip


#: duration events matched together, at most (whole threads: one thread's events may be more): the
#: temporaries of one batch, about 100 bytes an event, then stay small enough for the allocator to reuse
#: them from one batch to the next instead of mapping (and faulting in) fresh memory for each. 2**18: a
#: batch takes ~0.1 s at 10M events (a Cancel is checked between batches), and the build measured no
#: slower than with 2**20 (2.2-2.9 s against 3.2-3.5 s for the 10M-event benchmark trace)
BATCH_EVENTS = 1 << 18


def build_slices(cols: FxtColumns, trace_end: int | None = None, check=None,
                 complete: CompleteEnds | None = None,
                 times_seen: Callable[[np.ndarray], None] | None = None) -> SliceTable:  # fmt: skip
    """Match duration events of every thread into slices (see the module docstring for the rules).

    Threads are independent: they are matched in batches of whole threads (:data:`BATCH_EVENTS`), whose
    slices, each batch sorted, are the table's rows in thread order. ``check()``, when given, is called
    between batches (a Cancel raises from it). ``complete``: the complete events' ends, when the caller
    has read them already (the model, for its time extent). ``times_seen(ts)``, when given, is called with
    every event's time when the build reads them all (the compiled path): int64 blocks of rows in row order,
    each row once, so that the caller can count them while they are in memory (the model's density strip)
    instead of reading the whole column from the file again.
    """
    kind = cols.ev_kind
    counted = _count_compiled(cols)  # (the compiled loops' count of the duration events, when they take these columns)
    if counted is not None and counted.n_sel == 0:
        return _empty(cols)
    if counted is None:
        sel = np.flatnonzero((kind >= EventKind.DURATION_BEGIN) & (kind <= EventKind.DURATION_COMPLETE))
        if len(sel) == 0:
            return _empty(cols)
    if complete is None:
        complete = CompleteEnds(cols)
    if trace_end is None:
        end_max = complete.latest()
        trace_end = max(int(cols.ev_ts.max()), -1 if end_max is None else end_max)
    if counted is not None:
        return _table_of(cols, *_match_compiled(cols, complete, counted, trace_end, check, times_seen))
    # every begin and complete event is a slice (and every unmatched end, which only grows the table)
    table = _Table(len(sel) - int(np.count_nonzero(kind == EventKind.DURATION_END)))
    _match_batches(cols, complete, sel, trace_end, check, table.add)
    del sel
    return _table_of(cols, *table.columns())


def _table_of(cols: FxtColumns, ts, dur, depth, event, flags, parent) -> SliceTable:
    """The :class:`SliceTable` of the matched columns (the thread, name and category read through ``event``)."""
    return SliceTable(
        ts=ts,
        dur=dur,
        thread=Gathered(cols.ev_thread, event),
        depth=depth,
        name=Gathered(cols.ev_name, event),
        category=Gathered(cols.ev_category, event),
        event=event,
        flags=flags,
        parent=parent,
    )


#: thread values told apart by the compiled grouping, at most (a counting sort: one slot a value)
COMPILED_THREAD_SPAN = 1 << 24


class _Counted(NamedTuple):
    """:func:`_count_compiled`'s count of the duration events, for :func:`_match_compiled`."""

    n_sel: int  # duration events
    n_end: int  # ends among them
    keys: np.ndarray  # the thread key column as the loops take it (uint8 codes, int16 or int32 values)
    width: int  # its item size
    lo: int  # the value of thread key 0 (keys - lo: 0.. n_keys - 1)
    ptr: np.ndarray  # int64: each thread key's first duration event in the grouping (thread_counts)
    cptr: np.ndarray  # int64: each thread key's first complete event in the grouping


def thread_keys(column) -> np.ndarray | None:
    """The event thread column as the grouping loops (and the lanes' :func:`~fxscope.core.trace.model._lane_rows_compiled`) take it: a one-byte code column as its uint8 index as it
    is (its values ascend with the index: grouped by index is grouped by value, in the same order; not
    expanded to its values, 2 bytes an event), else its int16/int32 values (:func:`compiled.values`)."""
    keys = compiled.key_values(column)
    if keys is not None and keys.dtype == np.uint8:
        values = getattr(column, "values", None)
        if values is None or not bool(np.all(values[1:] > values[:-1])):  # (not ascending: its values then)
            return compiled.values(column, np.int16, np.int32)
    return keys


def _count_compiled(cols: FxtColumns) -> _Counted | None:
    """The duration events counted per thread by the compiled loops (slice_kernels.c: one pass over the kind
    and thread columns, no times read), or None when they are not built or do not take these columns (the
    numpy path then). The thread key column is handed on to :func:`_match_compiled`."""
    kernels = compiled.slice_kernels
    kind, ts = cols.ev_kind, cols.ev_ts
    if kernels is None or not (compiled.plain(kind, np.uint8) and len(kind) < 1 << 31
                               and (compiled.plain(ts, np.int64) or isinstance(ts, ColumnView))):  # fmt: skip
        return None
    keys = thread_keys(cols.ev_thread)
    if keys is None:
        return None
    width = keys.dtype.itemsize
    if width == 1:  # (a code's 256 keys: counted in the same pass as the events)
        lo, n_keys = 0, 256
    else:
        n_sel, n_end, lo, hi = kernels.duration_threads(kind, keys, width == 4)
        if n_sel == 0:
            return _Counted(0, 0, keys, width, 0, np.zeros(1, np.int64), np.zeros(1, np.int64))
        if hi - lo >= COMPILED_THREAD_SPAN:
            return None
        n_keys = hi - lo + 1
    ptr, cptr = np.empty(n_keys + 1, np.int64), np.empty(n_keys + 1, np.int64)
    n_sel, n_end = kernels.thread_counts(kind, keys, width, lo, ptr, cptr)
    return _Counted(n_sel, n_end, keys, width, lo, ptr, cptr)


#: event rows whose times are read (from the mapped file) and grouped at once: 8 MB of times, reused from
#: one block to the next, not a whole-column copy (8 bytes an event: 240 MB at 30M events)
GROUP_BLOCK = 1 << 20


def _match_compiled(cols: FxtColumns, complete: CompleteEnds, counted: _Counted, trace_end: int, check,
                    times_seen: Callable[[np.ndarray], None] | None = None) -> list[np.ndarray]:  # fmt: skip
    """The slice columns (ts, dur, depth, event, flags, parent) by the compiled loops (slice_kernels.c): the
    duration events grouped by thread in one pass over the file, a block of :data:`GROUP_BLOCK` rows at a
    time (rows, times, kinds and complete events' ends copied out per thread: 21 bytes a duration event while
    the table is built; the next block's times read on a second thread meanwhile), then each thread's
    markers replayed on a stack in one pass, written straight into the table, in steps of whole threads of
    about :data:`IN_FLIGHT_EVENTS` events (``check()`` before each: ~20 ms of work at most, a large thread
    alone excepted). The same rules and results as the numpy path (:func:`_match`). ``counted``:
    :func:`_count_compiled`'s; ``times_seen``: see :func:`build_slices`."""
    kernels = compiled.slice_kernels
    assert kernels is not None
    n_sel, n_end, keys, width, lo, ptr, cptr = counted
    n_keys = len(ptr) - 1
    order, ts_g, kind_g = array_to_fill(n_sel, np.int32), array_to_fill(n_sel, np.int64), array_to_fill(n_sel, np.uint8)
    cend_g = array_to_fill(len(complete), np.int64)
    nxt, cnxt = ptr[:-1].copy(), cptr[:-1].copy()
    crow, cend = complete.rows, np.ascontiguousarray(complete.ends, np.int64)
    kind, n, j = cols.ev_kind, len(cols.ev_kind), 0
    for start, ts in column_blocks(cols.ev_ts, n, GROUP_BLOCK, np.int64, check):
        j = kernels.scatter_threads(kind, keys, width, lo, start, ts, crow, cend, j, nxt, cnxt, order, ts_g,
                                    kind_g, cend_g)  # fmt: skip
        if times_seen is not None:
            times_seen(ts)
        del ts
    if j != len(crow) or not np.array_equal(nxt, ptr[1:]) or not np.array_equal(cnxt, cptr[1:]):
        raise ValueError("slices: the duration events grouped are not those counted")
    del keys, nxt, cnxt
    grouped = (order, ptr, ts_g, kind_g, cend_g, cptr)
    capacity = n_sel - n_end  # every begin and complete event is a slice (unmatched ends grow the table)
    # (not populated ahead: faulted in as the matching writes it, while the grouped rows matched are given
    # back, the step's peak is about the larger of the two, not their sum: _MatchedRelease)
    out = [np.empty(capacity, t) for t in _COLUMN_TYPES]
    n_out, key = 0, 0
    bounds = ptr.tolist()
    # the matching's scratch (~70 bytes an event of the largest thread), one buffer for every step: allocated
    # at each step it was a fresh mapping each time, faulted in again (~2 s of system time at 100M events)
    largest = int(np.diff(ptr).max()) if n_keys else 0
    scratch = np.empty(kernels.match_scratch(largest), np.uint8)
    released = _MatchedRelease(grouped, out)
    while key < n_keys:
        if check is not None:
            check()
        step = 4 * BATCH_EVENTS  # (IN_FLIGHT_EVENTS, read here: a test's smaller batches check more often)
        stop = min(n_keys, max(key + 1, bisect.bisect_right(bounds, bounds[key] + step) - 1))
        n_out, key, need = kernels.match_threads(*grouped, key, stop, trace_end, *out, n_out, scratch)
        if need:  # unmatched ends: this thread's slices do not fit; it is matched again in a larger table
            capacity = max(2 * capacity, n_out + need)
            out = [np.concatenate([c[:n_out], np.empty(capacity - n_out, c.dtype)]) for c in out]
        released.matched(key, out, n_out)
    released.done()
    return out if n_out == capacity else [c[:n_out].copy() for c in out]


#: matched duration events whose grouped rows are given back at once, at least (~6 MB of pages: each call
#: costs the kernel a walk of the range and, the build running threads, a flush of the other cores' TLBs)
RELEASE_EVENTS = 1 << 19


class _MatchedRelease:
    """Takes back the pages of the grouped events of the threads matched so far (never read again), so
    that the grouping (13 bytes a duration event, 8 more a complete one) shrinks as the table it is matched
    into grows: the build's peak is then about the larger of the two, not their sum
    (:mod:`fxscope.core.released_rows`). A range at a time of :data:`RELEASE_EVENTS` events at least. The
    pages are moved under the table's rows the next matching writes (:class:`RecycledPages`), rather than
    freed while the table faults fresh pages in (at 30M events ~180 MB of pages: 45,000 faults and their
    zeroing); the rest is given back."""

    def __init__(self, grouped: tuple[np.ndarray, ...], out: list[np.ndarray]) -> None:
        self.grouped = grouped
        self.rows = 0  # (the duration events' rows released so far, and the complete events')
        self.complete_rows = 0
        self.pages = RecycledPages()
        self.ready: list[int] = [0] * len(out)  # (each table column's rows under which pages were moved)
        self.out = out

    def matched(self, key: int, out: list[np.ndarray], n_out: int) -> None:
        """The threads before thread key ``key`` are matched, the table ``out`` written up to row ``n_out``."""
        order, ptr, ts_g, kind_g, cend_g, cptr = self.grouped
        done, cdone = int(ptr[key]), int(cptr[key])
        if out is not self.out:  # (a larger table: its rows past n_out are fresh)
            self.out, self.ready = out, [n_out] * len(out)
        if done - self.rows < RELEASE_EVENTS:
            return
        given = sum(self.pages.give(column, self.rows, done) for column in (order, ts_g, kind_g))
        given += self.pages.give(cend_g, self.complete_rows, cdone)
        self.rows, self.complete_rows = done, cdone
        # the table's next rows, as many as the pages given hold across its columns
        ahead = given // sum(c.itemsize for c in out)
        for k, column in enumerate(out):
            start = max(n_out, self.ready[k])
            stop = min(len(column), start + ahead)
            if stop > start:
                self.pages.fill(column, start, stop)
                self.ready[k] = stop
        self.pages.release()

    def done(self) -> None:
        """The matching is over: pages still held given back."""
        self.pages.release()


#: batches matched at once, at most (each holds its temporaries, ~100 bytes an event of the batch)
MATCH_THREADS = 4
#: events of the batches matched at once, at most (their temporaries on top of the table: ~100 MB); a
#: larger batch (a thread of millions of events) is matched alone
IN_FLIGHT_EVENTS = 4 * BATCH_EVENTS


def _idle_cpus() -> int:
    """CPUs this process may use minus the machine's load (the last minute's average), at least 1."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # (no load average on this system: take the CPUs as idle)
        load = 0.0
    return max(1, cpus - round(load))


def _match_batches(cols: FxtColumns, complete: CompleteEnds, sel: np.ndarray, trace_end: int, check, done) -> None:
    """:func:`_match` of every batch of :func:`_thread_batches`, each result given to ``done`` in order.
    Batches are independent and numpy releases the GIL in their passes, so they are matched in a few
    threads at once (as many as there are CPUs, up to :data:`MATCH_THREADS`, and as long as the batches
    in flight hold at most :data:`IN_FLIGHT_EVENTS` events: the peak memory stays that of about one
    large batch). A batch larger than a thread's share of that (a thread of millions of events) is
    matched alone in the calling thread. Only CPUs left idle by the rest of the machine are used (on a
    busy machine threads would wait for each other's turn on the GIL: slower than one thread).
    ``check()`` is called before each batch starts."""
    items = _thread_batches(cols.ev_thread[sel], sel)
    workers = min(MATCH_THREADS, _idle_cpus())
    if workers <= 1 or len(sel) <= BATCH_EVENTS:
        for rows, thread in items:
            if check is not None:
                check()
            done(_match(cols, complete, rows, trace_end, thread))
        return
    pending: collections.deque = collections.deque()  # (future, events), in batch order
    in_flight = 0
    with ThreadPoolExecutor(workers, thread_name_prefix="fxscope-slices") as pool:
        try:
            for rows, thread in items:
                if check is not None:
                    check()
                large = len(rows) > IN_FLIGHT_EVENTS // workers
                while pending and (large or len(pending) >= workers or in_flight + len(rows) > IN_FLIGHT_EVENTS):
                    future, events = pending.popleft()
                    done(future.result())
                    in_flight -= events
                if large:  # alone, in this thread (whose memory the next tables reuse)
                    done(_match(cols, complete, rows, trace_end, thread))
                    continue
                pending.append((pool.submit(_match, cols, complete, rows, trace_end, thread), len(rows)))
                in_flight += len(rows)
            while pending:
                done(pending.popleft()[0].result())
        except BaseException:
            for future, _events in pending:
                future.cancel()
            raise


#: the slice table's column types, in :func:`_match`'s order (ts, dur, depth, event, flags, parent)
_COLUMN_TYPES = (np.int64, np.int64, np.uint16, np.int32, np.uint8, np.int32)


class _Table:
    """The table's columns, filled with each batch's slices as the batches finish, in thread order: a
    batch's part is copied in and dropped at once, so the table is allocated once, its final size known
    beforehand (every begin and complete event is a slice; unmatched ends, rare, grow it), and the batches'
    parts, freed one by one, leave their memory to the next batches' instead of adding up to a second
    copy of the table."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.n = 0
        self.cols: list[np.ndarray] | None = None

    def add(self, batch: tuple[np.ndarray, ...]) -> None:
        k = len(batch[0])
        if self.cols is None:
            self.cols = [np.empty(self.capacity, t) for t in _COLUMN_TYPES]
        if self.n + k > self.capacity:
            self.capacity = max(2 * self.capacity, self.n + k)
            self.cols = [np.concatenate([c[: self.n], np.empty(self.capacity - self.n, c.dtype)]) for c in self.cols]
        for column, part in zip(self.cols, batch, strict=True):
            column[self.n : self.n + k] = part
        parent = self.cols[-1][self.n : self.n + k]  # parents are rows of the batch: offset to the table's
        parent[parent >= 0] += self.n
        self.n += k

    def columns(self) -> list[np.ndarray]:
        assert self.cols is not None
        if self.n == self.capacity:
            return self.cols
        return [c[: self.n].copy() for c in self.cols]


def _thread_batches(thread: np.ndarray, sel: np.ndarray):
    """``sel`` cut into batches of whole threads of about :data:`BATCH_EVENTS` events, in thread order, each
    batch's events in file order (by thread then file order when sorted). Yields (rows, thread): ``thread``
    the batch's one thread, or None when it holds several (or they were not told apart: a trace of one
    batch)."""
    if len(sel) <= BATCH_EVENTS:
        yield sel, None
        return
    lo, hi = int(thread.min()), int(thread.max())
    if hi - lo < 1 << 16:  # the usual: threads counted and picked by 8- or 16-bit keys
        key = thread - lo
        key = key.astype(np.uint8 if hi - lo < 256 else np.uint16)
        ends = np.cumsum(np.bincount(key, minlength=hi - lo + 1))
        cuts = _batch_cuts(ends.tolist(), len(sel))
        if len(cuts) - 1 <= FEW_BATCHES:  # a comparison pass per batch: cheaper than sorting the keys
            for a, b in itertools.pairwise(cuts):
                first, last = (int(k) for k in np.searchsorted(ends, [a, b - 1], "right"))  # its threads' keys
                pick = key == first if first == last else (key >= first) & (key <= last)
                yield sel[np.flatnonzero(pick)], (lo + first) if first == last else None
            return
        order = np.argsort(key, kind="stable")  # stable: file order within a thread
        key = key[order]
    else:
        order = lexsort((thread,))
        key = thread[order]
        ends = np.cumsum(np.bincount(thread.astype(np.int64) - lo))
        cuts = _batch_cuts(ends.tolist(), len(sel))
    for a, b in itertools.pairwise(cuts):
        one = int(key[a]) == int(key[b - 1])
        yield sel[order[a:b]], (lo + int(key[a])) if one else None


#: batches up to which :func:`_thread_batches` picks each batch's events by a pass over the thread keys
#: rather than sorting them (a radix sort of 4M events ~70 ms, a pass ~2 ms)
FEW_BATCHES = 32


def _batch_cuts(ends: list[int], n: int) -> list[int]:
    """Batch bounds at thread ends (``ends``: each thread's cumulative end, ascending): threads gathered
    while the batch stays within :data:`BATCH_EVENTS`, a thread larger than that in a batch of its own (so
    that a large thread, the usual one, is matched alone: no thread key to sort by). One step per thread."""
    cuts = [0]
    prev = 0
    for e in ends:
        if e == prev:
            continue
        if e - cuts[-1] > BATCH_EVENTS and prev > cuts[-1]:
            cuts.append(prev)  # this thread would overfill the batch: the batch ends before it
        prev = e
    if cuts[-1] != n:
        cuts.append(n)
    return cuts


def _match(cols: FxtColumns, complete: CompleteEnds, sel: np.ndarray, trace_end: int,
           thread: int | None = None) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Slices of the duration events ``sel`` (whole threads, each thread's in file order; all of thread
    ``thread`` when given): (ts, dur, depth, event, flags, parent) sorted by (thread, start),
    ``parent`` a row of these."""
    m = _Markers(cols, complete, sel, thread)
    after, unmatched, ahead = _replay(m)
    level = after
    level -= m.delta > 0  # a begin opens level L (the stack is at L + 1 after it), an end returns to L
    if ahead is not None:
        level += ahead
        del ahead
    closes, end_ts = _pair(m, level, unmatched)

    # Begins (every slice but the unmatched ends') in marker order: by thread, then start.
    b = np.flatnonzero(m.delta >= 0)
    closed = closes[b]
    del closes
    s_flags = np.logical_not(closed).view(np.uint8) * np.uint8(FLAG_UNCLOSED)
    s_ts = m.ts[b]
    s_end = end_ts[b]
    del end_ts
    s_end[~closed] = max(trace_end, 0)
    np.maximum(s_end, s_ts, out=s_end)
    del closed
    # (a begin is a record of the stream, never an appended complete event's end: its event is sel[src])
    s_thread, s_depth, s_ev = m.thread_of(b), level[b], m.sel[m.src[b]]
    del b, level
    one_thread = m.one_thread
    in_order = unmatched is None and _nested_in_order(None if one_thread else s_thread, s_ts, s_depth)
    if unmatched is not None:
        parts = [(s_ts, s_end, s_thread, s_depth, s_ev, s_flags), _unmatched_slices(m, unmatched)]
        s_ts, s_end, s_thread, s_depth, s_ev, s_flags = (np.concatenate(c) for c in zip(*parts, strict=True))
        del parts
    del unmatched, m
    if not in_order:
        # Sorted by thread, start; outer (shallower) first among equal starts; begins before unmatched ends.
        o = lexsort((s_depth, s_ts, s_thread))
        s_ts, s_end, s_thread, s_depth, s_ev, s_flags = (
            a[o] for a in (s_ts, s_end, s_thread, s_depth, s_ev, s_flags)
        )
        del o
    parent = _parents(s_thread, s_depth, s_ts, s_end, one_thread=one_thread)
    s_end -= s_ts
    # (cast to the table's types as copied in; the thread is the event's: not stored)
    return s_ts, s_end, s_depth, s_ev, s_flags, parent


def _nested_in_order(thread: np.ndarray | None, ts: np.ndarray, depth: np.ndarray) -> bool:
    """Whether rows sorted by (thread, ts) are sorted by (thread, ts, depth) too: no row of the same thread
    and start follows one deeper than it (begins in marker order almost always are: a sort then costs one
    comparison pass, not a sort and a gather of every column). ``thread`` None: one thread."""
    if len(ts) < 2:
        return True
    shallower = depth[1:] < depth[:-1]
    if not shallower.any():
        return True
    shallower &= ts[1:] == ts[:-1]
    if thread is not None:
        shallower &= thread[1:] == thread[:-1]
    return not shallower.any()


class _Markers:
    """The begin (+1) and end (-1) markers of every thread, sorted: by thread, timestamp, then file order,
    except that a complete event's end comes first among equal timestamps.

    Marker ``j`` of the unsorted stream is the ``j``-th duration event (``sel[j]``), then come the ends of
    the complete events (``sel[ends[j - len(sel)]]``). A complete event of zero length (or ending before it
    begins) is one marker of delta 0: its end would follow its begin at once, nesting nothing, so it stays
    out of the stack replay and the pairing and is a slice of its own at the stack level it finds.
    The columns are in sorted order; ``src`` maps a sorted marker back to its stream index.
    """

    def __init__(self, cols: FxtColumns, complete: CompleteEnds, sel: np.ndarray, thread_id: int | None = None) -> None:
        self.sel = sel
        k = cols.ev_kind[sel]
        ts = cols.ev_ts[sel]
        thread = cols.ev_thread[sel] if thread_id is None else None
        c = np.flatnonzero(k == EventKind.DURATION_COMPLETE)
        c_end = complete.of(sel[c])
        spans = c_end > ts[c]
        self.ends = c[spans]  # sel positions of the complete events with an end marker
        delta = (k != EventKind.DURATION_END).view(np.int8) * np.int8(2) - np.int8(1)
        delta[c[~spans]] = 0
        del k
        c_end = c_end[spans]
        del c, spans
        if thread is not None and int(thread.min()) == int(thread.max()):
            thread_id = int(thread[0])
        #: one thread (the usual batch), ``thread_id``: its markers need no thread key and no thread column
        self.one_thread = thread_id is not None
        self.thread_id = thread_id
        self.src = _merged_order(ts, c_end) if self.one_thread else None
        if self.src is None:  # several threads, or a thread's events out of time order: sort them all
            if thread is None:
                thread = np.full(len(ts), thread_id, np.int32)
            # tie-break: a complete event's end (False) sorts first among equal timestamps, the rest in file order
            m_late = np.ones(len(ts) + len(c_end), bool)
            m_late[len(ts) :] = False
            self.src = lexsort((m_late, np.concatenate([ts, c_end]), np.concatenate([thread, thread[self.ends]])))
            del m_late
        self.ts = _gather_joined(ts, c_end, self.src)  # int64 ns
        del ts, c_end
        #: int32 thread of each marker (None for one thread: :meth:`thread_of`)
        self.thread = None if self.one_thread else _gather_joined(thread, thread[self.ends], self.src)
        del thread
        self.delta = _gather_joined(delta, np.full(len(self.ends), -1, np.int8), self.src)
        # (int8 delta: +1 begin, -1 end, 0 zero-length complete event)
        self.starts = np.zeros(1, np.int64) if self.one_thread else segment_starts(self.thread)

    def thread_of(self, rows: np.ndarray) -> np.ndarray:
        """int32 thread of markers ``rows``."""
        if self.thread is None:
            return np.full(len(rows), self.thread_id, np.int32)
        return self.thread[rows]

    def event(self, rows: np.ndarray) -> np.ndarray:
        """Event row (int64) of sorted markers ``rows``."""
        src = self.src[rows]
        n_sel = len(self.sel)
        if len(self.ends):
            src = np.where(src < n_sel, src, self.ends[np.clip(src - n_sel, 0, len(self.ends) - 1)])
        return self.sel[src]


def _merged_order(ts: np.ndarray, end_ts: np.ndarray) -> np.ndarray | None:
    """The marker order of one thread whose events (``ts``, file order) are in time order already, as a
    thread's events usually are: the complete events' ends (``end_ts``, stream indexes ``len(ts)`` on) merged
    in, each before the events of its timestamp, ends of equal times in stream order. What
    :func:`~fxscope.core.trace.sorting.lexsort` of (thread, time, end-first) gives, without sorting the events:
    only the ends are sorted (mostly in order already) and placed by a binary search. None when the
    events are not in time order."""
    if len(ts) > 1 and bool(np.any(ts[1:] < ts[:-1])):
        return None
    n, e = len(ts), len(end_ts)
    order = np.empty(n + e, np.int64)
    if not e:
        order[:] = np.arange(n)
        return order
    by_end = np.argsort(end_ts, kind="stable")
    at = np.searchsorted(ts, end_ts[by_end], "left")
    at += np.arange(e)  # the ends' places in the merged order (ascending)
    is_event = np.ones(n + e, bool)
    is_event[at] = False
    order[at] = by_end + n
    order[is_event] = np.arange(n)
    return order


def _gather_joined(head: np.ndarray, tail: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``np.concatenate([head, tail])[order]`` without the joined copy when ``tail`` is empty."""
    return head[order] if not len(tail) else np.concatenate([head, tail])[order]


def _replay(m: _Markers) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Per thread, the stack level after each marker (int32), the ends that found the stack empty (None if
    none did: the usual case, with no more work), and for each marker the number of such ends after it on
    its thread (None likewise; they enclose what comes before them, see :func:`_count_ahead`)."""
    after, unmatched = stack_depths(m.delta, m.starts)
    if unmatched is None:
        return after, None, None
    seg_id = segment_ids(m.starts, len(m.delta))
    return after, unmatched, _count_ahead(unmatched, seg_id, m.starts).astype(np.int32)


def _pair(m: _Markers, level: np.ndarray, unmatched: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Which begin markers are closed, and the timestamp of the end closing them (both per marker).

    Within one (thread, level), begins and ends alternate in time: grouped by it (a stable sort), a begin
    is closed by the marker after it when that is an end of the same group.
    """
    pairable = m.delta != 0
    if unmatched is not None:
        pairable &= ~unmatched
    p = np.flatnonzero(pairable)
    del pairable
    g = p[_group_order(level[p], None if m.one_thread else m.thread[p])]
    del p
    at = np.flatnonzero(m.delta[g] > 0)
    nxt = g[np.minimum(at + 1, len(g) - 1)]
    begin = g[at]
    del g
    closed = m.delta[nxt] < 0
    closed &= level[nxt] == level[begin]
    if not m.one_thread:
        closed &= m.thread[nxt] == m.thread[begin]
    closes = m.delta == 0  # zero-length complete events close themselves, at their own timestamp
    end_ts = m.ts.copy()
    closes[begin] = closed
    end_ts[begin[closed]] = m.ts[nxt[closed]]
    return closes, end_ts


def _group_order(level: np.ndarray, thread: np.ndarray | None) -> np.ndarray:
    """The stable order of markers by (thread, level) (``thread`` None: one thread). One thread's levels are
    few (the stack's depth): a radix sort of them as 8- or 16-bit keys, with nothing packed or checked."""
    if thread is None and len(level):
        lo, hi = int(level.min()), int(level.max())
        if lo >= 0 and hi < 1 << 16:
            return np.argsort(level.astype(np.uint8 if hi < 256 else np.uint16), kind="stable")
    return lexsort((level,) if thread is None else (level, thread))


def _unmatched_slices(m: _Markers, unmatched: np.ndarray) -> tuple[np.ndarray, ...]:
    """Slices of the ends that found their thread's stack empty: from the thread's first timestamp to the
    end, the latest outermost (columns as in :func:`build_slices`)."""
    u = np.flatnonzero(unmatched)
    thread = m.thread_of(u)
    first_ts = m.ts[m.starts[np.searchsorted(m.starts, u, "right") - 1]]
    flags = np.full(len(u), FLAG_UNMATCHED_END, np.uint8)
    return first_ts, m.ts[u], thread, _rank_from_end(thread).astype(np.int32), m.event(u), flags


def _rank_from_end(groups: np.ndarray) -> np.ndarray:
    """For items grouped in runs (sorted by group), how many items of the same group follow each one."""
    if len(groups) == 0:
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    ends = np.r_[starts[1:], len(groups)]
    run = np.repeat(np.arange(len(starts)), ends - starts)
    return ends[run] - 1 - np.arange(len(groups))


def _count_ahead(flag: np.ndarray, seg_id: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per marker: the number of flagged markers after it in its segment."""
    c = np.cumsum(flag[::-1].astype(np.int64))[::-1]  # flagged at or after i, across segments
    seg_end = np.r_[starts[1:], len(flag)]
    after_seg = np.r_[c[seg_end[:-1]], 0] if len(starts) else np.zeros(0, np.int64)
    return c - after_seg[seg_id] - flag.astype(np.int64)


def _parents(thread: np.ndarray, depth: np.ndarray, ts: np.ndarray, end: np.ndarray, one_thread: bool = False) -> np.ndarray:
    """Row of the enclosing slice (same thread, depth - 1, latest start <= ts, the longest on a tie), or -1.

    Rows are sorted by (thread, start, depth): the slices of depth d - 1 starting at or before a slice of
    depth d are exactly those of its thread at d - 1 in the rows before it. So the rows are grouped by
    lane (thread, depth), keeping their order (a radix sort: lanes are few), and each slice's candidate is
    the last row of its parent lane before it, one ``searchsorted`` of (lane, row) keys; among slices of
    that lane starting at the same time the longest wins (the last row among equally long ones). A thread
    ``one_thread`` (all rows of one thread) of a few levels takes :func:`_parents_by_level`.
    """
    n = len(ts)
    parent = np.full(n, -1, np.int32)
    if n == 0:
        return parent
    top = int(depth.max())
    if top < FEW_DEPTHS:
        return _parents_by_level(thread, depth, ts, end, top, one_thread, parent)
    by_lane = lexsort((depth, thread))
    lane_key = _lane_keys(thread, depth)
    k = lane_key[by_lane]
    new_lane = np.empty(n, bool)
    new_lane[0] = True
    np.not_equal(k[1:], k[:-1], out=new_lane[1:])
    lanes = k[new_lane]  # ascending
    del k
    rank = np.cumsum(new_lane) - 1
    del new_lane
    sorted_keys = rank * n + by_lane  # (lane rank, row), ascending
    del rank
    child = np.flatnonzero(depth > 0)
    parent_lane = lane_key[child] - 1  # the lanes of a thread are consecutive keys, by depth
    r = np.minimum(np.searchsorted(lanes, parent_lane), len(lanes) - 1)
    ok = lanes[r] == parent_lane
    pos = np.searchsorted(sorted_keys, r * n + child, "left") - 1  # its last row before the child
    del sorted_keys
    ok &= pos >= 0
    pos = np.maximum(pos, 0)
    ok &= lane_key[by_lane[pos]] == parent_lane
    best = _longest_of_equal_starts(by_lane, lane_key, ts, end)
    cand = (by_lane if best is None else best)[pos]
    parent[child[ok]] = cand[ok].astype(np.int32)
    return parent


#: slices of fewer depths than this find their parents level by level (:func:`_parents_by_level`)
FEW_DEPTHS = 4


def _parents_by_level(thread: np.ndarray, depth: np.ndarray, ts: np.ndarray, end: np.ndarray, top: int,
                      one_thread: bool, parent: np.ndarray) -> np.ndarray:  # fmt: skip
    """:func:`_parents` for rows of at most :data:`FEW_DEPTHS` levels, with no grouping by lane: per depth d,
    the last row of depth d - 1 at or before each row is a running maximum of their row numbers (a few
    passes a level), taken when it is of the same thread. Rows of one lane starting together are
    consecutive (rows are by thread, start, depth), so the longest of them is found in row order."""
    n = len(ts)
    rows = np.arange(n)
    lane = depth if one_thread else _lane_keys(thread, depth)
    best = _longest_of_equal_starts(rows, lane, ts, end)
    del lane
    last = np.empty(n, np.int64)
    for d in range(1, top + 1):
        np.copyto(last, -1)
        np.copyto(last, rows, where=depth == d - 1)
        np.maximum.accumulate(last, out=last)
        child = np.flatnonzero(depth == d)
        cand = last[child]
        ok = cand >= 0
        if not one_thread:
            ok &= thread[np.maximum(cand, 0)] == thread[child]
            child, cand = child[ok], cand[ok]
        elif not ok.all():
            child, cand = child[ok], cand[ok]
        parent[child] = cand if best is None else best[cand]
    return parent


def _lane_keys(thread: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """int64 key of each row's (thread, depth) lane, ordered as the pairs (depth 16 bits is not assumed)."""
    d = depth.astype(np.int64)
    span = int(d.max()) + 2
    return (thread.astype(np.int64) + 1) * span + d


def _longest_of_equal_starts(by_lane: np.ndarray, lane_key: np.ndarray, ts: np.ndarray, end: np.ndarray):
    """For rows grouped by lane (``by_lane``): at each position, the row to take as a parent when the search
    lands there: itself, or, where several rows of the lane start at the same time, the longest of them
    (the last such row on a tie; the search lands on the last row of such a run). None if no lane has
    two rows starting together (no row changes)."""
    k, t = lane_key[by_lane], ts[by_lane]
    tie = (k[1:] == k[:-1]) & (t[1:] == t[:-1])
    if not tie.any():
        return None
    best = by_lane.copy()
    in_run = np.zeros(len(by_lane), bool)
    in_run[:-1] = tie
    in_run[1:] |= tie
    at = np.flatnonzero(in_run)
    first = np.r_[True, ~tie[at[1:] - 1]]  # run starts among ``at`` (a run is consecutive positions)
    starts = np.flatnonzero(first)
    e = end[by_lane[at]]
    longest = np.repeat(np.maximum.reduceat(e, starts), np.diff(np.r_[starts, len(at)]))
    # the last position of each run holding the run's longest end
    last_best = np.maximum.reduceat(np.where(e == longest, np.arange(len(at)), -1), starts)
    run_last = np.r_[starts[1:], len(at)] - 1
    best[at[run_last]] = by_lane[at[last_best]]
    return best
