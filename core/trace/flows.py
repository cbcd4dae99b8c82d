"""Flow arrows: flow begin/step/end events bound to thread slices and chained into links, vectorized.

The rules are the FXT spec's (Part 3, E4), which is what Perfetto's importer does:

- **Binding.** Every flow event binds to the innermost slice open on its own thread at its timestamp
  (``start <= ts <= end``; at a shared timestamp, a slice whose begin record comes after the flow event in
  the file has not started yet). One with no enclosing slice is dropped and counted in
  :attr:`FlowTable.unbound`.
- **Key** = (process koid of the event's thread, flow correlation id). Events are replayed in timestamp
  order (ties in file order). A begin with no active flow of its key starts one at its slice; a second
  begin while the key is active is ignored (the first binding is kept). A step links the previous slice
  of the flow to its slice, which becomes the source of the next link; an end links and retires the key.
- **Cross-process flows.** A step/end whose process has begun no flow with that id (so far) joins the
  flow with that id begun in another process, if flows with that id have so far been begun in exactly
  one process; with more than one it is ambiguous and dropped.
- Each link points from the earlier slice to the later one (by slice start). The spec's drawing anchors
  are :meth:`FlowTable.anchors`: a link leaves where its source slice ends and arrives where its
  destination slice begins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fxscope.core.trace import compiled
from fxscope.core.trace.compiled import contiguous, plain
from fxscope.core.trace.event_rows import kind_count, kind_rows
from fxscope.core.trace.gathered import Gathered
from fxscope.core.trace.run_merge import merge_runs, run_starts
from fxscope.core.trace.segments import bfill_index, ffill_index, pair_searchsorted, segment_ids
from fxscope.core.trace.slices import SliceTable
from fxscope.core.trace.sorting import lexsort, lexsort_unless_sorted
from fxscope.core.trace.threads import thread_pids
from fxscope.formats.filled_arrays import array_to_fill
from fxscope.formats.fxt.coded_column import CodedColumn
from fxscope.formats.fxt.columns import EventKind, FxtColumns


@dataclass
class FlowTable:
    """One row per link, sorted by (src_slice, src_ts). ``id``, ``src_ts`` and ``dst_ts`` are the reader's
    columns read through the flow events' rows (:class:`~fxscope.core.trace.gathered.Gathered`, not copied)."""

    src_slice: np.ndarray  # int32 row of the SliceTable
    dst_slice: np.ndarray  # int32
    id: Gathered  # uint64 flow correlation id (cols.ev_data[src_event])
    src_ts: Gathered  # int64 ns of the flow event bound to the source slice (cols.ev_ts[src_event])
    dst_ts: Gathered  # int64 ns of the flow event bound to the destination slice (cols.ev_ts[dst_event])
    src_event: np.ndarray  # int32 event rows of those flow events
    dst_event: np.ndarray
    #: flow events with no enclosing slice on their thread (dropped)
    unbound: int = 0
    #: other dropped events: "without_start" (step/end with no active flow), "ambiguous" (the id was begun
    #: in several processes), "duplicate_begin" (begin of an active key, ignored)
    dropped: dict[str, int] = field(default_factory=dict)
    def __len__(self) -> int:
        return len(self.src_slice)

    def outgoing(self, slice_row: int) -> np.ndarray:
        """Link rows whose source is ``slice_row``."""
        lo, hi = np.searchsorted(self.src_slice, [slice_row, slice_row + 1])
        return np.arange(lo, hi)

    def incoming(self, slice_row: int) -> np.ndarray:
        """Link rows whose destination is ``slice_row``, ascending: one pass over :attr:`dst_slice` (~3 ms at 8M
        links, on a click), not an index by destination kept for it (4 bytes a link, 3.3 MB at 10M events:
        the query gathered the whole column through it on each call anyway)."""
        return np.flatnonzero(self.dst_slice == slice_row)

    def anchors(self, slices: SliceTable) -> tuple[np.ndarray, np.ndarray]:
        """(ns where each link leaves, ns where it arrives): source slice end, destination slice start."""
        src = self.src_slice.astype(np.int64)
        return slices.ts[src] + slices.dur[src], slices.ts[self.dst_slice.astype(np.int64)]


