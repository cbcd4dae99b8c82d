"""Details of CPU slices and thread-state intervals, and wakeups in a window, on a hand-built trace with
context switches and wakeups (times worked out by hand) and on the generated trace (against plain scans).

The third-party traces in ../shared/testdata/fxt have no scheduling records (see their MANIFEST).
"""

from __future__ import annotations

import numpy as np

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.sched import (
    BLOCKED,
    PREEMPTED,
    PREEMPTED_STATE,
    RUNNABLE,
    RUNNING,
    STATE_NAMES,
    SUSPENDED,
    cpu_slice_details,
    thread_state_details,
    wakeups_in,
)
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter


def _model() -> TraceModel:
    w = FxtWriter()
    w.initialization(1_000_000_000)
    w.kernel_object(2, 1, "netstack")
    w.kernel_object(20, 2, "rx", [("process", A.KOID, 2)])
    w.kernel_object(21, 2, "tx", [("process", A.KOID, 2)])
    w.context_switch(10, 0, 0, 0, 20)  # idle -> rx on CPU 0
    w.context_switch(15, 1, 0, 0, 21)  # idle -> tx on CPU 1
    w.context_switch(20, 0, BLOCKED, 20, 0)  # rx blocks
    w.thread_wakeup(30, 1, 20, [("waker", A.KOID, 21)])  # tx wakes rx
    w.thread_wakeup(32, 1, 20, [("waker", A.KOID, 21)])  # and again, rx still waiting
    w.context_switch(40, 0, 0, 0, 20)  # rx runs: 10 ns after the first wakeup
    w.context_switch(50, 1, RUNNING, 21, 22)  # tx preempted by thread 22 (no object: no name, no process)
    w.context_switch(60, 1, BLOCKED, 22, 21)  # tx back, with no wakeup
    w.thread_wakeup(70, 0, 22)  # no waker named
    w.context_switch(80, 0, SUSPENDED, 20, 22)
    w.event(K.INSTANT, 100, (2, 20), "c", "end of trace")
    return TraceModel(read_fxt_bytes(w.getvalue()))


def _cpu_row(model: TraceModel, cpu: int, start: int) -> int:
    cs = model.sched.cpu_slices
    return int(np.flatnonzero((cs.cpu == cpu) & (cs.start == start))[0])


def _state_row(model: TraceModel, tid: int, start: int) -> int:
    st = model.sched.thread_states
    return int(np.flatnonzero((st.tid == tid) & (st.start == start))[-1])


def test_cpu_slice_details() -> None:
    model = _model()
    d = cpu_slice_details(model, _cpu_row(model, 0, 40))
    assert {k: d[k] for k in ("cpu", "thread", "tid", "process", "pid", "start_ns", "duration_ns", "end_state")} == {
        "cpu": 0, "thread": "rx 20", "tid": 20, "process": "netstack 2", "pid": 2, "start_ns": 40,
        "duration_ns": 40, "end_state": "suspended",
    }  # fmt: skip
    # woken by tx at 30 on CPU 1 (the first wakeup: the one that made it runnable), ran 10 ns later
    assert (d["wakeup_ns"], d["wakeup_cpu"], d["waker"], d["waker_tid"], d["latency_ns"]) == (
        30,
        1,
        "tx 21",
        21,
        10,
    )
    assert model.sched.wakeups.ts[d["wakeup_row"]] == 30
    assert thread_state_details(model, d["state_row"])["cpu_slice"] == _cpu_row(model, 0, 40)
    first = cpu_slice_details(model, _cpu_row(model, 0, 10))
    assert first["end_state"] == "blocked" and first["wakeup_row"] == -1 and first["latency_ns"] is None
    # preempted: switched out "running"; then back without a wakeup, running to the end of the trace
    tx = cpu_slice_details(model, _cpu_row(model, 1, 15))
    assert tx["end_state"] == PREEMPTED and tx["wakeup_row"] == -1 and tx["duration_ns"] == 35
    again = cpu_slice_details(model, _cpu_row(model, 1, 60))
    assert again["end_state"] is None and again["wakeup_row"] == -1 and again["duration_ns"] == 40
    # a wakeup that names no waker; a thread with no kernel object
    t22 = cpu_slice_details(model, _cpu_row(model, 0, 80))
    assert (t22["thread"], t22["process"], t22["pid"]) == ("thread 22", "", 0)
    assert (t22["wakeup_ns"], t22["waker"], t22["waker_tid"], t22["latency_ns"]) == (70, None, None, 10)


