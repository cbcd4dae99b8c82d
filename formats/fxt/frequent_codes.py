"""A code column with more than 256 distinct values stored as one byte a row: its most frequent values coded,
the rest kept aside (``ev_name``).

A trace's event names are hundreds (576 in the benchmark's generated traces), too many for a
:class:`~fxscope.formats.fxt.coded_column.CodedColumn`, so the column stayed int16: 2 bytes an event, 20 MB
at 10M events, the largest of the reader's per-event columns after the record positions. Their use is very
skewed, though: a few dozen names cover almost every event (in those traces the 255 most frequent names
cover all but 321 of 10M events). :class:`FrequentCodedColumn` keeps a uint8 code per row for the
:data:`ESCAPE` most frequent values, code :data:`ESCAPE` for any other, and those rows' row numbers and values
apart (sorted by row): 1 byte a row plus 10 bytes a rare row, the dictionary encoding with exceptions of
columnar stores. :func:`frequent_coded` builds it only when the rare rows are at most :data:`RARE_SHARE` of
the rows, so that it always saves memory.

It reads as the int16 column it replaces (``col[rows]``, masks, slices, scalars, ``np.asarray(col)``); it is
deliberately not a ``CodedColumn`` (no ``index``): the loops that take a code column's one-byte index as
keys must not see its escape code as a value.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt.coded_column import decode_codes
from fxscope.formats.fxt.column_view import ColumnView

#: the code of a row whose value is not one of the frequent ones (and how many frequent values are coded)
ESCAPE = 255
#: rare rows allowed, at most, as a share of the rows (1/64: 1 byte a row + 10 bytes a rare row stays
#: well under the 2 bytes a row of the int16 column)
RARE_SHARE = 1 / 64
#: rows converted at once by the numpy path (bounds its temporaries)
_BLOCK = 1 << 20


class FrequentCodedColumn(NDArrayOperatorsMixin, ColumnView):
    """Values ``values[codes]``, but where ``codes`` is :data:`ESCAPE`: there ``rare_values`` at the same
    position of ``rare_rows`` (see the module docstring)."""

    def __init__(self, codes: np.ndarray, values: np.ndarray, rare_rows: np.ndarray, rare_values: np.ndarray):
        self.codes = codes  # uint8, one a row
        self.values = values  # the frequent values, ascending (at most ESCAPE of them)
        self.rare_rows = rare_rows  # int64, ascending: the rows coded ESCAPE
        self.rare_values = rare_values  # their values (the column's dtype)
        #: the values as the decoding gathers them: 256 entries, the escape's a placeholder patched after
        self.table = np.zeros(ESCAPE + 1, values.dtype)
        self.table[: len(values)] = values

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes + self.values.nbytes + self.rare_rows.nbytes + self.rare_values.nbytes

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, key):
        if isinstance(key, ColumnView):
            key = np.asarray(key)
        n = len(self.codes)
        if isinstance(key, (int, np.integer)):
            row = int(key) + n if key < 0 else int(key)
            if not 0 <= row < n:
                raise IndexError(f"index {int(key)} is out of bounds for a column of {n} rows")
            code = self.codes[row]
            return self.table[code] if code != ESCAPE else self.rare_values[self._rare_at(row)]
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            out = self._decoded(self.codes[key])
            if step == 1:  # (a range: its rare rows are one run of rare_rows)
                a, b = np.searchsorted(self.rare_rows, [start, max(start, stop)])
                out[self.rare_rows[a:b] - start] = self.rare_values[a:b]
                return out
            return self._patched(out, np.arange(start, stop, step))
        key = np.asarray(key)
        if key.dtype == np.bool_:
            out = self._decoded(self.codes[key])
            return self._patched(out, np.flatnonzero(key)) if (out.shape and self._any_escape(key)) else out
        if key.ndim != 1:
            return np.asarray(self)[key]
        codes = self.codes[key]  # (IndexError for a row out of range, as numpy's)
        out = self._decoded(codes)
        esc = np.flatnonzero(codes == ESCAPE)
        if len(esc):
            rows = key[esc].astype(np.int64)
            rows[rows < 0] += n
            out[esc] = self.rare_values[self._rare_at(rows)]
        return out

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self._decoded(self.codes)
        out[self.rare_rows] = self.rare_values
        return out if dtype is None else out.astype(dtype, copy=False)

    def _rare_at(self, rows):
        """Positions in :attr:`rare_rows` of ``rows`` (rows coded ESCAPE: each is there)."""
        return np.searchsorted(self.rare_rows, rows)

    def _any_escape(self, mask: np.ndarray) -> bool:
        return len(self.rare_rows) > 0 and bool(mask[self.rare_rows].any())

    def _patched(self, out: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``out`` (decoded codes of ``rows``) with the rare rows' values in place of the escape's."""
        if len(self.rare_rows) == 0 or len(rows) == 0:
            return out
        at = np.minimum(np.searchsorted(self.rare_rows, rows), len(self.rare_rows) - 1)
        hit = self.rare_rows[at] == rows
        out[hit] = self.rare_values[at[hit]]
        return out

    def _decoded(self, codes: np.ndarray) -> np.ndarray:
        """``table[codes]`` (the escape's placeholder included)."""
        return decode_codes(codes, self.table)

    def min(self):
        """The smallest value present (ValueError when empty, as numpy's)."""
        return min(v for v in (_present(self.values, self.codes, np.min), _present(self.rare_values, None, np.min))
                   if v is not None)

    def max(self):
        """The largest value present (ValueError when empty, as numpy's)."""
        return max(v for v in (_present(self.values, self.codes, np.max), _present(self.rare_values, None, np.max))
                   if v is not None)

    def __repr__(self) -> str:
        return f"FrequentCodedColumn({np.asarray(self)!r})"


