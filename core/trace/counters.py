"""Counter tracks: the numeric arguments of counter events as time series, with a per-pixel summary.

A counter event carries its samples as arguments; the FXT spec (Part 3, E3) keys one series per
(process koid, event name, counter id, argument name), as Perfetto does (its track is named
``"<event name>:<arg name>:<counter id>"``, category ignored). Non-numeric arguments are skipped and
counted (:attr:`CounterSet.non_numeric`). Values are float64 (int64 beyond 2**53 rounds), decoded for
all samples at once from the argument words (:mod:`fxscope.formats.fxt.arg_columns`).

A counter is a step function: a sample holds until the next one. :meth:`CounterSet.lod` summarises a
window per pixel bucket: exactly the min and max of the samples in force during each bucket (the one
carried in from before it and those inside it), so a zoomed-out drawing shows no value the counter did
not have there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fxscope.core.trace.event_rows import kind_rows
from fxscope.core.trace.sorting import lexsort
from fxscope.core.trace.threads import thread_pids
from fxscope.formats.fxt.arg_columns import event_arg_columns
from fxscope.formats.fxt.columns import EventKind, FxtColumns


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

    #: pixels a window is summarised into at most (a caller asking for finer buckets gets coarser ones)
    MAX_BUCKETS = 1 << 20

    def lod(
        self, series_index: int, t0: int, t1: int, ns_per_px: float, anchor: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per pixel bucket of [t0, t1): (bucket start ns, min, max, last value), exactly over the samples
        in force during the bucket: the last sample at or before its start (it holds until the next one)
        and every sample inside it. A run of buckets with the same (min, max, last) is one entry (each
        entry holds until the next one's start, the last until the end of the last bucket); buckets before
        the first sample are left out, and the first entry starts no earlier than the first sample.

        Bucket ``k`` is [t0 + k * b, t0 + (k + 1) * b) with b = max(ns_per_px, 1) (in float64 offsets from
        ``t0``, so that times near 2**63 keep their nanoseconds). With ``anchor``, the buckets are those of
        the grid [anchor + k * b, anchor + (k + 1) * b) that meet [t0, t1): windows summarised apart on one
        grid (a picture extended as the view pans) cut the samples into the same pixels.
        Vectorized, and per frame proportional to
        the pixels, not the samples, but for one reduceat: the samples in force during each bucket are a
        run of indices (its carry, then the ones inside it), found by searching the pixel edges in the
        samples; a zoomed-out frame of a counter with 10**5 samples is ~0.2 ms, not the ~2 ms of searching
        every sample in the edges.
        """
        s = self.series[series_index]
        z = np.zeros(0)
        empty = (np.zeros(0, np.int64), z, z.copy(), z.copy())
        if t1 <= t0 or not len(s):
            return empty
        span = t1 - t0
        bucket = max(float(ns_per_px), 1.0, span / self.MAX_BUCKETS)
        base = t0 if anchor is None else anchor  # the grid's origin: bucket edges are offsets from it
        k0 = 0 if anchor is None else math.floor((t0 - anchor) / bucket)
        n_px = max(math.ceil((t1 - base) / bucket) - k0, 1)
        edges = (np.arange(n_px + 1, dtype=np.float64) + k0) * bucket
        first_raw = base + math.floor(edges[0])  # the first bucket's start (t0 without an anchor)
        first_ns = min(max(first_raw, -(1 << 63) + 1), (1 << 63) - 1)
        a = max(int(np.searchsorted(s.ts, first_ns, "right")) - 1, 0)
        b = int(np.searchsorted(s.ts, t1, "left"))
        if b <= a:
            return empty
        ts, v = s.ts[a:b], s.value[a:b]
        # bucket k's samples in force are indices first[k]:stop[k] of the window: the one carried into it
        # (the last at or before its start; -1: none yet), then those strictly inside it (one exactly at
        # its end is the next bucket's carry)
        exact = (t1 - base) < (1 << 53) and first_ns == first_raw and t1 + 2 * bucket < (1 << 63) - 1
        if exact:
            # in integers: (t - base) <= e is t <= base + floor(e), and (t - base) < e is t < base + ceil(e)
            # (offsets below 2**53 are exact as floats); no float copy of the samples
            carry = np.searchsorted(ts, np.int64(base) + np.floor(edges[:-1]).astype(np.int64), "right") - 1
            stop = np.searchsorted(ts, np.int64(base) + np.ceil(edges[1:]).astype(np.int64), "left")
        else:  # a span past 2**53 ns (a corrupt trace): offsets from the first bucket as floats
            edges = edges - float(first_ns - base)
            rel = (ts - np.int64(first_ns)).astype(np.float64)
            if int(ts[0]) <= first_ns:
                rel[0] = edges[0]
            carry = np.searchsorted(rel, edges[:-1], "right") - 1
            stop = np.searchsorted(rel, edges[1:], "left")
        first = np.maximum(carry, 0)
        valid = stop > first
        vmin, vmax = _bucket_min_max(v, first, stop)
        # the value in force at each bucket's end: the last sample before it
        last = v[np.maximum(stop - 1, 0)]
        px = np.flatnonzero(valid)
        if not len(px):
            return empty
        lo, hi, la = vmin[px], vmax[px], last[px]
        keep = np.ones(len(px), bool)
        keep[1:] = (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1]) | (la[1:] != la[:-1])
        px = px[keep]
        # (the first ns of the bucket)
        start = np.int64(base if exact else first_ns) + np.ceil(edges[px]).astype(np.int64)
        # the first entry starts where the counter does (not before its first sample, nor the trace)
        start[0] = max(int(start[0]), int(ts[0]))
        return start, vmin[px], vmax[px], last[px]


