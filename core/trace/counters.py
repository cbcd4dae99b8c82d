"""Counter tracks: the numeric arguments of counter events as time series, with a per-pixel summary.

A counter event carries its samples as arguments; the FXT spec (Part 3, E3) keys one series per
(process koid, event name, counter id, argument name), as Perfetto does (its track is named
``"<event name>:<arg name>:<counter id>"``, category ignored). Non-numeric arguments are skipped and
counted (:attr:`CounterSet.non_numeric`). Values are float64 (int64 beyond 2**53 rounds), decoded for
all samples at once from the argument words (:mod:`formats.fxt.arg_columns`).

A counter is a step function: a sample holds until the next one. :meth:`CounterSet.lod` summarises a
window per pixel bucket (min, max, last sample) starting from the sample in force at the window's start.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.trace.sorting import lexsort
from core.trace.threads import thread_pids
from formats.fxt.arg_columns import event_arg_columns
from formats.fxt.columns import EventKind, FxtColumns


@dataclass
class CounterSeries:
    """One series: samples sorted by time (ties in file order)."""

    pid: int
    name: str
    counter_id: int
    arg_name: str
    ts: np.ndarray  # int64 ns
    value: np.ndarray  # float64
    event: np.ndarray  # int32 event row of each sample

    @property
    def label(self) -> str:
        """Perfetto's track name: ``name:arg`` plus ``:id`` when the counter id is not 0."""
        base = f"{self.name}:{self.arg_name}"
        return f"{base}:{self.counter_id}" if self.counter_id else base

    def __len__(self) -> int:
        return len(self.ts)


@dataclass
class CounterSet:
    series: list[CounterSeries]
    non_numeric: int = 0  # arguments of counter events that are not numbers (ignored)

    def __len__(self) -> int:
        return len(self.series)

    def for_process(self, pid: int) -> list[int]:
        """Indexes of the series of process ``pid``."""
        return [i for i, s in enumerate(self.series) if s.pid == pid]

    def lod(
        self, series_index: int, t0: int, t1: int, ns_per_px: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per pixel bucket of [t0, t1): (bucket start ns, min, max, last value), empty buckets left out.

        The sample in force at ``t0`` (the last one before it) counts in the first bucket, so a flat
        stretch across the whole window still draws.
        """
        s = self.series[series_index]
        bucket = max(float(ns_per_px), 1.0)
        a = max(int(np.searchsorted(s.ts, t0, "right")) - 1, 0)
        b = int(np.searchsorted(s.ts, t1, "left"))
        if b <= a:
            z = np.zeros(0)
            return np.zeros(0, np.int64), z, z.copy(), z.copy()
        ts, v = s.ts[a:b], s.value[a:b]
        key = np.floor((np.maximum(ts, t0) - t0) / bucket).astype(np.int64)
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        last = np.r_[first[1:] - 1, len(key) - 1]
        # (clipped: next to a corrupt trace's int64-sized span the float sum can pass the int64 range)
        start = np.clip(t0 + key[first] * bucket, -9.2e18, 9.2e18).astype(np.int64)
        return start, np.minimum.reduceat(v, first), np.maximum.reduceat(v, first), v[last]


def build_counters(cols: FxtColumns) -> CounterSet:
    """Every counter series of ``cols`` (see the module docstring)."""
    rows = np.flatnonzero(cols.ev_kind == EventKind.COUNTER)
    args = event_arg_columns(cols, rows)
    numeric = args.numeric
    non_numeric = int((~numeric).sum())
    ev = args.event[numeric]
    arg_name = args.name[numeric]
    value = args.values()[numeric]
    pid = thread_pids(cols, cols.ev_thread[ev])
    name = cols.ev_name[ev]
    cid = cols.ev_data[ev]
    ts = cols.ev_ts[ev]
    order = lexsort((ev, ts, arg_name, cid, name, pid))
    ev, arg_name, value, pid, name, cid, ts = (a[order] for a in (ev, arg_name, value, pid, name, cid, ts))
    n = len(ev)
    if n == 0:
        return CounterSet([], non_numeric)
    new = (
        (pid[1:] != pid[:-1])
        | (name[1:] != name[:-1])
        | (cid[1:] != cid[:-1])
        | (arg_name[1:] != arg_name[:-1])
    )
    starts = np.flatnonzero(np.r_[True, new])
    ends = np.r_[starts[1:], n]
    strings = cols.strings

    def text(i: int) -> str:
        return strings[i] if 0 <= i < len(strings) else "<unresolved>"

    series = [
        CounterSeries(
            pid=int(pid[a]),
            name=text(int(name[a])),
            counter_id=int(cid[a]),
            arg_name=text(int(arg_name[a])),
            ts=ts[a:b],
            value=value[a:b],
            event=ev[a:b].astype(np.int32),
        )
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
    ]
    series.sort(key=lambda c: (c.pid, c.name, c.counter_id, c.arg_name))
    return CounterSet(series, non_numeric)
