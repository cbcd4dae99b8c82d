"""Scheduling: what ran on each CPU, each thread's state over time, and wakeups, from scheduling records.

Context switches (legacy and current, spec O4) are replayed per CPU in time order (ties in file order):
the incoming thread runs from its switch until the next switch on that CPU (the last one until the end of
the trace). The idle thread is left out of the CPU slices (tid 0, or a legacy record's pid 0 with
priority 0, Perfetto's rule; type-1 weights are not decoded).

A thread's states come from the same records, per thread in time order: switched out it enters the
record's outgoing state (0 new, 2 suspended, 3 blocked, 4 dying, 5 dead; 1 "running" means preempted)
until its next event; switched in it is running (:data:`RUNNING`); a wakeup while it is not running
makes it :data:`RUNNABLE` (fxscope's code for Perfetto's "R", woken and waiting for a CPU). A thread's
first event starts its timeline (its state before is unknown).

Type-1/2 records carry only thread koids: processes come from thread kernel objects (their
``"process"`` argument) or the event threads table (:meth:`ObjectLabels.pids_of`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.trace.objects import ObjectLabels
from core.trace.segments import ffill_index, segment_ids, segment_starts
from formats.fxt.columns import FxtColumns, SchedKind

NEW, RUNNING, SUSPENDED, BLOCKED, DYING, DEAD = range(6)
RUNNABLE = 6
STATE_NAMES = {NEW: "new", RUNNING: "running", SUSPENDED: "suspended", BLOCKED: "blocked", DYING: "dying",
               DEAD: "dead", RUNNABLE: "runnable"}  # fmt: skip


@dataclass
class CpuSlices:
    """What ran on each CPU, sorted by (cpu, start); on one CPU slices do not overlap."""

    cpu: np.ndarray  # uint16
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    tid: np.ndarray  # uint64
    pid: np.ndarray  # uint64 (0 when unknown)

    def __len__(self) -> int:
        return len(self.start)


@dataclass
class ThreadStates:
    """Each thread's state intervals, sorted by (tid, start)."""

    tid: np.ndarray  # uint64
    pid: np.ndarray  # uint64
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    state: np.ndarray  # uint8 (NEW..DEAD, RUNNABLE)
    cpu: np.ndarray  # int32 CPU of the record that started the interval

    def __len__(self) -> int:
        return len(self.start)


@dataclass
class Wakeups:
    """Thread wakeup records by time."""

    ts: np.ndarray  # int64 ns
    tid: np.ndarray  # uint64 woken thread
    pid: np.ndarray  # uint64
    waker_tid: np.ndarray  # uint64 (0 when the record names no waker)
    cpu: np.ndarray  # uint16

    def __len__(self) -> int:
        return len(self.ts)


@dataclass
class SchedTables:
    cpu_slices: CpuSlices
    thread_states: ThreadStates
    wakeups: Wakeups

    def cpus(self) -> list[int]:
        """CPUs that ran something, ascending."""
        return np.unique(self.cpu_slices.cpu).tolist()

    def cpu_rows(self, cpu: int) -> tuple[int, int]:
        """Row range ``lo:hi`` of one CPU's slices."""
        lo, hi = np.searchsorted(self.cpu_slices.cpu, [cpu, cpu + 1])
        return int(lo), int(hi)

    def state_rows(self, tid: int) -> tuple[int, int]:
        """Row range ``lo:hi`` of one thread's states."""
        t = self.thread_states.tid
        return int(np.searchsorted(t, np.uint64(tid), "left")), int(
            np.searchsorted(t, np.uint64(tid), "right")
        )


