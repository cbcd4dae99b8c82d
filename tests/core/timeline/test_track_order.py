"""The timeline's tracks and their order, decided without Qt, on the boot-stamped traces (315 thread tracks,
a four-CPU schedule, counters, logs, instants) and the demo."""

from __future__ import annotations

import tracemalloc
import weakref
from pathlib import Path

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.timeline import track_order
from fxscope.core.timeline.layout import CPU_GROUP, GLOBAL_GROUP
from fxscope.core.timeline.track_order import async_track_name, build_groups, thread_tracks
from fxscope.core.trace.event_rows import kind_rows
from fxscope.core.trace.instants import SCOPE_GLOBAL
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.coded_column import CodedColumn
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "demo.fxt"


def test_every_thread_has_a_lane_its_state_strip_right_under_it(boot_trace) -> None:
    m = boot_trace
    groups = build_groups(m)
    lanes = [lane for g in groups for lane in g.lanes]
    assert len({lane.key for lane in lanes}) == len(lanes)  # keys are unique: pins refer to them
    threads = [lane for lane in lanes if lane.key[0] == "thread"]
    tracks = [t for p in m.processes for t in p.tracks]
    assert len(threads) == len(tracks) == 315
    state_tids = set(np.unique(m.sched.thread_states.tid).tolist())
    for i, lane in enumerate(lanes):
        if lane.key[0] != "thread":
            continue
        track = lane.source
        assert lane.key == ("thread", track.thread) and lane.rows == track.max_depth + 1
        if track.tid in state_tids:
            strip = lanes[i + 1]
            assert strip.key == ("state", track.thread)
            lo, hi = strip.row_range
            assert hi > lo and set(m.sched.thread_states.tid[lo:hi].tolist()) == {track.tid}


def test_groups_global_then_cpus_then_processes_by_pid(boot_trace) -> None:
    m = boot_trace
    groups = build_groups(m)
    pids = [g.pid for g in groups]
    has_global = len(m.instants.scoped(SCOPE_GLOBAL)) > 0
    head = [GLOBAL_GROUP] if has_global else []
    assert pids[: len(head) + 1] == [*head, CPU_GROUP]
    cpus = next(g for g in groups if g.pid == CPU_GROUP)
    assert [lane.source for lane in cpus.lanes] == m.sched.cpus() == [0, 1, 2, 3]
    for lane in cpus.lanes:  # each CPU lane holds exactly that CPU's slices
        lo, hi = lane.row_range
        assert set(m.sched.cpu_slices.cpu[lo:hi].tolist()) == {lane.source}
    processes = [p for p in pids if p >= 0]
    assert processes == sorted(processes) and len(processes) == len(set(processes))
    assert {p.pid for p in m.processes} <= set(processes)


def test_counters_async_logs_and_what_the_filter_matches(boot_trace) -> None:
    m = boot_trace
    groups = build_groups(m)
    lanes = [lane for g in groups for lane in g.lanes]
    counters = [lane for lane in lanes if lane.key[0] == "counter"]
    assert [lane.key[1] for lane in counters] == list(range(len(m.counters.series))) and len(counters) > 0
    assert all(lane.rows == 2 and lane.label == m.counters.series[lane.key[1]].label for lane in counters)
    logs = [lane for lane in lanes if lane.key[0] == "logs"]
    assert sum(len(lane.source) for lane in logs) == len(m.logs) > 0
    for lane in logs:
        assert set(m.logs.pid[lane.source].tolist()) == {lane.key[1]}
    for g in groups:
        if g.lanes and g.lanes[0].key[0] == "async":  # async first, unless process instants precede it
            assert g.lanes[0].rows >= 1
        for lane in g.lanes:
            assert lane.match.startswith(f"{g.name} {g.pid} ".casefold())
            if lane.key[0] == "thread":
                assert m.thread_name(lane.key[1]).casefold() in lane.match
        assert thread_tracks(g) == [lane.source for lane in g.lanes if lane.key[0] == "thread"]


def test_demo_async_track_is_named_after_its_spans() -> None:
    m = TraceModel(read_fxt(str(DEMO)))
    groups = build_groups(m)
    (pid, _n), *_ = m.async_spans.tracks()
    lane = next(lane for g in groups for lane in g.lanes if lane.key == ("async", pid))
    assert lane.label == async_track_name(m, pid) == "fetch, upload"
    assert async_track_name(m, 987654321) == "async"  # a process without async spans


@pytest.fixture(scope="module")
def kinds_trace() -> TraceModel:
    """Every kind of event, many threads: async spans, counters, instants, flows on 8 threads more."""
    return TraceModel(read_fxt_bytes(generate_trace(120_000, seed=3, scheduling=True, extra_threads=8)))


@pytest.mark.parametrize("coded", [True, False])
def test_the_threads_of_a_kind_range_as_every_event_of_it_decoded(kinds_trace, coded: bool) -> None:
    """:func:`_kind_threads`, a block of events at a time, finds the threads the kind's rows decoded do, with
    the thread column coded (its one-byte codes counted) or plain."""
    cols = kinds_trace.cols
    thread = cols.ev_thread if coded else np.asarray(cols.ev_thread)
    assert isinstance(cols.ev_thread, CodedColumn)  # (the reader's column, as a large trace has it)
    for first, last in ((EventKind.COUNTER, EventKind.COUNTER), (EventKind.ASYNC_BEGIN, EventKind.ASYNC_END),
                        (EventKind.INSTANT, EventKind.INSTANT), (EventKind.FLOW_BEGIN, EventKind.FLOW_END)):  # fmt: skip
        rows = kind_rows(cols.ev_kind, first, last)
        expected = np.unique(np.asarray(cols.ev_thread)[rows])
        got = track_order._kind_threads(cols.ev_kind, thread, int(first), int(last))
        assert len(expected) > 1 and got.tolist() == expected.tolist()


