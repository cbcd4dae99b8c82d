"""Scheduling lanes: a CPU's slices (the threads it ran) and a thread's state strip (running, runnable,
blocked...), drawn from the model's sched pyramid zoomed out."""

from __future__ import annotations

import math

import numpy as np
import shiboken6
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage, QPainter, QPixmap

from fxscope.app.timeline.box_track import BoxTrackItem
from fxscope.app.timeline.lane_item import (
    PALETTE,
    WAKEUP_BRUSH,
    colour_index,
    run_starts,
)
from fxscope.core.trace.lane_boxes import merged_windows
from fxscope.core.trace.model import TraceModel


def _sched_boxes(model: TraceModel, which: str, table, lo: int, hi: int, t0: int, t1: int, ns_per_px: float):
    """(rows, count, start, end) of one CPU lane or thread-state strip (rows ``lo:hi`` of ``table``, sorted
    by start, not overlapping) in [t0, t1): zoomed out, from the model's sched pyramid (one box per pixel,
    merged boxes counting their slices); zoomed in past its finest level, the rows in the window, those under
    a pixel merged per pixel (a 2.8 s window of a 100M-event trace, just past the level, held ~35,000 context
    switches a CPU)."""
    pyramid = None
    if hi > lo:
        pyramid, lanes = model.sched_pyramid(which)
        level = pyramid.level_for(ns_per_px)
        if level is not None:
            return pyramid.query(level, int(lanes[lo]), t0, t1)
    a = lo + int(np.searchsorted(table.end[lo:hi], t0, "right"))
    b = lo + int(np.searchsorted(table.start[lo:hi], t1, "left"))
    if pyramid is not None:  # the rows under a pixel merged per pixel, as past the slices' finest level
        merged = merged_windows(pyramid, [(a, max(a, b))], t0, ns_per_px)
        if merged is not None:
            rows, _lane, count, start, end = merged
            return rows, count, start, end
    r = np.arange(a, max(a, b))
    return r, np.ones(len(r), np.int64), table.start[r], table.end[r]


#: a wakeup mark's sprite is this many pixels square
WAKEUP_SPRITE_SIZE = 8
_WAKEUP_SPRITES: dict[tuple[float, bool], QPixmap] = {}


def wakeup_polygon(x: float, top: float) -> list[QPointF]:
    """A wakeup mark at device pixel column ``x`` on a strip whose top edge is at ``top``: a small wedge
    pointing down from the edge."""
    return [QPointF(x - 3.0, top - 1.0), QPointF(x + 3.0, top - 1.0), QPointF(x, top + 4.0)]


def wakeup_sprite(fraction: float, antialiased: bool) -> QPixmap:
    """The wakeup mark of a strip whose top is ``fraction`` of a pixel below a pixel row, drawn once into a
    sprite whose corner is 4 pixels left of the mark's column and 2 rows above that row: stamped at a whole
    pixel, it is the pixels the wedge's polygon fills there (its points moved by whole pixels)."""
    key = (fraction, antialiased)
    sprite = _WAKEUP_SPRITES.get(key)
    if sprite is None:
        if len(_WAKEUP_SPRITES) > 256:  # (a bound: one a strip's sub-pixel offset, as a rule a handful)
            _WAKEUP_SPRITES.clear()
        image = QImage(WAKEUP_SPRITE_SIZE, WAKEUP_SPRITE_SIZE, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(0)
        p = QPainter(image)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, antialiased)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(WAKEUP_BRUSH)
        p.drawPolygon(wakeup_polygon(4.0, 2.0 + fraction))
        p.end()
        sprite = _WAKEUP_SPRITES[key] = QPixmap.fromImage(image)
    return sprite


class SchedLaneItem(BoxTrackItem):
    """A lane of scheduling rows ``lo:hi`` of one table (sorted by start, never overlapping): a CPU's slices
    or a thread's states, drawn from the model's sched pyramid zoomed out, named by one of its columns."""

    #: the model's sched pyramid ("cpu" or "state") and the table column that names a box
    which = ""
    name_column = ""
    #: zoomed out, a box standing for many context switches takes the colour of its longest one (the
    #: pyramid keeps it): a CPU lane shows which thread ran most in each pixel, a state strip the state the
    #: thread was in longest, as Perfetto draws them; a grey band said only that the CPU was busy
    MERGED_IN_GREY = False

    def boxes(self, t0: int, t1: int, ns_per_px: float):
        r, count, st, en = _sched_boxes(self.model, self.which, self.table, self.lo, self.hi, t0, t1, ns_per_px)
        return r, np.zeros(len(r), np.int64), count, st, en, self.boxes_name(r)

    def summary_level(self, ns_per_px: float) -> object:
        # as _sched_boxes reads: a level of the sched pyramid, or the rows as they are (zoomed in)
        level = self.model.sched_pyramid(self.which)[0].level_for(ns_per_px) if self.hi > self.lo else None
        return "rows" if level is None else level.shift

    def boxes_name(self, rows: np.ndarray) -> np.ndarray:
        return getattr(self.table, self.name_column)[rows].astype(np.int64)

    def row_at(self, lane_row: int, t: int) -> int:
        return self._covering(self.table.start, self.table.end, self.lo, self.hi, t) if lane_row == 0 else -1


