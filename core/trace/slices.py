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

from dataclasses import dataclass

import numpy as np

from core.trace.gathered import Gathered
from core.trace.segments import pair_searchsorted, segmented_cumsum, segmented_running_min
from formats.fxt.columns import EventKind, FxtColumns

FLAG_UNMATCHED_END = 1
FLAG_UNCLOSED = 2


@dataclass
class SliceTable:
    """One row per slice, sorted by (thread, start). Column ``event`` indexes the reader's event rows.

    ``name`` and ``category`` are the reader's ``ev_name``/``ev_category`` read through ``event``
    (:class:`~core.trace.gathered.Gathered`: not copied, 8 bytes a slice saved); self time is computed
    from ``parent`` for the rows asked for (:meth:`self_dur_of`), not stored.
    """

    ts: np.ndarray  # int64 ns
    dur: np.ndarray  # int64 ns
    thread: np.ndarray  # int32 -> FxtColumns.threads_*
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
        z, z.copy(), np.zeros(0, np.int32), np.zeros(0, np.uint16), Gathered(cols.ev_name, event),
        Gathered(cols.ev_category, event), event, np.zeros(0, np.uint8), np.zeros(0, np.int32),
    )  # fmt: skip


def build_slices(cols: FxtColumns, trace_end: int | None = None) -> SliceTable:
    """Match duration events of every thread into slices (see the module docstring for the rules)."""
    kind = cols.ev_kind
    sel = np.flatnonzero(
        (kind == EventKind.DURATION_BEGIN) | (kind == EventKind.DURATION_END) | (kind == EventKind.DURATION_COMPLETE)
    )
    if len(sel) == 0:
        return _empty(cols)
    if trace_end is None:
        complete_all = kind == EventKind.DURATION_COMPLETE
        end_max = int(cols.ev_data[complete_all].view(np.int64).max()) if complete_all.any() else -1
        trace_end = max(int(cols.ev_ts.max()), end_max)

    ev = sel.astype(np.int64)
    k = kind[sel]
    ts = cols.ev_ts[sel]
    thread = cols.ev_thread[sel].astype(np.int64)
    complete = k == EventKind.DURATION_COMPLETE
    c_idx = np.flatnonzero(complete)

    # Marker stream: begins (+1) and ends (-1); a complete event contributes both.
    # is_end doubles as a tie-break: a complete event's end sorts first among equal timestamps.
    m_ev = np.concatenate([ev, ev[c_idx]])
    m_ts = np.concatenate([ts, np.maximum(cols.ev_data[sel[c_idx]].view(np.int64), ts[c_idx])])
    m_thread = np.concatenate([thread, thread[c_idx]])
    m_delta = np.concatenate([np.where(k == EventKind.DURATION_END, -1, 1), np.full(len(c_idx), -1)]).astype(np.int64)
    # A zero-length complete event keeps its end right after its own begin (same tie, same event row).
    c_end_tie = (m_ts[len(ev):] == ts[c_idx]).astype(np.int8)
    m_tie = np.concatenate([np.ones(len(ev), np.int8), c_end_tie])
    m_is_end = np.r_[np.zeros(len(ev), np.int8), np.ones(len(c_idx), np.int8)]
    order = np.lexsort((m_is_end, m_ev, m_tie, m_ts, m_thread))
    m_ev, m_ts, m_thread, m_delta = m_ev[order], m_ts[order], m_thread[order], m_delta[order]

    # Per-thread running depth with reflection at zero: an end at an empty stack is unmatched.
    starts = np.flatnonzero(np.r_[True, m_thread[1:] != m_thread[:-1]])
    seg_id = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(m_thread)]))
    raw = segmented_cumsum(m_delta, starts, seg_id)
    run_min = segmented_running_min(raw, starts, seg_id)
    prev_min = np.where(np.r_[True, m_thread[1:] != m_thread[:-1]], 0, np.r_[0, run_min[:-1]])
    prev_min = np.minimum(prev_min, 0)
    unmatched = (m_delta < 0) & (raw < prev_min)
    # Reflected depth: level of the stack after each marker.
    after = raw - np.minimum(run_min, 0)

    # Unmatched ends become slices opened at the thread's first timestamp, outermost = latest.
    u_idx = np.flatnonzero(unmatched)
    thread_first_ts = m_ts[starts][seg_id]
    u_thread = m_thread[u_idx]
    # Their depth: they enclose everything before them; the latest is depth 0.
    # Count of unmatched ends after each one on the same thread = its depth.
    u_rank_from_end = _rank_from_end(u_thread)

    # Matched markers: drop unmatched ends; pair begins and ends by (thread, level).
    keep = ~unmatched
    kk = np.flatnonzero(keep)
    is_begin = m_delta[kk] > 0
    level = np.where(is_begin, after[kk] - 1, after[kk])  # a begin opens level L, its end returns to L
    # Unmatched ends on the same thread sit below every matched slice before them in depth terms:
    # add, for each marker, the number of unmatched ends still ahead of it on its thread.
    ahead = _count_ahead(unmatched, seg_id, starts)
    level = level + ahead[kk]
    order2 = np.lexsort((np.arange(len(kk)), level, m_thread[kk]))
    g_thread = m_thread[kk][order2]
    g_level = level[order2]
    g_begin = is_begin[order2]
    g_ts = m_ts[kk][order2]
    g_ev = m_ev[kk][order2]
    nxt_same = np.r_[(g_thread[1:] == g_thread[:-1]) & (g_level[1:] == g_level[:-1]), False]
    nxt_is_end = np.r_[~g_begin[1:], False]
    b_rows = np.flatnonzero(g_begin)
    closed = nxt_same[b_rows] & nxt_is_end[b_rows]
    b_ts = g_ts[b_rows]
    b_end = np.where(closed, g_ts[np.minimum(b_rows + 1, len(g_ts) - 1)], max(trace_end, 0))
    b_end = np.maximum(b_end, b_ts)
    b_flags = np.where(closed, 0, FLAG_UNCLOSED).astype(np.uint8)

    s_ts = np.concatenate([b_ts, thread_first_ts[u_idx]])
    s_end = np.concatenate([b_end, m_ts[u_idx]])
    s_thread = np.concatenate([g_thread[b_rows], u_thread])
    s_depth = np.concatenate([g_level[b_rows], u_rank_from_end])
    s_ev = np.concatenate([g_ev[b_rows], m_ev[u_idx]])
    s_flags = np.concatenate([b_flags, np.full(len(u_idx), FLAG_UNMATCHED_END, np.uint8)])

    # Sorted by thread, start; outer (shallower) first among equal starts.
    o = np.lexsort((s_depth, s_ts, s_thread))
    s_ts, s_end, s_thread, s_depth, s_ev, s_flags = (a[o] for a in (s_ts, s_end, s_thread, s_depth, s_ev, s_flags))
    dur = s_end - s_ts
    parent = _parents(s_thread, s_depth, s_ts, s_end)
    event = s_ev.astype(np.int32)
    return SliceTable(
        ts=s_ts,
        dur=dur,
        thread=s_thread.astype(np.int32),
        depth=s_depth.astype(np.uint16),
        name=Gathered(cols.ev_name, event),
        category=Gathered(cols.ev_category, event),
        event=event,
        flags=s_flags,
        parent=parent,
    )


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


