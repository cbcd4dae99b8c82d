"""The running max of the ends of a slice lane's rows, kept at every :data:`BLOCK`-th row only.

A frame zoomed in past the slice pyramid's finest level, and a time-range selection, find a lane's first
slice that may reach into their window by a binary search of that running max (``np.searchsorted(end_max,
t0)``): each lane's rows are by start, and the running max of their ends is ascending. Stored whole it was 8
bytes a slice (20 MB at 10M events, 200 MB at 100M) held by the window for the trace's lifetime.
:class:`LaneEndMax` keeps its value at the end of every block of :data:`BLOCK` rows (and at the lane's last
row): a search finds the block in those, then the running max of that block's few rows, gathered again
from the slices' starts and durations. Before that block the running max is not past the searched value, so
it does not change where in the block the answer is.
"""

from __future__ import annotations

import numpy as np

#: rows of a lane that one kept value of the running max stands for
BLOCK = 32


class LaneEndMax:
    """One lane's running max of its rows' ends (int64 ns), as ``np.searchsorted`` and ``np.asarray`` read
    it (see the module docstring)."""

    __slots__ = ("_dur", "_ts", "coarse", "rows")
    dtype = np.dtype(np.int64)
    ndim = 1

    def __init__(self, rows: np.ndarray, coarse: np.ndarray, ts, dur) -> None:
        self.rows = rows  # the lane's slice rows, by start
        #: the running max at rows BLOCK - 1, 2 * BLOCK - 1, ... and at the last row
        self.coarse = coarse
        self._ts, self._dur = ts, dur

    def __len__(self) -> int:
        return len(self.rows)

    def searchsorted(self, v, side: str = "left", sorter=None):
        """``np.searchsorted`` of the whole running max (what ``np.searchsorted(this, v, side)`` calls). A
        frame zoomed in past the pyramid searches each visible lane: a few numpy calls, ~5 us more than the
        search of a stored running max."""
        if sorter is not None or not isinstance(v, (int, float, np.integer, np.floating)):
            return np.searchsorted(np.asarray(self), v, side, sorter)
        k = int(self.coarse.searchsorted(v, side))
        if k >= len(self.coarse):
            return len(self.rows)
        # the running max of block k's rows on their own (without the rows before it)
        r = self.rows[k * BLOCK : (k + 1) * BLOCK]
        ends = self._ts[r]
        ends += self._dur[r]
        np.maximum.accumulate(ends, out=ends)
        return k * BLOCK + int(ends.searchsorted(v, side))

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """The whole running max (built for the caller: tests, a debugger)."""
        if not len(self.rows):
            out = np.zeros(0, np.int64)
        else:
            out = np.maximum.accumulate(self._ts[self.rows] + self._dur[self.rows])
        return out if dtype is None else out.astype(dtype)

    def tolist(self) -> list[int]:
        return np.asarray(self).tolist()


def block_ends(starts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For lanes starting at ``starts`` (ascending) in an array of ``n`` rows: the positions whose running max
    a :class:`LaneEndMax` keeps (each lane's every :data:`BLOCK`-th row and its last; ascending, int64), and
    where each lane's start in them (int64, one more than the lanes)."""
    starts = np.asarray(starts, np.int64)
    ends = np.r_[starts[1:], n].astype(np.int64)
    blocks = -(-(ends - starts) // BLOCK)
    first = np.zeros(len(starts) + 1, np.int64)
    np.cumsum(blocks, out=first[1:])
    lane = np.repeat(np.arange(len(starts)), blocks)
    at = starts[lane] + (np.arange(int(first[-1])) - first[lane] + 1) * BLOCK - 1
    np.minimum(at, ends[lane] - 1, out=at)
    return at, first
