"""What an area selection over non-slice tracks sums up, as Perfetto's area selection does.

Over CPU lanes: the CPU time of each thread (and of each process) inside the window; over thread-state
strips: the time spent in each state; over async tracks: the spans per name. Every sum is over the
intervals clipped to the window, grouped with one sort and ``reduceat`` (never a Python object per row).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel


def _clipped(start: np.ndarray, end: np.ndarray, t0: int, t1: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows overlapping [t0, t1) (a zero-length interval inside it counts) and their time inside it."""
    start, end = np.asarray(start, np.int64), np.asarray(end, np.int64)
    hit = (start < t1) & ((end > t0) | ((end == start) & (start >= t0)))
    rows = np.flatnonzero(hit)
    inside = np.minimum(end[rows], t1) - np.maximum(start[rows], t0)
    return rows, np.maximum(inside, 0)


def _group_sums(keys: np.ndarray, inside: np.ndarray, full: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(key, count, time inside, full time) per distinct key, largest time inside first."""
    if not len(keys):
        return []
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    count = np.diff(np.r_[first, len(k)])
    total = np.add.reduceat(inside[order], first)
    whole = np.add.reduceat(full[order], first)
    out = list(zip(k[first].tolist(), count.tolist(), total.tolist(), whole.tolist(), strict=True))
    out.sort(key=lambda r: (-r[2], r[0]))
    return out


def _in_lanes(column: np.ndarray, wanted: Iterable[int]) -> np.ndarray:
    wanted = np.fromiter((int(w) for w in wanted), np.int64)
    return np.isin(np.asarray(column).astype(np.int64), wanted)


def cpu_by_thread(model: TraceModel, t0: int, t1: int, cpus: Iterable[int]) -> list[dict]:
    """Per thread that ran on ``cpus`` in [t0, t1): ``tid``, ``pid``, ``name``, ``count`` (CPU slices),
    ``total`` (CPU time inside the window, ns), ``wall_total`` (the slices' full durations)."""
    cs = model.sched.cpu_slices
    lanes = _in_lanes(cs.cpu, cpus)
    rows, inside = _clipped(cs.start, cs.end, t0, t1)
    keep = lanes[rows]
    rows, inside = rows[keep], inside[keep]
    full = cs.end[rows].astype(np.int64) - cs.start[rows].astype(np.int64)
    tids = cs.tid[rows].astype(np.int64)
    pid_of = dict(zip(tids.tolist(), cs.pid[rows].astype(np.int64).tolist(), strict=True))
    label = model.objects.koid_label
    return [
        {"tid": tid, "pid": pid_of[tid], "name": label(tid), "count": c, "total": t, "wall_total": w}
        for tid, c, t, w in _group_sums(tids, inside, full)
    ]


def cpu_by_process(model: TraceModel, t0: int, t1: int, cpus: Iterable[int]) -> list[dict]:
    """:func:`cpu_by_thread` summed per process: ``pid``, ``name``, ``count``, ``total``, ``wall_total``,
    ``threads`` (how many of its threads ran)."""
    by_thread = cpu_by_thread(model, t0, t1, cpus)
    sums: dict[int, dict] = {}
    for r in by_thread:  # one entry per thread that ran: few
        s = sums.setdefault(r["pid"], {"pid": r["pid"], "name": model.process_name(r["pid"]) if r["pid"] else "?",
                                       "count": 0, "total": 0, "wall_total": 0, "threads": 0})  # fmt: skip
        s["count"] += r["count"]
        s["total"] += r["total"]
        s["wall_total"] += r["wall_total"]
        s["threads"] += 1
    return sorted(sums.values(), key=lambda r: (-r["total"], r["pid"]))


def states_by_state(model: TraceModel, t0: int, t1: int, tids: Iterable[int]) -> list[dict]:
    """Per scheduling state of the threads ``tids`` (koids) in [t0, t1): ``state`` (its name),
    ``count`` (intervals), ``total`` (time in the state inside the window, ns), ``wall_total``."""
    from fxscope.core.trace.sched import STATE_NAMES

    st = model.sched.thread_states
    lanes = _in_lanes(st.tid, tids)
    rows, inside = _clipped(st.start, st.end, t0, t1)
    keep = lanes[rows]
    rows, inside = rows[keep], inside[keep]
    full = st.end[rows].astype(np.int64) - st.start[rows].astype(np.int64)
    return [
        {"state": STATE_NAMES.get(s, f"state {s}"), "count": c, "total": t, "wall_total": w}
        for s, c, t, w in _group_sums(st.state[rows].astype(np.int64), inside, full)
    ]


def async_by_name(model: TraceModel, t0: int, t1: int, pids: Iterable[int]) -> list[dict]:
    """Per name of the async spans of processes ``pids`` in [t0, t1): ``name``, ``count``, ``total``
    (time inside the window), ``wall_total`` (full durations)."""
    t = model.async_spans
    if not len(t.start):
        return []
    lanes = _in_lanes(np.asarray(t.pid, np.uint64), pids)
    rows, inside = _clipped(t.start, t.end, t0, t1)
    keep = lanes[rows]
    rows, inside = rows[keep], inside[keep]
    full = t.end[rows].astype(np.int64) - t.start[rows].astype(np.int64)
    names = np.asarray(t.name[rows], np.int64)
    strings = model.strings
    return [
        {"name": strings[n] if 0 <= n < len(strings) else "?", "count": c, "total": tt, "wall_total": w}
        for n, c, tt, w in _group_sums(names, inside, full)
    ]
