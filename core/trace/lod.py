"""Level-of-detail pyramid for slice tracks: what one frame draws, found without touching every slice.

Without it a zoomed-out frame visits every slice in the window (millions at 10M events) to merge the
sub-pixel ones. Like Perfetto's per-depth summaries and Tracy's folding, the merging is done once, ahead of
time, at a few resolutions: level ``e`` groups the slices of each (thread, depth) lane by the 2**e ns bucket
their start falls in and keeps, per bucket, the longest slice and the number of slices. A frame at
``ns_per_px`` reads the level with the largest bucket not wider than a pixel, so it touches about one entry
per pixel per lane, whatever the zoom.

A bucket's longest slice can reach far beyond its bucket; slices longer than ``LONG_BUCKETS`` buckets are
kept out of the summary in a per-lane list (sorted by start, with the running maximum of their ends), so
that a window finds the summary entries it needs by searching from ``LONG_BUCKETS`` buckets before its start
and the long slices by the end-max search the direct query uses. On one lane, slices do not overlap, so a
slice at least a bucket long is always its bucket's longest: every slice a pixel or wider is drawn as itself.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field

import numpy as np

from fxscope.core.reserved_arrays import reserved_array
from fxscope.core.trace import compiled
from fxscope.core.trace.gathered import Difference
from fxscope.core.trace.segments import segmented_running_max
from fxscope.core.trace.sorting import lexsort

_U64 = (1 << 64) - 1
#: slices this many buckets long or longer are kept apart from the bucket summaries (see module docstring)
LONG_BUCKETS = 64
#: finest level: 2**16 buckets across the whole trace; levels step by a factor of 4 up to the trace span
FINEST_BUCKETS_LOG2 = 16
LEVEL_STEP = 2


@dataclass
class Level:
    shift: int  # bucket = 2**shift ns
    bucket: np.ndarray  # int32 bucket index from the origin (entries sorted by lane, then bucket)
    row: np.ndarray  # int32 slice row of the bucket's longest slice
    count: np.ndarray  # uint16 or int32 (16 bits when the level's counts fit): slices starting in the bucket
    lane_ptr: np.ndarray  # int64: entries of lane k are lane_ptr[k]:lane_ptr[k + 1]
    long_rows: dict[int, np.ndarray]  # lane -> long slice rows sorted by start
    long_end_max: dict[int, np.ndarray]  # lane -> running max of their ends
    #: lane -> the starts of its long slices, read on the lane's first query (a frame searched them by
    #: gathering every long slice's start of the lane: async spans are mostly long, thousands a lane)
    long_start: dict[int, np.ndarray] = field(default_factory=dict)
    #: a coarse level's box of each entry (int64 start, end pairs; see :data:`BOXED_FRACTION_LOG2`) and its
    #: count (int32, 1 for a box that is its slice): what a query draws, read in one contiguous run instead of
    #: each entry's slice's start and duration (a cache miss or two an entry in big columns: at 100M events
    #: most of a zoomed-out frame's query), or None (the finer levels: the boxes are computed per query)
    box: np.ndarray | None = None
    box_count: np.ndarray | None = None


@dataclass
class _Summary:
    """One level's bucket summaries before they become a :class:`Level`, by position in the lane-sorted
    slices: per entry its lane, bucket, number of slices, longest duration, and the position of its first
    slice of that duration (entries sorted by lane, then bucket)."""

    lane: np.ndarray
    bucket: np.ndarray  # int64
    count: np.ndarray  # int64
    longest: np.ndarray  # int64 ns
    pick: np.ndarray  # int64 position

    @classmethod
    def of_slices(cls, pos: np.ndarray, lane_o: np.ndarray, dur_o: np.ndarray) -> _Summary:
        """Each slice at positions ``pos`` (ascending) on its own (its bucket set by :meth:`grouped`)."""
        return cls(lane_o[pos], pos, np.ones(len(pos), np.int64), dur_o[pos], pos)

    def merged(self, other: _Summary) -> _Summary:
        """Both sets of entries, by position (both are by position already: a linear merge)."""
        if not len(other.pick):
            return self
        parts = list(zip(self._columns(), other._columns(), strict=True))
        order = np.argsort(np.concatenate(parts[-1]), kind="stable")
        return _Summary(*(np.concatenate(p)[order] for p in parts))

    def grouped(self, rel: np.ndarray, shift: int) -> _Summary:
        """Entries of equal (lane, 2**shift ns bucket) that follow each other merged into one: counts
        added, the longest kept, and of the entries holding it the first one's slice."""
        n = len(self.pick)
        if n == 0:
            z = np.zeros(0, np.int64)
            return _Summary(self.lane, z, z, z, z)
        b = (rel[self.pick] >> np.uint64(shift)).astype(np.int64)
        ln = self.lane
        starts = np.flatnonzero(np.r_[True, (b[1:] != b[:-1]) | (ln[1:] != ln[:-1])])
        longest = np.maximum.reduceat(self.longest, starts)
        at_longest = self.longest == np.repeat(longest, np.diff(np.r_[starts, n]))
        pick = np.minimum.reduceat(np.where(at_longest, self.pick, np.iinfo(np.int64).max), starts)
        return _Summary(ln[starts], b[starts], np.add.reduceat(self.count, starts), longest, pick)

    def _columns(self) -> tuple[np.ndarray, ...]:
        return self.lane, self.bucket, self.count, self.longest, self.pick