def test_thread_state_details() -> None:
    model = _model()
    d = thread_state_details(model, _state_row(model, 20, 30))
    assert (d["thread"], d["process"], d["state"], d["start_ns"], d["duration_ns"]) == (
        "rx 20", "netstack 2", "runnable", 30, 2,
    )  # fmt: skip
    assert (d["wakeup_ns"], d["wakeup_cpu"], d["waker"], d["cpu"], d["cpu_slice"]) == (30, 1, "tx 21", 1, -1)
    second = thread_state_details(model, _state_row(model, 20, 32))
    assert (second["state"], second["wakeup_ns"], second["duration_ns"]) == ("runnable", 32, 8)
    running = thread_state_details(model, _state_row(model, 20, 40))
    assert (running["state"], running["cpu"], running["wakeup_row"]) == ("running", 0, -1)
    assert cpu_slice_details(model, running["cpu_slice"])["start_ns"] == 40
    blocked = thread_state_details(model, _state_row(model, 20, 20))
    assert (blocked["state"], blocked["duration_ns"], blocked["cpu"], blocked["waker"]) == (
        "blocked",
        10,
        0,
        None,
    )
    preempted = thread_state_details(model, _state_row(model, 21, 50))
    assert (preempted["state"], preempted["cpu_slice"], preempted["duration_ns"]) == (PREEMPTED, -1, 10)
    woken = thread_state_details(model, _state_row(model, 22, 70))
    assert (woken["state"], woken["waker"], woken["wakeup_cpu"], woken["thread"]) == (
        "runnable",
        None,
        0,
        "thread 22",
    )


def test_preempted_and_resumed_at_one_instant() -> None:
    w = FxtWriter()
    w.initialization(1_000_000_000)
    w.context_switch(10, 0, 0, 0, 20)
    w.context_switch(20, 0, RUNNING, 20, 20)  # preempted, and picked again at once
    w.context_switch(30, 0, BLOCKED, 20, 0)
    w.event(K.INSTANT, 40, (1, 20), "c", "end of trace")
    model = TraceModel(read_fxt_bytes(w.getvalue()))
    first, second = (cpu_slice_details(model, _cpu_row(model, 0, t)) for t in (10, 20))
    assert (first["end_state"], second["end_state"]) == (PREEMPTED, "blocked")
    assert model.sched.thread_states.start[second["state_row"]] == 20
    assert thread_state_details(model, second["state_row"])["cpu_slice"] == _cpu_row(model, 0, 20)


def test_wakeups_in_window_by_thread_and_cpu() -> None:
    model = _model()
    ts = model.sched.wakeups.ts

    def times(rows: np.ndarray) -> list[int]:
        return ts[rows].tolist()

    assert times(wakeups_in(model, 0, 100)) == [30, 32, 70]
    assert times(wakeups_in(model, 31, 70)) == [32]  # [t0, t1)
    assert times(wakeups_in(model, 0, 100, tid=20)) == [30, 32] and times(
        wakeups_in(model, 31, 71, tid=22)
    ) == [70]
    assert times(wakeups_in(model, 0, 100, cpu=1)) == [30, 32] and times(
        wakeups_in(model, 0, 100, cpu=0)
    ) == [70]
    assert (
        times(wakeups_in(model, 0, 100, tid=20, cpu=0)) == []
        and times(wakeups_in(model, 0, 100, tid=99)) == []
    )
    assert times(wakeups_in(model, 50, 10)) == []


