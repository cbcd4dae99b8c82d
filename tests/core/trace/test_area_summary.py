"""Area summaries over CPU lanes, thread-state strips and async tracks against row-by-row sums, on the
bundled demo (a four-CPU schedule, async spans) in a window that cuts intervals at both ends."""

from __future__ import annotations

from collections import defaultdict

from fxscope.core.trace.area_summary import async_by_name, cpu_by_process, cpu_by_thread, states_by_state
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.sched import STATE_NAMES
from fxscope.formats.fxt.reader import read_fxt
from fxscope.resources import DEMO_TRACE


def _clipped_sums(start, end, keys, t0: int, t1: int, wanted=None) -> dict:
    sums: dict = defaultdict(lambda: [0, 0])
    for a, b, k in zip(start.tolist(), end.tolist(), keys, strict=True):
        if wanted is not None and not wanted(k):
            continue
        if a < t1 and (b > t0 or (a == b and a >= t0)):
            sums[k[-1] if isinstance(k, tuple) else k][0] += 1
            sums[k[-1] if isinstance(k, tuple) else k][1] += max(min(b, t1) - max(a, t0), 0)
    return {k: tuple(v) for k, v in sums.items()}


def test_cpu_states_and_async_sums_match_row_by_row_sums() -> None:
    m = TraceModel(read_fxt(str(DEMO_TRACE)))
    span = m.end_ns - m.start_ns
    t0, t1 = m.start_ns + span // 3 + 12_345, m.start_ns + span // 2 + 777
    cs = m.sched.cpu_slices
    cpus = [0, 2]
    keys = [(c, t) for c, t in zip(cs.cpu.tolist(), cs.tid.tolist(), strict=True)]
    expected = _clipped_sums(cs.start, cs.end, keys, t0, t1, lambda k: k[0] in cpus)
    got = {r["tid"]: (r["count"], r["total"]) for r in cpu_by_thread(m, t0, t1, cpus)}
    assert got == expected and len(got) > 1
    by_process = cpu_by_process(m, t0, t1, cpus)
    assert sum(r["total"] for r in by_process) == sum(v[1] for v in expected.values())
    assert [r["total"] for r in by_process] == sorted((r["total"] for r in by_process), reverse=True)

    st = m.sched.thread_states
    tids = sorted(set(st.tid.tolist()))[:2]
    keys = [(t, s) for t, s in zip(st.tid.tolist(), st.state.tolist(), strict=True)]
    expected = _clipped_sums(st.start, st.end, keys, t0, t1, lambda k: k[0] in tids)
    got = {r["state"]: (r["count"], r["total"]) for r in states_by_state(m, t0, t1, tids)}
    assert got == {STATE_NAMES[k]: v for k, v in expected.items()} and len(got) > 1

    a = m.async_spans
    pids = sorted({int(p) for p in a.pid})[:1]
    keys = [(int(p), int(n)) for p, n in zip(a.pid, a.name, strict=True)]
    expected = _clipped_sums(a.start, a.end, keys, t0, t1, lambda k: k[0] in pids)
    got = {r["name"]: (r["count"], r["total"]) for r in async_by_name(m, t0, t1, pids)}
    assert got == {m.strings[k]: v for k, v in expected.items()} and got
    assert cpu_by_thread(m, t0, t1, []) == [] and async_by_name(m, t1, t1 + 1, []) == []
