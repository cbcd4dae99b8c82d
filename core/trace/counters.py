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
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from fxscope.core.trace import compiled
from fxscope.core.trace.event_rows import kind_rows
from fxscope.core.trace.sorted_search import SAMPLE_STEP, sample_of, search_ascending
from fxscope.core.trace.sorting import lexsort, offset_int64
from fxscope.core.trace.threads import thread_pids
from fxscope.formats.filled_arrays import array_to_fill, populate
from fxscope.formats.fxt.arg_columns import numeric_args
from fxscope.formats.fxt.columns import EventKind, FxtColumns

#: values a block of :meth:`CounterSeries.block_bounds` bounds: a zoomed-out pixel reads its whole blocks' bounds
#: and, where their bounds reach past what it has, the values of the two blocks it cuts (a few dozen reads
#: of a pixel of hundreds of samples)
BOUND_BLOCK = 64
#: series shorter than this have no block bounds (a frame reads all of their values at little cost)
BOUNDED_FROM = 1 << 14
#: values a block of :meth:`CounterSeries.fine_bounds` bounds (BOUND_BLOCK is a multiple of it): what a
#: pixel's strip reads of the parts of blocks at its ends, instead of up to a block of values each; the
#: step of the times' sample too (the strip searches its pixel edges through it: sorted_search.sample_of)
FINE_BLOCK = SAMPLE_STEP


