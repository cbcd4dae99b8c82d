"""The model's sort and scan helpers against numpy's own (np.lexsort, a structured searchsorted, per-segment
accumulate): the same rows in the same order, on the kinds of keys the tables use and on awkward ones."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.trace.segments import pair_searchsorted, segmented_running_max, stack_depths
from fxscope.core.trace.sorting import lexsort, lexsort_unless_sorted

INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _key(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random key column: full-range values, a few small values, or values near the top of the type;
    sometimes sorted, sometimes bool."""
    dtype = INT_TYPES[int(rng.integers(0, len(INT_TYPES)))]
    info = np.iinfo(dtype)
    kind = rng.random()
    if kind < 0.1:
        return rng.random(n) < 0.5
    if kind < 0.35:
        key = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    elif kind < 0.7:
        key = rng.integers(0, 4, n).astype(dtype)
    else:
        key = (info.max - rng.integers(0, 100, n).astype(np.uint64)).astype(dtype)  # near the top
    return np.sort(key) if rng.random() < 0.3 else key


@pytest.mark.parametrize("seed", range(6))
def test_lexsort_is_numpys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(150):
        n = int(rng.choice([0, 1, 7, 300, 2000, 5000]))
        keys = [_key(rng, n) for _ in range(int(rng.integers(1, 5)))]
        if rng.random() < 0.1 and n:
            keys.insert(0, rng.random(n))  # a float key: numpy sorts it
        expect = np.lexsort(keys)
        got = lexsort(keys)
        assert got.dtype == expect.dtype
        assert np.array_equal(got, expect)
        unless = lexsort_unless_sorted(keys)  # None only for rows in that order already
        assert np.array_equal(expect, np.arange(n)) if unless is None else np.array_equal(unless, expect)


def test_lexsort_on_thread_time_keys() -> None:
    """The slices' case: a few threads, times in order per thread (interleaved in the file), ties."""
    rng = np.random.default_rng(1)
    n = 50_000
    thread = rng.integers(-1, 12, n).astype(np.int32)
    ts = np.cumsum(rng.integers(0, 3, n)) + 1_700_000_000_000_000_000
    late = rng.random(n) < 0.9
    assert np.array_equal(lexsort((late, ts, thread)), np.lexsort((late, ts, thread)))
    depth = rng.integers(0, 4, n).astype(np.uint16)
    assert np.array_equal(lexsort((depth, thread)), np.lexsort((depth, thread)))


@pytest.mark.parametrize("seed", range(4))
def test_pair_searchsorted_is_a_structured_search(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(100):
        n, m = int(rng.integers(1, 60)), int(rng.choice([5, 6000]))
        dtype = [np.int32, np.int64, np.uint64][int(rng.integers(0, 3))]
        base = 1 << 63 if dtype is np.uint64 and rng.random() < 0.5 else 0
        t_major = (rng.integers(0, 5, n).astype(np.uint64) + np.uint64(base)).astype(dtype)
        q_major = (rng.integers(0, 6, m).astype(np.uint64) + np.uint64(base)).astype(dtype)
        span = int(rng.choice([10, 1 << 40, 1 << 62]))
        t_minor, q_minor = rng.integers(-span, span, n), rng.integers(-span, span, m)
        o = np.lexsort((t_minor, t_major))
        t_major, t_minor = t_major[o], t_minor[o]
        table = np.empty(n, [("a", dtype), ("b", np.int64)])
        table["a"], table["b"] = t_major, t_minor
        probe = np.empty(m, table.dtype)
        probe["a"], probe["b"] = q_major, q_minor
        for side in ("left", "right"):
            expect = np.searchsorted(table, probe, side)
            assert np.array_equal(pair_searchsorted(t_major, t_minor, q_major, q_minor, side), expect)


def test_segmented_running_max_restarts_per_segment_even_near_int64_limits() -> None:
    rng = np.random.default_rng(2)
    for big in (False, True):
        for _ in range(200):
            n = int(rng.integers(1, 80))
            groups = np.sort(rng.integers(0, 6, n))
            starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
            lim = (1 << 62) if big else 100
            values = rng.integers(-lim, lim, n, dtype=np.int64)
            expect = np.concatenate(
                [np.maximum.accumulate(values[a:b]) for a, b in zip(starts, np.r_[starts[1:], n], strict=True)]
            )
            got = segmented_running_max(values, starts)
            assert got.dtype == np.int64
            assert np.array_equal(got, expect)


def test_stack_depths_reports_pops_on_an_empty_stack() -> None:
    delta = np.array([1, -1, -1, 1, 0, 1, -1, -1, -1, 1], np.int8)
    starts = np.array([0, 5])  # two segments: 0..4, 5..9
    after, unmatched = stack_depths(delta, starts)
    assert after.tolist() == [1, 0, 0, 1, 1, 1, 0, 0, 0, 1]
    assert unmatched.tolist() == [False, False, True, False, False, False, False, True, True, False]
    after, unmatched = stack_depths(np.array([1, 1, -1, 0, 1, -1], np.int8), np.array([0, 3]))
    assert after.tolist() == [1, 2, 1, 0, 1, 0]  # each segment restarts at 0; no empty pop: None
    assert unmatched is None


def test_lexsort_with_trailing_keys_in_row_order() -> None:
    """The async markers' and counters' case: a file position and a time, both non-decreasing in row order
    (left out of the sort), under keys that are not (one of them past 32 bits)."""
    rng = np.random.default_rng(5)
    n = 20_000
    pos = np.sort(rng.choice(10 * n, n, replace=False)).astype(np.int32)
    ts = np.sort(rng.integers(0, 500, n))  # (ties of time: file order breaks them)
    cid = rng.integers(0, 60, n).astype(np.uint64)
    cid[::5] += np.uint64(1 << 40)
    cat, name = rng.integers(-1, 3, n).astype(np.int16), rng.integers(0, 3, n).astype(np.int16)
    for keys in [(pos, ts, cid, name, cat), (pos, ts), (pos,), (ts, cid), (pos, ts[::-1].copy(), cid)]:
        assert np.array_equal(lexsort(keys), np.lexsort(keys))
    assert lexsort_unless_sorted((pos, ts)) is None and lexsort_unless_sorted((pos,)) is None  # (in order)
    assert np.array_equal(lexsort_unless_sorted((pos, ts[::-1].copy())), np.lexsort((pos, ts[::-1])))
