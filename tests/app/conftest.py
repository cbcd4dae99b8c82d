"""Fixtures of the window tests."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

import pytest

from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.writer import FxtWriter


@pytest.fixture(scope="package", autouse=True)
def _garbage_collected_on_the_main_thread():
    """Cyclic garbage collected on the main thread only while the window tests run (as the application
    does, app/ui_thread_gc.py): with the interpreter's automatic collection, a worker thread (a loader's, a
    build's, distributed's event loop left by an earlier test) could delete an earlier test's widgets while
    the main thread processes Qt events, a rare segmentation fault of the suite. Then on again for the
    other tests."""
    was_enabled = gc.isenabled()
    gc.disable()
    yield
    gc.collect()
    if was_enabled:
        gc.enable()


@pytest.fixture(autouse=True)
def _collect_after_each_test():
    """Each window test's cyclic garbage (closed windows, finished workers) collected on the main thread."""
    yield
    gc.collect()


@pytest.fixture
def trace_tab(qtbot) -> Callable:
    """``trace_tab(model, width=1200, height=700)``: a shown, exposed :class:`~fxscope.app.main_window.TraceTab` of
    ``model`` (its own top-level window, closed with the test)."""
    from fxscope.app.main_window import TraceTab

    return lambda model, width=1200, height=700: shown(qtbot, TraceTab(model), width, height)


