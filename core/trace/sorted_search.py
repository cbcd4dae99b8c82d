"""``np.searchsorted(values, keys)`` for the keys a frame searches with (pixel edges: ascending, thousands
of them) in a column of millions (a thread's instant times): each search starts from the previous one's
position (slice_kernels.search_ascending) when the compiled loops are built, instead of a binary search of
the whole column per key. A column searched every frame keeps every :data:`SAMPLE_STEP`-th value
(:class:`SampledColumn`): its keys are placed among those first (slice_kernels.search_sampled), with fewer
cache misses when the caches are cold."""

from __future__ import annotations

import numpy as np

from fxscope.core.trace import compiled


def search_ascending(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Positions of ``keys`` (int64) in the ascending int64 ``values``, side "left": exactly
    ``np.searchsorted(values, keys)`` (any keys; ascending ones are the fast case)."""
    kernels = compiled.slice_kernels
    keys = np.ascontiguousarray(keys, np.int64)
    if kernels is None or not compiled.plain(values, np.int64):
        return np.searchsorted(values, keys)
    out = np.empty(len(keys), np.int64)
    kernels.search_ascending(values, keys, out)
    return out


#: every how many values a :class:`SampledColumn` keeps one (1 byte a value of int64 times)
SAMPLE_STEP = 8
#: columns shorter than this keep no sample (a frame's search of them is fast anyway)
SAMPLED_FROM = 1 << 14


def sample_of(values: np.ndarray) -> np.ndarray:
    """Every :data:`SAMPLE_STEP`-th value of ``values`` (int64, contiguous): what slice_kernels.search_sampled
    places its keys among first (a :class:`SampledColumn`'s, a counter's times: ``CounterSeries.fine_bounds``)."""
    return np.ascontiguousarray(values[::SAMPLE_STEP], np.int64)


class SampledColumn:
    """An ascending int64 column that a view searches every frame (a thread's instant times, a marker
    track's points), with every :data:`SAMPLE_STEP`-th value kept (made on first search). Zoomed out over a
    large trace, a frame's ~2,000 pixel edges each landed on a cold cache line of a column of hundreds of
    thousands of times that the galloping search's guess ahead had missed by a few lines: ~240 ns a key
    (slice_kernels.search_sampled: ~100 ns, a frame's instants at 100M events ~2 -> ~1 ms)."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        self._sample: np.ndarray | None = None

    def search(self, keys: np.ndarray, a: int = 0, b: int | None = None) -> np.ndarray:
        """``np.searchsorted(values[a:b], keys)`` (side "left")."""
        n = len(self.values)
        b = n if b is None else b
        kernels = compiled.slice_kernels
        if kernels is None or n < SAMPLED_FROM or not compiled.plain(self.values, np.int64):
            return search_ascending(self.values[a:b], keys)
        if self._sample is None:
            self._sample = sample_of(self.values)
        keys = np.ascontiguousarray(keys, np.int64)
        out = np.empty(len(keys), np.int64)
        kernels.search_sampled(self.values, self._sample, SAMPLE_STEP, keys, out)
        if a or b != n:  # (positions in the whole column, as those in values[a:b])
            np.clip(out - a, 0, b - a, out=out)
        return out
