"""Queries over a model's slices: the area-selection summary and the name search.

Both work per distinct string id, never per slice in Python: a name test runs once per distinct name,
then spreads to the slices with one gather; the summary groups with a sort and ``reduceat``.

Area summary numbers, and why (Perfetto's area selection is what users compare with): Perfetto sums the
*full* durations of the slices that overlap the selected area (``sum(dur)``, its "Wall duration"), and
likewise their self times. fxscope reports that as ``wall_total`` and ``self_total``, plus ``total``, the
wall time clipped to the window, which is what the window actually contains (so totals of a window
split in two add up). ``avg``/``min``/``max`` describe the slices themselves: full durations.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from core.trace.model import TraceModel


def _thread_rows(thread_col: np.ndarray, threads: Iterable[int] | None) -> np.ndarray:
    """Rows of the slices of ``threads`` (all rows for None); slices are sorted by thread."""
    if threads is None:
        return np.arange(len(thread_col))
    wanted = np.unique(np.fromiter((int(t) for t in threads), np.int64))
    lo = np.searchsorted(thread_col, wanted, "left")
    hi = np.searchsorted(thread_col, wanted, "right")
    if len(wanted) == 0:
        return np.zeros(0, np.int64)
    return np.concatenate([np.arange(a, b) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])


def aggregate(model: TraceModel, t0: int, t1: int, threads: Iterable[int] | None = None) -> list[dict]:
    """Per slice name, over the slices of ``threads`` (reader thread indexes; None = all) overlapping
    [t0, t1): ``name``, ``name_id``, ``count``, ``total`` (wall time inside the window), ``wall_total``
    and ``self_total`` (full durations, as Perfetto sums them), ``avg``, ``min``, ``max`` (full
    durations, ns). Sorted by ``total``, largest first, then by name.
    """
    s = model.slices
    rows = _thread_rows(s.thread, threads)
    ts, dur = s.ts[rows], s.dur[rows]
    end = ts + dur
    # zero-length slices count when they sit inside the window
    hit = (ts < t1) & ((end > t0) | ((dur == 0) & (ts >= t0)))
    rows, ts, dur, end = rows[hit], ts[hit], dur[hit], end[hit]
    if len(rows) == 0:
        return []
    clipped = np.minimum(end, t1) - np.maximum(ts, t0)
    names = s.name[rows]
    order = np.argsort(names, kind="stable")
    names = names[order]
    first = np.flatnonzero(np.r_[True, names[1:] != names[:-1]])
    count = np.diff(np.r_[first, len(names)])
    total = np.add.reduceat(clipped[order], first)  # int64 sums: exact, unlike bincount's float weights
    d = dur[order]
    wall = np.add.reduceat(d, first)
    self_total = np.add.reduceat(s.self_dur_of(rows)[order], first)
    lo, hi = np.minimum.reduceat(d, first), np.maximum.reduceat(d, first)
    strings = model.strings
    out = [
        {
            "name": strings[n] if 0 <= n < len(strings) else "<unresolved>",
            "name_id": n,
            "count": c,
            "total": t,
            "wall_total": w,
            "self_total": st,
            "avg": w / c,
            "min": a,
            "max": b,
        }
        for n, c, t, w, st, a, b in zip(
            names[first].tolist(), count.tolist(), total.tolist(), wall.tolist(), self_total.tolist(),
            lo.tolist(), hi.tolist(), strict=True,
        )
    ]  # fmt: skip
    out.sort(key=lambda r: (-r["total"], r["name"]))
    return out


def search(model: TraceModel, text: str) -> np.ndarray:
    """Rows of the slices whose name contains ``text`` (case-insensitive), by start time.

    Each distinct name used by a slice is tested once. Argument values are not searched (decoding every
    slice's arguments is the slow per-event path; a later version could search string arguments through
    :mod:`formats.fxt.arg_columns`).
    """
    needle = text.casefold()
    s = model.slices
    if not needle or len(s) == 0:
        return np.zeros(0, np.int64)
    strings = model.strings
    names = s.name
    valid = names >= 0
    used = np.flatnonzero(np.bincount(names[valid], minlength=0))
    match = np.zeros(len(strings), bool)
    ids = [i for i in used.tolist() if i < len(strings) and needle in strings[i].casefold()]
    match[ids] = True
    rows = np.flatnonzero(valid & match[np.maximum(names, 0)])
    return rows[np.argsort(s.ts[rows], kind="stable")]
