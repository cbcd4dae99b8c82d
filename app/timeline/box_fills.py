"""A box picture's geometry (pixels of its boxes, the merged ones grey, which get a label) and its fills: its
boxes grouped by colour, touching ones on a row merged, as the rectangle
buffers one drawRects call per colour paints. Built for every track at every zoom step (about 0.5 ms a track
in numpy: a sort, a merge and a buffer per colour, each a dozen small array calls), so the compiled loop
(core/trace/slice_kernels.c ``box_rects``: one pass) does it when built; the numpy path is the reference
the tests compare it with."""

from __future__ import annotations

import numpy as np

from fxscope.app.timeline.lane_item import merge_touching, pixels_since, rect_buffer, run_starts
from fxscope.core.trace import compiled


def colour_fills(left: np.ndarray, top: np.ndarray, width: np.ndarray, colours: np.ndarray,
                 height: float) -> list[tuple[int, np.ndarray]]:  # fmt: skip
    """(colour, rectangles) per colour of the boxes (pixels; ``colours`` int64, -1 for merged boxes),
    colours ascending, each colour's rectangles as :func:`~fxscope.app.timeline.lane_item.rect_buffer` makes
    them, touching boxes merged (:func:`~fxscope.app.timeline.lane_item.merge_touching`)."""
    if not len(left):
        return []
    kernels = compiled.slice_kernels
    if kernels is not None:
        columns = [np.ascontiguousarray(c, np.float64) for c in (left, top, width)]
        rects = np.empty((len(left), 4), np.float64)
        groups = np.empty((len(left), 2), np.int64)
        _, g = kernels.box_rects(*columns, np.ascontiguousarray(colours, np.int64), float(height), rects, groups)
        ends = groups[:g, 1].tolist()
        return [(colour, rects[a:z]) for colour, a, z in zip(groups[:g, 0].tolist(), [0, *ends[:-1]], ends, strict=True)]
    return colour_fills_numpy(left, top, width, colours, height)


def colour_fills_numpy(left, top, width, colours, height: float) -> list[tuple[int, np.ndarray]]:
    """:func:`colour_fills` by numpy calls (an install without the compiled loops; the tests' reference)."""
    if colours.min() == colours.max():  # one colour (zoomed out, often every box merged): no grouping
        groups = [(int(colours[0]), (left, top, width))]
    else:  # one pass groups the boxes by colour (a stable sort keeps their order within a colour)
        order = np.argsort(colours, kind="stable")
        sorted_colours = colours[order]
        cuts = np.append(np.flatnonzero(run_starts(sorted_colours)), len(sorted_colours))
        groups = [(int(sorted_colours[a]), (left[order[a:z]], top[order[a:z]], width[order[a:z]]))
                  for a, z in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True)]  # fmt: skip
    fills = []
    for colour, (x, y, w) in groups:
        x, y, w = merge_touching(x, y, w)
        fills.append((colour, rect_buffer(x, y, w, height)))
    return fills


def box_geometry(start: np.ndarray, end: np.ndarray, row: np.ndarray, count: np.ndarray, colours: np.ndarray,
                 since: int, origin: int, sx: float, row_height: float, right_edge: float,
                 merged_in_grey: bool) -> tuple[np.ndarray, ...]:  # fmt: skip
    """(left, top, width, labelled) of boxes from ``start`` to ``end`` ns (int64) on track rows ``row``, in
    pixels from time ``since`` at ``sx`` pixels a second (x clipped to [-10, ``right_edge``], at least a pixel
    wide; y ``row_height`` a row), and which are wider than 24 pixels and stand for one slice (a label's
    candidates); ``colours`` (int64) set to -1 in place where a box stands for several slices when
    ``merged_in_grey``. By the compiled loop (slice_kernels.box_geometry: one pass, ~17 numpy calls a track
    at every zoom step otherwise) when built; :func:`box_geometry_numpy` is the tests' reference."""
    kernels = compiled.slice_kernels
    n = len(start)
    if kernels is not None and colours.dtype == np.int64 and colours.flags.c_contiguous:
        left, top, width = np.empty(n), np.empty(n), np.empty(n)
        labelled = np.empty(n, np.int64)
        columns = [np.ascontiguousarray(c, np.int64) for c in (start, end, row, count)]
        m = kernels.box_geometry(*columns, colours, origin & 0xFFFF_FFFF_FFFF_FFFF, float(since - origin), sx / 1e9,
                                 float(right_edge), float(row_height), merged_in_grey, left, top, width, labelled)  # fmt: skip
        return left, top, width, labelled[:m].copy()
    return box_geometry_numpy(start, end, row, count, colours, since, origin, sx, row_height, right_edge, merged_in_grey)


def box_geometry_numpy(start, end, row, count, colours, since: int, origin: int, sx: float, row_height: float,
                       right_edge: float, merged_in_grey: bool) -> tuple[np.ndarray, ...]:  # fmt: skip
    """:func:`box_geometry` by numpy calls (an install without the compiled loops; the tests' reference)."""
    left = np.clip(pixels_since(start, since, sx, origin), -10.0, right_edge)
    right = np.clip(pixels_since(end, since, sx, origin), -10.0, right_edge)
    width = np.maximum(right - left, 1.0)
    if merged_in_grey:
        colours[count > 1] = -1
    return left, row * row_height, width, np.flatnonzero((width > 24) & (count == 1))
