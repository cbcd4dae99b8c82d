"""Scheduling: what ran on each CPU, each thread's state over time, and wakeups, from scheduling records.

Context switches (legacy and current, spec O4) are replayed per CPU in time order (ties in file order):
the incoming thread runs from its switch until the next switch on that CPU (the last one until the end of
the trace). The idle thread is left out of the CPU slices (tid 0, or a legacy record's pid 0 with
priority 0, Perfetto's rule; type-1 weights are not decoded).

A thread's states come from the same records, per thread in time order: switched out it enters the
record's outgoing state (0 new, 2 suspended, 3 blocked, 4 dying, 5 dead; 1 "running" means preempted and is
stored as :data:`PREEMPTED_STATE`, Perfetto's "Runnable (Preempted)") until its next event; switched in it is
running (:data:`RUNNING`); a wakeup while it is not running makes it :data:`RUNNABLE` (fxscope's code for
Perfetto's "R", woken and waiting for a CPU; a wakeup of a running thread changes nothing and is dropped).
A thread's first event starts its timeline (its state before is unknown).

Type-1/2 records carry only thread koids: processes come from thread kernel objects (their
``"process"`` argument) or the event threads table (:meth:`ObjectLabels.pids_of`).

The details panel's view of a CPU slice or a thread-state interval (:func:`cpu_slice_details`,
:func:`thread_state_details`, what Perfetto shows for a sched slice: end state, and the wakeup that made
the thread runnable with its scheduling latency) and the wakeups in a window for markers
(:func:`wakeups_in`) are answered here, Qt-free, from the three tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from fxscope.core.trace import compiled
from fxscope.core.trace.objects import ObjectLabels
from fxscope.core.trace.segments import ffill_index, key_rows, segment_ids, segment_starts
from fxscope.core.trace.sorting import lexsort
from fxscope.formats.fxt.columns import FxtColumns, SchedKind

NEW, RUNNING, SUSPENDED, BLOCKED, DYING, DEAD = range(6)
RUNNABLE = 6
#: switched out while "running" (the record's state 1): preempted, runnable without a wakeup
PREEMPTED_STATE = 7
STATE_NAMES = {NEW: "new", RUNNING: "running", SUSPENDED: "suspended", BLOCKED: "blocked", DYING: "dying",
               DEAD: "dead", RUNNABLE: "runnable", PREEMPTED_STATE: "runnable (preempted)"}  # fmt: skip


#: the koid columns of the tables below are uint32 when every koid of the trace's scheduling records fits
#: (as a rule: koids are small counters), else uint64 (:func:`koid_type`); widen them before arithmetic
@dataclass
class CpuSlices:
    """What ran on each CPU, sorted by (cpu, start); on one CPU slices do not overlap."""

    cpu: np.ndarray  # uint16
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    tid: np.ndarray  # uint32/uint64 koid
    pid: np.ndarray  # uint32/uint64 koid (0 when unknown)

    def __len__(self) -> int:
        return len(self.start)


@dataclass
class ThreadStates:
    """Each thread's state intervals, sorted by (tid, start)."""

    tid: np.ndarray  # uint32/uint64 koid
    pid: np.ndarray  # uint32/uint64 koid
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    state: np.ndarray  # uint8 (NEW..DEAD, RUNNABLE)
    cpu: np.ndarray  # uint16 CPU of the record that started the interval

    def __len__(self) -> int:
        return len(self.start)


@dataclass
class _Groups:
    """Rows grouped by a key: the rows of ``keys[k]`` are ``rows[ptr[k]:ptr[k + 1]]``, ascending."""

    keys: np.ndarray
    ptr: np.ndarray
    rows: np.ndarray

    @classmethod
    def of(cls, column: np.ndarray) -> _Groups:
        # stable: ascending rows within a key; 16-bit keys (koids and CPUs are small as a rule) by numpy's
        # radix sort, a linear pass per byte
        small = len(column) and column.dtype.kind in "ui" and int(column.min()) >= 0 and int(column.max()) < 1 << 16
        rows = np.argsort(column.astype(np.uint16) if small else column, kind="stable")
        keys = column[rows]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
        return cls(keys[starts], np.r_[starts, len(rows)].astype(np.int64), rows)

    def rows_of(self, key: int) -> np.ndarray:
        k = int(np.searchsorted(self.keys, key))
        if k == len(self.keys) or self.keys[k] != key:
            return self.rows[:0]
        return self.rows[self.ptr[k] : self.ptr[k + 1]]


