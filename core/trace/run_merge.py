"""Events that come in a few time-ordered runs, put in one time order by merging the runs, not sorting.

A trace saved one provider after the other (Fuchsia's one-shot traces: each provider's buffer in turn) has
its events in time order within each provider's section, and going back in time where the next section
starts. The flows and the async pairing walk their events in time order: a stable sort of their times and
a gather of each column by it cost, at 30M events (5M flow events in three runs), 75 ms for the sort and
55 ms for the gathers of rows, times and ids; merging the runs in one pass that copies each run's stretch
before the next run's head costs 43-49 ms, most of it mapping the outputs' fresh pages, which the gathers paid
too (``span_kernels.merge_runs``; the flows' step 476 -> 407 ms). The numpy path (the sort and gathers) stays
the reference the tests compare it with.
"""

from __future__ import annotations

import numpy as np

from fxscope.core.trace import compiled
from fxscope.core.trace.compiled import contiguous
from fxscope.formats.filled_arrays import array_to_fill

#: runs merged at most (past this the sort is no slower: a merge costs log2(runs) comparisons an event)
MAX_RUNS = 64


def run_starts(ts: np.ndarray) -> np.ndarray | None:
    """The int64 bounds ``[0, s1, ..., n]`` of the stretches of ``ts`` in time order (a new one wherever a
    time is below the one before it), or None past :data:`MAX_RUNS` of them."""
    back = np.flatnonzero(ts[1:] < ts[:-1])
    if len(back) + 1 > MAX_RUNS:
        return None
    starts = np.empty(len(back) + 2, np.int64)
    starts[0], starts[-1] = 0, len(ts)
    starts[1:-1] = back + 1
    return starts


def merge_runs(starts: np.ndarray, ts: np.ndarray, rows: np.ndarray, data: np.ndarray,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """``(rows, ts, data)`` of the events of the runs ``[starts[r], starts[r + 1])``, each in time order, in
    time order, ties in run order: what ``np.argsort(ts, kind="stable")`` and the three gathers give.
    ``rows`` int32 or int64, ``ts`` int64, ``data`` 8-byte. A run whose times go back is sorted as it is
    (the numpy path)."""
    ts = contiguous(ts, np.int64)
    kernels = compiled.span_kernels
    if kernels is not None and rows.dtype in (np.int32, np.int64) and data.dtype.itemsize == 8 and len(ts):
        rows, data = np.ascontiguousarray(rows), np.ascontiguousarray(data)
        out = array_to_fill(len(rows), rows.dtype), array_to_fill(len(ts), np.int64), array_to_fill(len(ts), data.dtype)
        if kernels.merge_runs(np.ascontiguousarray(starts, np.int64), ts, rows, data, out[1], out[0], out[2]) == 0:
            return out
    order = np.argsort(ts, kind="stable")
    return rows[order], ts[order], data[order]
