"""The rows of the events of a range of kinds, found a block of the event columns at a time.

Every table of the model starts from "the rows of the duration (async, flow...) events". Written as
``np.flatnonzero((kind >= a) & (kind <= b))`` that makes three masks and an int64 index as long as the whole
trace (50 MB at 10M events) at the start of each table's build, on top of everything the load holds; done a
block at a time, and as int32 rows wherever the trace's rows fit 31 bits, it costs 4 bytes a selected row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.trace import compiled
from fxscope.formats.filled_arrays import array_to_fill

if TYPE_CHECKING:
    from fxscope.formats.fxt.columns import FxtColumns

#: event rows examined at once
BLOCK = 1 << 20


def kind_rows(kind: np.ndarray, first: int, last: int) -> np.ndarray:
    """Ascending rows whose ``kind`` (uint8) is in ``first..last``: int32 rows when the column is shorter
    than 2**31, else int64."""
    dtype = np.int32 if len(kind) < (1 << 31) else np.int64
    kernels = compiled.span_kernels
    if kernels is not None and compiled.plain(kind, np.uint8):  # (two streaming passes, no masks)
        rows = array_to_fill(kernels.kind_rows(kind, first, last, None, False), dtype)
        kernels.kind_rows(kind, first, last, rows, dtype == np.int64)
        return rows
    low, span = np.uint8(first), np.uint8(last - first)
    parts = []
    for a in range(0, len(kind), BLOCK):
        shifted = kind[a : a + BLOCK] - low  # uint8: kinds below ``first`` wrap past ``span``
        parts.append(np.flatnonzero(shifted <= span).astype(dtype) + dtype(a))
    if not parts:
        return np.zeros(0, dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def kind_count(kind: np.ndarray, first: int, last: int) -> int:
    """The number of rows whose ``kind`` (uint8) is in ``first..last``: the compiled count of
    :func:`kind_rows` (one SSE2 pass, ~3 ms at 30M events) when it is built, else :func:`kind_counts`' sum
    (a count of every kind: the byte histogram was ~10 ms at 30M events, for the one number a build asks)."""
    kernels = compiled.span_kernels
    if kernels is not None and compiled.plain(kind, np.uint8) and 0 <= first <= last <= 255:
        return int(kernels.kind_rows(kind, first, last, None, False))
    return int(kind_counts(kind, last + 1)[first : last + 1].sum())


def kind_counts(kind: np.ndarray, minlength: int) -> np.ndarray:
    """``np.bincount(kind, minlength=minlength)`` of a small-integer column, a block at a time (bincount
    widens its input to intp: a whole column at once is an 8-byte temporary per event). A uint8 column is
    counted by the compiled loop (summary_kernels.c: one pass, no widened copy) when it is built."""
    kernels = compiled.summary_kernels
    if kernels is not None and compiled.plain(kind, np.uint8):
        table = np.zeros(256, np.int64)
        kernels.byte_counts(kind, table)
        used = np.flatnonzero(table)
        n = max(minlength, int(used[-1]) + 1 if len(used) else 0)
        return table[:n] if n <= 256 else np.r_[table, np.zeros(n - 256, np.int64)]
    counts = np.zeros(minlength, np.int64)
    for a in range(0, len(kind), BLOCK):
        part = np.bincount(kind[a : a + BLOCK], minlength=minlength)
        if len(part) > len(counts):
            counts = np.r_[counts, np.zeros(len(part) - len(counts), np.int64)]
        counts[: len(part)] += part
    return counts


#: where :func:`event_kind_counts` keeps its count on the columns object (with the kind column it counted)
_KIND_COUNTS_ATTR = "_event_kind_counts"


def event_kind_counts(cols: FxtColumns) -> np.ndarray:
    """How many events of each kind ``cols`` holds (:func:`kind_counts` of ``cols.ev_kind``, at least 256
    entries; read only): counted once, on first use (the async spans' build, which needs some of them), then
    kept by ``cols`` for as long as its kind column is that one: the Info tab's statistics, built after it,
    read them without a pass of their own (a count of every kind is 100 MB read at 100M events, past the
    caches: ~37-46 ms there, 9-10 ms at 30M, the statistics' cost growing fastest). The reader's columns are
    not changed after the read. (The model's extent asks for one count: :func:`kind_count`'s SSE2 pass.)"""
    kind = cols.ev_kind
    held = getattr(cols, _KIND_COUNTS_ATTR, None)
    if held is not None and held[0] is kind:
        return held[1]
    counts = kind_counts(kind, 256)
    counts.flags.writeable = False
    setattr(cols, _KIND_COUNTS_ATTR, (kind, counts))
    return counts