#: the levels with at most 1/2**this entries per slice keep their boxes (:attr:`Level.box`, 20 bytes an entry:
#: the levels have ~4x fewer entries each, so all of them together at most ~1.7 bytes a slice); the finer
#: levels are read for small windows, a few entries a lane, where the gathers cost little
BOXED_FRACTION_LOG2 = 4

#: slices summarised together, at most (whole lanes; one lane may be more): the build's temporaries, ~100
#: bytes a slice, then stay a few tens of MB whatever the trace's size instead of a multiple of its slices
BATCH_SLICES = 1 << 19


class SlicePyramid:
    """Bucket summaries of all slice lanes at every level (built once, vectorized over all slices).

    A level's buckets are unions of four of the finer level's, so a coarser level is built from the finer
    level's entries (fewer by about 4x each level) plus the slices that were long there and are short here,
    instead of from every slice again; that takes a lane's buckets ascending with its rows, which they are
    unless a start precedes the origin (then every level is summarized from the slices).
    Lanes are independent: they are summarised in batches of whole lanes (:data:`BATCH_SLICES`), whose
    entries, each batch by lane, concatenate into the levels.
    """

    def __init__(
        self, ts: np.ndarray, dur: np.ndarray, lane: np.ndarray, n_lanes: int, origin: int, span: int, check=None,
        order: np.ndarray | None = None,
    ):  # fmt: skip
        """``check()``, when given, is called between levels (a Cancel raises from it). ``order``: the rows
        sorted by (lane, start), ties in row order, when the caller has them (else they are sorted here)."""
        check = check or (lambda: None)
        self.origin = origin
        self.ts, self.dur = ts, dur
        finest = max(0, int(np.log2(max(span, 1))) - FINEST_BUCKETS_LOG2)
        coarsest = max(finest, int(np.log2(max(span, 1))) + 1)
        self.levels: list[Level] = []
        if not len(ts):
            return
        if order is None:
            order = lexsort((ts, lane))  # lanes, then start: buckets of a lane are non-decreasing in it
        shifts = list(range(finest, coarsest + 1, LEVEL_STEP))
        if _takes_compiled(ts, dur, lane, order):
            try:
                self.levels = _compiled_levels(order, ts, dur, lane, n_lanes, origin, shifts, check)
                self._store_boxes(check)
                return
            except ValueError:  # lanes out of range or not ascending in ``order``: the numpy path's results
                pass
        parts: list[list[_LanesLevel]] = [[] for _ in shifts]
        lane_end = np.cumsum(np.bincount(lane, minlength=n_lanes))
        targets = np.arange(BATCH_SLICES, len(order), BATCH_SLICES)
        cuts = np.unique(np.r_[0, lane_end[np.searchsorted(lane_end, targets)], len(order)]).tolist()
        for a, b in itertools.pairwise(cuts):
            rows = order[a:b].astype(np.int64)
            for i, part in enumerate(_lane_levels(rows, lane[rows], ts[rows], dur[rows], origin, shifts, check)):
                parts[i].append(part)
        self.levels = [_level(shift, p, n_lanes) for shift, p in zip(shifts, parts, strict=True)]
        self._store_boxes(check)

    def _store_boxes(self, check) -> None:
        """The boxes of the coarse levels (:attr:`Level.box`), computed as a query computes them."""
        for level in self.levels:
            # (not a level of buckets past 2**62 ns: a corrupt trace's span past int64; the numpy path's)
            if len(level.bucket) and len(level.bucket) <= len(self.ts) >> BOXED_FRACTION_LOG2 and level.shift <= 62:
                check()
                _, count, start, end = self._boxes(level, slice(None))
                level.box = np.stack([start, end], axis=1)
                level.box_count = count.astype(np.int32)

    def level_for(self, ns_per_px: float) -> Level | None:
        """The coarsest level whose buckets are not wider than a pixel (None: zoomed in past the finest)."""
        best = None
        for level in self.levels:
            if (1 << level.shift) <= ns_per_px:
                best = level
        return best

    def query(self, level: Level, lane: int, t0: int, t1: int) -> tuple[np.ndarray, ...]:
        """(rows, count, start, end) of the boxes of ``lane`` overlapping [t0, t1) at ``level``."""
        rows, _, count, start, end = self.query_lanes(level, lane, 1, t0, t1)
        return rows, count, start, end

    def query_lanes(self, level: Level, first: int, n: int, t0: int, t1: int) -> tuple[np.ndarray, ...]:
        """(rows, lane, count, start, end) of the boxes of lanes ``first .. first + n - 1`` (a thread's depths,
        a process's async lanes) overlapping [t0, t1) at ``level``, lane by lane (``lane`` from 0).

        The lanes' entries are found by a binary search each, then read, merged and filtered in one pass
        over all of them: a track costs one set of array operations, not one per depth (a zoom builds a
        picture of every track in view, and their per-call overhead was most of the query's time)."""
        limit = (1 << 31) - 1  # the int32 bucket column's range (a window may reach far past the trace)
        # searched as int32: a Python int against the int32 column makes numpy convert the whole lane to
        # int64 first (~100x the search: it was most of a zoomed-out frame's query time)
        lo_key = np.int32(min(max(((t0 - self.origin) >> level.shift) - LONG_BUCKETS, -limit), limit))
        hi_key = np.int32(min(max((t1 - self.origin) >> level.shift, -limit), limit))
        entries = self._entries_compiled(level, first, n, t0, t1, lo_key, hi_key)
        if entries is None:
            entries = self._entries(level, first, n, t0, t1, lo_key, hi_key)
        parts = [entries]
        for k in range(n):
            long = level.long_rows.get(first + k)
            if long is None:
                continue
            starts = level.long_start.get(first + k)
            if starts is None:
                starts = level.long_start[first + k] = np.asarray(self.ts[long], np.int64)
            la = int(np.searchsorted(level.long_end_max[first + k], t0, side="right"))
            lb = int(np.searchsorted(starts, t1, side="left"))
            if lb > la:
                lr, st = long[la:lb], starts[la:lb]
                en = st + self.dur[lr]
                keep = en > t0
                parts.append((lr[keep], np.full(int(keep.sum()), k, np.int64), np.ones(int(keep.sum()), np.int64),
                              st[keep], en[keep]))  # fmt: skip
        if len(parts) == 1:
            return parts[0]
        out = tuple(np.concatenate([p[c] for p in parts]) for c in range(5))
        if n == 1:
            return out
        order = np.argsort(out[1], kind="stable")  # lane by lane, each lane's long slices after its entries
        return tuple(c[order] for c in out)


    def _entries(self, level: Level, first: int, n: int, t0: int, t1: int, lo_key, hi_key) -> tuple[np.ndarray, ...]:
        """The bucket entries' boxes of :meth:`query_lanes` (not the long slices), by numpy calls."""
        ptr = level.lane_ptr[first : first + n + 1].tolist()
        spans = []
        for k in range(n):
            p0, p1 = ptr[k], ptr[k + 1]
            keys = level.bucket[p0:p1]
            spans.append((p0 + int(np.searchsorted(keys, lo_key, side="left")),
                          p0 + int(np.searchsorted(keys, hi_key, side="right"))))  # fmt: skip
        if n == 1:
            a, b = spans[0]
            idx = slice(a, b)
            lane = np.zeros(max(b - a, 0), np.int64)
        elif all(span == (ptr[k], ptr[k + 1]) for k, span in enumerate(spans)):
            # every entry of the lanes (a window over the whole trace: the full view): one run of them
            idx = slice(ptr[0], ptr[n])
            lane = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
        else:
            lens = np.array([max(b - a, 0) for a, b in spans], np.int64)
            starts = np.array([a for a, _ in spans], np.int64)
            lane = np.repeat(np.arange(n, dtype=np.int64), lens)
            # entry positions lane by lane: each lane's run from its start
            idx = np.arange(len(lane), dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
        rows, count, start, end = self._boxes(level, idx)
        keep = (end > t0) & (start < t1)
        return rows[keep], lane[keep], count[keep], start[keep], end[keep]

    def _boxes(self, level: Level, idx) -> tuple[np.ndarray, ...]:
        """(rows, count, start, end) of the boxes of ``level``'s entries ``idx``, by numpy calls."""
        size = 1 << level.shift
        rows = level.row[idx].astype(np.int64)
        count = level.count[idx].astype(np.int64)
        s_ts, s_dur = self.ts[rows], self.dur[rows]  # (each gathered once: random reads of big columns)
        s_end = s_ts + s_dur
        # a lone slice, or one at least a bucket long, is drawn as itself; else a merged box over the bucket
        real = (count == 1) | (s_dur >= size)
        b_start = (np.uint64(self.origin & _U64) + (level.bucket[idx].astype(np.uint64) << np.uint64(level.shift))).view(np.int64)
        start = np.where(real, s_ts, b_start)
        end = np.where(real, s_end, np.maximum(b_start + size, s_end))
        return rows, np.where(real, 1, count), start, end

    def _entries_compiled(self, level: Level, first: int, n: int, t0: int, t1: int, lo_key,
                          hi_key) -> tuple[np.ndarray, ...] | None:  # fmt: skip
        """:meth:`_entries` by the compiled loop (slice_kernels.pyramid_query: the lanes' searches, the
        gathers of the entries' slices and the boxes in one pass; ~25 numpy calls a track and a zoom step
        otherwise), or None when it is not built or does not take these columns (the numpy path then)."""
        kernels = compiled.slice_kernels
        if kernels is None:
            return None
        ptr = level.lane_ptr[first : first + n + 1]
        if level.box is not None:  # the level's stored boxes: read in one run (no gathers of the slices)
            query = kernels.pyramid_query_boxes
            args = (level.bucket, level.row, level.box, level.box_count, ptr, len(self.ts), int(lo_key), int(hi_key),
                    t0, t1)  # fmt: skip
        else:
            columns = self.query_columns()
            if columns is None or level.shift > 62:
                return None
            ts, dur_a, dur_b = columns
            query = kernels.pyramid_query
            args = (level.bucket, level.row, level.count, level.count.dtype == np.int32, ptr, ts, dur_a, dur_b,
                    self.origin & _U64, level.shift, int(lo_key), int(hi_key), t0, t1)  # fmt: skip
        try:
            read = query(*args, None)
            out = np.empty((5, read), np.int64)
            m = query(*args, out)
        except (ValueError, BufferError):  # a row or lane pointer out of range (a corrupt trace), a column
            # that is not one contiguous buffer: the numpy path decides
            return None
        return out[0, :m], out[1, :m], out[2, :m], out[3, :m], out[4, :m]

    def query_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
        """(starts, durations or ends, None or starts) as the compiled queries take them (int64, plain), or
        None (then the numpy path); decided once per pyramid."""
        cached = getattr(self, "_columns", False)
        if cached is False:
            dur = self.dur
            durs = (dur.minuend, dur.subtrahend) if isinstance(dur, Difference) else (dur, None)
            ok = compiled.plain(self.ts, np.int64) and all(d is None or compiled.plain(d, np.int64) for d in durs)
            cached = self._columns = (self.ts, *durs) if ok else None
        return cached


def merged_per_pixel(columns, by_depth: list[np.ndarray], spans: list[tuple[int, int]], t0: int,
                     bucket: float) -> tuple[np.ndarray, ...] | None:  # fmt: skip
    """A thread's slices in a window zoomed in past the pyramid's finest level, merged per ``bucket`` ns from
    ``t0`` (core/trace/model.py ``TraceModel.visible``: the same boxes as its numpy loop, in its order) by the
    compiled loop (slice_kernels.pixel_buckets: one pass a depth, where the numpy loop makes ~20 passes over
    every slice of the window, tens of thousands a depth on a large trace's thread). ``columns``: the
    pyramid's :meth:`SlicePyramid.query_columns`; ``spans``: per depth, the positions of ``by_depth``'s rows
    in the window. (rows, depth, count, start, end), or None when the loop is not built or refuses the
    columns (then the numpy loop)."""
    kernels = compiled.slice_kernels
    if kernels is None or columns is None:
        return None
    ts, dur_a, dur_b = columns
    out = np.empty((5, sum(max(b - a, 0) for a, b in spans)), np.int64)
    m, dtypes = 0, set()
    try:
        for d, (rows, (a, b)) in enumerate(zip(by_depth, spans, strict=True)):
            if b > a:
                part = rows[a:b]
                if not compiled.plain(part, np.int32, np.int64):
                    return None
                dtypes.add(part.dtype)
                m = kernels.pixel_buckets(part, part.dtype == np.int64, ts, dur_a, dur_b, t0, bucket, d, out, m)
    except (ValueError, BufferError, OverflowError):  # a corrupt trace's row or time past the columns or int64
        return None
    if not m:
        z = np.zeros(0, np.int64)
        return z, np.zeros(0, np.uint16), z, z, z
    # (copies: the picture keeps them, not the buffer sized for every slice of the window)
    rows_dtype = np.result_type(*dtypes)
    return out[0, :m].astype(rows_dtype), out[1, :m].astype(np.uint16), *(out[c, :m].copy() for c in (2, 3, 4))


@dataclass
class _LanesLevel:
    """One level's entries of a batch of lanes (by lane, then bucket), and its long slices per lane."""

    lane: np.ndarray  # int32
    bucket: np.ndarray  # int32
    row: np.ndarray  # int32
    count: np.ndarray  # uint16 or int32
    long_rows: dict[int, np.ndarray]
    long_end_max: dict[int, np.ndarray]


def _lane_levels(rows, lane_o, ts_o, dur_o, origin: int, shifts: list[int], check):
    """The :class:`_LanesLevel` of each level (``shifts``) for the slices ``rows``, sorted by (lane, start),
    whose lanes, starts and durations are ``lane_o``, ``ts_o``, ``dur_o``."""
    # time since the origin, modulo 2**64 on uint64: exact even when a corrupt trace's span passes int64
    rel = ts_o.view(np.uint64) - np.uint64(origin & _U64)
    nested = not np.any((rel[1:] < rel[:-1]) & (lane_o[1:] == lane_o[:-1]))
    finer: _Summary | None = None
    finer_long = np.zeros(0, np.int64)
    for shift in shifts:
        check()
        is_long = dur_o >= (LONG_BUCKETS << shift)
        long = np.flatnonzero(is_long)
        if finer is None or not nested:
            entries = _Summary.of_slices(np.flatnonzero(~is_long), lane_o, dur_o)
        else:
            now_short = finer_long[~is_long[finer_long]]
            entries = finer.merged(_Summary.of_slices(now_short, lane_o, dur_o))
        del is_long
        finer, finer_long = entries.grouped(rel, shift), long
        yield _lanes_level(finer, rows, long, lane_o, ts_o, dur_o)


def _lanes_level(summary: _Summary, rows, long, lane_o, ts_o, dur_o) -> _LanesLevel:
    """The :class:`_LanesLevel` of a summary; ``long``: positions of the slices kept apart at this level."""
    long_rows, long_end_max = _long_lists(long, lane_o, ts_o, dur_o)
    long_rows = {key: rows[positions] for key, positions in long_rows.items()}
    # rows fit 31 bits and buckets too (the finest level has 2**16 buckets across the trace): 12 bytes an
    # entry instead of 24 (each entry's lane is implied by the level's lane_ptr: not stored); the counts
    # of a batch's entries 16 bits when they fit (the fine levels, most entries: 10 bytes an entry)
    count = summary.count
    count = count.astype(np.uint16 if not len(count) or int(count.max()) < 1 << 16 else np.int32)
    return _LanesLevel(summary.lane.astype(np.int32), summary.bucket.astype(np.int32),
                       rows[summary.pick].astype(np.int32), count, long_rows, long_end_max)  # fmt: skip


def _level(shift: int, parts: list[_LanesLevel], n_lanes: int) -> Level:
    """The :class:`Level` of the batches' entries (batches in lane order)."""
    lanes = parts[0].lane if len(parts) == 1 else np.concatenate([p.lane for p in parts])
    lane_ptr = np.searchsorted(lanes, np.arange(n_lanes + 1), side="left")
    del lanes
    long_rows: dict[int, np.ndarray] = {}
    long_end_max: dict[int, np.ndarray] = {}
    for p in parts:
        long_rows.update(p.long_rows)
        long_end_max.update(p.long_end_max)

    def cat(name: str) -> np.ndarray:
        return getattr(parts[0], name) if len(parts) == 1 else np.concatenate([getattr(p, name) for p in parts])

    return Level(shift, cat("bucket"), cat("row"), cat("count"), lane_ptr, long_rows, long_end_max)


#: slices summarised by one call of the compiled loops, about (whole lanes; ``check()`` between calls)
COMPILED_CHUNK = 1 << 21
#: the compiled loops' state per level (slice_kernels.c's pyramid_pass): entries, long slices, largest
#: count, next lane of lane_ptr; the offsets of the level's entries, of its counts, count width, long slices
_STATE = 8


def _takes_compiled(ts, dur, lane, order) -> bool:
    """Whether the compiled loops take these columns (int64 starts and durations, or a
    :class:`~fxscope.core.trace.gathered.Difference` of int64 columns, int32 lanes, int32/int64 order)."""
    if compiled.slice_kernels is None or len(ts) >= 1 << 31:
        return False
    durs = (dur.minuend, dur.subtrahend) if isinstance(dur, Difference) else (dur,)
    return (compiled.plain(ts, np.int64) and all(compiled.plain(d, np.int64) for d in durs)
            and compiled.plain(lane, np.int32) and compiled.plain(order, np.int32, np.int64))  # fmt: skip


def _compiled_levels(order, ts, dur, lane, n_lanes: int, origin: int, shifts: list[int], check) -> list[Level]:
    """Every level by the compiled loops in one pass over the slices in lane order, filling each level's
    columns in arrays sized for the most a level can hold (:func:`_filled_at_bounds`); where such arrays
    cannot be had, a first pass counts each level's entries, long slices and largest count and a second
    fills the levels' columns allocated at their exact sizes. The same levels as the numpy path's
    (:func:`_lane_levels`: grouping the short slices of each run of equal (lane, bucket) directly gives what
    it builds from the finer level's entries)."""
    kernels = compiled.slice_kernels
    assert kernels is not None
    dur_a, dur_b = (dur.minuend, dur.subtrahend) if isinstance(dur, Difference) else (dur, None)
    n_levels = len(shifts)
    shift_a = np.array(shifts, np.int64)
    wide = order.dtype == np.int64
    cuts = _lane_cuts(order, lane, COMPILED_CHUNK)
    args = (order, wide, ts, dur_a, dur_b, lane, n_lanes, origin & _U64, shift_a)
    filled = _filled_at_bounds(kernels, args, cuts, len(order), n_levels, n_lanes, check)
    filled_at_bounds = filled is not None
    if filled is None:
        filled = _filled_counted(kernels, args, cuts, n_levels, n_lanes, check)
    state, bucket, row, count16, count32, longpos, lane_ptr = filled
    levels = []
    for k, shift in enumerate(shifts):
        n, n_long = int(state[k, 0]), int(state[k, 1])
        lane_ptr[k, state[k, 3] :] = n
        e0, c0, l0 = int(state[k, 4]), int(state[k, 5]), int(state[k, 7])
        count = count32[c0 : c0 + n] if state[k, 6] else count16[c0 : c0 + n]
        if filled_at_bounds:  # (copies: the counts' reserved mapping, 32 bits a count, is let go of)
            count = count.astype(np.uint16 if state[k, 2] < 1 << 16 else np.int32)
        pos = longpos[l0 : l0 + n_long]
        long_rows, long_end_max = _long_lists(order[pos].astype(np.int64), lane, ts, dur)
        levels.append(Level(shift, bucket[e0 : e0 + n], row[e0 : e0 + n], count, lane_ptr[k], long_rows, long_end_max))
    return levels


def _filled_at_bounds(kernels, args, cuts: list[int], n: int, n_levels: int, n_lanes: int, check) -> tuple | None:
    """(state, bucket, row, count16, count32, longpos, lane_ptr) of one pyramid pass that fills every level
    at once (slice_kernels.pyramid with its outputs), each level's entries, counts (32 bits wide, the
    caller narrows those that fit 16) and long slices in a region of ``n`` (the slices: a level holds at
    most one entry and one long slice a slice) of arrays on reserved mappings
    (:func:`~fxscope.core.reserved_arrays.reserved_array`: the pages of a region's unwritten part are never
    resident), or None when those cannot be mapped (then the caller counts first). Why: the counting pass
    read every slice's lane, start and duration once more, as long as the filling (a quarter of the
    pyramid's build at 10M events)."""
    cap = max(n, 1)
    arrays = [reserved_array(n_levels * cap, t) for t in (np.int32, np.int32, np.int32, np.int64)]
    if any(a is None for a in arrays):
        return None
    bucket, row, count32, longpos = arrays
    state = np.zeros((n_levels, _STATE), np.int64)
    state[:, 4] = state[:, 5] = state[:, 7] = np.arange(n_levels, dtype=np.int64) * cap  # (each level's region)
    state[:, 6] = 1  # (every level's counts 32 bits wide)
    count16 = np.empty(0, np.uint16)
    lane_ptr = np.empty((n_levels, n_lanes + 1), np.int64)
    for a, b in itertools.pairwise(cuts):
        check()
        kernels.pyramid(*args, a, b, state, bucket, row, count16, count32, longpos, lane_ptr)
    return state, bucket, row, count16, count32, longpos, lane_ptr


def _filled_counted(kernels, args, cuts: list[int], n_levels: int, n_lanes: int, check) -> tuple:
    """:func:`_filled_at_bounds`'s outputs by two passes: one counting each level's entries, long slices and
    largest count, then one filling arrays of those sizes (each level's counts 16 bits wide where they fit)."""
    state = np.zeros((n_levels, _STATE), np.int64)
    for a, b in itertools.pairwise(cuts):
        check()
        kernels.pyramid(*args, a, b, state)
    entries, longs = state[:, 0].copy(), state[:, 1].copy()
    wide_count = state[:, 2] >= 1 << 16  # (the levels whose counts do not fit 16 bits: int32 counts)
    state[:, 4] = np.cumsum(entries) - entries
    narrow_entries = np.where(wide_count, 0, entries)
    wide_entries = np.where(wide_count, entries, 0)
    state[:, 5] = np.where(wide_count, np.cumsum(wide_entries) - wide_entries, np.cumsum(narrow_entries) - narrow_entries)
    state[:, 6] = wide_count
    state[:, 7] = np.cumsum(longs) - longs
    state[:, [0, 1, 3]] = 0
    bucket = np.empty(int(entries.sum()), np.int32)
    row = np.empty(len(bucket), np.int32)
    count16 = np.empty(int(narrow_entries.sum()), np.uint16)
    count32 = np.empty(int(wide_entries.sum()), np.int32)
    longpos = np.empty(int(longs.sum()), np.int64)
    lane_ptr = np.empty((n_levels, n_lanes + 1), np.int64)
    for a, b in itertools.pairwise(cuts):
        check()
        kernels.pyramid(*args, a, b, state, bucket, row, count16, count32, longpos, lane_ptr)
    return state, bucket, row, count16, count32, longpos, lane_ptr


def _lane_cuts(order: np.ndarray, lane: np.ndarray, step: int) -> list[int]:
    """Positions in ``order`` (rows by lane) about ``step`` apart, each at a lane's end: a binary search of
    the lanes along ``order`` from each multiple of ``step`` (no pass over every slice)."""
    n = len(order)
    cuts = [0]
    for target in range(step, n, step):
        if target <= cuts[-1]:
            continue
        at = int(lane[order[target - 1]])
        end = bisect.bisect_right(range(n), at, lo=target, key=lambda i: int(lane[order[i]]))
        if end < n:
            cuts.append(end)
    if cuts[-1] != n:
        cuts.append(n)
    return cuts


def _long_lists(rows: np.ndarray, lane, ts, dur) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Per lane, the long slices ``rows`` (by lane, then start) and the running maximum of their ends."""
    long_rows: dict[int, np.ndarray] = {}
    long_end_max: dict[int, np.ndarray] = {}
    if len(rows):
        l_lane = lane[rows]
        cuts = np.flatnonzero(np.r_[True, l_lane[1:] != l_lane[:-1], True])
        end_max = segmented_running_max(ts[rows] + dur[rows], cuts[:-1])
        for a, z, key in zip(cuts[:-1].tolist(), cuts[1:].tolist(), l_lane[cuts[:-1]].tolist(), strict=True):
            long_rows[key] = rows[a:z].copy()
            long_end_max[key] = end_max[a:z].copy()
    return long_rows, long_end_max