def test_the_building_tracks_pids_take_a_block_of_memory_not_the_kinds_rows(kinds_trace, monkeypatch) -> None:
    """Where a building track goes costs a block's temporaries (:data:`KIND_BLOCK` events), whatever the
    number of events of the kind: not their rows and decoded threads (the window's background build made the
    track list this way after each table, ~35 MB a time at 10M events), and once a model and range."""
    monkeypatch.setattr(track_order, "KIND_BLOCK", 4096)
    monkeypatch.setattr(track_order, "_KIND_PIDS", weakref.WeakKeyDictionary())
    n_async = len(kind_rows(kinds_trace.cols.ev_kind, EventKind.ASYNC_BEGIN, EventKind.ASYNC_END))
    assert n_async > 20_000
    tracemalloc.start()
    try:
        pids = track_order._kind_pids(kinds_trace, EventKind.ASYNC_BEGIN, EventKind.ASYNC_END)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert pids == sorted({pid for pid, _lanes in kinds_trace.async_spans.tracks()})
    assert peak < 4 * n_async  # (the rows alone were 4 bytes an async event, decoded threads 8 more)
    assert peak < 16 * 4096 + 8192
    assert track_order._kind_pids(kinds_trace, EventKind.ASYNC_BEGIN, EventKind.ASYNC_END) is pids  # (once)


@pytest.mark.parametrize("coded", [True, False])
def test_the_kind_table_names_each_kinds_threads(kinds_trace, monkeypatch, coded: bool) -> None:
    """One pass finds the threads of every kind at once (:func:`_kind_code_table`), blocks or not, of a
    one-byte coded thread column or a plain one of thread indexes (a trace of more than 256 threads): for
    each kind the threads its events name, as the decoded rows of that kind have them, and any kind range
    from it as the pass a range gives it."""
    cols = kinds_trace.cols
    plain = np.asarray(cols.ev_thread)
    column = cols.ev_thread if coded else plain
    n_threads = len(cols.threads_pid)
    whole = track_order._kind_code_table(cols.ev_kind, column, n_threads)
    monkeypatch.setattr(track_order, "KIND_BLOCK", 4096)
    seen, threads = table = track_order._kind_code_table(cols.ev_kind, column, n_threads)
    assert np.array_equal(seen, whole[0]) and np.array_equal(threads, whole[1])
    assert seen.shape == (track_order.KINDS, len(cols.ev_thread.values) if coded else n_threads + 1)
    for kind in range(track_order.KINDS):
        rows = kind_rows(cols.ev_kind, kind, kind)
        assert threads[seen[kind]].tolist() == np.unique(plain[rows]).tolist(), kind
    assert seen[EventKind.DURATION_BEGIN].sum() > 8 and not seen[15].any()
    for first, last in ((EventKind.COUNTER, EventKind.COUNTER), (EventKind.ASYNC_BEGIN, EventKind.ASYNC_END),
                        (EventKind.INSTANT, EventKind.INSTANT), (EventKind.DURATION_BEGIN, EventKind.FLOW_END)):  # fmt: skip
        by_range = track_order._kind_threads(cols.ev_kind, plain, int(first), int(last))  # (a pass: no table)
        assert track_order._kind_threads(cols.ev_kind, column, int(first), int(last), table).tolist() == by_range.tolist()
    # a plain column without the thread table's length, or of more threads than a table takes: no table
    assert track_order._kind_code_table(cols.ev_kind, plain) is None
    assert track_order._kind_code_table(cols.ev_kind, plain, track_order.TABLE_THREADS + 1) is None


def test_the_kind_table_keeps_unresolved_threads_apart() -> None:
    """An unresolved thread reference (-1) is a thread of its own in the table (code 0 of a plain column),
    as the pass a range finds it; a kind without events names none."""
    kind = np.array([2, 2, 5, 0, 2], np.uint8)
    thread = np.array([-1, 3, 3, 1, 3], np.int16)
    seen, threads = table = track_order._kind_code_table(kind, thread, 4)
    assert threads.tolist() == [-1, 0, 1, 2, 3]
    assert [threads[seen[k]].tolist() for k in (0, 2, 5, 1)] == [[1], [-1, 3], [3], []]
    assert track_order._kind_threads(kind, thread, 2, 5, table).tolist() == [-1, 3]
    assert track_order._kind_threads(kind, thread, 2, 5).tolist() == [-1, 3]  # (the pass a range)


@pytest.mark.parametrize("name", ["richiesams_fxt-python_trace.fxt", "ocaml-trace_t2_second.fxt"])
def test_the_kind_table_of_third_party_traces(testdata: Path, name: str) -> None:
    """Traces other tools wrote: every kind's threads from the table (of either column form) are those the
    pass a range finds, and each kind with events names at least one thread."""
    cols = read_fxt(str(testdata / "fxt" / name))
    plain = np.asarray(cols.ev_thread)
    for column in (cols.ev_thread, plain):
        table = track_order._kind_code_table(cols.ev_kind, column, len(cols.threads_pid))
        assert table is not None
        for kind in range(track_order.KINDS):
            expected = track_order._kind_threads(cols.ev_kind, plain, kind, kind).tolist()  # (a pass: no table)
            assert track_order._kind_threads(cols.ev_kind, column, kind, kind, table).tolist() == expected, kind
            assert bool(expected) == bool(len(kind_rows(cols.ev_kind, kind, kind))), kind
