"""A code column (``ev_thread``, ``ev_category``) stored as one byte a row when it holds few distinct values.

A trace's events name a few categories and (often) a few dozen threads, yet each row's code takes 2 bytes
(int16, see :func:`fxscope.formats.fxt.assemble.narrowest_codes`). When a column holds at most 256 distinct
values, :func:`coded` keeps a uint8 index into the sorted distinct values instead (1 byte an event saved:
10 MB at 10M events per column) and reads them back with one gather from a 256-entry table.

:class:`CodedColumn` behaves as the read-only numpy column it replaces: ``col[key]`` (integer array,
boolean mask, slice, scalar) returns the values (an array of the original dtype, or a scalar), as does
``np.asarray(col)``; numpy functions and comparisons see the values.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from fxscope.formats.filled_arrays import array_to_fill
from fxscope.formats.fxt import compiled
from fxscope.formats.fxt.column_view import ColumnView

#: distinct values a uint8 index can name
MAX_VALUES = 256
#: rows converted at once (bounds the temporaries of a whole-column read or of the encoding)
_BLOCK = 1 << 20
#: rows from which a read takes the compiled loop (below, numpy's call costs less than the buffers' checks)
_COMPILED_FROM = 256


class CodedColumn(NDArrayOperatorsMixin, ColumnView):
    """Values ``values[index]``: ``index`` uint8, one a row; ``values`` the column's distinct values, ascending.
    ``every_value_used``: each of ``values`` is some row's (as :func:`coded` makes them: it codes the values
    present), so that which values the column holds is known without a pass over its rows (the Info tab's
    referenced threads, ~46 ms a pass at 100M events); False when unknown (a column of some rows' codes)."""

    def __init__(self, index: np.ndarray, values: np.ndarray, every_value_used: bool = False) -> None:
        self.index = index
        self.values = values
        self.every_value_used = every_value_used

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def nbytes(self) -> int:
        return self.index.nbytes + self.values.nbytes

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, key):
        if isinstance(key, CodedColumn):
            key = np.asarray(key)
        index = self.index[key]
        if isinstance(index, np.ndarray):
            return self._decoded(index)
        return self.values[index]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self._decoded(self.index)
        return out if dtype is None else out.astype(dtype, copy=False)

    def _decoded(self, index: np.ndarray) -> np.ndarray:
        return decode_codes(index, self.values)

    def min(self):
        """The smallest value present (ValueError when empty, as numpy's)."""
        return self.values[int(self.index.min())]

    def max(self):
        """The largest value present (ValueError when empty, as numpy's)."""
        return self.values[int(self.index.max())]

    def __repr__(self) -> str:
        return f"CodedColumn({np.asarray(self)!r})"


def decode_codes(index: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values[index]`` (``index`` uint8, at most 256 values): by the compiled loop (record_scan.decode_codes:
    one pass, ~4x numpy's take, which widens every uint8 index first) when it is built and takes them, else by
    numpy a block at a time."""
    scan = compiled.record_scan
    v = values
    if (
        scan is not None
        and index.ndim == 1
        and len(index) >= _COMPILED_FROM
        and index.flags.c_contiguous
        and v.dtype.itemsize in (2, 4)
        and v.dtype.isnative
        and v.flags.c_contiguous
    ):
        out = array_to_fill(len(index), v.dtype)
        scan.decode_codes(index, v, out)
        return out
    if index.ndim != 1:
        return v[index]
    out = np.empty(len(index), v.dtype)
    for a in range(0, len(index), _BLOCK):
        np.take(v, index[a : a + _BLOCK], out=out[a : a + _BLOCK])
    return out


def coded(codes: np.ndarray) -> np.ndarray | CodedColumn:
    """``codes`` (int16: a narrowed code column) as a :class:`CodedColumn` when it holds at most
    :data:`MAX_VALUES` distinct values, else as it is (a trace's names:
    :func:`~fxscope.formats.fxt.frequent_codes.frequent_coded` codes their most frequent values). Counts the
    values a block at a time (a 65,536-bin count over the int16 range), so nothing sorts or copies the whole column but the uint8 index built; the
    compiled ``record_scan.code_index`` does the same in two passes (numpy's count widens every code first)."""
    if codes.dtype != np.int16 or len(codes) == 0:
        return codes
    scan = compiled.record_scan
    if scan is not None and codes.flags.c_contiguous and codes.dtype.isnative:  # (two passes, no temporaries)
        index, values = np.empty(len(codes), np.uint8), np.empty(MAX_VALUES, np.int16)
        k = scan.code_index(codes, index, values)
        return codes if k < 0 else CodedColumn(index, values[:k].copy(), every_value_used=True)
    counts = np.zeros(1 << 16, np.int64)
    for a in range(0, len(codes), _BLOCK):
        counts += np.bincount(codes[a : a + _BLOCK].view(np.uint16), minlength=1 << 16)
        if np.count_nonzero(counts) > MAX_VALUES:  # (a trace's names: known after the first block, as a rule)
            return codes
    present = np.flatnonzero(counts)  # as uint16 bit patterns: negative int16 values sort last here
    values = np.sort(present.astype(np.uint16).view(np.int16))
    lut = np.zeros(1 << 16, np.uint8)
    lut[values.view(np.uint16)] = np.arange(len(values), dtype=np.uint8)
    index = np.empty(len(codes), np.uint8)
    for a in range(0, len(codes), _BLOCK):
        np.take(lut, codes[a : a + _BLOCK].view(np.uint16), out=index[a : a + _BLOCK])
    return CodedColumn(index, values, every_value_used=True)