def build_sched(
    cols: FxtColumns, trace_end: int | None = None, labels: ObjectLabels | None = None
) -> SchedTables:
    """CPU slices, thread states and wakeups of ``cols`` (see the module docstring)."""
    labels = labels or ObjectLabels(cols)
    kind = cols.sched_kind
    if trace_end is None:
        ends = [int(a.max()) for a in (cols.ev_ts, cols.sched_ts) if len(a)]
        trace_end = max(ends) if ends else 0
    legacy = kind == SchedKind.LEGACY_CONTEXT_SWITCH
    in_pid = np.where(legacy, cols.sched_in_pid, labels.pids_of(cols.sched_in_tid))
    out_pid = np.where(legacy, cols.sched_out_pid, labels.pids_of(cols.sched_out_tid))
    in_idle = (cols.sched_in_tid == 0) | (legacy & (cols.sched_in_pid == 0) & (cols.sched_in_prio == 0))
    out_idle = (cols.sched_out_tid == 0) | (legacy & (cols.sched_out_pid == 0) & (cols.sched_out_prio == 0))

    # --- CPU slices: each switch runs its incoming thread until the next switch on that CPU
    sw = np.flatnonzero(kind != SchedKind.THREAD_WAKEUP)
    sw = sw[np.lexsort((sw, cols.sched_ts[sw], cols.sched_cpu[sw]))]
    cpu = cols.sched_cpu[sw]
    ts = cols.sched_ts[sw]
    last_on_cpu = np.r_[cpu[1:] != cpu[:-1], True] if len(sw) else np.zeros(0, bool)
    end = np.where(last_on_cpu, max(trace_end, 0), np.r_[ts[1:], 0] if len(sw) else ts)
    run = ~in_idle[sw]
    cpu_slices = CpuSlices(
        cpu=cpu[run].astype(np.uint16),
        start=ts[run],
        end=np.maximum(end[run], ts[run]),
        tid=cols.sched_in_tid[sw][run],
        pid=in_pid[sw][run].astype(np.uint64),
    )

    # --- thread states: out (record's state), wakeup (runnable), in (running), per thread in time order
    wk = np.flatnonzero(kind == SchedKind.THREAD_WAKEUP)
    outs = sw[~out_idle[sw]]
    ins = sw[run]
    e_tid = np.r_[cols.sched_out_tid[outs], cols.sched_in_tid[wk], cols.sched_in_tid[ins]]
    e_pid = np.r_[out_pid[outs], in_pid[wk], in_pid[ins]].astype(np.uint64)
    e_ts = np.r_[cols.sched_ts[outs], cols.sched_ts[wk], cols.sched_ts[ins]]
    e_rank = np.r_[np.zeros(len(outs)), np.ones(len(wk)), np.full(len(ins), 2)].astype(np.int8)
    e_state = np.r_[cols.sched_out_state[outs], np.full(len(wk), RUNNABLE), np.full(len(ins), RUNNING)]
    e_cpu = np.r_[cols.sched_cpu[outs], cols.sched_cpu[wk], cols.sched_cpu[ins]].astype(np.int32)
    e_rec = np.r_[outs, wk, ins]
    o = np.lexsort((e_rec, e_rank, e_ts, e_tid))
    e_tid, e_pid, e_ts, e_rank, e_state, e_cpu = (a[o] for a in (e_tid, e_pid, e_ts, e_rank, e_state, e_cpu))
    # a wakeup of a running thread changes nothing: drop it (the running interval goes on)
    starts = segment_starts(e_tid)
    prev = ffill_index(e_rank != 1, starts, segment_ids(starts, len(e_tid)))
    redundant = (e_rank == 1) & (prev >= 0) & (e_state[np.maximum(prev, 0)] == RUNNING)
    keep = ~redundant
    e_tid, e_pid, e_ts, e_state, e_cpu = (a[keep] for a in (e_tid, e_pid, e_ts, e_state, e_cpu))
    last = np.r_[e_tid[1:] != e_tid[:-1], True] if len(e_tid) else np.zeros(0, bool)
    s_end = np.where(last, max(trace_end, 0), np.r_[e_ts[1:], 0] if len(e_ts) else e_ts)
    states = ThreadStates(
        tid=e_tid.astype(np.uint64),
        pid=e_pid,
        start=e_ts,
        end=np.maximum(s_end, e_ts),
        state=e_state.astype(np.uint8),
        cpu=e_cpu,
    )

    wo = wk[np.argsort(cols.sched_ts[wk], kind="stable")]
    wakeups = Wakeups(
        ts=cols.sched_ts[wo],
        tid=cols.sched_in_tid[wo],
        pid=in_pid[wo].astype(np.uint64),
        waker_tid=cols.sched_waker_tid[wo],
        cpu=cols.sched_cpu[wo],
    )
    return SchedTables(cpu_slices, states, wakeups)
