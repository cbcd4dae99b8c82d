"""Vectorized scans over rows grouped in contiguous runs ("segments"): the building blocks of stack matching.

Slices, async spans and flows all replay a per-key state machine (a stack of open begins, an active flow)
over millions of events. Written as a Python loop that is a Python object per event; written as segmented
numpy scans it is a few passes over the columns. Every helper takes rows already sorted by segment.
"""

from __future__ import annotations

import bisect

import numpy as np

from fxscope.core.trace.sorting import lexsort, offset_int64


def segment_starts(keys: np.ndarray) -> np.ndarray:
    """Indices where a new run of equal ``keys`` begins (``keys`` sorted or at least grouped)."""
    if len(keys) == 0:
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])


def sorted_run_starts(keys, max_runs: int = 1024) -> np.ndarray:
    """:func:`segment_starts` of ``keys`` sorted ascending (any column indexable by a row: a
    :class:`~fxscope.core.trace.gathered.Gathered` read through its rows), found by a binary search of each
    run's end (a few dozen rows read a run) rather than a comparison of every row: the slice table's
    threads, read through the slices' events, would be gathered and compared whole (~0.2 s at 30M events)
    for a few dozen runs. More than ``max_runs`` runs: :func:`segment_starts` of the whole column."""
    n = len(keys)
    starts: list[int] = []
    i = 0
    while i < n:
        if len(starts) >= max_runs:
            return segment_starts(np.asarray(keys))
        starts.append(i)
        i = bisect.bisect_right(range(n), keys[i], lo=i + 1, key=keys.__getitem__)
    return np.array(starts, np.int64)


def segment_ids(starts: np.ndarray, n: int) -> np.ndarray:
    """Segment number of each of ``n`` rows, given the segments' start indices."""
    return np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))


def segmented_running_min(values: np.ndarray, starts: np.ndarray, seg_id: np.ndarray) -> np.ndarray:
    """Inclusive running minimum that restarts at every segment."""
    # Shift each segment far below the previous ones so a global running minimum restarts per segment.
    span = int(np.abs(values).max(initial=0)) * 2 + 2
    offset = (len(starts) - seg_id).astype(np.int64) * span
    return np.minimum.accumulate(values + offset) - offset


def segmented_running_max(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Inclusive int64 running maximum of int64 ``values`` that restarts at every segment.

    Each segment is shifted above all the ones before it (by the ranges of their values), so that one
    global running maximum restarts at every segment; when those ranges add up past int64 (corrupt
    timestamps), segment by segment instead.
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, np.int64)
    lo = np.minimum.reduceat(values, starts)
    hi = np.maximum.reduceat(values, starts)
    width = hi.astype(object) - lo.astype(object) + 1  # Python ints: exact whatever the values
    if sum(width.tolist()) >= 1 << 62:
        ends = np.r_[starts[1:], n]
        return np.concatenate([np.maximum.accumulate(values[a:b]) for a, b in zip(starts, ends, strict=True)])
    base = np.zeros(len(starts), np.int64)
    np.cumsum(width[:-1].astype(np.int64), out=base[1:])
    shift = np.repeat(base - lo, np.diff(np.r_[starts, n]))
    out = values + shift
    np.maximum.accumulate(out, out=out)
    out -= shift
    return out


