"""Scheduling tables, instants and object labels on hand-built traces and the generated trace."""

from __future__ import annotations

import numpy as np

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.instants import SCOPE_GLOBAL, SCOPE_PROCESS, SCOPE_THREAD, build_instants
from fxscope.core.trace.objects import ObjectLabels
from fxscope.core.trace.sched import BLOCKED, RUNNABLE, RUNNING, SUSPENDED, build_sched
from fxscope.formats.fxt.args import Arg, ArgType
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter


def _objects(w: FxtWriter) -> None:
    w.kernel_object(2, 1, "net")  # described twice: the longest name wins
    w.kernel_object(2, 1, "netstack")
    w.kernel_object(20, 2, "rx", [("process", A.KOID, 2)])
    w.userspace_object(0x1000, (1,), "Session")


def _sched(w: FxtWriter) -> None:
    _objects(w)
    w.legacy_context_switch(10, 0, BLOCKED, (1, 10), (1, 11), 20, 20)
    w.context_switch(20, 1, 0, 0, 20)  # idle -> tid 20 (its process from the kernel object)
    w.thread_wakeup(25, 1, 10, [("waker", A.KOID, 20)])
    w.context_switch(30, 0, SUSPENDED, 11, 10)
    w.thread_wakeup(50, 1, 20)  # already running: no state change
    w.legacy_context_switch(60, 2, 0, (0, 0), (1, 12), 0, 0)  # a switch from the idle thread


def test_cpu_slices_thread_states_and_wakeups(fxt) -> None:
    cols = fxt([(K.INSTANT, 100, (1, 10), "end")], setup=_sched)
    sched = build_sched(cols)
    cs = sched.cpu_slices
    got = list(
        zip(
            cs.cpu.tolist(), cs.start.tolist(), cs.end.tolist(), cs.tid.tolist(), cs.pid.tolist(), strict=True
        )
    )
    assert got == [(0, 10, 30, 11, 1), (0, 30, 100, 10, 1), (1, 20, 100, 20, 2), (2, 60, 100, 12, 1)]
    assert sched.cpus() == [0, 1, 2] and sched.cpu_rows(0) == (0, 2)
    st = sched.thread_states
    rows = list(zip(st.tid.tolist(), st.start.tolist(), st.end.tolist(), st.state.tolist(), strict=True))
    assert rows == [
        (10, 10, 25, BLOCKED),
        (10, 25, 30, RUNNABLE),
        (10, 30, 100, RUNNING),
        (11, 10, 30, RUNNING),
        (11, 30, 100, SUSPENDED),
        (12, 60, 100, RUNNING),
        (20, 20, 100, RUNNING),
    ]
    assert sched.state_rows(10) == (0, 3)
    wk = sched.wakeups
    assert wk.ts.tolist() == [25, 50] and wk.tid.tolist() == [10, 20]
    assert wk.waker_tid.tolist() == [20, 0] and wk.pid.tolist() == [1, 2]


def test_generated_trace_sched_invariants() -> None:
    cols = read_fxt_bytes(generate_trace(20_000))
    sched = build_sched(cols)
    cs = sched.cpu_slices
    switches = int((cols.sched_kind != 2).sum())
    to_idle = int(((cols.sched_kind != 2) & (cols.sched_in_tid == 0)).sum())
    assert to_idle > 0 and len(cs) == switches - to_idle  # a switch to the idle thread runs nothing
    for cpu in sched.cpus():
        lo, hi = sched.cpu_rows(cpu)
        assert (cs.start[lo + 1 : hi] >= cs.end[lo : hi - 1]).all()  # one thread at a time per CPU
    for tid in np.unique(cs.tid).tolist():  # and a thread on one CPU at a time
        rows = np.flatnonzero(cs.tid == tid)
        rows = rows[np.argsort(cs.start[rows])]
        assert (cs.start[rows][1:] >= cs.end[rows][:-1]).all()
    assert (cs.pid != 0).all()  # type-1 records' processes come from thread kernel objects
    st = sched.thread_states
    assert (st.end >= st.start).all() and (np.diff(st.tid.astype(np.float64)) >= 0).all()
    assert (sched.wakeups.waker_tid != 0).all()


def test_instants_sorted_per_thread_with_scope_and_pixel_thinning() -> None:
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for ts in (30, 10, 11, 12, 50):
        w.event(K.INSTANT, ts, (1, 10), "c", f"i{ts}")
    w.event(K.INSTANT, 20, (1, 11), "c", "proc", extra_words=(SCOPE_PROCESS,))
    w.event(K.INSTANT, 40, (2, 20), "c", "glob", extra_words=(SCOPE_GLOBAL,))
    w.event(K.DURATION_BEGIN, 5, (1, 10), "c", "not-an-instant")
    cols = read_fxt_bytes(w.getvalue())
    inst = build_instants(cols)
    names = [cols.strings[i] for i in inst.name]
    assert names == ["i10", "i11", "i12", "i30", "i50", "proc", "glob"]
    assert inst.scope.tolist() == [SCOPE_THREAD] * 5 + [SCOPE_PROCESS, SCOPE_GLOBAL]
    t10 = int(inst.thread[0])
    assert inst.in_window(t10, 11, 50).tolist() == [1, 2, 3]
    assert inst.in_window(t10, 10, 60, ns_per_px=10).tolist() == [0, 3, 4]  # one per 10 ns bucket
    assert inst.scoped(SCOPE_GLOBAL).tolist() == [6] and inst.pid[5] == 1


def test_object_labels(fxt) -> None:
    cols = fxt([(K.INSTANT, 1, (1, 10), "x")], setup=_objects)
    labels = ObjectLabels(cols)
    assert labels.koid_label(2) == "netstack (2)" and labels.koid_label(99) == "99"
    assert labels.label_arg(Arg("p", ArgType.KOID, 20), 1) == "rx (20)"
    assert labels.label_arg(Arg("p", ArgType.POINTER, 0x1000), 1) == "Session (0x1000)"
    assert labels.label_arg(Arg("p", ArgType.POINTER, 0x1000), 2) == "0x1000"  # another process
    assert labels.label_arg(Arg("b", ArgType.BLOB, b"\x01\x02"), 1) == "<2 bytes: 01 02>"
    assert labels.label_arg(Arg("n", ArgType.INT32, -3), 1) == "-3"
    assert labels.pids_of(np.array([20, 10, 77], np.uint64)).tolist() == [2, 1, 0]


def test_real_trace_objects(testdata) -> None:
    from fxscope.formats.fxt.reader import read_fxt

    cols = read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")
    labels = ObjectLabels(cols)
    # MANIFEST: process koid 1 "2248878/2248878", thread koid 2 "main" with a process argument
    assert labels.koid_label(1) == "2248878/2248878 (1)" and labels.koid_label(2) == "main (2)"
    assert labels.thread_process == {2: 1}
    assert len(build_instants(cols)) == 0 and len(build_sched(cols).cpu_slices) == 0
