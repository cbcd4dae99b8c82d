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
