"""Slice matching on hand-built traces, on the real Jane Street trace, and against a plain stack walk."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import compiled, slices
from fxscope.core.trace.slices import FLAG_UNCLOSED, FLAG_UNMATCHED_END, build_slices
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt, read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter

T1 = (1, 10)
T2 = (1, 11)


def _trace(events: list[tuple]) -> bytes:
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for ev in events:
        kind, ts, thread, name, *rest = ev
        data = rest[0] if rest else None
        w.event(kind, ts, thread, "cat", name, data=data)
    return w.getvalue()


def _rows(cols, table) -> list[tuple]:
    return [
        (cols.strings[table.name[i]], int(table.ts[i]), int(table.dur[i]), int(table.depth[i]), int(table.flags[i]))
        for i in range(len(table))
    ]


def test_nesting_depth_and_self_time(slice_loops) -> None:
    cols = read_fxt_bytes(
        _trace(
            [
                (K.DURATION_BEGIN, 100, T1, "outer"),
                (K.DURATION_BEGIN, 110, T1, "mid"),
                (K.DURATION_COMPLETE, 120, T1, "leaf", 130),
                (K.DURATION_END, 150, T1, "mid"),
                (K.DURATION_END, 200, T1, "outer"),
                (K.DURATION_BEGIN, 105, T2, "other"),
                (K.DURATION_END, 106, T2, "other"),
            ]
        )
    )
    table = build_slices(cols)
    rows = _rows(cols, table)
    assert rows == [
        ("outer", 100, 100, 0, 0),
        ("mid", 110, 40, 1, 0),
        ("leaf", 120, 10, 2, 0),
        ("other", 105, 1, 0, 0),
    ]
    assert table.self_dur.tolist() == [60, 30, 10, 1]
    assert table.parent.tolist() == [-1, 0, 1, -1]


def test_unmatched_end_and_unclosed_begin_are_kept_and_flagged(slice_loops) -> None:
    cols = read_fxt_bytes(
        _trace(
            [
                (K.DURATION_BEGIN, 10, T1, "x"),
                (K.DURATION_END, 20, T1, "x"),
                (K.DURATION_END, 30, T1, "started-before-trace"),
                (K.DURATION_END, 40, T1, "outermost"),
                (K.DURATION_BEGIN, 50, T1, "never-closed"),
                (K.INSTANT, 90, T1, "i"),
            ]
        )
    )
    rows = _rows(cols, build_slices(cols))
    assert rows == [
        ("outermost", 10, 30, 0, FLAG_UNMATCHED_END),
        ("started-before-trace", 10, 20, 1, FLAG_UNMATCHED_END),
        ("x", 10, 10, 2, 0),
        ("never-closed", 50, 40, 0, FLAG_UNCLOSED),
    ]


def _reference(events: list[tuple[int, int, int, int]], trace_end: int) -> list[tuple[int, int, int, int, int]]:
    """Plain per-thread stack walk over (thread, ts, order, kind, ...) in the documented order."""
    out = []
    by_thread: dict[int, list] = {}
    for e in events:
        by_thread.setdefault(e[0], []).append(e)
    for thread in sorted(by_thread):
        markers = []
        for _t, ts, order, kind, end in by_thread[thread]:
            if kind == K.DURATION_COMPLETE:
                markers.append((ts, 1, order, 0, +1, order))
                markers.append((max(end, ts), 0 if end > ts else 1, order, 1, -1, order))
            else:
                markers.append((ts, 1, order, 0, +1 if kind == K.DURATION_BEGIN else -1, order))
        markers.sort()
        first = markers[0][0]
        stack: list[tuple[int, int]] = []
        unmatched = []
        closed = []
        for pos, (ts, _tie, _o, _is_end, delta, ev) in enumerate(markers):
            if delta > 0:
                stack.append((ts, ev))
            elif stack:
                start, bev = stack.pop()
                closed.append((start, ts, len(stack), bev, pos))
            else:
                unmatched.append((ts, ev, pos))
        n_un = len(unmatched)
        rows = []
        for start, end, depth, ev, closed_at in closed:
            # an unmatched end later on the stack encloses everything closed before it
            ahead = sum(1 for u in unmatched if u[2] > closed_at)
            rows.append((thread, start, end - start, depth + ahead, ev, 0))
        for depth, (start, ev) in enumerate(stack):
            rows.append((thread, start, max(trace_end, start) - start, depth, ev, FLAG_UNCLOSED))
        for i, (ts_u, ev_u, _pos) in enumerate(unmatched):
            rows.append((thread, first, ts_u - first, n_un - 1 - i, ev_u, FLAG_UNMATCHED_END))
        out.extend(rows)
    return sorted((r[0], r[1], r[3], r[2], r[5]) for r in out)


def _assert_matches_reference(cols, table) -> None:
    """The table's slices (thread, start, depth, duration, flags) are the plain stack walk's."""
    trace_end = max(int(cols.ev_ts.max()), int(cols.ev_end_ts.max()))
    ref_events = [
        (int(cols.ev_thread[i]), int(cols.ev_ts[i]), i, int(cols.ev_kind[i]), int(cols.ev_end_ts[i]))
        for i in range(len(cols.ev_ts))
    ]
    got = sorted(
        (int(table.thread[i]), int(table.ts[i]), int(table.depth[i]), int(table.dur[i]), int(table.flags[i]))
        for i in range(len(table))
    )
    assert got == _reference(ref_events, trace_end)


def _general_table(cols):
    """``build_slices`` with every fast path off: each marker and slice sorted, parents by lane searches."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compiled, "slice_kernels", None)  # (the numpy path's general sorts are the reference)
        mp.setattr(slices, "_merged_order", lambda ts, end_ts: None)
        mp.setattr(slices, "_nested_in_order", lambda thread, ts, depth: False)
        mp.setattr(slices, "_group_order", lambda level, thread: slices.lexsort((level, thread)[: 1 + (thread is not None)]))
        mp.setattr(slices, "FEW_DEPTHS", 0)
        return build_slices(cols)