def _random_schedule(seed: int) -> TraceModel:
    """Context switches and wakeups of 6 threads on 3 CPUs at random: each CPU switches out what it runs
    (blocked, suspended or preempted) for a woken thread or idle; some wakeups hit running or already
    woken threads; a few switches are legacy records."""
    rng = np.random.default_rng(seed)
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for tid in range(101, 107):
        w.kernel_object(tid, 2, f"t{tid}", [("process", A.KOID, 1 + tid % 2)])
    running, woken, ts = [0, 0, 0], [], 0
    for _ in range(400):
        ts += int(rng.integers(0, 4))  # ties happen
        cpu = int(rng.integers(3))
        if rng.random() < 0.45:
            tid = int(rng.integers(101, 107))
            waker = running[int(rng.integers(3))]
            w.thread_wakeup(ts, cpu, tid, [("waker", A.KOID, waker)] if waker else [])
            if tid not in running and tid not in woken:
                woken.append(tid)
            continue
        out = running[cpu]
        nxt = woken.pop(0) if woken and rng.random() < 0.8 else 0
        state = int(rng.choice([BLOCKED, SUSPENDED, RUNNING])) if out else 0
        if state == RUNNING:
            woken.append(out)
        if rng.random() < 0.1:
            w.legacy_context_switch(ts, cpu, state, (1 + out % 2, out), (1 + nxt % 2, nxt), 20, 20)
        else:
            w.context_switch(ts, cpu, state, out, nxt)
        running[cpu] = nxt
    w.event(K.INSTANT, ts + 10, (1, 101), "c", "end of trace")
    return TraceModel(read_fxt_bytes(w.getvalue()))


def test_random_schedules_against_plain_scans() -> None:
    for seed in range(4):
        model = _random_schedule(seed)
        cs, st, wk = model.sched.cpu_slices, model.sched.thread_states, model.sched.wakeups
        woken = 0
        for row in range(len(cs)):
            d = cpu_slice_details(model, row)
            # every CPU slice is its thread's running interval, and back
            assert d["state_row"] >= 0 and thread_state_details(model, d["state_row"])["cpu_slice"] == row
            mine = np.flatnonzero(st.tid == cs.tid[row])  # the thread's states, in time order
            after = mine[mine > d["state_row"]][:1]
            if len(after) and st.start[after[0]] == cs.end[row]:  # switched out where the slice ends
                out = int(st.state[after[0]])
                assert d["end_state"] == STATE_NAMES[out]
                assert (out == PREEMPTED_STATE) == (d["end_state"] == PREEMPTED)
            else:
                assert d["end_state"] is None
            waiting = []  # the runnable intervals right before it ran, latest first
            for r in mine[mine < d["state_row"]][::-1].tolist():
                if st.state[r] != RUNNABLE:
                    break
                waiting.append(r)
            if waiting:  # woken at the first of them
                w = d["wakeup_row"]
                woken += 1
                assert int(wk.tid[w]) == d["tid"] and int(wk.ts[w]) == int(st.start[waiting[-1]])
                assert d["latency_ns"] == d["start_ns"] - int(wk.ts[w]) >= 0
                assert d["waker_tid"] == (int(wk.waker_tid[w]) or None)
            else:
                assert d["wakeup_row"] == -1 and d["latency_ns"] is None
        assert woken > 10
        for row in range(len(st)):
            d = thread_state_details(model, row)
            if st.state[row] == RUNNABLE:
                assert (
                    int(wk.ts[d["wakeup_row"]]) == d["start_ns"] and int(wk.tid[d["wakeup_row"]]) == d["tid"]
                )
            on_cpu = (cs.tid == st.tid[row]) & (cs.start == st.start[row]) & (cs.cpu == st.cpu[row])
            assert (d["cpu_slice"] >= 0) == (st.state[row] == RUNNING and bool(on_cpu.any()))
            assert (d["state"] == PREEMPTED) == (st.state[row] == PREEMPTED_STATE)
        rng = np.random.default_rng(seed)
        for _ in range(40):
            t0, t1 = sorted(rng.integers(model.start_ns - 5, model.end_ns + 5, 2).tolist())
            tid = int(rng.integers(100, 108)) if rng.random() < 0.5 else None
            cpu = int(rng.integers(0, 4)) if rng.random() < 0.5 else None
            want = (wk.ts >= t0) & (wk.ts < t1)
            if tid is not None:
                want &= wk.tid == tid
            if cpu is not None:
                want &= wk.cpu == cpu
            assert wakeups_in(model, t0, t1, tid=tid, cpu=cpu).tolist() == np.flatnonzero(want).tolist()


def test_generated_trace_cpu_slices_map_to_their_running_intervals() -> None:
    model = TraceModel(read_fxt_bytes(generate_trace(20_000)))
    cs = model.sched.cpu_slices
    assert len(cs) >= 10
    for row in range(len(cs)):
        d = cpu_slice_details(model, row)
        assert thread_state_details(model, d["state_row"])["cpu_slice"] == row
        assert d["duration_ns"] == int(cs.end[row] - cs.start[row]) and d["process"]