@dataclass
class Wakeups:
    """Thread wakeup records by time."""

    ts: np.ndarray  # int64 ns
    tid: np.ndarray  # uint32/uint64 koid of the woken thread
    pid: np.ndarray  # uint32/uint64 koid
    waker_tid: np.ndarray  # uint32/uint64 koid (0 when the record names no waker)
    cpu: np.ndarray  # uint16
    #: rows per woken thread and per CPU, built on first use by :meth:`rows_in`
    _by_tid: _Groups | None = field(default=None, repr=False)
    _by_cpu: _Groups | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.ts)

    def by_tid(self) -> _Groups:
        """The rows per woken thread (built on first use: the loader builds them, as the thread-state strips
        of the first frame draw their wakeups: a sort of every wakeup, ~0.25 s on the UI thread at 30M events)."""
        if self._by_tid is None:
            self._by_tid = _Groups.of(self.tid)
        return self._by_tid

    def rows_in(self, t0: int, t1: int, tid: int | None = None, cpu: int | None = None) -> np.ndarray:
        """Rows with ``t0 <= ts < t1``, by time; only those waking ``tid`` / recorded on ``cpu`` if given.

        Binary searches only: the window's rows are a range of the time-sorted table, and a thread's (a
        CPU's) rows, ascending, are cut to that range by searching the row numbers themselves.
        """
        a, b = (int(i) for i in np.searchsorted(self.ts, [t0, t1], "left"))
        b = max(a, b)
        if tid is None and cpu is None:
            return np.arange(a, b)
        if tid is not None:
            group = self.by_tid().rows_of(tid)
        else:
            if self._by_cpu is None:
                self._by_cpu = _Groups.of(self.cpu)
            group = self._by_cpu.rows_of(cpu)
        lo, hi = np.searchsorted(group, [a, b], "left")
        rows = group[lo:hi]
        if tid is not None and cpu is not None:
            rows = rows[self.cpu[rows] == cpu]
        return rows.astype(np.int64, copy=False)  # (a view of the group's rows: no copy per frame)


@dataclass
class SchedTables:
    cpu_slices: CpuSlices
    thread_states: ThreadStates
    wakeups: Wakeups

    def cpus(self) -> list[int]:
        """CPUs that ran something, ascending (the CPU slices are sorted by CPU: one pass, no sort)."""
        cpu = self.cpu_slices.cpu
        return cpu[segment_starts(cpu)].tolist() if len(cpu) else []

    def state_tids(self) -> list[int]:
        """Thread koids with thread states, ascending (the states are sorted by thread: one pass, no sort)."""
        tid = self.thread_states.tid
        return tid[segment_starts(tid)].tolist() if len(tid) else []

    def cpu_rows(self, cpu: int) -> tuple[int, int]:
        """Row range ``lo:hi`` of one CPU's slices."""
        return key_rows(self.cpu_slices.cpu, cpu)

    def state_rows(self, tid: int) -> tuple[int, int]:
        """Row range ``lo:hi`` of one thread's states."""
        return key_rows(self.thread_states.tid, tid)


def koid_type(*columns: np.ndarray) -> type:
    """uint32 when every value of ``columns`` (koids) fits 32 bits, else uint64: the tables' koid type
    (4 bytes a row and column saved, ~10 MB at 10M events, more for a system trace of scheduling)."""
    return np.uint32 if all(not len(c) or int(c.max()) < 1 << 32 for c in columns) else np.uint64


