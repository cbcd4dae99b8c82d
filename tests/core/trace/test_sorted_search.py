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