def bind_to_slices(slices: SliceTable, thread: np.ndarray | CodedColumn, ts: np.ndarray, event: np.ndarray,
                   dtype=np.int64, thread_by_event: bool = False) -> np.ndarray:  # fmt: skip
    """Row of the innermost slice of ``thread`` open at ``ts`` for each query (event row ``event``), or -1,
    as ``dtype`` (int64, or int32: 4 bytes a query fewer). With ``thread_by_event``, ``thread`` is the whole
    event thread column (the slices' own) and a query's thread is ``thread[event]``: the compiled kernel
    reads it through the row (no gathered copy, 1 byte a query with a code column).

    The slice of the thread with the latest start <= ts is the innermost candidate; slices are properly
    nested, so if it ended before ts the answer is among its ancestors (walked up, vectorized, once per
    level of depth at most).
    """
    n = len(ts)
    if n == 0 or len(slices) == 0:
        return np.full(n, -1, dtype)
    bound = _bind_compiled(slices, thread, ts, event, dtype, thread_by_event)
    if bound is not None:
        return bound
    thread = np.asarray(thread[event] if thread_by_event else thread)
    cand = pair_searchsorted(slices.thread, slices.ts, thread, ts, "right") - 1
    s_thread, s_ts, s_event = slices.thread, slices.ts, slices.event
    # same timestamp, but the slice's begin record comes later in the file: not open yet
    while True:
        c = np.maximum(cand, 0)
        late = (cand >= 0) & (s_thread[c] == thread) & (s_ts[c] == ts) & (s_event[c] > event)
        if not late.any():
            break
        cand[late] -= 1
    c = np.maximum(cand, 0)
    cand[(cand < 0) | (s_thread[c] != thread)] = -1
    todo = np.flatnonzero(cand >= 0)
    while len(todo):
        c = cand[todo]
        ended = slices.ts[c] + slices.dur[c] < ts[todo]  # (ends of the candidates only: no column of them)
        todo = todo[ended]
        cand[todo] = slices.parent[cand[todo]]
        todo = todo[cand[todo] >= 0]
    return cand.astype(dtype, copy=False)


def _bind_compiled(slices: SliceTable, thread: np.ndarray | CodedColumn, ts: np.ndarray, event: np.ndarray,
                   dtype=np.int64, thread_by_event: bool = False) -> np.ndarray | None:  # fmt: skip
    """:func:`bind_to_slices` by the compiled kernel (one walk in time order, a cursor per thread), or None
    when it is not built or declines the input (the numpy path then answers). Queries' threads given as a
    :class:`CodedColumn` of the slices' thread column's codes are compared by their one-byte codes (as
    int8: the kernel only tells threads apart), the column not decoded (2 bytes an event, and a walk over
    a quarter of the bytes)."""
    kernels = compiled.span_kernels
    th = slices.thread
    if kernels is None or not isinstance(th, Gathered) or th.missing is not None or th.index is not slices.event:
        return None
    source = th.source
    if (
        isinstance(thread, CodedColumn)
        and isinstance(source, CodedColumn)
        and thread.values is source.values
        and plain(source.index, np.uint8)
        and len(source.index) == len(source)
        and (not thread_by_event or thread is source)
    ):
        source = source.index.view(np.int8)
        thread = source if thread_by_event else np.ascontiguousarray(thread.index).view(np.int8)
    elif thread_by_event:  # (only the codes are read through the rows)
        return None
    thread = np.asarray(thread)
    if source.dtype.kind != "i" or thread.dtype != source.dtype or not source.dtype.isnative:
        return None
    event = np.asarray(event)
    if event.dtype not in (np.int32, np.int64):  # (the rows of kind_rows)
        return None
    out = array_to_fill(len(ts), dtype)  # (the kernel writes every query's row)
    status = kernels.bind_to_slices(
        contiguous(slices.ts, np.int64), contiguous(slices.dur, np.int64), contiguous(slices.event, np.int32),
        contiguous(slices.parent, np.int32), contiguous(source), source.dtype.itemsize, contiguous(thread),
        contiguous(ts, np.int64), contiguous(event), event.dtype.itemsize, out, thread_by_event,
    )  # fmt: skip
    return out if status == 0 else None