def build_sched(
    cols: FxtColumns, trace_end: int | None = None, labels: ObjectLabels | None = None
) -> SchedTables:
    """CPU slices, thread states and wakeups of ``cols`` (see the module docstring)."""
    labels = labels or ObjectLabels(cols)
    kind = cols.sched_kind
    if trace_end is None:
        ends = [int(a.max()) for a in (cols.ev_ts, cols.sched_ts) if len(a)]
        trace_end = max(ends) if ends else 0
    in_pid, out_pid, in_idle, out_idle = _record_processes(cols, labels)
    koid = koid_type(cols.sched_in_tid, cols.sched_out_tid, cols.sched_waker_tid, in_pid, out_pid)
    in_pid, out_pid = in_pid.astype(koid, copy=False), out_pid.astype(koid, copy=False)

    replayed = _replay_compiled(cols, in_idle, out_idle, in_pid, out_pid, koid, max(trace_end, 0))
    if replayed is not None:
        cpu_slices, states = replayed
        del in_idle, out_idle, out_pid
        wk = np.flatnonzero(kind == SchedKind.THREAD_WAKEUP)
    else:
        cpu_slices, states, wk = _replay(cols, kind, in_idle, out_idle, in_pid, out_pid, koid, trace_end)
    wo = wk[lexsort([cols.sched_ts[wk]])]  # (by time: in order already as a rule, no sort then)
    wakeups = Wakeups(
        ts=cols.sched_ts[wo],
        tid=cols.sched_in_tid[wo].astype(koid, copy=False),  # (a gather: a copy already)
        pid=in_pid[wo],
        waker_tid=cols.sched_waker_tid[wo].astype(koid, copy=False),
        cpu=cols.sched_cpu[wo],
    )
    return SchedTables(cpu_slices, states, wakeups)


#: records whose processes and idle flags :func:`_record_processes` makes at a time
RECORD_BLOCK = 1 << 18


