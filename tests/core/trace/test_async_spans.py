"""Async spans on hand-built traces (keying, nesting, unmatched events, lanes, instants) and a generated trace."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.async_spans import FLAG_UNCLOSED, FLAG_UNMATCHED_END, assign_lanes, build_async
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes

#: every test here runs with the span kernels and with the numpy paths
pytestmark = pytest.mark.usefixtures("span_paths")

A = (1, 10)
A2 = (1, 11)
B = (2, 20)


def _spans(cols, table) -> list[tuple]:
    return [
        (cols.strings[table.name[i]], int(table.id[i]), int(table.start[i]), int(table.end[i]),
         int(table.pid[i]), int(table.lane[i]), int(table.flags[i]))
        for i in range(len(table))
    ]  # fmt: skip


def test_overlapping_spans_take_two_lanes_and_a_later_one_reuses_lane_0(fxt) -> None:
    cols = fxt([
        (K.ASYNC_BEGIN, 100, A, "load", 1),
        (K.ASYNC_BEGIN, 150, A2, "load", 2),
        (K.ASYNC_END, 200, A, "load", 1),
        (K.ASYNC_END, 300, A2, "load", 2),
        (K.ASYNC_BEGIN, 300, A, "load", 3),  # starts when lane 1 frees, after lane 0 did: lane 0
        (K.ASYNC_END, 400, A, "load", 3),
        (K.INSTANT, 500, A, "tick"),
    ])  # fmt: skip
    table = build_async(cols)
    assert _spans(cols, table) == [
        ("load", 1, 100, 200, 1, 0, 0),
        ("load", 3, 300, 400, 1, 0, 0),
        ("load", 2, 150, 300, 1, 1, 0),
    ]
    assert table.tracks() == [(1, 2)]
    assert table.rows_in(1, 0, 250, 350).tolist() == [1]
    assert table.rows_in(1, 1, 0, 1000).tolist() == [2]


def test_unmatched_end_and_unclosed_begin_are_flagged(fxt) -> None:
    cols = fxt([
        (K.INSTANT, 10, A, "first"),
        (K.ASYNC_END, 50, A, "req", 7),  # the trace started while request 7 was in flight
        (K.ASYNC_BEGIN, 60, A, "req", 8),  # never ends
        (K.INSTANT, 90, A, "last"),
    ])  # fmt: skip
    table = build_async(cols)
    rows = sorted(_spans(cols, table), key=lambda r: r[1])
    assert rows == [("req", 7, 10, 50, 1, 0, FLAG_UNMATCHED_END), ("req", 8, 60, 90, 1, 0, FLAG_UNCLOSED)]
    assert table.end_event[table.id == 8].tolist() == [-1]


def test_keys_are_category_name_id_across_processes_and_nest_as_a_stack(fxt) -> None:
    cols = fxt([
        (K.ASYNC_BEGIN, 10, A, "rpc", 5),
        (K.ASYNC_END, 40, B, "rpc", 5),  # another process ends it: ids are global (spec E5)
        (K.ASYNC_BEGIN, 20, A, "other", 5),  # same id, other name: another span
        (K.ASYNC_END, 30, A, "other", 5),
        (K.ASYNC_BEGIN, 100, B, "nest", 9),
        (K.ASYNC_BEGIN, 110, B, "nest", 9),
        (K.ASYNC_END, 120, B, "nest", 9),  # closes the innermost (110)
        (K.ASYNC_END, 130, B, "nest", 9),
        (K.ASYNC_BEGIN, 5, A, "rpc", 5, (), "othercat"),  # other category: not matched with the rpc end
    ])  # fmt: skip
    table = build_async(cols)
    got = {(r[0], r[2]): (r[3], r[4], r[6]) for r in _spans(cols, table)}
    assert got == {
        ("rpc", 10): (40, 1, 0),
        ("other", 20): (30, 1, 0),
        ("nest", 100): (130, 2, 0),
        ("nest", 110): (120, 2, 0),
        ("rpc", 5): (130, 1, FLAG_UNCLOSED),
    }
    assert table.event.dtype == np.int32 and table.pid.dtype == np.uint64


def test_instants_bind_by_key_then_by_single_span_of_the_id(fxt) -> None:
    cols = fxt([
        (K.ASYNC_BEGIN, 10, A, "job", 1),
        (K.ASYNC_INSTANT, 20, A, "job", 1),  # its key is open
        (K.ASYNC_INSTANT, 30, B, "progress", 1),  # no span "progress": the one span of id 1 covers 30
        (K.ASYNC_END, 40, A, "job", 1),
        (K.ASYNC_INSTANT, 50, A, "job", 1),  # after the end: nothing covers it
        (K.ASYNC_BEGIN, 60, A, "x", 2),
        (K.ASYNC_BEGIN, 60, A, "y", 2),
        (K.ASYNC_INSTANT, 65, A, "z", 2),  # two spans of id 2 cover 65: ambiguous
        (K.ASYNC_END, 70, A, "x", 2),
        (K.ASYNC_END, 70, A, "y", 2),
    ])  # fmt: skip
    table = build_async(cols)
    job = int(np.flatnonzero(table.id == 1)[0])
    assert table.instants.ts.tolist() == [20, 30]
    assert table.instants.span.tolist() == [job, job]
    assert [cols.strings[i] for i in table.instants.name] == ["job", "progress"]
    assert table.instants_of(job).tolist() == [0, 1]
    assert table.unbound_instants == 2


def test_out_of_order_timestamps_are_matched_in_time_order(fxt) -> None:
    cols = fxt([(K.ASYNC_END, 50, A, "s", 1), (K.ASYNC_BEGIN, 10, A, "s", 1)])
    assert _spans(cols, build_async(cols)) == [("s", 1, 10, 50, 1, 0, 0)]


def _first_fit(group: np.ndarray, start: np.ndarray, end: np.ndarray) -> list[int]:
    """The lanes as a plain loop lays them out: per group, in the given order, the lowest lane whose last
    span has ended by the start."""
    out = []
    lane_end: dict[int, list[int]] = {}
    for g, s, e in zip(group.tolist(), start.tolist(), end.tolist(), strict=True):
        ends = lane_end.setdefault(g, [])
        free = [i for i, x in enumerate(ends) if x <= s]
        ln = free[0] if free else len(ends)
        if ln == len(ends):
            ends.append(e)
        ends[ln] = e
        out.append(ln)
    return out


@pytest.mark.parametrize(
    ("length", "touching"),
    [(3000, False), (30, False), (40_000, False), (3, True)],
    ids=["mixed", "mostly-two-lanes", "hundreds-of-lanes", "zero-length-and-touching"],
)
def test_lanes_are_lowest_free_first_fit_like_a_plain_loop(length: int, touching: bool) -> None:
    rng = np.random.default_rng(3)
    n = 3000
    group = np.sort(rng.integers(0, 4, n)).astype(np.uint64)
    start = rng.integers(0, 100_000, n)
    if touching:  # starts on a coarse grid: spans end exactly where others start, many of length 0
        start -= start % 4
    end = start + rng.integers(0, length, n)
    o = np.lexsort((-(end - start), start, group))
    group, start, end = group[o], start[o], end[o]
    lanes = assign_lanes(group, start, end)
    assert lanes.dtype == np.int32
    assert lanes.tolist() == _first_fit(group, start, end)


def test_generated_trace_spans_chain_across_units() -> None:
    cols = read_fxt_bytes(generate_trace(6000))
    table = build_async(cols)
    begins = int((cols.ev_kind == K.ASYNC_BEGIN).sum())
    ends = int((cols.ev_kind == K.ASYNC_END).sum())
    assert len(table) == begins  # every end finds its begin (the unit before)
    assert int((table.flags == FLAG_UNCLOSED).sum()) == begins - ends
    assert not (table.flags & FLAG_UNMATCHED_END).any()
    assert (table.end >= table.start).all()
    # spans in one lane never overlap, and a process needs two lanes (each span overlaps the next)
    for pid, lanes in table.tracks():
        assert lanes == 2
        for lane in range(lanes):
            lo, hi = table.lane_rows(pid, lane)
            assert (table.start[lo + 1 : hi] >= table.end[lo : hi - 1]).all()
    assert len(table.instants) == int((cols.ev_kind == K.ASYNC_INSTANT).sum())
    assert table.unbound_instants == 0
    # a span's instant lies inside it
    inst = table.instants
    assert ((inst.ts >= table.start[inst.span]) & (inst.ts <= table.end[inst.span])).all()



def test_async_pyramid_lanes_are_each_process_base_plus_its_lane() -> None:
    """The pyramid's lane of a span is its process's first lane (processes by pid) plus its lane there:
    every span is found in its lane at the finest level, and in no other."""
    from fxscope.core.trace.model import TraceModel

    model = TraceModel(read_fxt_bytes(generate_trace(3_000, seed=3)))
    t = model.async_spans
    pyramid, bases = model.async_pyramid
    assert len(bases) > 1 and list(bases) == sorted(bases)
    level = pyramid.levels[0]
    found = np.full(len(t), -1)
    for pid, lanes in t.tracks():
        for lane in range(lanes):
            rows = pyramid.query(level, bases[pid] + lane, model.start_ns, model.end_ns + 1)[0]
            assert (np.asarray(t.pid)[rows] == pid).all() and (t.lane[rows] == lane).all()
            found[rows] = bases[pid] + lane
    assert (found >= 0).all()