def _block_min_max(v: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """The min and max of each block of ``block`` values of ``v`` (the last one may be shorter; NaN both ways
    where a block holds a NaN): one compiled pass (slice_kernels.block_bounds) when built, numpy's row
    reductions otherwise (~15 ns a value for blocks of 8)."""
    n = -(-len(v) // block)
    bmin, bmax = np.empty(n), np.empty(n)
    kernels = compiled.slice_kernels
    if kernels is not None:
        kernels.block_bounds(np.ascontiguousarray(v), block, bmin, bmax)
        return bmin, bmax
    whole = len(v) // block * block
    blocks = v[:whole].reshape(-1, block)
    np.min(blocks, axis=1, out=bmin[: whole // block])  # (a NaN in a block gives NaN)
    np.max(blocks, axis=1, out=bmax[: whole // block])
    if whole < len(v):
        bmin[-1], bmax[-1] = v[whole:].min(), v[whole:].max()
    return bmin, bmax


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
    #: (min, max) of each block of BOUND_BLOCK values (block_bounds), made on first use
    _bounds: tuple[np.ndarray, np.ndarray] | None = field(default=None, init=False, repr=False, compare=False)
    #: (min, max) of each block of FINE_BLOCK values (fine_bounds), made on first use
    _fine: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, init=False, repr=False, compare=False)

    def block_bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The min and max of each block of :data:`BOUND_BLOCK` values (NaN where a block holds a NaN), or
        None for a series shorter than :data:`BOUNDED_FROM`: what :meth:`CounterSet.lod` reads for the
        samples of a pixel that fill whole blocks, instead of the samples. Zoomed out over a large trace, a
        pixel of a counter is hundreds of samples, and reading all of them was most of a frame (12 counters
        of 350,000 samples at 100M events: ~67 MB of times and values read a frame, 15-45 ms on this
        machine); the bounds are 16 bytes a block (1/4 byte a sample: ~2.3 MB at 100M events). Made once,
        on first use (the values never change)."""
        if self._bounds is None and len(self.value) >= BOUNDED_FROM:
            self._bounds = _block_min_max(np.asarray(self.value, np.float64), BOUND_BLOCK)
        return self._bounds

    def fine_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The min and max of each block of :data:`FINE_BLOCK` values (NaN where a block holds a NaN) and the
        first time of each (``ts[::FINE_BLOCK]``), or None where :meth:`block_bounds` is None or the compiled
        loops are not built (their only reader is the timeline's compiled strip, slice_kernels.counter_strip).
        Zoomed out over a large trace, a pixel's strip with cold caches waited on memory: its edges searched
        in the times (a cache and TLB miss a key) and the values of a pixel of a few hundred samples, fewer
        than the coarse blocks pay off for, read one by one. With these a pixel's edges are found among
        the first times (a small array read forward) and then in one block, and its values come from its
        whole blocks' bounds, a few fine blocks' bounds at its ends and a few values. 3 bytes a sample (~25 MB
        at 100M events); made once, on first use, in one compiled pass and a strided copy."""
        kernels = compiled.slice_kernels
        if self._fine is None and kernels is not None and self.block_bounds() is not None:
            self._fine = (*_block_min_max(np.asarray(self.value, np.float64), FINE_BLOCK), sample_of(self.ts))
        return self._fine

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
            # (searches of the ascending pixel edges galloping from the previous one's position: a binary
            # search each was ~20 cache misses an edge in a long series; side "right" of an integer t is
            # side "left" of t + 1, which the exact case keeps below 2**63)
            carry = search_ascending(ts, np.int64(base) + np.floor(edges[:-1]).astype(np.int64) + 1) - 1
            stop = search_ascending(ts, np.int64(base) + np.ceil(edges[1:]).astype(np.int64))
        else:  # a span past 2**53 ns (a corrupt trace): offsets from the first bucket as floats
            edges = edges - float(first_ns - base)
            rel = (ts - np.int64(first_ns)).astype(np.float64)
            if int(ts[0]) <= first_ns:
                rel[0] = edges[0]
            carry = np.searchsorted(rel, edges[:-1], "right") - 1
            stop = np.searchsorted(rel, edges[1:], "left")
        first = np.maximum(carry, 0)
        runs = _lod_runs(s, a, first, stop)
        if runs is not None:  # (the rest in one compiled pass)
            px, lo, hi, la = runs
            if not len(px):
                return empty
            start = np.int64(base if exact else first_ns) + np.ceil(edges[px]).astype(np.int64)
            start[0] = max(int(start[0]), int(ts[0]))
            return start, lo, hi, la
        valid = stop > first
        vmin, vmax = _bucket_min_max(v, first, stop, s, a)
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


class _Samples(NamedTuple):
    """The numeric arguments of counter events, one row a sample, in record then argument order."""

    ev: np.ndarray  # int32 (int64 past 2**31 events) event row
    arg_name: np.ndarray  # int32 string id of the argument's name
    value: np.ndarray  # float64
    ts: np.ndarray  # int64 ns: its event's time
    cid: np.ndarray  # uint64: its event's counter id (the data word)
    pid: np.ndarray  # uint64: its event's process koid
    name: np.ndarray  # its event's name (string id)


def _samples(cols: FxtColumns, rows: np.ndarray, check) -> tuple[_Samples, int]:
    """The numeric arguments of counter event ``rows`` (ascending) with their events' fields, and the number
    of non-numeric arguments; :data:`ARG_BATCH` records at a time, each record's arguments, time and counter
    id read in one pass (:func:`~fxscope.formats.fxt.arg_columns.numeric_args`), once a record."""
    non_numeric = 0
    rows_type = np.int32 if len(cols.ev_kind) < 1 << 31 else np.int64  # (4 bytes a sample, not 8)
    # the samples' columns, filled batch by batch (one argument a record as a rule: sized for that, grown
    # for more), not concatenated from the batches' parts afterwards (a second copy of every column)
    out: _Samples | None = None
    n = 0
    for a in range(0, max(len(rows), 1), ARG_BATCH):
        r = rows[a : a + ARG_BATCH]
        args = numeric_args(cols, r, check=check, per_row=1.25 if not a else (n + non_numeric) / a)
        non_numeric += args.non_numeric
        at, name, value, ts, cid = args.record, args.name, args.value, args.ts, args.data
        n_num = len(at)
        del args
        ev_name, thread = cols.ev_name[r], cols.ev_thread[r]
        if n_num == len(r) and (not n_num or (int(at[-1]) == n_num - 1 and bool(np.all(at[1:] != at[:-1])))):
            # (one argument a record: the rows' own fields; positions ascend, so distinct ones up to n - 1 are 0..)
            ev = r
        else:  # (each argument its record's fields)
            ev, ts, cid, ev_name, thread = r[at], ts[at], cid[at], ev_name[at], thread[at]
        del at
        part = (ev, name, value, ts, cid, thread_pids(cols, thread), ev_name)
        del ev, name, value, ts, cid, ev_name, thread
        if out is None or n + n_num > len(out.ev):  # (the rows left at the arguments a row seen so far)
            done = a + len(r)
            capacity = n + n_num + -(-(len(rows) - done) * (n + n_num) // max(done, 1)) + ARG_BATCH
            capacity = max(capacity, len(rows)) if out is None else capacity
            types = (rows_type, np.int32, np.float64, np.int64, np.uint64, np.uint64, part[6].dtype)
            grown = _Samples(*(np.empty(capacity, t) for t in types))
            for column in grown:  # (the rows' samples at least: one a row as a rule, written batch by batch)
                populate(column[n : max(n, min(capacity, len(rows)))])
            if out is not None:
                for old, new in zip(out, grown, strict=True):
                    new[:n] = old[:n]
            out = grown
        for column, values in zip(out, part, strict=True):
            column[n : n + n_num] = values
        n += n_num
        del part
    assert out is not None
    return _Samples(*(c[:n] for c in out)), non_numeric  # (temporaries: views, not trimmed copies)


#: series told apart by the counting sort of :func:`_series_order`, at most (a 16-bit key: numpy's radix sort)
MAX_SERIES = 1 << 16
#: (process, name, counter id, argument) combinations a dense key counts, at most (one count a combination)
MAX_COMBINATIONS = 1 << 22


def _dense_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(rank of each value among the distinct ones, ascending: int32; the distinct values) by one count
    over the values' range, or None when that range is too large to count (over :data:`MAX_COMBINATIONS`)."""
    if not len(values):
        return np.zeros(0, np.int32), values[:0]
    lo, hi = values.min(), values.max()
    if int(hi) - int(lo) >= MAX_COMBINATIONS:
        return None
    off = offset_int64(values, int(lo))
    present = np.bincount(off, minlength=int(hi) - int(lo) + 1) > 0
    rank = np.cumsum(present, dtype=np.int32) - 1  # (int32: the ranks, and the series keys made of them, fit)
    # (in the values' type: a koid or counter id past 2**63 overflowed int64 as a Python int added to the rows)
    distinct = np.flatnonzero(present).astype(values.dtype) + lo
    return rank[off], distinct


def _series_order(s: _Samples) -> tuple[np.ndarray, list[tuple[int, int, int, int]], np.ndarray] | None:
    """The samples' order by (process, name, counter id, argument, time), ties in sample order (the order
    ``np.lexsort((ev, ts, arg_name, cid, name, pid))`` gives: the samples come in event-row order), each
    series' (pid, name, cid, arg_name) and where each starts in that order; found without a comparison sort
    when the series are few: each sample's series numbered by the dense ranks of its four fields (the
    series numbered in their order), a radix sort of those numbers (sample order within a series), and a
    sort by time of only the series whose samples are not in time order already. None when the fields'
    ranges or the series are too many for that (:func:`lexsort` of every key then)."""
    key = None
    fields = []
    n_combinations = 1
    for column in (s.pid, s.name, s.cid, s.arg_name):
        ranked = _dense_ranks(column)
        if ranked is None:
            return None
        rank, distinct = ranked
        n_combinations *= len(distinct)
        if n_combinations > MAX_COMBINATIONS:
            return None
        if key is None:
            key = rank
        else:
            key *= len(distinct)
            key += rank
        fields.append(distinct)
        del rank
    assert key is not None
    counts = np.bincount(key, minlength=n_combinations)
    present = np.flatnonzero(counts)
    if len(present) > MAX_SERIES:
        return None
    series_of = np.zeros(n_combinations, np.uint16)
    series_of[present] = np.arange(len(present), dtype=np.uint16)
    sid = series_of[key]
    del key, series_of
    order = np.argsort(sid, kind="stable")  # (16-bit keys: a radix sort)
    starts = np.zeros(len(present) + 1, np.int64)
    np.cumsum(counts[present], out=starts[1:])
    del sid, counts
    ts = s.ts[order]
    descents = np.flatnonzero(ts[1:] < ts[:-1]) + 1  # (the first sample of a series may be below the last of
    if len(descents):  # the one before it: only the descents inside a series count)
        series = np.unique(np.searchsorted(starts, descents, "right") - 1)
        for k in series.tolist():
            a, b = int(starts[k]), int(starts[k + 1])
            run = ts[a:b]
            if np.any(run[1:] < run[:-1]):
                order[a:b] = order[a:b][np.argsort(run, kind="stable")]
    del ts
    names = []  # (pid, name, cid, arg_name) of each series, from its dense number
    radices = [len(d) for d in fields]
    for number in present.tolist():
        digits = []
        for radix in reversed(radices):
            number, digit = divmod(number, radix)
            digits.append(digit)
        digits.reverse()
        names.append(tuple(int(d[i]) for d, i in zip(fields, digits, strict=True)))
    return order, names, starts


def build_counters(cols: FxtColumns, check=None) -> CounterSet:
    """Every counter series of ``cols`` (see the module docstring). ``check()``, when given, is called
    between the passes (a Cancel raises from it)."""
    check = check or (lambda: None)
    rows = kind_rows(cols.ev_kind, EventKind.COUNTER, EventKind.COUNTER)  # (int32, a block at a time)
    samples, non_numeric = _samples(cols, rows, check)
    del rows
    check()
    n = len(samples.ev)
    if n == 0:
        return CounterSet([], non_numeric)
    grouped = _series_compiled(samples)
    ev, value, ts, keys, starts = grouped if grouped is not None else _series_numpy(samples)
    del samples, grouped
    check()
    strings = cols.strings

    def text(i: int) -> str:
        return strings[i] if 0 <= i < len(strings) else "<unresolved>"

    bounds = starts.tolist()
    series = [
        CounterSeries(
            pid=int(pid), name=text(int(name)), counter_id=int(cid), arg_name=text(int(arg)),
            ts=ts[a:b], value=value[a:b], event=ev[a:b].astype(np.int32, copy=False),
        )
        for (pid, name, cid, arg), a, b in zip(keys, bounds[:-1], bounds[1:], strict=True)
    ]
    series.sort(key=lambda c: (c.pid, c.name, c.counter_id, c.arg_name))
    return CounterSet(series, non_numeric)


def _series_numpy(samples: _Samples) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, np.ndarray]:
    """The samples' events, values and times in series order (series by their keys, each by time, ties in
    sample order), the series' keys (pid, name, cid, arg_name) and where each starts: by the counting sort
    of :func:`_series_order`, or a lexsort of every key (fields of wide ranges, very many series)."""
    counted = _series_order(samples)
    if counted is not None:
        order, keys, starts = counted
    else:
        order = lexsort((samples.ev, samples.ts, samples.arg_name, samples.cid, samples.name, samples.pid))
        firsts = _key_starts([c[order] for c in (samples.pid, samples.name, samples.cid, samples.arg_name)])
        first_rows = order[firsts]
        keys = list(zip(*(c[first_rows].tolist() for c in (samples.pid, samples.name, samples.cid,
                                                          samples.arg_name)), strict=True))  # fmt: skip
        starts = np.r_[firsts, len(order)]
    return samples.ev[order], samples.value[order], samples.ts[order], keys, starts


def _series_compiled(samples: _Samples) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, np.ndarray] | None:
    """:func:`_series_numpy` by the compiled loop (summary_kernels.counter_series: the series found by
    hashing their keys in one pass, the samples written in series order by a counting sort, a series out of
    time order sorted; numpy's dense ranks of the four keys, radix sort and gathers by the order were ~15
    passes over the samples, each a temporary of their length: at 100M events every one of them past
    glibc's mapping threshold, faulted in afresh), or None when it is not built, the columns are not as it
    takes them, or the series are more than :data:`MAX_SERIES`."""
    kernels = compiled.summary_kernels
    s = samples
    if kernels is None or not (
        compiled.plain(s.pid, np.uint64) and compiled.plain(s.cid, np.uint64) and compiled.plain(s.ev, np.int32)
        and compiled.plain(s.arg_name, np.int32) and compiled.plain(s.ts, np.int64)
        and compiled.plain(s.value, np.float64) and compiled.plain(s.name, np.int8, np.int16, np.int32, np.int64)
    ):  # fmt: skip
        return None
    n = len(s.ev)
    ev, value, ts = array_to_fill(n, np.int32), array_to_fill(n, np.float64), array_to_fill(n, np.int64)
    key_pid, key_name = np.empty(MAX_SERIES, np.uint64), np.empty(MAX_SERIES, np.int64)
    key_cid, key_arg = np.empty(MAX_SERIES, np.uint64), np.empty(MAX_SERIES, np.int64)
    starts = np.empty(MAX_SERIES + 1, np.int64)
    k = kernels.counter_series(s.pid, s.name, s.name.dtype.itemsize, s.cid, s.arg_name, s.ts, s.ev, s.value, ev,
                               value, ts, key_pid, key_name, key_cid, key_arg, starts)  # fmt: skip
    if k < 0:
        return None
    keys = list(zip(*(c[:k].tolist() for c in (key_pid, key_name, key_cid, key_arg)), strict=True))
    return ev, value, ts, keys, starts[: k + 1]


def _key_starts(sorted_keys: list[np.ndarray]) -> np.ndarray:
    """Where a new combination of the (sorted) key columns starts."""
    new = np.zeros(len(sorted_keys[0]) - 1, bool)
    for k in sorted_keys:
        new |= k[1:] != k[:-1]
    return np.flatnonzero(np.r_[True, new])


def _lod_runs(series: CounterSeries, a: int, first: np.ndarray, stop: np.ndarray):
    """(bucket indices, min, max, last) of the entries :meth:`CounterSet.lod` keeps, by the compiled loop
    (slice_kernels.lod_runs: the buckets' min and max from the series' block bounds, the last values and the
    runs of equal entries in one pass), or None without it (the numpy path, the tests' reference).
    ``first``, ``stop``: each bucket's samples, indices into ``series.value[a:]``."""
    kernels = compiled.slice_kernels
    if kernels is None or not compiled.plain(series.value, np.float64):
        return None
    bounds = series.block_bounds()
    block, (bmin, bmax) = (BOUND_BLOCK, bounds) if bounds is not None else (0, (np.zeros(0), np.zeros(0)))
    n = len(first)
    idx, lo, hi, la = np.empty(n, np.int64), np.empty(n), np.empty(n), np.empty(n)
    m = kernels.lod_runs(series.value, a, block, bmin, bmax, np.ascontiguousarray(first, np.int64),
                         np.ascontiguousarray(stop, np.int64), idx, lo, hi, la)  # fmt: skip
    return idx[:m], lo[:m], hi[:m], la[:m]


def _bucket_min_max(v: np.ndarray, first: np.ndarray, stop: np.ndarray, series: CounterSeries | None = None,
                    offset: int = 0) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The min and max of ``v[first[k]:stop[k]]`` for each bucket k (``stop`` non-decreasing, at most
    ``len(v)``; a bucket with ``stop <= first`` gets any value: the caller drops it). ``v`` is
    ``series.value[offset:]`` when ``series`` is given: the compiled loop then reads whole blocks from its
    :meth:`~CounterSeries.block_bounds` (slice_kernels.range_min_max_blocks: the same results).

    One reduceat over (first, stop) pairs: the even results reduce first[k]:stop[k] (the odd ones, the gaps
    between buckets, are dropped). ``stop == len(v)`` is no valid index: the first bucket j that runs to the
    last sample is the reduceat's last index (which reduces to the end), and the buckets after it hold the
    last sample alone (all samples are before their start). No copy of the samples (a padded copy was
    ~0.3 ms a frame per counter zoomed out at 100M events)."""
    n_px, n = len(first), len(v)
    kernels = compiled.slice_kernels
    if kernels is not None and compiled.plain(v, np.float64):  # both in one pass over the samples
        vmin, vmax = np.empty(n_px), np.empty(n_px)
        bounds = series.block_bounds() if series is not None and compiled.plain(series.value, np.float64) else None
        if bounds is not None:
            kernels.range_min_max_blocks(series.value, offset, BOUND_BLOCK, bounds[0], bounds[1],
                                         np.ascontiguousarray(first, np.int64), np.ascontiguousarray(stop, np.int64),
                                         vmin, vmax)  # fmt: skip
            return vmin, vmax
        kernels.range_min_max(v, np.ascontiguousarray(first, np.int64), np.ascontiguousarray(stop, np.int64),
                              vmin, vmax)  # fmt: skip
        return vmin, vmax
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
