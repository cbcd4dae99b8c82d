"""``np.searchsorted(values, keys)`` for the keys a frame searches with (pixel edges: ascending, thousands
of them) in a column of millions (a thread's instant times): each search starts from the previous one's
position (slice_kernels.search_ascending) when the compiled loops are built, instead of a binary search of
the whole column per key."""

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