def build_flows(cols: FxtColumns, slices: SliceTable, check=None) -> FlowTable:
    """Bind and chain the flow events of ``cols`` (see the module docstring). ``check()``, when given, is
    called between the stages (a Cancel raises from it)."""
    check = check or (lambda: None)
    kind = cols.ev_kind
    sel = kind_rows(kind, EventKind.FLOW_BEGIN, EventKind.FLOW_END)  # int32 rows below 2**31 events
    if compiled.span_kernels is not None and sel.dtype == np.int32 and len(slices) < 1 << 31:
        return _build_compiled(cols, slices, sel, check)
    ts = cols.ev_ts[sel]  # (the data words are read once the unbound events are dropped: a read of both
    # here held them through the binding, the step's peak: +70 MB at 30M events)
    order = lexsort_unless_sorted((sel, ts))  # timestamp order, ties in file order (as a rule: as they are)
    if order is not None:
        sel, ts = sel[order], ts[order]
    del order
    thread = cols.ev_thread[sel]
    check()
    bound = bind_to_slices(slices, thread, ts, sel).astype(np.int32)
    check()
    unbound = int((bound < 0).sum())
    keep = np.flatnonzero(bound >= 0)
    sel, thread, bound = sel[keep], thread[keep], bound[keep]
    del keep, ts  # (gathered again for the links only: one column fewer alive while the keys are made)
    k = kind[sel]
    fid = cols.ev_data[sel]
    check()
    key_pid, ambiguous, no_start = _key_process(thread_pids(cols, thread), fid, k)
    del thread
    dropped = {"ambiguous": int(ambiguous.sum()), "without_start": int(no_start.sum())}
    idx = np.flatnonzero(~(ambiguous | no_start))
    del ambiguous, no_start
    if len(idx) == 0:
        return _empty(cols, unbound, dropped)
    check()
    idx = idx[lexsort((idx, fid[idx], key_pid[idx]))]  # by key, then time order
    by_key = [key_pid[idx], fid[idx], k[idx]]
    del key_pid, fid, k
    a, b = _links(by_key, dropped)  # (it empties ``by_key``: the keys are freed once their runs are found)
    a, b = idx[a], idx[b]
    del idx
    check()
    return _table(cols, slices, sel, bound, a, b, unbound, dropped)


def _build_compiled(cols: FxtColumns, slices: SliceTable, sel: np.ndarray, check) -> FlowTable:
    """:func:`build_flows` with the span kernels: the flow events' times and ids read in one pass over
    their records, bound to their slices (:func:`bind_to_slices`), then keyed, chained, turned from the
    earlier slice and sorted in one call (``span_kernels.flow_table``: a walk in time order with the active
    flows in a hash table, counting sorts by slice), what the numpy stages below do in a dozen passes."""
    ts, fid = cols.times_and_data(sel)
    check()
    # timestamp order, ties in file order: as a rule as they are; a trace saved one provider after the other
    # in a few time-ordered runs (merged: :mod:`~fxscope.core.trace.run_merge`); else sorted whole
    starts = run_starts(ts)
    if starts is not None:
        if len(starts) > 2:
            sel, ts, fid = merge_runs(starts, ts, sel, fid)
    elif (order := lexsort_unless_sorted((sel, ts))) is not None:
        sel, ts, fid = sel[order], ts[order], fid[order]
        del order
    del starts
    check()
    threads = cols.ev_thread
    if isinstance(threads, CodedColumn) and plain(threads.index, np.uint8) and len(threads.index) == len(threads):
        # each flow event's thread code read through its row by the kernels (no gathered copy: 1 byte an
        # event), its process rank as its thread's code's
        bound = bind_to_slices(slices, threads, ts, sel, np.int32, thread_by_event=True)
        proc, ranks, by_event = threads.index, _process_ranks(cols, threads.values), 2
    else:
        thread = _query_threads(threads, sel)
        check()
        bound = bind_to_slices(slices, thread, ts, sel, np.int32)
        if isinstance(thread, CodedColumn):  # (each event's process rank as its thread's code: 1 byte an event)
            proc, ranks = np.ascontiguousarray(thread.index), _process_ranks(cols, thread.values)
        else:
            proc, ranks = _process_ranks(cols, thread), np.zeros(0, np.int32)
        del thread
        by_event = 0
    check()
    kind = cols.ev_kind
    if compiled.plain(kind, np.uint8):  # (the kernel reads the kinds through the rows: no copy, 1 byte an event)
        k, by_event = kind, by_event | 1
        begins = kind_count(kind, EventKind.FLOW_BEGIN, EventKind.FLOW_BEGIN)  # (sel holds every flow event)
    else:
        k = np.ascontiguousarray(kind[sel], np.uint8)
        begins = int(np.count_nonzero(k == EventKind.FLOW_BEGIN))
    room = len(sel) - begins  # (a link ends at each step and end)
    # (the kernel keeps the links in these while it makes them: no array a link of its own; written whole
    # when every step and end links, as in a trace a tracer wrote)
    out = [array_to_fill(room, np.int32) for _ in range(4)]
    n, unbound, ambiguous, without_start, duplicate = compiled.span_kernels.flow_table(
        k, contiguous(fid, np.uint64), proc, contiguous(ranks, np.int32), contiguous(bound, np.int32),
        contiguous(ts, np.int64), sel, contiguous(slices.ts, np.int64), int(EventKind.FLOW_BEGIN),
        int(EventKind.FLOW_STEP), int(EventKind.FLOW_END), *out, np.zeros(0, np.int32), False, by_event,
    )  # fmt: skip
    del k, kind, fid, proc, bound, ts, sel, threads
    check()
    # (views of the outputs unless most of their room went unused: the untouched pages cost nothing)
    # (no order by destination asked of the kernel: FlowTable.incoming scans the destinations instead)
    src_slice, dst_slice, src_event, dst_event = (a[:n] if 2 * n >= room else a[:n].copy() for a in out)
    del out
    dropped = {"ambiguous": ambiguous, "without_start": without_start, "duplicate_begin": duplicate}
    return _of_links(cols, src_slice, dst_slice, src_event, dst_event, unbound, dropped)