def _present(values: np.ndarray, codes: np.ndarray | None, pick):
    """``pick`` of the values that rows hold (the frequent values a row's code names), None when none."""
    if codes is not None:
        used = np.zeros(ESCAPE + 1, bool)
        used[codes] = True
        values = values[used[: len(values)]]
    if len(values) == 0:
        return None
    return pick(values)


def frequent_coded(codes: np.ndarray) -> FrequentCodedColumn | None:
    """``codes`` (int16, more than 256 distinct values) as a :class:`FrequentCodedColumn`, or None when its
    :data:`ESCAPE` most frequent values leave more than :data:`RARE_SHARE` of the rows rare (or it is not an
    int16 column). Two passes: a 65,536-bin count of the values, then the codes and the rare rows (compiled:
    record_scan.code_counts / code_escape; numpy a block at a time otherwise, the same result)."""
    if codes.dtype != np.int16 or codes.ndim != 1 or len(codes) == 0:
        return None
    scan = compiled.record_scan
    fast = scan is not None and codes.flags.c_contiguous and codes.dtype.isnative
    counts = np.zeros(1 << 16, np.int64)  # by the uint16 bit pattern of the value
    if fast:
        scan.code_counts(codes, counts)
    else:
        for a in range(0, len(codes), _BLOCK):
            counts += np.bincount(codes[a : a + _BLOCK].view(np.uint16), minlength=1 << 16)
    present = np.flatnonzero(counts)
    # the most frequent first, equal counts by value (as int16): the same choice whatever the path
    as_value = present.astype(np.uint16).view(np.int16)
    chosen = present[np.lexsort((as_value, -counts[present]))[:ESCAPE]]
    n_rare = len(codes) - int(counts[chosen].sum())
    if n_rare > len(codes) * RARE_SHARE:
        return None
    values = np.sort(chosen.astype(np.uint16).view(np.int16))
    lut = np.full(1 << 16, ESCAPE, np.uint8)
    lut[values.view(np.uint16)] = np.arange(len(values), dtype=np.uint8)
    index = np.empty(len(codes), np.uint8)
    if fast:
        rare_rows = np.empty(n_rare, np.int64)
        if scan.code_escape(codes, lut, index, rare_rows) != n_rare:  # (the counts said how many)
            raise RuntimeError("code_escape: rare rows differ from the count")
    else:
        rare = []
        for a in range(0, len(codes), _BLOCK):
            part = index[a : a + _BLOCK]
            np.take(lut, codes[a : a + _BLOCK].view(np.uint16), out=part)
            rare.append(np.flatnonzero(part == ESCAPE) + a)
        rare_rows = np.concatenate(rare)
    return FrequentCodedColumn(index, values, rare_rows, codes[rare_rows].copy())