def _record_processes(cols: FxtColumns, labels: ObjectLabels) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each record's incoming and outgoing process koids (a legacy switch's own, else its threads' processes:
    :meth:`ObjectLabels.pids_of`; uint32 when every one fits, else uint64) and whether its incoming and
    outgoing threads are idle (tid 0, or a legacy record's pid 0 with priority 0).

    A block of records at a time, written into the four columns: made for the whole column at once, each
    process column took five temporaries of 4-8 bytes a record (the lookup's index and result, the choice
    between the record's and the thread's process, the narrowing), ~450 MB at 100M events. Past glibc's
    32 MB mmap threshold each is a fresh mapping whose pages fault in: the scheduling step's page faults
    grew 7.6x from 30M to 100M events (its time 4-4.3x), where block-sized temporaries are reused."""
    kind = cols.sched_kind
    n = len(kind)
    in_idle, out_idle = np.empty(n, bool), np.empty(n, bool)
    pids = [np.empty(n, np.uint32), np.empty(n, np.uint32)]
    sides = ((cols.sched_in_pid, cols.sched_in_tid, cols.sched_in_prio, in_idle),
             (cols.sched_out_pid, cols.sched_out_tid, cols.sched_out_prio, out_idle))  # fmt: skip
    for a in range(0, n, RECORD_BLOCK):
        b = min(a + RECORD_BLOCK, n)
        legacy = kind[a:b] == SchedKind.LEGACY_CONTEXT_SWITCH
        for side, (record_pid, tid, prio, idle) in enumerate(sides):
            rp, t = record_pid[a:b], tid[a:b]
            np.logical_or(t == 0, legacy & (rp == 0) & (prio[a:b] == 0), out=idle[a:b])
            pid = np.where(legacy, rp, labels.pids_of(t))
            if pids[side].dtype != np.uint64 and len(pid) and int(pid.max()) >= 1 << 32:
                pids[side] = pids[side].astype(np.uint64)  # (rare: a process koid past 32 bits)
            pids[side][a:b] = pid
    return pids[0], pids[1], in_idle, out_idle


def _replay(cols: FxtColumns, kind: np.ndarray, in_idle: np.ndarray, out_idle: np.ndarray, in_pid: np.ndarray,
            out_pid: np.ndarray, koid: type, trace_end: int) -> tuple[CpuSlices, ThreadStates, np.ndarray]:  # fmt: skip
    """:func:`build_sched`'s replay in numpy (the reference of the compiled one, and what an install without a C
    compiler runs): the CPU slices, the thread states and the wakeups' rows."""
    # --- CPU slices: each switch runs its incoming thread until the next switch on that CPU
    sw = np.flatnonzero(kind != SchedKind.THREAD_WAKEUP)
    sw = sw[lexsort((sw, cols.sched_ts[sw], cols.sched_cpu[sw]))]
    cpu = cols.sched_cpu[sw]
    ts = cols.sched_ts[sw]
    last_on_cpu = np.r_[cpu[1:] != cpu[:-1], True] if len(sw) else np.zeros(0, bool)
    end = np.where(last_on_cpu, max(trace_end, 0), np.r_[ts[1:], 0] if len(sw) else ts)
    run = ~in_idle[sw]
    cpu_slices = CpuSlices(
        cpu=cpu[run].astype(np.uint16),
        start=ts[run],
        end=np.maximum(end[run], ts[run]),
        tid=cols.sched_in_tid[sw][run].astype(koid),  # (the reader's koid columns may be uint32)
        pid=in_pid[sw][run],
    )
    del cpu, ts, last_on_cpu, end, in_idle

    # --- thread states: out (record's state), wakeup (runnable), in (running), per thread in time order
    wk = np.flatnonzero(kind == SchedKind.THREAD_WAKEUP)
    outs = sw[~out_idle[sw]]
    ins = sw[run]
    del sw, run, out_idle
    e_tid = np.r_[cols.sched_out_tid[outs], cols.sched_in_tid[wk], cols.sched_in_tid[ins]]
    e_pid = np.r_[out_pid[outs], in_pid[wk], in_pid[ins]]
    del out_pid
    e_ts = np.r_[cols.sched_ts[outs], cols.sched_ts[wk], cols.sched_ts[ins]]
    e_rank = np.r_[np.zeros(len(outs), np.int8), np.ones(len(wk), np.int8), np.full(len(ins), 2, np.int8)]
    out_state = cols.sched_out_state[outs]
    out_state = np.where(out_state == RUNNING, PREEMPTED_STATE, out_state)  # switched out while running
    e_state = np.r_[out_state, np.full(len(wk), RUNNABLE), np.full(len(ins), RUNNING)]
    e_cpu = np.r_[cols.sched_cpu[outs], cols.sched_cpu[wk], cols.sched_cpu[ins]].astype(np.uint16)
    rec = np.int32 if len(kind) < 1 << 31 else np.int64
    e_rec = np.r_[outs.astype(rec), wk.astype(rec), ins.astype(rec)]
    del outs, ins, out_state
    o = lexsort((e_rec, e_rank, e_ts, e_tid))
    del e_rec
    e_tid, e_pid, e_ts, e_rank, e_state, e_cpu = (a[o] for a in (e_tid, e_pid, e_ts, e_rank, e_state, e_cpu))
    del o
    # a wakeup of a running thread changes nothing: drop it (the running interval goes on)
    starts = segment_starts(e_tid)
    prev = ffill_index(e_rank != 1, starts, segment_ids(starts, len(e_tid)))
    redundant = (e_rank == 1) & (prev >= 0) & (e_state[np.maximum(prev, 0)] == RUNNING)
    keep = ~redundant
    del starts, prev, redundant, e_rank
    e_tid, e_pid, e_ts, e_state, e_cpu = (a[keep] for a in (e_tid, e_pid, e_ts, e_state, e_cpu))
    del keep
    last = np.r_[e_tid[1:] != e_tid[:-1], True] if len(e_tid) else np.zeros(0, bool)
    s_end = np.where(last, max(trace_end, 0), np.r_[e_ts[1:], 0] if len(e_ts) else e_ts)
    states = ThreadStates(
        tid=e_tid.astype(koid, copy=False),
        pid=e_pid,
        start=e_ts,
        end=np.maximum(s_end, e_ts),
        state=e_state.astype(np.uint8),
        cpu=e_cpu,
    )

    return cpu_slices, states, wk


