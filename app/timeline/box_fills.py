"""A box picture's fills: its boxes grouped by colour, touching ones on a row merged, as the rectangle
buffers one drawRects call per colour paints. Built for every track at every zoom step (about 0.5 ms a track
in numpy: a sort, a merge and a buffer per colour, each a dozen small array calls), so the compiled loop
(core/trace/slice_kernels.c ``box_rects``: one pass) does it when built; the numpy path is the reference
the tests compare it with."""

from __future__ import annotations

import numpy as np

from fxscope.app.timeline.lane_item import merge_touching, rect_buffer, run_starts
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
