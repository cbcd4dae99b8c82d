"""Columns that are another table's column read through a row index, stored as the two arrays they read.

Many model tables keep, per row, the event row it came from, and several of their columns are the
reader's per-event columns at those rows (a slice's name is ``cols.ev_name[slice.event]``). Copying them
costs 4 to 8 bytes a row for nothing the views need: a frame reads them for the few thousand rows it
draws, one gather more. :class:`Gathered` stands for such a column: ``col[rows]`` is
``source[index[rows]]``, materialized only for the rows asked for; whole-column use (``np.asarray(col)``,
comparisons, ``len``, iteration) gathers the whole column once per call.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from fxscope.formats.fxt.column_view import ColumnView


class Gathered(NDArrayOperatorsMixin, ColumnView):
    """``source[index]`` as a read-only column (see the module docstring).

    ``index`` may itself be a :class:`Gathered` (a chain: a span's pid is ``threads_pid[ev_thread[event]]``).
    With ``missing`` set, a negative index reads as ``missing`` (an unresolved thread, -1, has no pid).
    """

    ndim = 1
    nbytes = 0  # owns nothing: both arrays belong to other tables

    def __init__(self, source: np.ndarray, index, missing: int | None = None) -> None:
        self.source = source
        self.index = index
        self.missing = missing

    def __getitem__(self, key):
        idx = self.index[key]
        if self.missing is None:
            return self.source[idx]
        if np.ndim(idx) == 0:
            return self.source[idx] if idx >= 0 else self.source.dtype.type(self.missing)
        idx = np.asarray(idx)
        if len(self.source) == 0:
            return np.full(len(idx), self.missing, self.source.dtype)
        return np.where(idx >= 0, self.source[np.maximum(idx, 0)], self.source.dtype.type(self.missing))

    def __len__(self) -> int:
        return len(self.index)

    @property
    def dtype(self) -> np.dtype:
        return self.source.dtype

    def __repr__(self) -> str:
        return f"Gathered({np.asarray(self)!r})"


class Difference:
    """``minuend - subtrahend`` as a read-only column, computed for the rows asked for: a pyramid's
    durations over a table that stores starts and ends (async spans, scheduling rows), which it reads for
    the few thousand rows a frame draws. Stored, they were 8 bytes a row for nothing (~14 MB at 10M events).
    """

    ndim = 1
    nbytes = 0  # owns nothing: both arrays belong to the table

    def __init__(self, minuend: np.ndarray, subtrahend: np.ndarray) -> None:
        self.minuend = minuend
        self.subtrahend = subtrahend

    def __getitem__(self, key):
        return self.minuend[key] - self.subtrahend[key]

    def __len__(self) -> int:
        return len(self.minuend)

    @property
    def dtype(self) -> np.dtype:
        return np.result_type(self.minuend, self.subtrahend)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype, copy=False)