def _replay_compiled(cols: FxtColumns, in_idle: np.ndarray, out_idle: np.ndarray, in_pid: np.ndarray,
                     out_pid: np.ndarray, koid: type, trace_end: int) -> tuple[CpuSlices, ThreadStates] | None:  # fmt: skip
    """The replay by the compiled loop (sched_kernels.c), which writes the tables' columns as it makes their
    rows (the records' CPUs, koids and processes: no gather of them by the rows' records afterwards), or None
    when it is not built or does not take these columns (the numpy path, :func:`_replay`). ``in_pid`` and
    ``out_pid`` are of the tables' koid type ``koid``."""
    kernels = compiled.sched_kernels
    kind, ts, cpu = cols.sched_kind, cols.sched_ts, cols.sched_cpu
    out_tid, in_tid, out_state = cols.sched_out_tid, cols.sched_in_tid, cols.sched_out_state
    if kernels is None or len(kind) >= 1 << 37 or not (  # (the kernel's record numbers: 37 bits)
        compiled.plain(kind, np.uint8) and compiled.plain(ts, np.int64) and compiled.plain(cpu, np.uint16)
        and compiled.plain(out_tid, np.uint32, np.uint64) and compiled.plain(in_tid, np.uint32, np.uint64)
        and compiled.plain(out_state, np.uint8) and compiled.plain(in_idle, np.bool_)
        and compiled.plain(out_idle, np.bool_) and compiled.plain(in_pid, koid) and compiled.plain(out_pid, koid)
    ):  # fmt: skip
        return None
    wake = kind == SchedKind.THREAD_WAKEUP
    n_wake = int(np.count_nonzero(wake))
    n_run = int(np.count_nonzero(~(in_idle | wake)))  # (the CPU slices: a switch to a thread not idle each)
    n_ev = n_wake + n_run + int(np.count_nonzero(~(out_idle | wake)))
    del wake
    # (room for every event: the states' rows but the wakeups of running threads, dropped; the pages past
    # the rows written are never touched)
    cs = [np.empty(n_run, np.uint16), np.empty(n_run, np.int64), np.empty(n_run, np.int64), np.empty(n_run, koid),
          np.empty(n_run, koid)]  # fmt: skip
    st = [np.empty(n_ev, koid), np.empty(n_ev, koid), np.empty(n_ev, np.int64), np.empty(n_ev, np.int64),
          np.empty(n_ev, np.uint8), np.empty(n_ev, np.uint16)]  # fmt: skip
    n_cs, n_st = kernels.sched_replay(kind, ts, cpu, out_tid, out_tid.dtype == np.uint64, in_tid,
                                      in_tid.dtype == np.uint64, out_state, in_idle.view(np.uint8),
                                      out_idle.view(np.uint8), in_pid, out_pid, koid == np.uint64, trace_end, *cs,
                                      *st)  # fmt: skip
    c_cpu, c_start, c_end, c_tid, c_pid = (a[:n_cs] for a in cs)
    s_tid, s_pid, s_start, s_end, s_state, s_cpu = (a[:n_st] for a in st)
    return (CpuSlices(cpu=c_cpu, start=c_start, end=c_end, tid=c_tid, pid=c_pid),
            ThreadStates(tid=s_tid, pid=s_pid, start=s_start, end=s_end, state=s_state, cpu=s_cpu))  # fmt: skip


# ---------------------------------------------------------------------------------------------- details
#: how the details name a thread switched out in the "running" state (spec: preempted, it stays runnable;
#: build_sched stores PREEMPTED_STATE for that interval, not the record's code 1, RUNNING)
PREEMPTED = STATE_NAMES[PREEMPTED_STATE]


