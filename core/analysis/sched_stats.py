"""Scheduling aggregates of an area: CPU time per thread and per process, time per thread state, and the
wakeup latency distribution (from a wakeup to the thread's next start on a CPU).

Times are clipped to the range (so the numbers of a range cut in two add up); a wakeup counts when it lies
in the range, its latency measured to the first CPU slice of the woken thread starting at or after it
(wherever that is), and a wakeup never followed by a run has no latency (counted apart). Sums are
bincounts over densely renumbered thread ids; the latencies a search per thread (a Python step per
thread, never per record).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.trace.sched import STATE_NAMES

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel


@dataclass
class SchedSummary:
    #: per thread with CPU time, largest first: koid, process koid, CPU ns
    thread_tid: np.ndarray
    thread_pid: np.ndarray
    thread_cpu_ns: np.ndarray
    #: per process, largest first
    process_pid: np.ndarray
    process_cpu_ns: np.ndarray
    #: state name -> ns spent in it by the area's threads
    state_ns: dict[str, int]
    #: wakeup latencies in ns (wakeups in the range that were followed by a run), in wakeup time order
    latency_ns: np.ndarray
    #: wakeups in the range never followed by a run of their thread
    unserved_wakeups: int


def _clip(start: np.ndarray, end: np.ndarray, t0: int, t1: int) -> np.ndarray:
    return np.maximum(np.minimum(end, t1) - np.maximum(start, t0), 0)


def _wanted(tid: np.ndarray, tids: np.ndarray | None) -> np.ndarray:
    return np.ones(len(tid), bool) if tids is None else np.isin(tid, tids)


def _sum_by(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys and the int64 sum of ``values`` per key, largest sum first (ties by key)."""
    if not len(keys):
        return keys[:0], np.zeros(0, np.int64)
    uniq, inv = np.unique(keys, return_inverse=True)
    sums = np.bincount(inv.reshape(-1), weights=values, minlength=len(uniq)).astype(np.int64)
    order = np.lexsort((uniq, -sums))
    return uniq[order], sums[order]


def sched_summary(model: TraceModel, t0: int, t1: int, tids=None) -> SchedSummary:
    """The aggregates of [t0, t1) over threads ``tids`` (koids; None = every thread)."""
    sched = model.sched
    want = None if tids is None else np.asarray(sorted(int(t) for t in tids), np.uint64)
    cs = sched.cpu_slices
    sel = _wanted(cs.tid, want) & (cs.start < t1) & (cs.end > t0)
    cpu_ns = _clip(cs.start[sel], cs.end[sel], t0, t1)
    t_tid, t_ns = _sum_by(cs.tid[sel], cpu_ns)
    pid_of = dict(zip(cs.tid[sel].tolist(), cs.pid[sel].tolist(), strict=True))  # per thread, not per slice
    t_pid = np.array([pid_of.get(t, 0) for t in t_tid.tolist()], np.uint64)
    p_pid, p_ns = _sum_by(cs.pid[sel], cpu_ns)

    ts = sched.thread_states
    sel = _wanted(ts.tid, want) & (ts.start < t1) & (ts.end > t0)
    st_ns = np.bincount(ts.state[sel].astype(np.int64), weights=_clip(ts.start[sel], ts.end[sel], t0, t1),
                        minlength=max(STATE_NAMES) + 1).astype(np.int64)  # fmt: skip
    state_ns = {STATE_NAMES.get(i, f"state {i}"): int(v) for i, v in enumerate(st_ns.tolist()) if v}

    wk = sched.wakeups
    rows = wk.rows_in(t0, t1)
    rows = rows[_wanted(wk.tid[rows], want)]
    latency = np.full(len(rows), -1, np.int64)
    if len(rows) and len(cs):
        by_tid = np.lexsort((cs.start, cs.tid))  # a thread's CPU slices by start
        tid_sorted, start_sorted = cs.tid[by_tid], cs.start[by_tid]
        w_tid, w_ts = wk.tid[rows], wk.ts[rows]
        for tid in np.unique(w_tid).tolist():  # per thread
            key = np.uint64(tid)
            lo, hi = int(np.searchsorted(tid_sorted, key, "left")), int(np.searchsorted(tid_sorted, key, "right"))
            mine = np.flatnonzero(w_tid == tid)
            starts = start_sorted[lo:hi]
            k = np.searchsorted(starts, w_ts[mine], "left")
            ok = k < len(starts)
            latency[mine[ok]] = starts[k[ok]] - w_ts[mine[ok]]
    served = latency >= 0
    return SchedSummary(t_tid, t_pid, t_ns, p_pid, p_ns, state_ns, latency[served], int((~served).sum()))
