"""What one frame of a lane-stacked span track draws: the boxes of each lane visible in a window.

Async spans and debug tracks (a query's result drawn on the timeline) keep their spans in non-overlapping
lanes, sorted by (lane, start), with one :class:`~fxscope.core.trace.lod.SlicePyramid` over them. Zoomed out, a
lane costs about one pyramid entry per pixel; zoomed in past the pyramid's finest level, the few spans of
the window are read directly (within a lane starts and ends both ascend, so two searches find them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fxscope.core.trace.lod import SlicePyramid


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
    parts = []
    for lane, (lo, hi) in enumerate(lane_ranges):
        # zoomed in: the lane's spans in the window, ends ascending within a lane
        a = lo + int(np.searchsorted(end[lo:hi], t0, "right"))
        b = lo + int(np.searchsorted(start[lo:hi], t1, "left"))
        r = np.arange(a, max(a, b))
        count, st, en = np.ones(len(r), np.int64), start[r], end[r]
        if len(r):
            parts.append((r, np.full(len(r), lane, np.int64), count, st, en))
    if not parts:
        z = np.zeros(0, np.int64)
        return z, z, z, z, z
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(5))