class SchedSource(Protocol):
    """What the details functions below read of a trace (a :class:`fxscope.core.trace.model.TraceModel`): a
    protocol, not the model class, because the model imports this module to build its tables."""

    sched: SchedTables
    objects: ObjectLabels

    def process_name(self, pid: int) -> str: ...


def thread_label(model: SchedSource, tid: int) -> str:
    """A thread koid as the thread tracks name it: ``"name tid"``, else ``"thread tid"``."""
    return model.objects.thread_label(tid)


def _process(model: SchedSource, pid: int) -> str:
    return model.process_name(pid) if pid else ""


def _wakeup_of(model: SchedSource, tid: int, ts: int) -> int:
    """Row of the wakeup of ``tid`` recorded at ``ts`` (the start of a runnable interval), or -1."""
    wk = model.sched.wakeups
    rows = wk.rows_in(ts, ts + 1, tid=tid)
    return int(rows[0]) if len(rows) else -1


def _wakeup_fields(model: SchedSource, row: int, until: int | None = None) -> dict[str, object]:
    """The wakeup ``row`` (-1: none) as details: when, where, by whom; with ``until``, the latency to it."""
    if row < 0:
        out: dict[str, object] = {"wakeup_row": -1, "wakeup_ns": None, "wakeup_cpu": None, "waker": None,
                                  "waker_tid": None}  # fmt: skip
        if until is not None:
            out["latency_ns"] = None
        return out
    wk = model.sched.wakeups
    waker = int(wk.waker_tid[row])
    out = {
        "wakeup_row": row,
        "wakeup_ns": int(wk.ts[row]),
        "wakeup_cpu": int(wk.cpu[row]),
        "waker": thread_label(model, waker) if waker else None,
        "waker_tid": waker or None,
    }
    if until is not None:
        out["latency_ns"] = until - int(wk.ts[row])
    return out


def _starting_at(start: np.ndarray, lo: int, hi: int, t: int) -> np.ndarray:
    """Rows ``lo:hi`` (sorted by ``start``) that start at ``t``: a few at most (switches at one instant)."""
    a, b = np.searchsorted(start[lo:hi], [t, t + 1], "left")
    return np.arange(lo + a, lo + b)


def _running_state_row(model: SchedSource, tid: int, start: int, cpu: int) -> int:
    """The thread-state row of ``tid``'s running interval that starts at ``start`` on ``cpu``, or -1."""
    st = model.sched.thread_states
    rows = _starting_at(st.start, *model.sched.state_rows(tid), start)
    rows = rows[(st.state[rows] == RUNNING) & (st.cpu[rows] == cpu)]
    # the last: a switch in sorts after a switch out "running" (preempted) at the same time
    return int(rows[-1]) if len(rows) else -1


def _cpu_slice_row(model: SchedSource, cpu: int, start: int, tid: int) -> int:
    """The CPU slice of ``tid`` on ``cpu`` that starts at ``start``, or -1 (the thread was preempted then)."""
    cs = model.sched.cpu_slices
    rows = _starting_at(cs.start, *model.sched.cpu_rows(cpu), start)  # zero-length slices may share it
    rows = rows[cs.tid[rows] == tid]
    return int(rows[0]) if len(rows) else -1


def _made_runnable(model: SchedSource, state_row: int) -> int:
    """For the state row of a running interval: the wakeup that made the thread runnable before it, or -1.

    That is the first of the runnable intervals right before the running one (a second wakeup of a runnable
    thread starts another runnable row, but the thread had been waiting since the first).
    """
    st = model.sched.thread_states
    tid = int(st.tid[state_row])
    i = state_row
    while i > 0 and int(st.tid[i - 1]) == tid and st.state[i - 1] == RUNNABLE:
        i -= 1
    if i == state_row:
        return -1
    return _wakeup_of(model, tid, int(st.start[i]))


