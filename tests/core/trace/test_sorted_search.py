"""search_ascending (the compiled galloping search a frame's pixel edges use) against np.searchsorted: the
same positions for ascending keys, repeated and descending ones, keys outside the values, runs of equal
values, empty inputs, with the compiled loops and without."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.trace.sorted_search import search_ascending


@pytest.mark.parametrize("n", [0, 1, 7, 1000, 200_000])
def test_search_ascending_is_searchsorted(n: int, slice_loops) -> None:
    rng = np.random.default_rng(n)
    values = np.sort(rng.integers(0, 10**9, n))
    values[n // 3 : n // 2] = values[n // 3] if n else 0  # a run of equal values
    for keys in (np.sort(rng.integers(-10, 10**9 + 10, 5000)), rng.integers(-10, 10**9 + 10, 300),
                 np.array([5, 5, 5, 3, 2, 10**10, -1, 2**62]), np.zeros(0, np.int64),
                 values[::97].copy()):  # fmt: skip
        assert np.array_equal(search_ascending(values, keys), np.searchsorted(values, keys))


@pytest.mark.parametrize("seed", range(6))
def test_evenly_spaced_keys_over_even_and_bursty_values(seed: int, slice_loops) -> None:
    """Pixel edges (evenly spaced keys, what a frame searches) over evenly spread values, bursts with gaps
    between them, and values that end before the keys do: the search that starts a stride past the previous
    answer (up or down from there) finds searchsorted's positions."""
    rng = np.random.default_rng(seed)
    even = np.sort(rng.integers(0, 10**9, 300_000))
    bursts = np.sort(np.concatenate([c + rng.integers(0, 10**5, 20_000) for c in rng.integers(0, 10**9, 12)]))
    short = even[: len(even) // 3]
    for values in (even, bursts, short):
        for pixels in (3, 700, 1920, 40_000):
            t0 = int(rng.integers(-10**7, 10**8))
            keys = (t0 + np.arange(pixels + 1) * ((10**9 - t0) / pixels)).astype(np.int64)
            assert np.array_equal(search_ascending(values, keys), np.searchsorted(values, keys))


@pytest.mark.parametrize("seed", range(4))
def test_sampled_column_search_is_searchsorted_of_its_window(seed: int, slice_loops) -> None:
    """SampledColumn.search (the keys placed among every SAMPLE_STEP-th value first: search_sampled) gives
    np.searchsorted of the window values[a:b] it is asked about: pixel edges, random and descending keys,
    keys before, between and past the values, runs of equal values (a key equal to a sample's value), columns
    shorter than the sample pays off for and whose length is not a multiple of the step."""
    from fxscope.core.trace.sorted_search import SAMPLED_FROM, SampledColumn

    rng = np.random.default_rng(seed)
    n = SAMPLED_FROM * 3 + seed * 5 + 3
    even = np.sort(rng.integers(0, 10**9, n))
    runs = np.sort(rng.integers(0, 500, n)) * 2_000_000  # (hundreds of equal values each)
    for values in (even, runs, even[:100]):
        column = SampledColumn(values)
        m = len(values)
        for a, b in ((0, m), (m // 5, m - m // 7), (m // 2, m // 2), (0, 1)):
            lo, hi = int(values[a]) if a < m else 0, int(values[b - 1]) if b > a else 1
            edges = (lo + np.arange(1921) * ((hi - lo) / 1920)).astype(np.int64)
            for keys in (edges, rng.integers(-10, 10**9 + 10, 500), edges[::-1].copy(),
                         np.array([-1, 0, 2**62, int(values[0]), int(values[-1])]), values[::8].copy()):  # fmt: skip
                assert np.array_equal(column.search(keys, a, b), np.searchsorted(values[a:b], keys)), (a, b)


def test_search_sampled_refuses_a_sample_of_another_step() -> None:
    """slice_kernels.search_sampled checks its step and the sample's length (nothing read past them)."""
    from fxscope.core.trace import compiled

    kernels = compiled.slice_kernels
    if kernels is None:
        pytest.skip("the compiled loops are not built")
    values = np.arange(100, dtype=np.int64)
    keys, out = np.arange(5, dtype=np.int64), np.empty(5, np.int64)
    for sample, step in ((values[::8].copy(), 0), (values[::8].copy(), 4), (values[::8][:-1].copy(), 8)):
        with pytest.raises(ValueError):
            kernels.search_sampled(values, sample, step, keys, out)
    with pytest.raises(ValueError):
        kernels.search_sampled(values, values[::8].copy(), 8, keys, np.empty(4, np.int64))