class CpuTrackItem(SchedLaneItem):
    """One CPU: the threads it ran, coloured by thread; sub-pixel slices merged per pixel."""

    kind = which = "cpu"
    name_column = "tid"

    def __init__(self, model: TraceModel, cpu: int, y0: float) -> None:
        super().__init__(model, y0)
        self.cpu = cpu
        self.table = model.sched.cpu_slices
        self.lo, self.hi = model.sched.cpu_rows(cpu)
        tids = self.table.tid[self.lo : self.hi].astype(np.int64)
        self._name_ids = np.unique(tids)
        self._name_colours = np.array([colour_index(f"tid {t}") for t in self._name_ids.tolist()], np.int64)

    def name_label(self, name: int) -> str:
        return self.model.objects.koid_label(name)


class StateTrackItem(SchedLaneItem):
    """A thread's scheduling states as a thin strip (running, runnable, blocked...)."""

    kind = which = "state"
    name_column = "state"

    def __init__(self, model: TraceModel, tid: int, y0: float) -> None:
        super().__init__(model, y0)
        self.tid = tid
        self.table = model.sched.thread_states
        self.lo, self.hi = model.sched.state_rows(tid)
        self._name_ids = np.arange(8, dtype=np.int64)
        self._name_colours = np.arange(8, dtype=np.int64) + len(PALETTE)  # beyond the palette: state colours

    def name_label(self, name: int) -> str:
        from fxscope.core.trace.sched import STATE_NAMES

        return STATE_NAMES.get(name, "?")

    def draw_marks(self, painter: QPainter, f: tuple) -> None:
        self._paint_wakeups(painter, f)

    def wakeup_marks(self, f: tuple) -> np.ndarray | None:
        """The device pixel columns of the thread's wakeups in the frame ``f`` (one a pixel), or None when
        there are none to draw: none in view, or closer than 12 pixels apart on average (clutter, not marks:
        the runnable stretches of the strip show them at that zoom; ``last_wakeups`` is then 0)."""
        t0, t1, sx, dx, _sy, _dy = f
        wakeups = self.model.sched.wakeups
        rows = wakeups.rows_in(t0, t1, tid=self.tid)
        if not len(rows):
            return None
        px = self._wakeup_pixels(wakeups.ts, rows, sx, dx, (t1 - t0) / 1e9 * sx / 12)
        if px is None:
            self.last_wakeups = 0
        return px

    def _paint_wakeups(self, painter: QPainter, f: tuple) -> None:
        """The thread's wakeups as small dark wedges on the strip's top edge (one per pixel at most): the
        moments it became runnable; selecting the state or the CPU slice after one draws who woke it."""
        px = self.wakeup_marks(f)
        if px is None:
            return
        top = self.y0 * f[4] + f[5]
        painter.save()
        painter.resetTransform()
        row = math.floor(top)
        sprite = wakeup_sprite(top - row, painter.testRenderHint(QPainter.RenderHint.Antialiasing))
        # one call for every mark, each the sprite at a whole pixel (a drawPolygon a mark, its points made in
        # Python, was ~0.1 ms a strip a frame): its centre 4 pixels right of and below its corner
        frags = np.zeros((len(px), 10), np.float64)  # QPainter.PixmapFragment
        frags[:, 0], frags[:, 1] = px, row + 2.0
        frags[:, 4], frags[:, 5] = WAKEUP_SPRITE_SIZE, WAKEUP_SPRITE_SIZE
        frags[:, 6:8], frags[:, 9] = 1.0, 1.0
        painter.drawPixmapFragments(shiboken6.wrapInstance(frags.ctypes.data, QPainter.PixmapFragment), len(frags),
                                    sprite)  # fmt: skip
        self.last_wakeups = len(px)
        painter.restore()

    #: wakeups read at once at first (each chunk after it twice the one before)
    WAKEUP_CHUNK = 1024

    def _wakeup_pixels(self, ts: np.ndarray, rows: np.ndarray, sx: float, dx: float, most: float):
        """The device pixels of the wakeups ``rows`` (by time), one per pixel, or None when there are more
        than ``most``. Zoomed out over a large trace a thread has millions of wakeups in view, and reading
        them all each paint was most of a frame's time: an evenly spaced sample of them is read first (more
        than ``most`` pixels among some of them is clutter for all), then, unless it decided, chunks of
        growing size that stop once past ``most``."""
        sample_step = len(rows) // (4 * max(math.ceil(most), 1))
        if sample_step > 1:
            px = np.floor(self.px(ts[rows[::sample_step]], sx, dx))
            if np.count_nonzero(run_starts(px)) > most:
                return None
        chunk = self.WAKEUP_CHUNK
        out: list[np.ndarray] = []
        n, last, a = 0, None, 0
        while a < len(rows):
            px = np.floor(self.px(ts[rows[a : a + chunk]], sx, dx))
            px = px[run_starts(px)]  # one per pixel (the rows are by time: a run test, not np.unique's sort)
            if last is not None and len(px) and px[0] == last:
                px = px[1:]  # (the pixel the last chunk ended in)
            if len(px):
                last = px[-1]
            n += len(px)
            if n > most:
                return None
            out.append(px)
            a += chunk
            chunk *= 2
        return np.concatenate(out)
