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

from dataclasses import dataclass

import numpy as np

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
    count: np.ndarray  # int32 slices starting in the bucket (short ones)
    lane_ptr: np.ndarray  # int64: entries of lane k are lane_ptr[k]:lane_ptr[k + 1]
    long_rows: dict[int, np.ndarray]  # lane -> long slice rows sorted by start
    long_end_max: dict[int, np.ndarray]  # lane -> running max of their ends


class SlicePyramid:
    """Bucket summaries of all slice lanes at every level (built once, vectorized over all slices)."""

    def __init__(self, ts: np.ndarray, dur: np.ndarray, lane: np.ndarray, n_lanes: int, origin: int, span: int):
        self.origin = origin
        self.ts, self.dur = ts, dur
        finest = max(0, int(np.log2(max(span, 1))) - FINEST_BUCKETS_LOG2)
        coarsest = max(finest, int(np.log2(max(span, 1))) + 1)
        self.levels: list[Level] = []
        if not len(ts):
            return
        order = np.lexsort((ts, lane))  # lanes, then start: buckets of a lane are non-decreasing in it
        lane_o, ts_o, dur_o = lane[order], ts[order], dur[order]
        # time since the origin, modulo 2**64 on uint64: exact even when a corrupt trace's span passes int64
        rel = ts_o.view(np.uint64) - np.uint64(origin & _U64)
        for shift in range(finest, coarsest + 1, LEVEL_STEP):
            self.levels.append(self._level(shift, order, lane_o, rel, ts_o, dur_o, n_lanes))

    @staticmethod
    def _level(shift, order, lane_o, rel, ts_o, dur_o, n_lanes) -> Level:
        bucket = (rel >> np.uint64(shift)).astype(np.int64)
        long = dur_o >= (LONG_BUCKETS << shift)
        short = np.flatnonzero(~long)
        b, ln, d = bucket[short], lane_o[short], dur_o[short]
        if len(short):
            starts = np.flatnonzero(np.r_[True, (b[1:] != b[:-1]) | (ln[1:] != ln[:-1])])
            counts = np.diff(np.r_[starts, len(short)])
            longest = np.maximum.reduceat(d, starts)
            # the first entry of each bucket that has the bucket's longest duration
            idx = np.arange(len(short))
            cand = np.where(d == np.repeat(longest, counts), idx, len(short))
            pick = np.minimum.reduceat(cand, starts)
            lanes, buckets, rows = ln[starts].astype(np.int32), b[starts], order[short][pick]
        else:
            counts = np.zeros(0, np.int64)
            lanes, buckets, rows = np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64)
        lane_ptr = np.searchsorted(lanes, np.arange(n_lanes + 1), side="left")
        long_rows: dict[int, np.ndarray] = {}
        long_end_max: dict[int, np.ndarray] = {}
        li = np.flatnonzero(long)
        if len(li):
            l_lane = lane_o[li]
            cuts = np.flatnonzero(np.r_[True, l_lane[1:] != l_lane[:-1], True])
            for a, z in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
                sel = li[a:z]
                long_rows[int(l_lane[a])] = order[sel]
                long_end_max[int(l_lane[a])] = np.maximum.accumulate(ts_o[sel] + dur_o[sel])
        # rows fit 31 bits and buckets too (the finest level has 2**16 buckets across the trace): 12 bytes an
        # entry instead of 24
        # (each entry's lane is implied by lane_ptr: not stored)
        return Level(shift, buckets.astype(np.int32), rows.astype(np.int32), counts.astype(np.int32),
                     lane_ptr, long_rows, long_end_max)  # fmt: skip

    def level_for(self, ns_per_px: float) -> Level | None:
        """The coarsest level whose buckets are not wider than a pixel (None: zoomed in past the finest)."""
        best = None
        for level in self.levels:
            if (1 << level.shift) <= ns_per_px:
                best = level
        return best

    def query(self, level: Level, lane: int, t0: int, t1: int) -> tuple[np.ndarray, ...]:
        """(rows, count, start, end) of the boxes of ``lane`` overlapping [t0, t1) at ``level``."""
        size = 1 << level.shift
        p0, p1 = int(level.lane_ptr[lane]), int(level.lane_ptr[lane + 1])
        keys = level.bucket[p0:p1]
        limit = (1 << 31) - 1  # the int32 bucket column's range (a window may reach far past the trace)
        lo_key = min(max(((t0 - self.origin) >> level.shift) - LONG_BUCKETS, -limit), limit)
        hi_key = min(max((t1 - self.origin) >> level.shift, -limit), limit)
        a = p0 + int(np.searchsorted(keys, lo_key, side="left"))
        b = p0 + int(np.searchsorted(keys, hi_key, side="right"))
        rows = level.row[a:b].astype(np.int64)
        count = level.count[a:b].astype(np.int64)
        s_ts, s_end = self.ts[rows], self.ts[rows] + self.dur[rows]
        # a lone slice, or one at least a bucket long, is drawn as itself; else a merged box over the bucket
        real = (count == 1) | (self.dur[rows] >= size)
        b_start = (np.uint64(self.origin & _U64) + (level.bucket[a:b].astype(np.uint64) << np.uint64(level.shift))).view(np.int64)
        start = np.where(real, s_ts, b_start)
        end = np.where(real, s_end, np.maximum(b_start + size, s_end))
        count = np.where(real, 1, count)
        keep = (end > t0) & (start < t1)
        rows, count, start, end = rows[keep], count[keep], start[keep], end[keep]
        long = level.long_rows.get(lane)
        if long is not None:
            la = int(np.searchsorted(level.long_end_max[lane], t0, side="right"))
            lb = int(np.searchsorted(self.ts[long], t1, side="left"))
            if lb > la:
                lr = long[la:lb]
                lr = lr[self.ts[lr] + self.dur[lr] > t0]
                rows = np.concatenate([rows, lr])
                count = np.concatenate([count, np.ones(len(lr), np.int64)])
                start = np.concatenate([start, self.ts[lr]])
                end = np.concatenate([end, self.ts[lr] + self.dur[lr]])
        return rows, count, start, end
