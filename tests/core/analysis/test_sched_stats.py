"""Scheduling aggregates against a per-record Python reference, on the bundled demo (a busy four-CPU
schedule with wakeups) and a generated trace with ``--scheduling``."""

from __future__ import annotations

from collections import defaultdict

import pytest

from fxscope.core.analysis.sched_stats import sched_summary
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.sched import STATE_NAMES
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.resources import DEMO_TRACE


def _reference(model, t0, t1, tids):
    sched = model.sched
    cs, ts, wk = sched.cpu_slices, sched.thread_states, sched.wakeups

    def clip(a, b):
        return max(min(b, t1) - max(a, t0), 0)

    thread, process = defaultdict(int), defaultdict(int)
    for a, b, tid, pid in zip(cs.start.tolist(), cs.end.tolist(), cs.tid.tolist(), cs.pid.tolist(), strict=True):
        if (tids is None or tid in tids) and a < t1 and b > t0:
            thread[tid] += clip(a, b)
            process[pid] += clip(a, b)
    states = defaultdict(int)
    for a, b, tid, st in zip(ts.start.tolist(), ts.end.tolist(), ts.tid.tolist(), ts.state.tolist(), strict=True):
        if (tids is None or tid in tids) and a < t1 and b > t0:
            states[STATE_NAMES[st]] += clip(a, b)
    runs = list(zip(cs.tid.tolist(), cs.start.tolist(), strict=True))
    latencies, unserved = [], 0
    for w_ts, tid in sorted(zip(wk.ts.tolist(), wk.tid.tolist(), strict=True), key=lambda x: x[0]):
        if not (t0 <= w_ts < t1) or (tids is not None and tid not in tids):
            continue
        nxt = [s for t, s in runs if t == tid and s >= w_ts]
        if nxt:
            latencies.append(min(nxt) - w_ts)
        else:
            unserved += 1
    return dict(thread), dict(process), {k: v for k, v in states.items() if v}, latencies, unserved


def _check(model, t0, t1, tids):
    got = sched_summary(model, t0, t1, tids)
    thread, process, states, latencies, unserved = _reference(model, t0, t1, tids)
    assert dict(zip(got.thread_tid.tolist(), got.thread_cpu_ns.tolist(), strict=True)) == {
        k: v for k, v in thread.items() if v}  # fmt: skip
    assert dict(zip(got.process_pid.tolist(), got.process_cpu_ns.tolist(), strict=True)) == {
        k: v for k, v in process.items() if v}  # fmt: skip
    assert got.state_ns == states
    assert sorted(got.latency_ns.tolist()) == sorted(latencies) and got.unserved_wakeups == unserved
    assert list(got.thread_cpu_ns) == sorted(got.thread_cpu_ns, reverse=True)
    return got


@pytest.mark.parametrize("source", ["demo", "generated"])
def test_sched_summary_matches_reference(source):
    cols = read_fxt(DEMO_TRACE) if source == "demo" else read_fxt_bytes(generate_trace(20_000, seed=3, scheduling=True))
    model = TraceModel(cols)
    assert len(model.sched.cpu_slices) > 50 and len(model.sched.wakeups) > 20
    got = _check(model, model.start_ns, model.end_ns + 1, None)
    assert got.latency_ns.min() >= 0 and len(got.latency_ns) > 10
    span = model.end_ns - model.start_ns
    tids = set(model.sched.cpu_slices.tid[:7].tolist())
    _check(model, model.start_ns + span // 3, model.start_ns + span // 2, None)
    _check(model, model.start_ns + span // 5, model.start_ns + 4 * span // 5, tids)
