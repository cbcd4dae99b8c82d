"""What one frame of a lane-stacked span track draws: the boxes of each lane visible in a window.

Async spans and debug tracks (a query's result drawn on the timeline) keep their spans in non-overlapping
lanes, sorted by (lane, start), with one :class:`~fxscope.core.trace.lod.SlicePyramid` over them. Zoomed out, a
lane costs about one pyramid entry per pixel; zoomed in past the pyramid's finest level, the few spans of
the window are read directly (within a lane starts and ends both ascend, so two searches find them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fxscope.core.trace.lod import SlicePyramid, merged_per_pixel


def covering(start: np.ndarray, end: np.ndarray, lo: int, hi: int, t: int) -> int:
    """Row in ``lo:hi`` (sorted by start, not overlapping) whose [start, end) holds ``t``, or -1; a
    zero-length box counts as 1 ns so that it can be clicked."""
    i = lo + int(np.searchsorted(start[lo:hi], t, side="right")) - 1
    if i < lo:
        return -1
    return i if t < max(int(end[i]), int(start[i]) + 1) else -1


def lane_boxes(
    pyramid: SlicePyramid,
    lane_base: int,
    lane_ranges: Sequence[tuple[int, int]],
    start: np.ndarray,
    end: np.ndarray,
    t0: int,
    t1: int,
    ns_per_px: float,
) -> tuple[np.ndarray, ...]:
    """(rows, lane, count, start, end) of the boxes overlapping [t0, t1): ``lane_ranges[k]`` is the row range
    of lane ``k`` (its lane in ``pyramid`` is ``lane_base + k``); ``count`` > 1 marks a box that stands for
    that many sub-pixel spans."""
    level = pyramid.level_for(ns_per_px)
    if level is not None:  # every lane in one pass
        return pyramid.query_lanes(level, lane_base, len(lane_ranges), t0, t1)
    # zoomed in: each lane's spans in the window, ends ascending within a lane
    windows = []
    for lo, hi in lane_ranges:
        a = lo + int(np.searchsorted(end[lo:hi], t0, "right"))
        windows.append((a, max(a, lo + int(np.searchsorted(start[lo:hi], t1, "left")))))
    merged = merged_windows(pyramid, windows, t0, ns_per_px)
    if merged is not None:
        return merged
    parts = []
    for lane, (a, b) in enumerate(windows):
        r = np.arange(a, b)
        count, st, en = np.ones(len(r), np.int64), start[r], end[r]
        if len(r):
            parts.append((r, np.full(len(r), lane, np.int64), count, st, en))
    if not parts:
        z = np.zeros(0, np.int64)
        return z, z, z, z, z
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(5))


#: the most lanes whose spans :func:`merged_windows` merges (the merged boxes' lane is a uint16)
MERGED_LANES = 1 << 16


def merged_windows(pyramid: SlicePyramid, windows: list[tuple[int, int]], t0: int,
                   ns_per_px: float) -> tuple[np.ndarray, ...] | None:  # fmt: skip
    """(rows, lane, count, start, end): the spans of each lane's window (``windows[k]``: rows ``a:b`` of lane
    ``k``, ``pyramid``'s rows; ``lane`` is ``k``) with those under a pixel merged per pixel from ``t0``, as a
    thread's slices are past the pyramid's finest level
    (:func:`fxscope.core.trace.lod.merged_per_pixel`: a box per pixel bucket keeping its longest span and their
    count), or None where that loop cannot (then every span is a box). The finest level is 2**16 buckets of the
    whole trace, so a window just past it holds more spans the longer the trace: at 100M generated events (a
    166 s trace) ~140,000 in a 2.8 s window, each a box to gather and draw on every zoom step there, ~5 ms a
    process's track before its boxes were drawn."""
    if len(windows) > MERGED_LANES:
        return None
    spans = [(0, b - a) for a, b in windows]
    rows = [np.arange(a, b, dtype=np.int64) for a, b in windows]
    merged = merged_per_pixel(pyramid.query_columns(), rows, spans, t0, max(ns_per_px, 1.0))
    if merged is None:
        return None
    rows_out, lane, count, st, en = merged
    return rows_out.astype(np.int64, copy=False), lane.astype(np.int64), count, st, en