def _of_links(cols: FxtColumns, src_slice: np.ndarray, dst_slice: np.ndarray, src_event: np.ndarray,
              dst_event: np.ndarray, unbound: int, dropped: dict[str, int]) -> FlowTable:
    """The table of these links (int32 columns), its ids and times read through their flow events' rows."""
    return FlowTable(
        src_slice=src_slice,
        dst_slice=dst_slice,
        id=Gathered(cols.ev_data, src_event),
        src_ts=Gathered(cols.ev_ts, src_event),
        dst_ts=Gathered(cols.ev_ts, dst_event),
        src_event=src_event,
        dst_event=dst_event,
        unbound=unbound,
        dropped=dropped,
    )


def _query_threads(ev_thread, rows: np.ndarray) -> np.ndarray | CodedColumn:
    """``ev_thread[rows]``: as the codes of those rows (a :class:`CodedColumn`, 1 byte a row, not decoded)
    when the column is one (what :func:`_bind_compiled` and :func:`_process_ranks` take), else decoded."""
    if isinstance(ev_thread, CodedColumn) and plain(ev_thread.index, np.uint8):
        return CodedColumn(ev_thread.index[rows], ev_thread.values)
    return ev_thread[rows]


def _process_ranks(cols: FxtColumns, thread: np.ndarray | CodedColumn) -> np.ndarray:
    """int32 rank of each thread index's process koid among the trace's koids (0 for -1, an unresolved
    thread reference, as :func:`thread_pids`' koid 0): the key's process for the kernel, in 4 bytes, ordered
    as the koids (the links' order within a slice is by koid)."""
    if len(cols.threads_pid) == 0:
        return np.zeros(len(thread), np.int32)
    koids = np.r_[np.uint64(0), np.asarray(cols.threads_pid).astype(np.uint64)]  # (row 0: thread -1)
    rank = np.unique(koids, return_inverse=True)[1].astype(np.int32)
    at = np.asarray(thread).astype(np.int32) + 1
    np.maximum(at, 0, out=at)
    return rank[at]


def _table(cols: FxtColumns, slices: SliceTable, sel: np.ndarray, bound: np.ndarray, a: np.ndarray,
           b: np.ndarray, unbound: int, dropped: dict[str, int]) -> FlowTable:  # fmt: skip
    """The links (source and destination positions ``a``, ``b`` among the bound flow events ``sel``, by key
    then time) as a table: each pointing from the earlier slice to the later one, sorted by (source slice,
    source time), then as given."""
    s_slice, d_slice = bound[a], bound[b]
    swap = slices.ts[s_slice] > slices.ts[d_slice]
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    del swap, s_slice, d_slice
    order = lexsort((cols.ev_ts[sel[a]], bound[a]))
    a, b = a[order], b[order]
    src_event, dst_event = sel[a].astype(np.int32), sel[b].astype(np.int32)
    return _of_links(cols, bound[a].astype(np.int32), bound[b].astype(np.int32), src_event, dst_event, unbound,
                     dropped)  # fmt: skip