#: counter events whose arguments are decoded at once, at most: the decoding's temporaries (~170 bytes a
#: counter event, 140 MB at 10M events when decoded all together) then stay a few tens of MB
ARG_BATCH = 1 << 18


def _numeric_args(cols: FxtColumns, rows: np.ndarray, check) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(event row, name id, float64 value) of the numeric arguments of event ``rows`` (ascending), in
    record then argument order, and the number of non-numeric ones; decoded :data:`ARG_BATCH` records at
    a time (the order is the same: each batch is a run of the rows)."""
    parts = []
    non_numeric = 0
    for a in range(0, max(len(rows), 1), ARG_BATCH):
        args = event_arg_columns(cols, rows[a : a + ARG_BATCH], check=check)
        numeric = args.numeric
        non_numeric += int((~numeric).sum())
        rows_type = np.int32 if len(cols.ev_kind) < 1 << 31 else np.int64  # (4 bytes a sample, not 8)
        parts.append((args.event[numeric].astype(rows_type), args.name[numeric].astype(np.int32),
                      args.values()[numeric]))
        del args, numeric
    if len(parts) == 1:
        return (*parts[0], non_numeric)
    ev, name, value = (np.concatenate(c) for c in zip(*parts, strict=True))
    return ev, name, value, non_numeric


def build_counters(cols: FxtColumns, check=None) -> CounterSet:
    """Every counter series of ``cols`` (see the module docstring). ``check()``, when given, is called
    between the passes (a Cancel raises from it)."""
    check = check or (lambda: None)
    rows = kind_rows(cols.ev_kind, EventKind.COUNTER, EventKind.COUNTER)  # (int32, a block at a time)
    ev, arg_name, value, non_numeric = _numeric_args(cols, rows, check)
    del rows
    check()
    pid = thread_pids(cols, cols.ev_thread[ev])
    name = cols.ev_name[ev]
    ts, cid = cols.times_and_data(ev)
    check()
    order = lexsort((ev, ts, arg_name, cid, name, pid))
    # one column at a time: each unsorted one freed as its sorted copy is made (not all seven at once)
    ev = ev[order]
    arg_name = arg_name[order]
    value = value[order]
    pid = pid[order]
    name = name[order]
    cid = cid[order]
    ts = ts[order]
    del order
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


def _bucket_min_max(v: np.ndarray, first: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The min and max of ``v[first[k]:stop[k]]`` for each bucket k (``stop`` non-decreasing, at most
    ``len(v)``; a bucket with ``stop <= first`` gets any value: the caller drops it).

    One reduceat over (first, stop) pairs: the even results reduce first[k]:stop[k] (the odd ones, the gaps
    between buckets, are dropped). ``stop == len(v)`` is no valid index: the first bucket j that runs to the
    last sample is the reduceat's last index (which reduces to the end), and the buckets after it hold the
    last sample alone (all samples are before their start). No copy of the samples (a padded copy was
    ~0.3 ms a frame per counter zoomed out at 100M events)."""
    n_px, n = len(first), len(v)
    j = int(np.searchsorted(stop, n, "left"))  # buckets j.. run to the last sample
    head = min(j, n_px)
    idx = np.empty(2 * head + (1 if j < n_px else 0), np.int64)
    idx[0 : 2 * head : 2], idx[1 : 2 * head : 2] = first[:head], stop[:head]
    if j < n_px:
        idx[-1] = first[j]
    vmin, vmax = np.empty(n_px), np.empty(n_px)
    for out, ufunc in ((vmin, np.minimum), (vmax, np.maximum)):
        red = ufunc.reduceat(v, idx)
        out[:head] = red[0 : 2 * head : 2]
        if j < n_px:
            out[j] = red[-1]
            out[j + 1 :] = v[-1]
    return vmin, vmax
