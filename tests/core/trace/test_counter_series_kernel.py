"""The counters' series grouping in C (summary_kernels.counter_series) gives exactly the numpy path's series
(core/trace/counters.py): on generated and third-party traces, on hostile variants of them, on random samples
that need every part of it (series out of time order with ties, names of every width and unresolved ones,
koids and ids past 2**63), and it hands back to numpy when the series are more than it has room for."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import compiled, counters
from fxscope.core.trace.counters import _Samples, build_counters
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.reader import read_fxt_bytes
from tests.compiled_loops import choose_loops


@pytest.fixture
def kernels(monkeypatch):
    """The compiled module (a failure when not built, skipped under FXSCOPE_NO_COMPILED)."""
    choose_loops("compiled", monkeypatch, compiled, "summary_kernels")
    return compiled.summary_kernels


def _series(cs) -> list[tuple]:
    return [(s.pid, s.name, s.counter_id, s.arg_name, s.ts.tolist(), s.value.tobytes(), s.event.tolist(),
             s.event.dtype, s.ts.dtype, s.value.dtype) for s in cs.series]  # fmt: skip


def assert_same_counters(cols, monkeypatch, module) -> int:
    """Both paths' counter sets of ``cols`` are equal (values bit for bit, dtypes too); returns the samples."""
    monkeypatch.setattr(compiled, "summary_kernels", None)
    want = build_counters(cols)
    monkeypatch.setattr(compiled, "summary_kernels", module)
    got = build_counters(cols)
    assert got.non_numeric == want.non_numeric
    assert _series(got) == _series(want)
    return sum(len(s) for s in want.series)


def test_same_series_of_generated_traces(kernels, monkeypatch):
    for events, seed in ((20_000, 1), (30_000, 2), (5_000, 7)):
        cols = read_fxt_bytes(generate_trace(events, seed=seed))
        assert counters._series_compiled(counters._samples(cols, np.flatnonzero(
            np.asarray(cols.ev_kind) == counters.EventKind.COUNTER).astype(np.int32), lambda: None)[0]) is not None
        assert assert_same_counters(cols, monkeypatch, kernels) > 300


def test_same_series_of_third_party_traces(kernels, monkeypatch, testdata):
    from fxscope.core.trace.reading import read_trace

    paths = sorted(p for p in testdata.rglob("*.fxt") if p.stat().st_size < 20_000_000)
    assert paths
    for path in paths:
        try:
            cols = read_trace(str(path))
        except FormatError:
            continue
        assert_same_counters(cols, monkeypatch, kernels)


def test_same_series_of_hostile_variants(kernels, monkeypatch, cut_and_flip, mutate_fxt):
    rng = random.Random(21)
    sources = [generate_trace(3000, seed=3), generate_trace(2000, seed=5, scheduling=True)]
    cases = 0
    for data in sources:
        for i in range(60):
            damaged = cut_and_flip(data, rng, 8, len(data) // 2) if i % 2 else mutate_fxt(data, rng)
            try:
                cols = read_fxt_bytes(damaged)
            except FormatError:
                continue
            assert_same_counters(cols, monkeypatch, kernels)
            cases += 1
    assert cases >= 60


def _random_samples(rng: np.random.Generator, n: int, name_type, series: int) -> _Samples:
    """Samples of about ``series`` series with few distinct times (ties), out of time order, names of
    ``name_type`` (some -1: unresolved), koids and counter ids on both sides of 2**63."""
    big = np.array([0, 1, 5, (1 << 63) + 2, (1 << 64) - 1], np.uint64)
    pick = rng.integers(0, series, n)
    return _Samples(
        ev=np.sort(rng.integers(0, 4 * n + 1, n)).astype(np.int32),
        arg_name=(pick % 3 - 1).astype(np.int32),
        value=rng.normal(size=n),
        ts=rng.integers(-3, 6, n).astype(np.int64),
        cid=big[pick % 5],
        pid=big[(pick // 5) % 5],
        name=((pick // 25) % 7 - 1).astype(name_type),
    )


@pytest.mark.parametrize("name_type", [np.int8, np.int16, np.int32, np.int64])
def test_kernel_is_the_numpy_grouping_of_random_samples(kernels, name_type):
    rng = np.random.default_rng(22)
    for n in (1, 2, 3, 50, 4000):
        for series in (1, 4, 300):
            s = _random_samples(rng, n, name_type, series)
            got = counters._series_compiled(s)
            want = counters._series_numpy(s)
            assert got is not None
            for a, b in zip(got[:3], want[:3], strict=True):
                assert a.dtype == b.dtype and np.array_equal(a, b)
            assert got[3] == want[3] and got[4].tolist() == np.asarray(want[4]).tolist()


def test_more_series_than_room_go_to_numpy(kernels, monkeypatch):
    s = _random_samples(np.random.default_rng(23), 2000, np.int32, 300)
    monkeypatch.setattr(counters, "MAX_SERIES", 10)
    assert counters._series_compiled(s) is None  # (the numpy path then groups them)
    monkeypatch.setattr(counters, "MAX_SERIES", 1 << 16)
    assert counters._series_compiled(s) is not None


def test_kernel_refuses_bad_buffers(kernels):
    s = _random_samples(np.random.default_rng(24), 100, np.int16, 4)
    n = len(s.ev)

    def call(**change):
        a = {"pid": s.pid, "name": s.name, "name_size": 2, "cid": s.cid, "arg": s.arg_name, "ts": s.ts, "ev": s.ev,
             "value": s.value, "out_ev": np.empty(n, np.int32), "out_value": np.empty(n), "out_ts": np.empty(n, np.int64),
             "key_pid": np.empty(8, np.uint64), "key_name": np.empty(8, np.int64), "key_cid": np.empty(8, np.uint64),
             "key_arg": np.empty(8, np.int64), "starts": np.empty(9, np.int64)}  # fmt: skip
        a.update(change)
        return kernels.counter_series(*a.values())

    assert call() >= 1
    for name, bad in [("name", s.name[:-1]), ("cid", s.cid[:-1]), ("ts", s.ts[1:]), ("out_ev", np.empty(n - 1, np.int32)),
                      ("out_value", np.empty(n + 1)), ("starts", np.empty(8, np.int64)),
                      ("key_arg", np.empty(7, np.int64)), ("name_size", 3), ("name_size", 4)]:  # fmt: skip
        with pytest.raises(ValueError):
            call(**{name: bad})
    with pytest.raises((TypeError, BufferError, ValueError)):  # a read-only output
        ro = np.empty(n, np.int64)
        ro.flags.writeable = False
        call(out_ts=ro)