def stack_depths(
    delta: np.ndarray, starts: np.ndarray, seg_id: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Replay a stack per segment from +1 (push) / -1 (pop) / 0 (look) markers.

    Returns ``(after, unmatched)``: the int32 stack depth after each marker, and which pops found the stack
    empty (those are ignored: the depth stays 0, as a reader that starts mid-stack must do), or None when
    none did. That is the usual case, told by the running sums alone (never negative): the segmented
    running minimum, and ``seg_id`` (computed when not given), are then not needed.
    """
    raw = _segmented_cumsum32(delta, starts)
    if not len(raw) or int(raw.min()) >= 0:
        return raw, None
    if seg_id is None:
        seg_id = segment_ids(starts, len(delta))
    run_min = segmented_running_min(raw, starts, seg_id)
    first = np.zeros(len(delta), bool)
    first[starts] = True
    prev_min = np.minimum(np.where(first, 0, np.r_[0, run_min[:-1]]), 0)
    unmatched = (delta < 0) & (raw < prev_min)
    return (raw - np.minimum(run_min, 0)).astype(np.int32), unmatched


def _segmented_cumsum32(delta: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Inclusive int32 running sum of small steps (a stack's +1/-1: sums stay within the row count) that
    restarts at every segment: each segment's first step is lowered by the sum of the segment before it
    (where one plain cumsum stands then), so no per-row segment index is needed."""
    steps = delta.astype(np.int32)
    if len(starts) > 1:
        totals = np.add.reduceat(steps, starts)
        steps[starts[1:]] -= totals[:-1]
    return np.cumsum(steps, dtype=np.int32)


def ffill_index(mask: np.ndarray, starts: np.ndarray, seg_id: np.ndarray, strict: bool = True) -> np.ndarray:
    """Per row: index of the last row with ``mask`` in the same segment before it (``strict``) or at it; -1."""
    if len(mask) == 0:
        return np.zeros(0, np.int64)
    last = np.maximum.accumulate(np.where(mask, np.arange(len(mask)), -1))
    if strict:
        last = np.r_[-1, last[:-1]]
    return np.where(last >= starts[seg_id], last, -1)


def bfill_index(mask: np.ndarray, starts: np.ndarray, seg_id: np.ndarray) -> np.ndarray:
    """Per row: index of the first row with ``mask`` in the same segment at or after it; -1."""
    n = len(mask)
    if n == 0:
        return np.zeros(0, np.int64)
    big = np.int64(n)
    idx = np.where(mask, np.arange(n), big)
    nxt = np.minimum.accumulate(idx[::-1])[::-1]
    seg_end = np.r_[starts[1:], n][seg_id]
    return np.where(nxt < seg_end, nxt, -1)


def _searchsorted_in_order(table: np.ndarray, keys: np.ndarray, parts: tuple, side: str) -> np.ndarray:
    """``np.searchsorted(table, keys, side)``, the keys searched in ascending order when they are many and
    not in order already (a binary search per key in a large table misses the cache each time; in order,
    the searches walk the table forward: about 4x faster). ``parts`` are the (minor, major) columns packed
    into ``keys``, for :func:`~fxscope.core.trace.sorting.lexsort` (a radix grouping by a small major first)."""
    if len(keys) < 4096 or not np.any(keys[1:] < keys[:-1]):
        return np.searchsorted(table, keys, side)
    order = lexsort(parts)
    out = np.empty(len(keys), np.int64)
    out[order] = np.searchsorted(table, keys[order], side)
    return out


def pair_searchsorted(
    t_major: np.ndarray, t_minor: np.ndarray, q_major: np.ndarray, q_minor: np.ndarray, side: str = "left"
) -> np.ndarray:
    """``searchsorted`` of (major, minor) queries in a table sorted by (major, minor).

    numpy's searchsorted on structured arrays compares field by field in Python-level generic code (about
    30x slower), so both sides are mapped to one int64 key: (rank of major) * span + (minor - min minor),
    with majors absent from the table ranked between the present ones. Falls back to the structured search
    when that key would overflow.
    """
    t_major = np.asarray(t_major)
    q_major = np.asarray(q_major)
    if len(t_major) == 0:
        return np.zeros(len(q_major), np.int64)
    t_minor = np.asarray(t_minor, np.int64)
    q_minor = np.asarray(q_minor, np.int64)
    lo = min(int(t_minor.min()), int(q_minor.min(initial=t_minor.min())))
    hi = max(int(t_minor.max()), int(q_minor.max(initial=t_minor.max())))
    span = hi - lo + 1
    if t_major.dtype.kind in "iu" and q_major.dtype.kind == t_major.dtype.kind and len(q_major):
        # integer majors of a small range (threads, processes): packed as they are, no ranks to compute
        m_lo = min(int(t_major[0]), int(q_major.min()))
        m_hi = max(int(t_major[-1]), int(q_major.max()))
        if (m_hi - m_lo + 1) * span < (1 << 62):
            t_key = offset_int64(t_major, m_lo) * span + (t_minor - lo)
            q_key = offset_int64(q_major, m_lo) * span + (q_minor - lo)
            return _searchsorted_in_order(t_key, q_key, (q_minor, q_major), side)
    uniq = t_major[segment_starts(t_major)]
    if (2 * len(uniq) + 1) * span < (1 << 62):
        t_rank = 2 * np.searchsorted(uniq, t_major) + 1
        j = np.searchsorted(uniq, q_major)
        exact = (j < len(uniq)) & (uniq[np.minimum(j, len(uniq) - 1)] == q_major)
        q_rank = 2 * j + exact
        return np.searchsorted(t_rank * span + (t_minor - lo), q_rank * span + (q_minor - lo), side)
    keys = np.empty(len(t_major), dtype=[("a", t_major.dtype), ("b", np.int64)])
    keys["a"], keys["b"] = t_major, t_minor
    probe = np.empty(len(q_major), keys.dtype)
    probe["a"], probe["b"] = q_major, q_minor
    return np.searchsorted(keys, probe, side)


def key_rows(column: np.ndarray, key: int) -> tuple[int, int]:
    """Row range ``lo:hi`` of ``key`` in the ascending integer ``column``, found by two binary searches in
    the column's own dtype: given a Python int (or a list), ``np.searchsorted`` casts a narrower column
    (int32 threads, uint16 CPUs) to int64 first, a copy of the whole column on every call (~2 ms for a
    million rows, per track and frame). A key outside the dtype's range has no rows."""
    info = np.iinfo(column.dtype)
    if key < info.min:
        return 0, 0
    if key > info.max:
        return len(column), len(column)
    k = column.dtype.type(key)
    return int(np.searchsorted(column, k, "left")), int(np.searchsorted(column, k, "right"))
