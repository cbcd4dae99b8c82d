"""A lane of points in time (process or global instants, log records): a tick each, merged per pixel."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter

from fxscope.app.timeline.lane_item import (
    ROW_FILL,
    LaneItem,
    draw_rects,
    merge_touching,
    outline_rects,
    outline_selection,
    run_starts,
)
from fxscope.core.timeline.layout import ROW_HEIGHT
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.sorted_search import SampledColumn, search_ascending


class MarkerTrackItem(LaneItem):
    """Points in time (log records, instant events) as thin ticks in one row, one tick per pixel at most.

    ``rows`` are the points' rows in their table (``kind``: "instant" rows of the model's instants, "log"
    rows of its log table), so that a click selects one."""

    def __init__(self, model: TraceModel, ts: np.ndarray, y0: float, colour: str = "#6b7a90", kind: str = "",
                 rows: np.ndarray | None = None) -> None:  # fmt: skip
        super().__init__(model, y0)
        order = np.argsort(ts, kind="stable")
        self.ts = np.asarray(ts)[order]
        self._searched = SampledColumn(self.ts)
        self.point_rows = (np.asarray(rows)[order] if rows is not None else order).astype(np.int64)
        self.kind = kind
        self.selected_row = -1
        self._brush = QBrush(QColor(colour))

    def hit(self, lane_y: float, t: int, tol_ns: float) -> tuple[str, int]:
        """The point nearest ``t`` within ``tol_ns`` (a few pixels), as (kind, row), or ("", -1)."""
        return nearest_point(self.ts, self.point_rows, t, tol_ns, self.kind)


    def first_per_pixel(self, a: int, b: int, t0: int, t1: int, sx: float) -> np.ndarray:
        """The points' times ``a:b`` (those in [t0, t1)) a frame turns into pixels: :func:`first_in_buckets`."""
        if self._searched.values is not self.ts:  # (new points: their sample made again)
            self._searched = SampledColumn(self.ts)
        return first_in_buckets(self.ts, a, b, t0, t1, 1e9 / sx, self._searched)

    def draw(self, painter: QPainter) -> None:
        f = self.frame(painter)
        if f is None or not len(self.ts):
            return
        t0, t1, sx, dx, sy, dy = f
        a, b = np.searchsorted(self.ts, [t0, t1])
        px = distinct_pixels(np.floor(self.px(self.first_per_pixel(a, b, t0, t1, sx), sx, dx)))
        self.last_drawn = len(px)
        if not len(px):
            return
        painter.save()
        painter.resetTransform()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._brush)
        top = self.y0 * sy + dy
        height = ROW_FILL * ROW_HEIGHT * sy
        # ticks of neighbouring pixels overlap: one rectangle a run of them (zoomed out most pixels have a
        # tick, two thousand 2-pixel fills a lane every frame), the same pixels
        draw_rects(painter, *merge_touching(px - 0.5, np.full(len(px), top), np.full(len(px), 2.0)), height)
        self.last_matches = 0
        if self.match_mask is not None:
            hit = self.match_mask[np.clip(self.point_rows[a:b], 0, len(self.match_mask) - 1)]
            mx = distinct_pixels(np.floor(self.px(self.ts[a:b][hit], sx, dx)))
            self.last_matches = len(mx)
            outline_rects(painter, mx - 2.0, np.full(len(mx), top - 1.0), np.full(len(mx), 5.0), height + 2.0)
        if self.selected_row >= 0:
            at = np.flatnonzero(self.point_rows == self.selected_row)
            if len(at):
                x = (int(self.ts[int(at[0])]) - self.origin) / 1e9 * sx + dx
                outline_selection(painter, QRectF(x - 3.0, top - 1.0, 6.0, height + 2.0))
        painter.restore()


def first_in_buckets(ts: np.ndarray, a: int, b: int, t0: int, t1: int, ns_per_px: float,
                     searched: SampledColumn | None = None) -> np.ndarray:  # fmt: skip
    """The times ``ts[a:b]`` (sorted, those in [t0, t1)) to draw a mark per pixel from: all of them, or, when
    they outnumber the pixels four to one, the first time in each pixel-wide bucket from ``t0`` that holds
    any (found by searching the buckets' edges, as a thread's instants are: a lane zoomed out over a large
    trace holds hundreds of thousands of points, each turned into a pixel every frame). ``searched``: ``ts``
    with its sample (searched through it)."""
    if b - a <= 4 * (t1 - t0) / ns_per_px:
        return ts[a:b]
    view = ts[a:b]
    edges = np.arange(t0, t1 + ns_per_px, ns_per_px)
    # searched as integers (ts >= e is ts >= ceil(e)), kept below 2**63 for the conversion
    keys = np.minimum(np.ceil(edges), 9.2233720368547748e18).astype(np.int64)
    idx = searched.search(keys, a, b) if searched is not None else search_ascending(view, keys)
    return view[idx[:-1][np.diff(idx) > 0]]


def distinct_pixels(px: np.ndarray) -> np.ndarray:
    """The distinct values of ``px``, the pixels of times in order (non-decreasing): the first of each run,
    as np.unique gives them without its sort (a marker lane zoomed out holds hundreds of thousands of
    points: the sort was most of its frame)."""
    return px[run_starts(px)]


def nearest_point(ts: np.ndarray, rows: np.ndarray, t: int, tol_ns: float, kind: str) -> tuple[str, int]:
    """(kind, row) of the point of sorted ``ts`` nearest ``t`` if within ``tol_ns``, else ("", -1)."""
    if not len(ts) or not kind:
        return "", -1
    i = int(np.searchsorted(ts, t))
    best = min((j for j in (i - 1, i) if 0 <= j < len(ts)), key=lambda j: abs(int(ts[j]) - t))
    return (kind, int(rows[best])) if abs(int(ts[best]) - t) <= tol_ns else ("", -1)
