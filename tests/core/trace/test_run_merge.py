"""core/trace/run_merge.py: events in a few time-ordered runs merged by the compiled kernel exactly as the
stable sort and gathers order them (the numpy path, the reference), on made-up runs with many ties, on the
flow events of a trace saved one provider after the other, and on bad calls."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import compiled, flows, run_merge
from fxscope.core.trace.event_rows import kind_rows
from fxscope.core.trace.run_merge import MAX_RUNS, merge_runs, run_starts
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt_bytes

KERNELS = compiled.span_kernels


def _reference(ts: np.ndarray, rows: np.ndarray, data: np.ndarray):
    order = np.argsort(ts, kind="stable")
    return rows[order], ts[order], data[order]


def _assert_merged_as_sorted(starts, ts, rows, data) -> None:
    got = merge_runs(starts, ts, rows, data)
    for a, b in zip(got, _reference(ts, rows, data), strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


_runs = st.lists(st.lists(st.integers(0, 12), max_size=30), min_size=1, max_size=8)  # (few times: many ties)


@settings(max_examples=300, deadline=None)
@given(_runs, st.sampled_from([np.int32, np.int64]), st.sampled_from([np.uint64, np.int64]))
def test_compiled_merge_is_the_stable_sort(runs, row_type, data_type):
    assert KERNELS is not None and callable(KERNELS.merge_runs)
    ts = np.concatenate([np.sort(np.asarray(r, np.int64)) for r in runs] + [np.zeros(0, np.int64)])
    starts = np.cumsum([0] + [len(r) for r in runs], dtype=np.int64)  # (empty runs among them)
    rows = np.arange(len(ts), dtype=row_type) * 3 + 7
    data = np.random.default_rng(len(ts)).integers(0, 2**62, len(ts)).astype(data_type)
    _assert_merged_as_sorted(starts, ts, rows, data)
    # the kernel itself merged them (merge_runs falls back to the sort when it declines: that alone would pass)
    out = [np.empty(len(ts), np.int64), np.empty(len(ts), row_type), np.empty(len(ts), data_type)]
    assert KERNELS.merge_runs(starts, ts, rows, data, *out) == 0
    for a, b in zip((out[1], out[0], out[2]), _reference(ts, rows, data), strict=True):
        assert np.array_equal(a, b)
    if len(ts) > 1:  # the runs as run_starts finds them (no empty ones): the same
        found = run_starts(ts)
        assert found is not None and found[0] == 0 and found[-1] == len(ts)
        _assert_merged_as_sorted(found, ts, rows, data)


def test_a_run_whose_times_go_back_is_sorted_by_the_numpy_path():
    """Runs promised in order but not (a caller's mistake, or a hostile file): the kernel says so and the
    numpy path sorts them, the same result as the sort."""
    ts = np.array([5, 1, 9, 2, 3, 0], np.int64)
    starts = np.array([0, 3, 6], np.int64)
    rows, data = np.arange(6, dtype=np.int32), np.arange(6, dtype=np.uint64) * 10
    out = [np.empty(6, np.int64), np.empty(6, np.int32), np.empty(6, np.uint64)]
    assert KERNELS.merge_runs(starts, ts, rows, data, *out) == 1
    _assert_merged_as_sorted(starts, ts, rows, data)


@pytest.mark.parametrize(
    "starts, message",
    [
        ([1, 6], "starts do not run"),
        ([0, 5], "starts do not run"),
        ([0, 4, 2, 6], "not ascending"),
        ([0], "starts do not run"),
    ],
)
def test_bad_starts_are_refused(starts, message):
    ts, rows, data = np.arange(6, dtype=np.int64), np.arange(6, dtype=np.int32), np.arange(6, dtype=np.uint64)
    out = [np.empty(6, np.int64), np.empty(6, np.int32), np.empty(6, np.uint64)]
    with pytest.raises(ValueError, match=message):
        KERNELS.merge_runs(np.array(starts, np.int64), ts, rows, data, *out)


def test_columns_of_other_lengths_or_widths_are_refused():
    ts, data, starts = np.arange(6, dtype=np.int64), np.arange(6, dtype=np.uint64), np.array([0, 6], np.int64)
    for rows, out_rows in [
        (np.arange(6, dtype=np.int16), np.empty(6, np.int16)),  # (2-byte rows)
        (np.arange(5, dtype=np.int32), np.empty(5, np.int32)),  # (one row short)
        (np.arange(6, dtype=np.int32), np.empty(6, np.int64)),  # (output rows of another width)
    ]:
        with pytest.raises(ValueError):
            KERNELS.merge_runs(starts, ts, rows, data, np.empty(6, np.int64), out_rows, np.empty(6, np.uint64))


def test_run_starts_gives_up_past_the_runs_it_merges():
    ts = np.tile(np.arange(4, dtype=np.int64), MAX_RUNS)  # MAX_RUNS runs: merged
    assert len(run_starts(ts)) == MAX_RUNS + 1
    assert run_starts(np.tile(np.arange(4, dtype=np.int64), MAX_RUNS + 1)) is None  # (sorted instead)
    assert run_starts(np.arange(10, dtype=np.int64)).tolist() == [0, 10]  # (in order: one run)


def test_flow_events_of_a_one_shot_trace_are_merged(monkeypatch):
    """A trace saved one provider after the other: its flow events come in one time-ordered run a provider;
    the flows' build merges them (no sort) and gets the same table as the numpy path."""
    from tests.core.trace.test_span_kernels import assert_same_flows

    cols = read_fxt_bytes(generate_trace(20_000, seed=5, providers_in_turn=True))
    sel = kind_rows(cols.ev_kind, EventKind.FLOW_BEGIN, EventKind.FLOW_END)
    starts = run_starts(np.asarray(cols.ev_ts[sel], np.int64))
    assert starts is not None and len(starts) - 1 == 3  # (three providers)
    merged: list[int] = []
    monkeypatch.setattr(flows, "merge_runs", lambda *a: merged.append(len(a[0])) or run_merge.merge_runs(*a))
    assert_same_flows(cols)
    assert merged == [4]
