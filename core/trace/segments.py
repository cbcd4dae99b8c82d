"""Vectorized scans over rows grouped in contiguous runs ("segments"): the building blocks of stack matching.

Slices, async spans and flows all replay a per-key state machine (a stack of open begins, an active flow)
over millions of events. Written as a Python loop that is a Python object per event; written as segmented
numpy scans it is a few passes over the columns. Every helper takes rows already sorted by segment.
"""

from __future__ import annotations

import numpy as np


def segment_starts(keys: np.ndarray) -> np.ndarray:
    """Indices where a new run of equal ``keys`` begins (``keys`` sorted or at least grouped)."""
    if len(keys) == 0:
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])


def segment_ids(starts: np.ndarray, n: int) -> np.ndarray:
    """Segment number of each of ``n`` rows, given the segments' start indices."""
    return np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))


def segmented_cumsum(values: np.ndarray, starts: np.ndarray, seg_id: np.ndarray) -> np.ndarray:
    """Inclusive running sum that restarts at every segment."""
    total = np.cumsum(values)
    base = np.r_[0, total[starts[1:] - 1]] if len(starts) else np.zeros(0, np.int64)
    return total - base[seg_id]


def segmented_running_min(values: np.ndarray, starts: np.ndarray, seg_id: np.ndarray) -> np.ndarray:
    """Inclusive running minimum that restarts at every segment."""
    # Shift each segment far below the previous ones so a global running minimum restarts per segment.
    span = int(np.abs(values).max(initial=0)) * 2 + 2
    offset = (len(starts) - seg_id).astype(np.int64) * span
    return np.minimum.accumulate(values + offset) - offset


def stack_depths(delta: np.ndarray, starts: np.ndarray, seg_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Replay a stack per segment from +1 (push) / -1 (pop) / 0 (look) markers.

    Returns ``(after, unmatched)``: the stack depth after each marker, and which pops found the stack
    empty (those are ignored: the depth stays 0, as a reader that starts mid-stack must do).
    """
    raw = segmented_cumsum(delta, starts, seg_id)
    run_min = segmented_running_min(raw, starts, seg_id)
    first = np.zeros(len(delta), bool)
    first[starts] = True
    prev_min = np.minimum(np.where(first, 0, np.r_[0, run_min[:-1]]), 0)
    unmatched = (delta < 0) & (raw < prev_min)
    return raw - np.minimum(run_min, 0), unmatched


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
    uniq = t_major[segment_starts(t_major)]
    lo = min(int(t_minor.min()), int(q_minor.min(initial=t_minor.min())))
    hi = max(int(t_minor.max()), int(q_minor.max(initial=t_minor.max())))
    span = hi - lo + 1
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