def shown(qtbot, widget, width: int, height: int):
    """``widget`` resized, shown and exposed (its own top-level window, closed with the test)."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture(scope="module")
def sched_model():
    """The model of a generated trace of 60k events with a schedule, stamped two hours after boot: every kind
    of box track (thread slices, async spans, CPU slices, thread states)."""
    from fxscope.core.synthetic_trace import generate_trace
    from fxscope.core.trace.model import TraceModel
    from fxscope.formats.fxt.reader import read_fxt_bytes

    return TraceModel(read_fxt_bytes(generate_trace(60_000, seed=4, scheduling=True, start_ns=2 * 3600 * 10**9)))


@pytest.fixture
def shown_timeline(qtbot) -> Callable:
    """``shown_timeline(model, width=1200, height=900)``: a shown, exposed
    :class:`~fxscope.app.timeline.widget.TimelineWidget` of ``model`` fitted to the whole trace."""
    from fxscope.app.timeline.widget import TimelineWidget

    def make(model, width: int = 1200, height: int = 900):
        timeline = shown(qtbot, TimelineWidget(model), width, height)
        timeline.fit_all()
        return timeline

    return make


# A trace as a real system records it: stamped hours after boot, many processes and threads.
#
# Real Fuchsia traces count from boot, so their first timestamp is seconds to days, not the demo's
# milliseconds; and a system trace has hundreds of threads, more than a window shows. The window's
# navigation tests run on these (written with the project's FXT writer, every record kind the timeline
# draws: nested slices, async spans, a flow from the first thread to the last, instants, a counter, two
# CPUs' context switches and log records with ANSI colours and several lines).

#: two hours after boot, in ns (far past 2**32 and 2**33)
TWO_HOURS_NS = 2 * 3600 * 1_000_000_000
#: near the end of int64's range (2**63 - 1 is the largest timestamp the format can hold)
NEAR_2_63_NS = (1 << 63) - 50_000_000_000

#: the starts the window's tests run on, by the name a parametrized test gives
LATE_STARTS = {"2h": TWO_HOURS_NS, "2^63": NEAR_2_63_NS}

STRINGS = ["app", "frame", "draw", "fetch", "vsync", "queue_depth", "flow", "status", "ok", "upload"]
SID = {s: i + 1 for i, s in enumerate(STRINGS)}


def pid_of(p: int) -> int:
    return 10_000 + 1000 * p


def tid_of(p: int, t: int) -> int:
    return pid_of(p) + 1 + t


def late_trace_bytes(start_ns: int = TWO_HOURS_NS, processes: int = 6, threads: int = 5) -> bytes:
    """``processes`` processes of ``threads`` threads each; every thread has a 'frame' slice with a 'draw'
    inside, twice, within 1 ms of ``start_ns``; the first thread sends a flow to the last thread of the
    last process; process 0 has a log lane (ANSI colours, a multi-line record) and a counter."""
    w = FxtWriter()
    w.provider_info(1, "system")
    w.initialization(1_000_000_000)
    for s, i in SID.items():
        w.string(i, s)
    for p in range(processes):
        w.kernel_object(pid_of(p), 1, f"proc-{p}")
        for t in range(threads):
            w.kernel_object(tid_of(p, t), 2, f"worker-{p}-{t}", [("process", A.KOID, pid_of(p))])
    last = (pid_of(processes - 1), tid_of(processes - 1, threads - 1))
    first = (pid_of(0), tid_of(0, 0))
    for p in range(processes):
        for t in range(threads):
            th = (pid_of(p), tid_of(p, t))
            for k in range(2):
                base = start_ns + k * 400_000 + (p * threads + t) * 1_000
                w.event(K.DURATION_BEGIN, base, th, SID["app"], SID["frame"], [(SID["status"], A.STRING, SID["ok"])])
                w.event(K.DURATION_BEGIN, base + 20_000, th, SID["app"], SID["draw"])
                if th == first and k == 0:
                    w.event(K.FLOW_BEGIN, base + 30_000, th, SID["app"], SID["flow"], data=7)
                if th == last and k == 1:
                    w.event(K.FLOW_END, base + 30_000, th, SID["app"], SID["flow"], data=7)
                w.event(K.DURATION_END, base + 120_000, th, SID["app"], SID["draw"])
                w.event(K.DURATION_END, base + 300_000, th, SID["app"], SID["frame"])
            w.event(K.INSTANT, start_ns + 350_000 + t, th, SID["app"], SID["vsync"], extra_words=(1,))
        th = (pid_of(p), tid_of(p, 0))
        w.event(K.ASYNC_BEGIN, start_ns + 10_000, th, SID["app"], SID["fetch"], data=100 + p)
        w.event(K.ASYNC_END, start_ns + 600_000, th, SID["app"], SID["fetch"], data=100 + p)
        w.event(K.ASYNC_BEGIN, start_ns + 200_000, th, SID["app"], SID["upload"], data=200 + p)
        w.event(K.ASYNC_END, start_ns + 700_000, th, SID["app"], SID["upload"], data=200 + p)
    # two CPUs: the first process's first two threads take turns on CPU 0, the last thread runs on CPU 1
    a, b = tid_of(0, 0), tid_of(0, 1)
    z = tid_of(processes - 1, threads - 1)
    for ts, cpu, out_tid, in_tid in ((0, 0, 0, a), (100_000, 0, a, b), (250_000, 0, b, 0), (300_000, 0, 0, a),
                                     (500_000, 0, a, 0), (50_000, 1, 0, z), (400_000, 1, z, 0)):  # fmt: skip
        w.context_switch(start_ns + ts, cpu, 3, out_tid, in_tid)
    for i, value in enumerate((3, 8_388_608, 5, 1)):
        w.event(K.COUNTER, start_ns + i * 200_000, first, SID["app"], SID["queue_depth"],
                [("depth", A.INT64, value)], data=1)  # fmt: skip
    w.log(start_ns + 50_000, first, "\x1b[31mERROR\x1b[0m: \x1b[1mdisk\x1b[0m full")
    w.log(start_ns + 60_000, first, "first line of a report\nsecond line\nthird line")
    w.log(start_ns + 70_000, last, "INFO: the last thread logs too")
    w.log(start_ns + 80_000, first, "WARN: queue is deep")
    return w.getvalue()


def write_late_trace(path: Path, start_ns: int = TWO_HOURS_NS, processes: int = 6, threads: int = 5) -> Path:
    path.write_bytes(late_trace_bytes(start_ns, processes, threads))
    return path


def late_model(tmp_path: Path, start_ns: int = TWO_HOURS_NS, processes: int = 6, threads: int = 5):
    """The :class:`~fxscope.core.trace.model.TraceModel` of a late trace written under ``tmp_path``."""
    from fxscope.core.trace.model import TraceModel
    from fxscope.formats.fxt.reader import read_fxt

    name = f"late-{start_ns}-{processes}x{threads}.fxt"
    return TraceModel(read_fxt(str(write_late_trace(tmp_path / name, start_ns, processes, threads))))


@pytest.fixture
def late_trace(tmp_path) -> Callable:
    """``late_trace(start_ns=TWO_HOURS_NS, processes=6, threads=5)``: the model of a trace stamped hours
    after boot (see :func:`late_trace_bytes`)."""
    def make(start_ns: int | str = TWO_HOURS_NS, processes: int = 6, threads: int = 5):
        return late_model(tmp_path, LATE_STARTS.get(start_ns, start_ns), processes, threads)

    return make


def shown_window(qtbot, width: int = 1000, height: int = 700):
    """A main window, shown and exposed (the tests that open files in it)."""
    from fxscope.app.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(width, height)
    win.show()
    qtbot.waitExposed(win)
    return win