def _assert_same_table(a, b) -> None:
    for name in ("ts", "dur", "thread", "depth", "event", "flags", "parent"):
        assert np.array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name))), name


EVENTS = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.integers(0, 50),
        st.sampled_from([K.DURATION_BEGIN, K.DURATION_END, K.DURATION_COMPLETE]),
        st.integers(0, 20),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(EVENTS)
def test_matches_a_plain_stack_walk(slice_loops, spec: list[tuple[int, int, int, int]]) -> None:
    events = []
    for order, (thread, ts, kind, length) in enumerate(spec):
        end = ts + length if kind == K.DURATION_COMPLETE else None
        events.append((kind, ts, (1, 100 + thread), f"e{order}", *([end] if end is not None else [])))
    cols = read_fxt_bytes(_trace(events))
    table = build_slices(cols)
    _assert_matches_reference(cols, table)
    # every slice lies inside its parent
    p = table.parent
    has = p >= 0
    assert np.all(table.ts[has] >= table.ts[p[has]])
    assert np.all(table.end[has] <= table.end[p[has]])


def test_real_trace_that_starts_mid_stack(testdata: Path, slice_loops) -> None:
    cols = read_fxt(testdata / "fxt" / "richiesams_fxt-python_trace.fxt")
    table = build_slices(cols)
    matched = int(np.count_nonzero(table.flags == 0))
    unmatched = int(np.count_nonzero(table.flags == FLAG_UNMATCHED_END))
    unclosed = int(np.count_nonzero(table.flags == FLAG_UNCLOSED))
    # every begin and every end is accounted for exactly once
    assert matched + unclosed == 17296
    assert matched + unmatched == 17296
    # the file starts with duration-end events in file order, but sorted by time they pair up
    assert unmatched == unclosed
    assert np.all(table.dur >= 0)
    assert np.all(table.self_dur <= table.dur)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(EVENTS, st.booleans())
def test_threads_in_time_order_match_the_stack_walk_and_the_sorted_path(slice_loops, spec, one_thread) -> None:
    """A thread's events written in time order (the usual file) take the merge of the complete events'
    ends instead of the sort of every marker, a one-thread batch a radix sort of its levels, and slices of
    few depths their parents level by level: the same table (parents and event rows too) as the general
    path, and the plain stack walk's slices."""
    spec = sorted(((0 if one_thread else t), ts, kind, length) for t, ts, kind, length in spec)
    spec = sorted(spec, key=lambda e: e[1])  # time order across threads too: interleaved as recorded
    events = []
    for order, (thread, ts, kind, length) in enumerate(spec):
        end = [ts + length] if kind == K.DURATION_COMPLETE else []
        events.append((kind, ts, (1, 100 + thread), f"e{order}", *end))
    cols = read_fxt_bytes(_trace(events))
    table = build_slices(cols)
    _assert_same_table(table, _general_table(cols))
    _assert_matches_reference(cols, table)


def test_generated_trace_same_table_as_the_sorted_path(slice_loops) -> None:
    """Thousands of slices per thread, a batch per thread (the fast paths' radix and merge at a real size):
    the same table as the general sort of every marker and slice."""
    cols = read_fxt_bytes(generate_trace(60_000))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(slices, "BATCH_EVENTS", 1000)  # batches of one thread each
        table = build_slices(cols)
    general = _general_table(cols)
    with pytest.MonkeyPatch.context() as mp:  # the larger threads matched alone in this thread, the others in the pool
        mp.setattr(slices, "BATCH_EVENTS", 1000)
        mp.setattr(slices, "IN_FLIGHT_EVENTS", 4500)  # threads of 2,250+ events alone, two smaller in flight
        mp.setattr(slices, "_idle_cpus", lambda: 2)  # (a busy machine matches in one thread)
        mixed = build_slices(cols)
    assert len(table) > 10_000 and int(table.depth.max()) >= 1
    _assert_same_table(table, general)
    _assert_same_table(mixed, general)


@pytest.mark.parametrize("batch_events", [1000, 5000])
@pytest.mark.parametrize("few_batches", [0, 1 << 20])
def test_batches_picked_by_a_pass_or_by_a_sort_give_the_same_table(batch_events, few_batches, slice_loops) -> None:
    """Batches of one thread and of several (their events then in file order, not by thread), picked by a
    comparison pass per batch or cut from a sort of the thread keys: the table of the general sort."""
    cols = read_fxt_bytes(generate_trace(60_000))
    kind = cols.ev_kind
    sel = np.flatnonzero((kind >= 2) & (kind <= 4))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(slices, "BATCH_EVENTS", batch_events)
        mp.setattr(slices, "FEW_BATCHES", few_batches)
        batches = list(slices._thread_batches(cols.ev_thread[sel], sel))
        table = build_slices(cols)
    assert np.array_equal(np.sort(np.concatenate([rows for rows, _ in batches])), sel)
    if batch_events == 5000:
        assert any(thread is None for _, thread in batches)  # some batches hold several threads
    for rows, thread in batches:
        if thread is not None:
            assert (cols.ev_thread[rows] == thread).all()
    _assert_same_table(table, _general_table(cols))