def _links(by_key: list[np.ndarray], dropped: dict[str, int]) -> tuple[np.ndarray, ...]:
    """(source, destination) positions of every link, for events sorted by key (``pid``, ``fid``), then
    time (``by_key``: [pid, fid, kind], emptied here, so that the keys are freed once their runs are
    found); the events that link nothing are counted in ``dropped``."""
    pid, fid, k = by_key
    by_key.clear()
    m = len(k)
    starts = np.flatnonzero(np.r_[True, (pid[1:] != pid[:-1]) | (fid[1:] != fid[:-1])])
    seg = segment_ids(starts, m).astype(np.int32 if m < 1 << 31 else np.int64)  # (int32: half the memory)
    is_b, is_s, is_e = k == EventKind.FLOW_BEGIN, k == EventKind.FLOW_STEP, k == EventKind.FLOW_END
    # A flow is active after a begin until an end; begins while active are ignored, so the begin that
    # counts is the first one after the last end; the source of a link is the last step after it, or it.
    del pid, fid
    last_e = ffill_index(is_e, starts, seg)
    from_ = np.where(last_e >= 0, last_e + 1, starts[seg])  # <= the row itself: within the segment
    del last_e
    begin = bfill_index(is_b, starts, seg)[from_]
    del from_
    active = (begin >= 0) & (begin < np.arange(m))
    last_s = ffill_index(is_s, starts, seg)
    src = np.where(last_s > begin, last_s, begin)
    del last_s, begin
    link = (is_s | is_e) & active
    dropped["without_start"] += int(((is_s | is_e) & ~active).sum())
    dropped["duplicate_begin"] = int((is_b & active).sum())
    return src[link], np.flatnonzero(link)


def _key_process(pid: np.ndarray, fid: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Process part of each event's flow key, with the cross-process rule for steps and ends.

    Returns (key pid, ambiguous, no start): a step/end keeps its own process if that process began a flow
    with its id before it (events are in time order: before = at a lower position); else it takes the one
    process that did, if exactly one did. ``pid`` is a temporary of the caller's: the key's pids are
    written into it (no copy: 8 bytes a flow event at the build's peak).
    """
    key_pid = pid
    n = len(pid)
    ambiguous = np.zeros(n, bool)
    no_start = np.zeros(n, bool)
    begins = np.flatnonzero(k == EventKind.FLOW_BEGIN)
    follow = np.flatnonzero(k != EventKind.FLOW_BEGIN)
    if len(follow) == 0:
        return key_pid, ambiguous, no_start
    if len(begins) == 0:
        no_start[follow] = True
        return key_pid, ambiguous, no_start
    big = np.iinfo(np.int64).max
    # first begin position of every (id, pid)
    ob = begins[
        lexsort((begins, pid[begins].view(np.int64), fid[begins]))
    ]  # (int64 order: see below)
    pairs = ob[np.r_[True, (fid[ob][1:] != fid[ob][:-1]) | (pid[ob][1:] != pid[ob][:-1])]]
    del ob, begins  # (the temporaries here are per flow event: each freed as soon as it is used)
    p_id, p_pid, p_pos = fid[pairs], pid[pairs], pairs
    del pairs
    # own process: first begin of (id, pid)
    j = np.minimum(
        pair_searchsorted(p_id, p_pid.view(np.int64), fid[follow], pid[follow].view(np.int64)), len(p_id) - 1
    )
    f_id = fid[follow]
    has_own = (p_id[j] == f_id) & (p_pid[j] == pid[follow])
    own_first = np.where(has_own, p_pos[j], big)
    del j, has_own
    # per id: the first begins of the earliest and of the second earliest process
    by_time = lexsort((p_pos, p_id))
    t_id, t_pid, t_pos = p_id[by_time], p_pid[by_time], p_pos[by_time]
    del by_time, p_id, p_pid, p_pos
    head = np.flatnonzero(np.r_[True, t_id[1:] != t_id[:-1]])
    second = head + 1
    pos2 = np.where(second < np.r_[head[1:], len(t_id)], t_pos[np.minimum(second, len(t_id) - 1)], big)
    del second
    h_id, h_pos, h_pid = t_id[head], t_pos[head], t_pid[head]
    del t_id, t_pos, t_pid, head
    h = np.minimum(np.searchsorted(h_id, f_id), len(h_id) - 1)
    known = h_id[h] == f_id
    del f_id, h_id
    pos1 = np.where(known, h_pos[h], big)
    pid1 = h_pid[h]
    p2 = np.where(known, pos2[h], big)
    del h, known, h_pos, h_pid, pos2
    at = follow
    own = own_first < at
    del own_first
    started = ~own & (pos1 < at)
    del pos1
    alone = p2 >= at
    del p2, at
    other = started & alone
    key_pid[follow[other]] = pid1[other]
    ambiguous[follow[started & ~alone]] = True
    no_start[follow[~own & ~started]] = True
    return key_pid, ambiguous, no_start


def _empty(cols: FxtColumns, unbound: int, dropped: dict[str, int]) -> FlowTable:
    i32 = np.zeros(0, np.int32)
    dropped.setdefault("duplicate_begin", 0)
    return _of_links(cols, i32, i32.copy(), i32, i32, unbound, dropped)