def _parents(thread: np.ndarray, depth: np.ndarray, ts: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Row of the enclosing slice (same thread, depth - 1, latest start <= ts, the longest on a tie), or -1."""
    n = len(ts)
    parent = np.full(n, -1, np.int32)
    if n == 0:
        return parent
    key_order = np.lexsort((end, ts, depth, thread))
    k_thread, k_depth, k_ts = thread[key_order], depth[key_order].astype(np.int64), ts[key_order]
    child = np.flatnonzero(depth > 0)
    # Composite search on ((thread, depth), ts): the lane (thread, depth) as one int64 major key (depths are
    # 16-bit), searched with pair_searchsorted (a structured-array searchsorted is ~30x slower and, being
    # one long call, would stall a UI thread that waits on the GIL)
    lane_of = lambda t, d: t.astype(np.int64) * 65536 + d  # noqa: E731
    q_thread, q_depth = thread[child], depth[child].astype(np.int64) - 1
    pos = pair_searchsorted(lane_of(k_thread, k_depth), k_ts, lane_of(q_thread, q_depth), ts[child], "right") - 1
    ok = pos >= 0
    pos_c = np.maximum(pos, 0)
    ok &= (k_thread[pos_c] == q_thread) & (k_depth[pos_c] == q_depth)
    parent[child[ok]] = key_order[pos_c[ok]].astype(np.int32)
    return parent