def cpu_slice_details(model: SchedSource, row: int) -> dict[str, object]:
    """What the details panel shows for CPU slice ``row`` (times in ns).

    Keys: ``cpu``, ``thread`` (label), ``tid``, ``process`` (label, "" when unknown), ``pid``, ``start_ns``,
    ``duration_ns``, ``end_state`` (the state name the thread was switched out into, :data:`PREEMPTED` for
    "running", None when it still ran at the end of the trace or the records disagree), ``state_row`` (its running interval in the thread
    states, -1 if none), and the wakeup that made it runnable before it ran: ``wakeup_row`` (-1: none, e.g.
    after a preemption), ``wakeup_ns``, ``wakeup_cpu``, ``waker`` (label, None when the record names no
    waker), ``waker_tid`` and ``latency_ns`` (start minus wakeup time).
    """
    cs = model.sched.cpu_slices
    st = model.sched.thread_states
    cpu, tid, pid = int(cs.cpu[row]), int(cs.tid[row]), int(cs.pid[row])
    start, end = int(cs.start[row]), int(cs.end[row])
    state_row = _running_state_row(model, tid, start, cpu)
    end_state = None
    if state_row >= 0:
        nxt = state_row + 1
        if nxt < len(st) and int(st.tid[nxt]) == tid and int(st.start[nxt]) == end:
            out = int(st.state[nxt])  # switched out "running": preempted, still runnable
            end_state = STATE_NAMES.get(out, f"state {out}")
    wakeup = _made_runnable(model, state_row) if state_row >= 0 else -1
    return {
        "cpu": cpu,
        "thread": thread_label(model, tid),
        "tid": tid,
        "process": _process(model, pid),
        "pid": pid,
        "start_ns": start,
        "duration_ns": end - start,
        "end_state": end_state,
        "state_row": state_row,
        **_wakeup_fields(model, wakeup, until=start),
    }


def thread_state_details(model: SchedSource, row: int) -> dict[str, object]:
    """What the details panel shows for thread-state interval ``row`` (times in ns).

    Keys: ``thread`` (label), ``tid``, ``process``, ``pid``, ``state`` (name; :data:`PREEMPTED` for a
    "running" interval the thread spent switched out), ``start_ns``,
    ``duration_ns``, ``cpu`` (the CPU of the record that started the interval: where it runs for a running
    interval, where the wakeup was recorded for a runnable one, the CPU it left otherwise), ``cpu_slice``
    (a running interval's row in the CPU slices, else -1) and, for a runnable interval, the wakeup that
    started it: ``wakeup_row`` (-1 for other states), ``wakeup_ns``, ``wakeup_cpu``, ``waker`` (label, None
    when the record names no waker), ``waker_tid``.
    """
    st = model.sched.thread_states
    tid, pid, state = int(st.tid[row]), int(st.pid[row]), int(st.state[row])
    start, end, cpu = int(st.start[row]), int(st.end[row]), int(st.cpu[row])
    # no CPU slice of its own: the thread was switched out "running", preempted
    cpu_slice = _cpu_slice_row(model, cpu, start, tid) if state == RUNNING else -1
    name = STATE_NAMES.get(state, f"state {state}")
    return {
        "thread": thread_label(model, tid),
        "tid": tid,
        "process": _process(model, pid),
        "pid": pid,
        "state": PREEMPTED if state == RUNNING and cpu_slice < 0 else name,
        "start_ns": start,
        "duration_ns": end - start,
        "cpu": cpu,
        "cpu_slice": cpu_slice,
        **_wakeup_fields(model, _wakeup_of(model, tid, start) if state == RUNNABLE else -1),
    }


def wakeups_in(
    model: SchedSource, t0: int, t1: int, tid: int | None = None, cpu: int | None = None
) -> np.ndarray:
    """Rows of ``model.sched.wakeups`` in [t0, t1), by time, of thread ``tid`` / on ``cpu`` if given (for
    markers on state strips and CPU lanes; see :meth:`Wakeups.rows_in`)."""
    return model.sched.wakeups.rows_in(t0, t1, tid=tid, cpu=cpu)
