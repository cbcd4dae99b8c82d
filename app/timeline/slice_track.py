"""A thread's slices (one row per depth), with its thread-scope instants and the crash reports logged by
it drawn on the same track."""

from __future__ import annotations

import numpy as np
import shiboken6
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QPixmap, QPolygonF, QTransform

from fxscope.app.timeline.box_fills import colour_fills
from fxscope.app.timeline.box_track import BoxPicture, BoxTrackItem, names_of_single
from fxscope.app.timeline.lane_item import (
    CRASH_BRUSH,
    INSTANT_BRUSH,
    outline_rects,
    outline_selection,
    paint_rects,
    pixels_since,
)
from fxscope.app.timeline.marker_track import nearest_point
from fxscope.core.trace.model import ThreadTrack, TraceModel
from fxscope.core.trace.prepare import table_pending
from fxscope.core.trace.sorted_search import SampledColumn

_NO_TIMES = np.zeros(0, np.int64)


class SliceTrackItem(BoxTrackItem):
    """Draws the slices of one thread track between rows ``y0`` and ``y0 + depth count``."""

    def __init__(self, model: TraceModel, track: ThreadTrack, y0: float) -> None:
        super().__init__(model, y0)
        self.track = track
        self._use_string_colours()
        self._instants: np.ndarray | None = None
        self._instants_lo = 0
        self._instants_searched = SampledColumn(_NO_TIMES)  # (with its sample, once the instants are read)
        self.selected_instant = -1  # a row of the model's instants, when one of this thread's is selected
        self.instant_brush = INSTANT_BRUSH  # the theme's mark colour
        self.instant_match_mask: np.ndarray | None = None  # search matches over the model's instants
        self._crashes: tuple[np.ndarray, np.ndarray] | None = None
        self.selected_crash = -1  # a crash report (index into the log table's reports) of this thread

    kind = "slice"

    @property
    def rows(self) -> int:
        return self.track.max_depth + 1

    def row_at(self, lane_row: int, t: int) -> int:
        return self.model.slice_at(self.track, lane_row, t)

    def hit(self, lane_y: float, t: int, tol_ns: float) -> tuple[str, int]:
        """The thread's instant marks sit on the top edge: a click there, near one, selects the instant."""
        if lane_y < 0.3:
            crash_ts, crash_index = self._crash_marks()
            found = nearest_point(crash_ts, crash_index, t, tol_ns, "crash")
            if found[1] >= 0:
                return found
            ts = self._instant_times()
            lo = self._instants_lo
            found = nearest_point(ts, np.arange(lo, lo + len(ts)), t, tol_ns, "instant")
            if found[1] >= 0:
                return found
        return super().hit(lane_y, t, tol_ns)

    def instants_built(self) -> None:
        """The model's instants are in (a large trace's background build): draw this thread's from now on."""
        self._instants = None
        self.update()

    def _instant_times(self) -> np.ndarray:
        if self._instants is None and table_pending(self.model, "instants"):
            return _NO_TIMES  # (the background build is making them: none drawn until it is done)
        if self._instants is None:  # this thread's instant times, sorted (once)
            inst = self.model.instants
            lo, hi = inst.thread_rows(self.track.thread)
            self._instants_lo = lo
            self._instants = inst.ts[lo:hi]
            self._instants_searched = SampledColumn(self._instants)
        return self._instants


    def _crash_marks(self) -> tuple[np.ndarray, np.ndarray]:
        """This thread's crash reports: their times (sorted) and indices (once)."""
        if self._crashes is None:
            ts, thread = self.model.logs.report_marks()
            mine = np.flatnonzero(thread == self.track.thread)
            order = np.argsort(ts[mine], kind="stable")
            self._crashes = ts[mine][order], mine[order].astype(np.int64)
        return self._crashes

    def _paint_crashes(self, painter: QPainter, f: tuple) -> None:
        """A red triangle on the top edge of the track at each crash report of the thread."""
        ts, index = self._crash_marks()
        if not len(ts):
            return
        t0, t1, sx, dx, sy, dy = f
        a, b = np.searchsorted(ts, [t0, t1])
        if b <= a:
            return
        top = self.y0 * sy + dy - 1.0
        x = np.unique(np.round(self.px(ts[a:b], sx, dx)))  # one mark per pixel
        x = x[(x > -10.0) & (x < 1e7)]
        painter.save()
        painter.resetTransform()
        sprite = crash_sprite()
        frags = np.zeros((len(x), 10), np.float64)  # QPainter.PixmapFragment: one per mark, drawn in one call
        frags[:, 0], frags[:, 1] = x + 0.5, top + (sprite.height() - 2) / 2  # the sprite's centre
        frags[:, 4], frags[:, 5] = sprite.width(), sprite.height()
        frags[:, 6:8], frags[:, 9] = 1.0, 1.0
        if len(frags):
            painter.drawPixmapFragments(shiboken6.wrapInstance(frags.ctypes.data, QPainter.PixmapFragment), len(frags), sprite)
        sel = np.flatnonzero(index[a:b] == self.selected_crash) if self.selected_crash >= 0 else ()
        for k in sel[:1]:
            xs = (int(ts[a + int(k)]) - self.origin) / 1e9 * sx + dx
            outline_selection(painter, QRectF(xs - 7.0, top - 2.0, 14.0, 13.0))
        painter.restore()

    def boxes(self, t0: int, t1: int, ns_per_px: float):
        vis = self.model.visible(self.track, t0, t1, ns_per_px)
        return vis.rows, vis.depth, vis.count, vis.start, vis.end, names_of_single(self.model.slices.name, vis.rows, vis.count)

    def summary_level(self, ns_per_px: float) -> object:
        # the pyramid's level (as TraceModel.visible reads it); past its finest, slices merged per pixel from
        # the window's start: not reusable
        level = self.model.pyramid.level_for(ns_per_px) if len(self.model.slices) else None
        return None if level is None else level.shift

    def boxes_name(self, rows: np.ndarray) -> np.ndarray:
        return self.model.slices.name[rows]

    def name_label(self, name: int) -> str:
        strings = self.model.strings
        return strings[name] if 0 <= name < len(strings) else "<unresolved>"

    def draw_marks(self, painter: QPainter, f: tuple) -> None:
        self._paint_instants(painter, f)
        self._paint_crashes(painter, f)

    def picture(self, t0: int, t1: int, sx: float, sy: float) -> BoxPicture:
        """The boxes' picture, with the thread's instant marks of its window (kept with it: a pan inside
        the window draws them moved, as the boxes)."""
        p = super().picture(t0, t1, sx, sy)
        if p.marks is None:
            p.marks = self._instant_rects(p)
        return p

    def _instant_rects(self, p: BoxPicture) -> np.ndarray:
        """The instants of the picture's window as marks on the track's top edge, one per pixel at most
        (pixels from the window's start, rows from the track's top)."""
        ts = self._instant_times()
        a, b = np.searchsorted(ts, [p.t0, p.t1])
        if b <= a:
            return np.zeros((0, 4))
        ns_per_px = 1e9 / p.sx
        if b - a > 4 * (p.t1 - p.t0) / ns_per_px:
            # more instants than pixels: the pixels that have any, found by searching the pixel edges
            edges = np.arange(p.t0, p.t1 + ns_per_px, ns_per_px)
            # searched as integers (ts >= e is ts >= ceil(e)): float edges make numpy copy every instant
            # of the thread to float64 first; kept below 2**63 for the conversion
            idx = self._instants_searched.search(np.minimum(np.ceil(edges), 9.2233720368547748e18).astype(np.int64))
            times = ts[idx[:-1][np.diff(idx) > 0]]
        else:
            times = ts[a:b]
        x = pixels_since(times, p.t0, p.sx, self.origin)
        # marks that touch (instants a pixel or two apart, the common case zoomed out) as one rectangle:
        # the same pixels, and a fraction of the rectangles for every frame to fill (merged as one colour's
        # boxes are: by the compiled loop when built, ~10 numpy passes over thousands of marks otherwise)
        fills = colour_fills(x - 1.5, np.full(len(x), -1.0), np.full(len(x), 3.0), np.zeros(len(x), np.int64), 4.0)
        return fills[0][1] if fills else np.zeros((0, 4))

    def _matched_instants(self, p: BoxPicture) -> np.ndarray:
        """The times of this thread's matched instants in the picture's window (sorted), found once per
        picture and match mask: a frame reads those in its view from them, not the mask of every instant
        in the view (millions zoomed out on a large trace)."""
        mask = self.instant_match_mask
        kept = p.instant_matches
        if kept is not None and kept[0] is mask:
            return kept[1]
        ts = self._instant_times()
        a, b = np.searchsorted(ts, [p.t0, p.t1])
        lo = self._instants_lo
        hits = ts[a:b][np.flatnonzero(mask[lo + a : lo + b])] if mask is not None else ts[:0]
        p.instant_matches = (mask, hits)
        return hits

    def _paint_instants(self, painter: QPainter, f: tuple) -> None:
        """The thread's instant events as small marks on the top edge of the track (one per pixel, from the
        picture), matches outlined, the selected one ringed."""
        t0, t1, sx, dx, sy, dy = f
        p = self.picture(t0, t1, sx, sy)
        if not len(p.marks):
            return
        ts = self._instant_times()
        painter.save()
        painter.setTransform(QTransform.fromTranslate((p.t0 - self.origin) / 1e9 * sx + dx, self.y0 * sy + dy))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.instant_brush)
        paint_rects(painter, p.marks)
        painter.resetTransform()
        self.last_instant_matches = 0
        if self.instant_match_mask is not None:  # matched instants: an amber outline
            hits = self._matched_instants(p)
            ha, hb = np.searchsorted(hits, [t0, t1])
            self.last_instant_matches = int(hb - ha)
            if hb > ha:
                mx = np.unique(np.floor(self.px(hits[ha:hb], sx, dx)))
                outline_rects(painter, mx - 3.0, np.full(len(mx), self.y0 * sy + dy - 2.0), np.full(len(mx), 6.0), 6.0)
        sel = self.selected_instant - self._instants_lo
        if 0 <= sel < len(ts) and t0 <= ts[sel] < t1:
            xs = (int(ts[sel]) - self.origin) / 1e9 * sx + dx
            outline_selection(painter, QRectF(xs - 3.5, self.y0 * sy + dy - 3.0, 7.0, 8.0))
        painter.restore()


_CRASH_SPRITE: list[QPixmap] = []


def crash_sprite() -> QPixmap:
    """The crash mark (a red triangle pointing down from the track's top edge, 10 x 9 pixels with its
    outline), drawn once: a frame stamps it at every mark with one drawPixmapFragments call."""
    if not _CRASH_SPRITE:
        image = QImage(13, 12, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(0)
        p = QPainter(image)
        p.setPen(QPen(QColor("#7a0000"), 1.0))
        p.setBrush(CRASH_BRUSH)
        p.drawPolygon(QPolygonF([QPointF(1.0, 1.0), QPointF(11.0, 1.0), QPointF(6.0, 10.0)]))
        p.end()
        _CRASH_SPRITE.append(QPixmap.fromImage(image))
    return _CRASH_SPRITE[0]
