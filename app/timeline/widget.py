"""The timeline widget: tracks stacked by process and thread on one zoomable time axis.

Navigation follows Perfetto: W/S zoom around the pointer (the centre when it is elsewhere), A/D pan,
Ctrl+wheel zooms, the wheel and the scrollbar scroll the tracks, drag pans, F fits the selection (or the
whole trace). Pinned tracks stay in a block on top of the view, the header of the process scrolled under
it stays too (sticky); a track filter and collapse/expand all keep hundreds of threads navigable. The x axis is seconds from the trace start and pyqtgraph picks the unit
(s, ms, us, ns) as the user zooms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPen,
    QShortcut,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QScrollBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.theme import LIGHT, Theme
from fxscope.app.timeline.tracks import (
    ROW_HEIGHT,
    AsyncTrackItem,
    CounterTrackItem,
    CpuTrackItem,
    GroupSummaryItem,
    GuardedPaint,
    MarkerTrackItem,
    SliceTrackItem,
    StateTrackItem,
)
from fxscope.core.trace.details import COUNTER_SAMPLE_BITS, counter_details
from fxscope.core.trace.instants import SCOPE_GLOBAL, SCOPE_PROCESS
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.search_hits import KINDS, search_all

PROCESS_HEADER_ROWS = 1.0
LANE_GAP = 0.3  # rows between two lanes
#: the group keys of the CPU lanes and of global-scope instants (no process has these koids)
CPU_GROUP = -1
GLOBAL_GROUP = -2


class TimelineViewBox(pg.ViewBox):
    """Drag pans (pyqtgraph's own); Shift+drag measures between two points, snapping to slice edges;
    Ctrl+drag selects an area (a time range over the tracks it spans) for the aggregate table."""

    def __init__(self, timeline: TimelineWidget) -> None:
        super().__init__(enableMenu=False)  # no context menu to build: the timeline has its own
        self.timeline = timeline

    def updateViewRange(self, forceX=False, forceY=False) -> None:  # noqa: N802, N803 - pyqtgraph API
        """Apply a range change to the view's transform at once. pyqtgraph defers it to the next paint, where
        moving every track under a new transform (and the axes' tick updates) dirties the scene while it is
        being painted, so each pan or zoom was painted twice."""
        super().updateViewRange(forceX, forceY)
        self.updateMatrix()

    def wheelEvent(self, ev, axis=None) -> None:  # noqa: N802 - pyqtgraph API
        """As in Perfetto: Ctrl+wheel zooms around the pointer, Shift+wheel pans, the wheel scrolls tracks."""
        mods = ev.modifiers()
        if mods & Qt.KeyboardModifier.ControlModifier:
            super().wheelEvent(ev, axis)  # pyqtgraph zooms x around the pointer (y is locked)
            return
        ev.accept()
        steps = ev.delta() / 120.0
        if mods & Qt.KeyboardModifier.ShiftModifier:
            self.timeline.pan(-0.1 * steps)
        else:
            self.timeline.scroll_rows(-3.0 * steps)

    def mouseDragEvent(self, ev, axis=None) -> None:  # noqa: N802 - pyqtgraph API
        mods = ev.modifiers()
        if ev.button() == Qt.MouseButton.LeftButton and mods & (
            Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier
        ):
            ev.accept()
            a = self.mapSceneToView(ev.buttonDownScenePos())
            b = self.mapSceneToView(ev.scenePos())
            if mods & Qt.KeyboardModifier.ControlModifier:
                self.timeline.select_area(a.x(), b.x(), a.y(), b.y(), final=ev.isFinish())
            else:
                self.timeline.measure(a.x(), b.x(), a.y(), final=ev.isFinish())
            return
        super().mouseDragEvent(ev, axis)


class ViewOverlayItem(GuardedPaint, pg.GraphicsObject):
    """An item drawn over (or under) the whole visible view: its bounds are the view range."""

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        vb = self.getViewBox()
        if vb is None:
            return QRectF()
        (x0, x1), (y0, y1) = vb.viewRange()
        return QRectF(x0, y0, x1 - x0, y1 - y0)


class FlowArrowsItem(ViewOverlayItem):
    """Arrows of the selected slice's flows, anchored as the FXT format says (and Perfetto draws them): a
    link leaves where its source slice ends and arrives where its destination slice begins."""

    def __init__(self, timeline: TimelineWidget) -> None:
        super().__init__()
        self.timeline = timeline
        self.setZValue(50)
        self.links = np.zeros(0, np.int64)
        self._colour = QColor("#222222")
        self._pen = QPen(self._colour, 1.4)
        self._pen.setCosmetic(True)

    def set_colour(self, colour: str) -> None:
        self._colour = QColor(colour)
        self._pen = QPen(self._colour, 1.4)
        self._pen.setCosmetic(True)
        self.update()

    def show_for(self, row: int) -> None:
        flows = self.timeline.model.flows if row >= 0 else None
        self.links = np.concatenate([flows.incoming(row), flows.outgoing(row)]) if flows is not None else np.zeros(0, np.int64)
        self.update()

    def draw(self, painter: QPainter) -> None:
        if not len(self.links):
            return
        tl = self.timeline
        flows, o = tl.model.flows, tl.model.start_ns
        tr = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setPen(self._pen)
        painter.setBrush(self._colour)
        s = tl.model.slices
        for link in self.links.tolist():
            src, dst = int(flows.src_slice[link]), int(flows.dst_slice[link])
            ya, yb = tl.slice_y(src), tl.slice_y(dst)
            if ya is None or yb is None:
                continue
            a = tr.map(QPointF((int(s.ts[src]) + int(s.dur[src]) - o) / 1e9, ya))
            b = tr.map(QPointF((int(s.ts[dst]) - o) / 1e9, yb))
            painter.drawLine(a, b)
            _arrow_head(painter, a, b)
        painter.restore()


class WakeupItem(ViewOverlayItem):
    """The wakeup behind a selected CPU slice or thread state: a dashed line at the wakeup's time across
    the view, and an arrow from the CPU lane the wakeup was recorded on (where the waker ran) to the start of
    the selected box (Perfetto draws the same line and latency)."""

    def __init__(self, timeline: TimelineWidget) -> None:
        super().__init__()
        self.timeline = timeline
        self.setZValue(45)
        self.wakeup: tuple[int, int, int] | None = None  # (wakeup ns, its CPU, the selected box's start ns)
        self._line = QPen(QColor("#7a1f1f"), 1.2, Qt.PenStyle.DashLine)
        self._line.setCosmetic(True)
        self._arrow = QPen(QColor("#7a1f1f"), 1.4)
        self._arrow.setCosmetic(True)

    def show_for(self, kind: str, row: int) -> None:
        self.wakeup = None
        if kind in ("cpu", "state") and row >= 0:
            from fxscope.core.trace.sched import cpu_slice_details, thread_state_details

            m = self.timeline.model
            d = cpu_slice_details(m, row) if kind == "cpu" else thread_state_details(m, row)
            if int(d["wakeup_row"]) >= 0:
                self.wakeup = (int(d["wakeup_ns"]), int(d["wakeup_cpu"]), int(d["start_ns"]))
        self.update()

    def draw(self, painter: QPainter) -> None:
        if self.wakeup is None:
            return
        tl = self.timeline
        wake_ns, cpu, start_ns = self.wakeup
        o = tl.model.start_ns
        vb = self.getViewBox()
        (_x0, _x1), (y0, y1) = vb.viewRange()
        wx, sx = (wake_ns - o) / 1e9, (start_ns - o) / 1e9
        tr = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setPen(self._line)
        painter.drawLine(tr.map(QPointF(wx, y0)), tr.map(QPointF(wx, y1)))
        ya = tl.lane_y(("cpu", cpu))
        yb = tl.selection_y()
        if ya is not None and yb is not None:
            a, b = tr.map(QPointF(wx, ya)), tr.map(QPointF(sx, yb))
            painter.setPen(self._arrow)
            painter.setBrush(QColor("#7a1f1f"))
            painter.drawLine(a, b)
            _arrow_head(painter, a, b)
        painter.restore()


def _arrow_head(painter: QPainter, a: QPointF, b: QPointF) -> None:
    """A filled arrow head at ``b`` pointing away from ``a`` (device coordinates)."""
    dx, dy = b.x() - a.x(), b.y() - a.y()
    length = max((dx * dx + dy * dy) ** 0.5, 1e-6)
    ux, uy = dx / length, dy / length
    painter.drawPolygon([b, QPointF(b.x() - 8 * ux + 4 * uy, b.y() - 8 * uy - 4 * ux),
                         QPointF(b.x() - 8 * ux - 4 * uy, b.y() - 8 * uy + 4 * ux)])  # fmt: skip


class TimeGridItem(ViewOverlayItem):
    """Light vertical lines at the bottom axis' ticks, drawn in one call, under the tracks."""

    def __init__(self, axis) -> None:
        super().__init__()
        self.axis = axis
        self.setZValue(-100)
        self._pen = QPen(QColor("#ececef"))
        self._pen.setCosmetic(True)

    def set_colour(self, colour: str) -> None:
        self._pen = QPen(QColor(colour))
        self._pen.setCosmetic(True)
        self.update()

    def draw(self, painter: QPainter) -> None:
        vb = self.getViewBox()
        if vb is None:
            return
        (x0, x1), (y0, y1) = vb.viewRange()
        levels = self.axis.tickValues(x0, x1, max(vb.width(), 1.0))
        xs = [v for _spacing, values in levels[:2] for v in values]
        if not xs:
            return
        painter.setPen(self._pen)
        painter.drawLines([QLineF(x, y0, x, y1) for x in xs])


class PinnedBackdropItem(ViewOverlayItem):
    """The opaque band behind the pinned block and a sticky process header: the tracks scrolled under
    them do not show through (the pinned area stays on top, as in Perfetto)."""

    def __init__(self, timeline: TimelineWidget) -> None:
        super().__init__()
        self.timeline = timeline
        self.setZValue(15)
        self.area: tuple[float, float, bool] = (0.0, 0.0, False)  # (top, pinned rows, sticky header)

    def update_area(self, top: float, pinned_rows: float, sticky: bool) -> None:
        if (top, pinned_rows, sticky) != self.area:
            self.area = (top, pinned_rows, sticky)
            self.update()

    def draw(self, painter: QPainter) -> None:
        top, pinned_rows, sticky = self.area
        if not pinned_rows and not sticky:
            return
        vb = self.getViewBox()
        (x0, x1), _ = vb.viewRange()
        theme = self.timeline.theme
        painter.setPen(Qt.PenStyle.NoPen)
        if pinned_rows:
            painter.setBrush(QColor(theme.pinned_background))
            painter.drawRect(QRectF(x0, top, x1 - x0, pinned_rows))
        if sticky:
            painter.setBrush(QColor(theme.header_background))
            painter.drawRect(QRectF(x0, top + pinned_rows, x1 - x0, PROCESS_HEADER_ROWS))
        pen = QPen(QColor(theme.grid))
        pen.setCosmetic(True)
        painter.setPen(pen)
        y = top + pinned_rows + (PROCESS_HEADER_ROWS if sticky else 0.0)
        painter.drawLine(QPointF(x0, y), QPointF(x1, y))


def async_track_name(model: TraceModel, pid: int) -> str:
    """An async track is named after its spans (as Perfetto names one by their common name): the name
    all its spans share, else the most frequent names ("fetch, upload", "a, b +3")."""
    t = model.async_spans
    k = int(np.searchsorted(t.pids, np.uint64(pid)))
    if k >= len(t.pids) or int(t.pids[k]) != pid:
        return "async"
    lo, hi = int(t.pid_start[k]), int(t.pid_start[k + 1])
    names, counts = np.unique(np.asarray(t.name[np.arange(lo, hi)], np.int64), return_counts=True)
    order = np.argsort(-counts, kind="stable")
    strings = model.strings
    texts = [strings[n] if 0 <= n < len(strings) else "?" for n in names[order][:3].tolist()]
    if len(names) > 3:
        return f"{texts[0]}, {texts[1]} +{len(names) - 2}"
    return ", ".join(texts) if texts else "async"


@dataclass
class Lane:
    """One labelled track of the timeline: a graphics item with ``rows``, ``y0`` and ``set_y``."""

    key: tuple  # ("thread", thread index), ...: what pins refer to
    label: str
    item: object
    pid: int
    match: str = ""  # what the track filter looks in: process and thread names and ids, case-folded


@dataclass
class Group:
    """A process: a header row and its lanes, collapsible."""

    pid: int
    name: str
    lanes: list[Lane]
    collapsed: bool = False
    summary: object = None  # the busy-time strip drawn in its header row while collapsed
    y0: float = 0.0  # where its header row is, and where its last lane ends (-1: filtered out)
    y1: float = 0.0
ZOOM_STEP = 0.8
PAN_STEP = 0.2


class TimelineWidget(QWidget):
    """Shows one :class:`TraceModel`. Emits ``sliceSelected(row)`` for a thread slice (-1 when a click hits
    nothing) and ``itemSelected(kind, row)`` for any box ("slice", "async", "cpu", "state"; "", -1: none)."""

    # Times, rows, koids and ids cross signals as ``object`` (Python ints): a Qt ``int`` is 32 bits, and a
    # trace stamped from boot has times past 2**31 ns within seconds (tests/app/test_timeline_boot_times.py)
    sliceSelected = Signal(object)
    itemSelected = Signal(str, object)
    #: an area was selected: (start ns, end ns, reader thread indexes of the slice tracks it spans)
    areaSelected = Signal(object, object, object)

    def __init__(self, model: TraceModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.plot = pg.PlotWidget(background="w", viewBox=TimelineViewBox(self))
        self.plot.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self._build_search_bar())
        self.overview = self._build_overview(model)
        layout.addWidget(self.overview)
        # a vertical scrollbar beside the tracks (the wheel scrolls them too)
        self.scrollbar = QScrollBar(Qt.Orientation.Vertical)
        self.scrollbar.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scrollbar.valueChanged.connect(self._scrolled)
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(0)
        body.addWidget(self.plot, 1)
        body.addWidget(self.scrollbar)
        layout.addLayout(body)
        vb = self.plot.getViewBox()
        vb.invertY(True)
        vb.setMouseEnabled(x=True, y=False)
        vb.setMenuEnabled(False)
        self.plot.hideButtons()
        # vertical lines at the time ticks, opaque: pyqtgraph's alpha-blended grid costs more than the slices
        self.grid = TimeGridItem(self.plot.getAxis("bottom"))
        self.plot.addItem(self.grid, ignoreBounds=True)
        bottom = self.plot.getAxis("bottom")
        bottom.setLabel(units="s")
        bottom.enableAutoSIPrefix(True)
        self.items: list[SliceTrackItem] = []
        self.groups: list[Group] = []
        by_pid: dict[int, Group] = {}
        sched = model.sched
        state_tids = set(np.unique(sched.thread_states.tid).tolist()) if len(sched.thread_states) else set()
        for group in model.processes:
            lanes = []
            for track in group.tracks:
                item = SliceTrackItem(model, track, 0.0)
                self.plot.addItem(item, ignoreBounds=True)
                self.items.append(item)
                lanes.append(Lane(("thread", track.thread), track.name, item, group.pid))
                if track.tid in state_tids:  # its scheduling states, right under it
                    strip = StateTrackItem(model, track.tid, 0.0)
                    self.plot.addItem(strip, ignoreBounds=True)
                    lanes.append(Lane(("state", track.thread), "  state", strip, group.pid))
            by_pid[group.pid] = Group(group.pid, group.name, lanes)
        for index, series in enumerate(model.counters.series):  # counters after the process's threads
            item = CounterTrackItem(model, index, 0.0)
            self.plot.addItem(item, ignoreBounds=True)
            group = by_pid.setdefault(series.pid, Group(series.pid, model.process_name(series.pid), []))
            group.lanes.append(Lane(("counter", index), series.label, item, series.pid))
        # async spans: one track per process, first in its group (as Perfetto shows them)
        spans = model.async_spans
        for pid, n_lanes in spans.tracks():
            item = AsyncTrackItem(model, spans, pid, n_lanes, 0.0)
            self.plot.addItem(item, ignoreBounds=True)
            group = by_pid.setdefault(pid, Group(pid, model.process_name(pid), []))
            group.lanes.insert(0, Lane(("async", pid), async_track_name(model, pid), item, pid))
        self.groups = [by_pid[pid] for pid in sorted(by_pid)]
        cpus = sched.cpus()
        if cpus:  # CPU lanes first, as Perfetto shows them
            lanes = []
            for cpu in cpus:
                item = CpuTrackItem(model, cpu, 0.0)
                self.plot.addItem(item, ignoreBounds=True)
                lanes.append(Lane(("cpu", cpu), f"CPU {cpu}", item, CPU_GROUP))
            self.groups.insert(0, Group(CPU_GROUP, "CPUs", lanes))
        def group_of(pid: int) -> Group:
            """The process's group; a process with no threads, counters or async spans gets one, last."""
            group = by_pid.get(pid)
            if group is None:
                group = by_pid[pid] = Group(pid, model.process_name(pid), [])
                self.groups.append(group)
            return group

        # process-scope instants: a marker lane per process; global-scope instants: a lane of their own
        inst = model.instants
        proc_rows = inst.scoped(SCOPE_PROCESS)
        for pid in np.unique(inst.pid[proc_rows]).tolist() if len(proc_rows) else []:
            rows = proc_rows[inst.pid[proc_rows] == pid]
            item = MarkerTrackItem(model, inst.ts[rows], 0.0, "#222222", kind="instant", rows=rows)
            self.plot.addItem(item, ignoreBounds=True)
            group_of(int(pid)).lanes.insert(0, Lane(("instants", int(pid)), "instants", item, int(pid)))
        global_rows = inst.scoped(SCOPE_GLOBAL)
        if len(global_rows):
            item = MarkerTrackItem(model, inst.ts[global_rows], 0.0, "#222222", kind="instant", rows=global_rows)
            self.plot.addItem(item, ignoreBounds=True)
            self.groups.insert(0, Group(GLOBAL_GROUP, "global", [Lane(("instants", GLOBAL_GROUP), "instants", item, GLOBAL_GROUP)]))
        # log records: one marker lane per process that logs, after its threads
        logs = model.logs
        for pid in np.unique(logs.pid).tolist():
            rows = np.flatnonzero(logs.pid == pid)
            item = MarkerTrackItem(model, logs.ts[rows], 0.0, "#8a5300", kind="log", rows=rows)
            self.plot.addItem(item, ignoreBounds=True)
            group_of(int(pid)).lanes.append(Lane(("logs", int(pid)), "logs", item, int(pid)))
        for group in self.groups:  # what the track filter matches: process and thread names and ids
            for lane in group.lanes:
                kind, what = lane.key[0], lane.key[1]
                owner = model.thread_name(what) if kind in ("thread", "state") else lane.label
                lane.match = f"{group.name} {group.pid} {owner}".casefold()
            if any(lane.key[0] == "thread" for lane in group.lanes):
                group.summary = GroupSummaryItem(model, [lane.item.track for lane in group.lanes
                                                         if lane.key[0] == "thread"], 0.0)  # fmt: skip
                self.plot.addItem(group.summary, ignoreBounds=True)
        self.pinned: list[tuple] = []  # lane keys, in pin order, drawn first
        self.track_filter = ""
        self.headers: list[tuple[float, object]] = []  # (y, group pid or "pinned") of each header row
        self.pinned_rows = 0.0  # height of the pinned block (its header and lanes), on top of the view
        self.sticky: tuple[float, int] | None = None  # (y, pid) of the process header held at the top
        self._content_ticks: list[tuple[float, str]] = []
        self._pinned_offsets: list[tuple[Lane, float]] = []
        self.backdrop = PinnedBackdropItem(self)
        self.plot.addItem(self.backdrop, ignoreBounds=True)
        left = self.plot.getAxis("left")
        left.setStyle(tickLength=0, textFillLimits=[(0, 2.0), (2, 2.0)])
        # the track names do not change when the view pans: keep their rendering as a pixmap
        left.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if self._expanded_rows() > self.collapse_above_rows():  # hundreds of threads: processes collapsed
            for group in self.groups:
                if group.pid != CPU_GROUP:
                    group.collapsed = True
        self._layout()
        # pyqtgraph drops a tick label that does not fit the axis: size the axis to the longest name
        metrics = QFontMetrics(left.font() if hasattr(left, "font") else QFont())
        labels = [f"   {lane.label}" for g in self.groups for lane in g.lanes] + [f"▾ {g.name}" for g in self.groups]
        widest = max((metrics.horizontalAdvance(text) for text in labels), default=100)
        self.axis_width = min(widest + 24, 360)
        left.setWidth(self.axis_width)
        self.duration_s = (model.end_ns - model.start_ns) / 1e9
        vb.setLimits(xMin=-0.05 * self.duration_s, xMax=1.05 * self.duration_s, minXRange=1e-9)
        self.fit_all()
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.plot.scene().sigMouseMoved.connect(self._hover)
        self._hovered: tuple[str, int] = ("", -1)
        self.pointer_x: float | None = None  # view x under the mouse pointer, None when it is elsewhere
        self.selected_row = -1
        self.selection: tuple[str, int] = ("", -1)
        self.flow_arrows = FlowArrowsItem(self)
        self.plot.addItem(self.flow_arrows, ignoreBounds=True)
        self.wakeup_arrow = WakeupItem(self)
        self.plot.addItem(self.wakeup_arrow, ignoreBounds=True)
        self.measure_region = None
        self.measure_label = None
        self.area_region = None
        self.area_keys: list[tuple] = []  # the lane keys of the last area selection
        self.measured: tuple[int, int] | None = None
        vb.sigXRangeChanged.connect(self._sync_overview)
        vb.sigYRangeChanged.connect(self._float_pinned)
        vb.sigResized.connect(self._keep_row_height)
        self.region.sigRegionChanged.connect(self._overview_moved)
        self._sync_overview()
        # the strip's time axis lines up with the timeline's: same left margin
        strip_left = self.overview.getAxis("left")
        strip_left.setWidth(self.axis_width)
        strip_left.setStyle(showValues=False, tickLength=0)
        strip_left.setPen(pg.mkPen(None))
        self.overview.showAxis("left")
        self.marker = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#d62728", width=1.5))
        self.marker.hide()
        self.plot.addItem(self.marker, ignoreBounds=True)
        self.theme = LIGHT
        self._float_pinned()

    # ------------------------------------------------------------------ track layout
    #: a trace opens with its processes collapsed when its tracks, expanded, would take more rows than this
    #: many screens show (and more than 200 rows: a trace of a few dozen threads opens expanded)
    COLLAPSE_SCREENS = 4.0

    def collapse_above_rows(self) -> float:
        """Rows of tracks beyond which the processes open collapsed: four screens of :attr:`ROW_PX` rows,
        at least 200."""
        from PySide6.QtGui import QGuiApplication

        screen = QGuiApplication.primaryScreen()
        height = screen.availableGeometry().height() if screen is not None else 1080
        return max(self.COLLAPSE_SCREENS * height / self.ROW_PX, 200.0)

    def _expanded_rows(self) -> float:
        return sum(PROCESS_HEADER_ROWS + sum(lane.item.rows * ROW_HEIGHT + LANE_GAP for lane in g.lanes)
                   for g in self.groups)  # fmt: skip

    def lanes(self) -> list[Lane]:
        return [lane for group in self.groups for lane in group.lanes]

    def lane_passes(self, lane: Lane) -> bool:
        """Whether the track filter shows ``lane`` (its process or thread name or id contains the text)."""
        return not self.track_filter or self.track_filter in lane.match

    def _layout(self) -> None:
        """Place every lane: the pinned ones in a block that stays on top of the view (placed by
        :meth:`_float_pinned` as the view scrolls), then each process group (a header row, and its lanes
        unless collapsed; with a track filter, only the matching lanes, their groups expanded). Tracks
        keep their items; only their y and visibility change."""
        by_key = {lane.key: lane for lane in self.lanes()}
        ticks: list[tuple[float, str]] = []
        self.headers = []
        pinned = [by_key[k] for k in self.pinned if k in by_key]
        self._pinned_offsets = []
        y = PROCESS_HEADER_ROWS if pinned else 0.0
        for lane in pinned:
            self._pinned_offsets.append((lane, y))
            lane.item.setVisible(True)
            lane.item.setZValue(20)
            y += lane.item.rows * ROW_HEIGHT + LANE_GAP
        self.pinned_rows = y
        filtering = bool(self.track_filter)
        for group in self.groups:
            shown = [lane for lane in group.lanes if lane.key not in self.pinned and self.lane_passes(lane)]
            if filtering and not shown:
                for lane in group.lanes:
                    if lane.key not in self.pinned:
                        lane.item.setVisible(False)
                if group.summary is not None:
                    group.summary.setVisible(False)
                group.y0 = group.y1 = -1.0
                continue
            collapsed = group.collapsed and not filtering
            group.y0 = y
            self.headers.append((y, group.pid))
            ticks.append((y + 0.5, f"{'▸' if collapsed else '▾'} {group.name}"))
            if group.summary is not None:
                group.summary.set_y(y)
                group.summary.setVisible(collapsed)
            y += PROCESS_HEADER_ROWS
            for lane in group.lanes:
                if lane.key in self.pinned:
                    continue
                if collapsed or lane not in shown:
                    lane.item.setVisible(False)
                    continue
                lane.item.set_y(y)
                lane.item.setZValue(0)
                lane.item.setVisible(True)
                ticks.append((y + 0.45, f"   {lane.label}"))
                y += lane.item.rows * ROW_HEIGHT + LANE_GAP
            group.y1 = y
        self.total_rows = max(y, 1.0)
        self._content_ticks = ticks
        self._keep_row_height()
        self._float_pinned()

    def view_top(self) -> float:
        _, (y0, _y1) = self.plot.getViewBox().viewRange()
        return max(y0, 0.0)

    def _float_pinned(self, *_args) -> None:
        """After a vertical scroll: the pinned block at the top of the view, and the header of the process
        whose threads are scrolled under it held just below (sticky), over an opaque backdrop; the track
        names follow them."""
        top = self.view_top()
        ticks: list[tuple[float, str]] = []
        if self._pinned_offsets:
            ticks.append((top + 0.5, "Pinned"))
            for lane, offset in self._pinned_offsets:
                lane.item.set_y(top + offset)
                ticks.append((top + offset + 0.45, f"   {lane.label}"))
        content_top = top + self.pinned_rows
        self.sticky = None
        if top > 0:
            for group in self.groups:
                if group.y0 < content_top - 1e-9 and group.y1 > content_top + PROCESS_HEADER_ROWS:
                    self.sticky = (content_top, group.pid)
                    ticks.append((content_top + 0.5, f"▾ {group.name}"))
                    break
        covered = content_top + (PROCESS_HEADER_ROWS if self.sticky else 0.0)
        ticks.extend(t for t in self._content_ticks if t[0] >= covered + 0.2 or (top <= 0 and t[0] >= covered))
        self.plot.getAxis("left").setTicks([ticks, []])
        self.backdrop.update_area(top, self.pinned_rows, self.sticky is not None)
        self._sync_scrollbar()

    #: scrollbar steps per row
    SCROLL_STEPS = 100

    def _sync_scrollbar(self) -> None:
        """The scrollbar's range, page and position from the laid-out height and the view's rows."""
        _, (y0, y1) = self.plot.getViewBox().viewRange()
        page = max(y1 - y0, 1.0)
        bar = self.scrollbar
        bar.blockSignals(True)
        bar.setRange(0, int(max(self.total_rows - page, 0.0) * self.SCROLL_STEPS))
        bar.setPageStep(int(page * self.SCROLL_STEPS))
        bar.setSingleStep(self.SCROLL_STEPS)
        bar.setValue(int(round(max(y0, 0.0) * self.SCROLL_STEPS)))
        bar.blockSignals(False)

    def _scrolled(self, value: int) -> None:
        vb = self.plot.getViewBox()
        _, (y0, y1) = vb.viewRange()
        top = value / self.SCROLL_STEPS
        vb.setYRange(top, top + (y1 - y0), padding=0.0)

    def covered_rows(self) -> float:
        """Rows at the top of the view covered by the pinned block and a sticky header."""
        return self.pinned_rows + (PROCESS_HEADER_ROWS if self.sticky else 0.0)

    def toggle_group(self, pid: int) -> None:
        """Collapse or expand a process group."""
        for group in self.groups:
            if group.pid == pid:
                group.collapsed = not group.collapsed
        self._layout()

    def set_collapsed(self, collapsed: bool) -> None:
        """Collapse (or expand) every process group: View > Collapse all / Expand all."""
        for group in self.groups:
            group.collapsed = collapsed
        self._layout()

    def set_track_filter(self, text: str) -> None:
        """Show only the tracks whose process or thread name or id contains ``text`` (case-insensitive)."""
        self.track_filter = text.strip().casefold()
        self._layout()

    def pin(self, key: tuple) -> None:
        """Pin a track to the top; a thread's state strip goes with it (they read as one)."""
        keys = [key] + ([("state", key[1])] if key[0] == "thread" else [])
        known = {lane.key for lane in self.lanes()}
        for k in keys:
            if k in known and k not in self.pinned:
                self.pinned.append(k)
        self._layout()

    def unpin(self, key: tuple) -> None:
        keys = [key] + ([("state", key[1])] if key[0] == "thread" else [])
        for k in keys:
            if k in self.pinned:
                self.pinned.remove(k)
        self._layout()

    def pin_process(self, pid: int) -> None:
        """Pin every lane of a process (Perfetto pins whole processes too)."""
        for lane in self.lanes():
            if lane.pid == pid and lane.key not in self.pinned:
                self.pinned.append(lane.key)
        self._layout()

    def lane_at(self, y_rows: float) -> Lane | None:
        """The lane drawn at ``y_rows``: a pinned one over the pinned block, else a visible content lane
        below what the pinned block and a sticky header cover."""
        top = self.view_top()
        if self._pinned_offsets and y_rows < top + self.pinned_rows:
            candidates = [lane for lane, _off in self._pinned_offsets]
        elif y_rows < top + self.covered_rows():
            return None
        else:
            candidates = [lane for lane in self.lanes() if lane.key not in self.pinned]
        for lane in candidates:
            item = lane.item
            if item.isVisible() and item.y0 <= y_rows < item.y0 + item.rows * ROW_HEIGHT + LANE_GAP:
                return lane
        return None

    def header_at(self, y_rows: float):
        top = self.view_top()
        if self._pinned_offsets and top <= y_rows < top + PROCESS_HEADER_ROWS:
            return "pinned"
        if self._pinned_offsets and y_rows < top + self.pinned_rows:
            return None
        if self.sticky is not None and self.sticky[0] <= y_rows < self.sticky[0] + PROCESS_HEADER_ROWS:
            return self.sticky[1]
        for y, what in self.headers:
            if y <= y_rows < y + PROCESS_HEADER_ROWS:
                return what
        return None

    def _context_menu(self, y_rows: float, screen_pos) -> None:
        lane = self.lane_at(y_rows)
        if lane is None:
            return
        menu = QMenu(self)
        if lane.key in self.pinned:
            menu.addAction("Unpin track", lambda: self.unpin(lane.key))
        else:
            menu.addAction("Pin track to the top", lambda: self.pin(lane.key))
        menu.addAction("Pin the whole process", lambda: self.pin_process(lane.pid))
        menu.popup(screen_pos)

    # ------------------------------------------------------------------ bringing things into view
    def locate(self, kind: str, row: int) -> tuple[Lane, float] | None:
        """The lane that draws row ``row`` of ``kind`` and the row within it (depth, async lane), or None."""
        m = self.model
        key: tuple | None = None
        offset = 0.0
        if kind == "slice":
            key, offset = ("thread", int(m.slices.thread[row])), float(m.slices.depth[row])
        elif kind == "async":
            key, offset = ("async", int(m.async_spans.pid[row])), float(m.async_spans.lane[row])
        elif kind == "counter":
            key = ("counter", row >> COUNTER_SAMPLE_BITS)
        elif kind == "log":
            key = ("logs", int(m.logs.pid[row]))
        elif kind == "crash":  # a crash report's mark: on its thread's track
            key = ("thread", int(m.logs.report_marks()[1][row]))
        elif kind == "instant":
            scope = int(m.instants.scope[row])
            key = (("instants", GLOBAL_GROUP) if scope == SCOPE_GLOBAL else ("instants", int(m.instants.pid[row]))
                   if scope == SCOPE_PROCESS else ("thread", int(m.instants.thread[row])))  # fmt: skip
        for lane in self.lanes():
            if key is not None and lane.key == key:
                return lane, offset
            if key is None and getattr(lane.item, "kind", "") == kind and lane.item.lo <= row < lane.item.hi:
                return lane, 0.0
        return None

    def reveal(self, kind: str, row: int) -> bool:
        """Scroll vertically (expanding its process, clearing a track filter that hides it) so that the
        row's box is in view below the pinned block. False when no track draws it."""
        found = self.locate(kind, row)
        if found is None:
            return False
        lane, offset = found
        if lane.key in self.pinned:
            return True
        if not self.lane_passes(lane):
            self.track_filter = ""
            self.filter_box.blockSignals(True)
            self.filter_box.clear()
            self.filter_box.blockSignals(False)
            self._layout()
        group = next(g for g in self.groups if lane in g.lanes)
        if group.collapsed:
            group.collapsed = False
            self._layout()
        vb = self.plot.getViewBox()
        _, (y0, y1) = vb.viewRange()
        height = y1 - y0
        ya = lane.item.y0 + offset
        covered = self.pinned_rows + PROCESS_HEADER_ROWS  # a sticky header may cover one more row
        if ya >= y0 + covered and ya + ROW_HEIGHT <= y1:
            return True
        top = ya - covered - max((height - covered) / 3, 0.0)  # a third of the way down the free area
        top = min(max(top, 0.0), max(self.total_rows - height, 0.0))
        vb.setYRange(top, top + height, padding=0.0)
        return True

    # ------------------------------------------------------------------ search and the track filter
    def _build_search_bar(self) -> QWidget:
        bar = QWidget()
        row = QHBoxLayout(bar)
        row.setContentsMargins(4, 2, 4, 2)
        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText(
            "Search slices, async spans, instants, counters, categories, logs  (Enter: next, Shift+Enter: previous; Ctrl+F)"
        )
        self.search_box.setClearButtonEnabled(True)
        self.search_box.returnPressed.connect(lambda: self.search_step(1))
        self.search_box.textChanged.connect(self._search_changed)
        self.search_status = QLabel("")
        self.filter_box = QLineEdit()
        self.filter_box.setPlaceholderText("Filter tracks")
        self.filter_box.setToolTip("Show only the tracks whose process or thread name or id contains the text")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.setMaximumWidth(260)
        self.filter_box.textChanged.connect(self.set_track_filter)
        collapse = QToolButton()
        collapse.setText("Collapse all")
        collapse.clicked.connect(lambda: self.set_collapsed(True))
        expand = QToolButton()
        expand.setText("Expand all")
        expand.clicked.connect(lambda: self.set_collapsed(False))
        row.addWidget(self.search_box, 1)
        row.addWidget(self.search_status)
        row.addWidget(self.filter_box)
        row.addWidget(collapse)
        row.addWidget(expand)
        for box in (self.search_box, self.filter_box):  # Esc hands the keys back to the timeline
            box.installEventFilter(self)
        shortcut = QShortcut(QKeySequence.StandardKey.Find, self)
        shortcut.activated.connect(lambda: (self.search_box.setFocus(), self.search_box.selectAll()))
        back = QShortcut(QKeySequence("Shift+Return"), self.search_box)
        back.activated.connect(lambda: self.search_step(-1))
        self.hits = search_all(self.model, "")
        self.match_index = -1
        return bar

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt API
        """Esc in the search or filter box gives the focus back to the timeline (W zooms again rather than
        typing a W); the box keeps its text and matches."""
        if event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Escape:
            self.setFocus()
            return True
        return super().eventFilter(obj, event)

    @property
    def matches(self) -> np.ndarray:
        """The thread-slice rows among the search hits, in time order."""
        return self.hits.row[self.hits.kind == 0]

    def _search_changed(self, text: str) -> None:
        self.hits = search_all(self.model, text)
        self.match_index = -1
        self.search_status.setText(f"{len(self.hits)} matches" if text.strip() else "")
        self._show_matches()

    def _show_matches(self) -> None:
        """Matches outlined on the tracks (a mask over each kind's table) and as ticks on the overview."""
        m = self.model
        masks = {}
        for kind, size in (("slice", len(m.slices)), ("async", len(m.async_spans.start)),
                           ("instant", len(m.instants)), ("log", len(m.logs))):  # fmt: skip
            rows = self.hits.rows_of(kind)
            if len(rows):
                mask = np.zeros(size, bool)
                mask[rows] = True
                masks[kind] = mask
        counters = {int(r) >> COUNTER_SAMPLE_BITS for r in self.hits.rows_of("counter").tolist()}
        for lane in self.lanes():
            item = lane.item
            item.match_mask = masks.get(getattr(item, "kind", ""))
            if hasattr(item, "instant_match_mask"):
                item.instant_match_mask = masks.get("instant")
            if isinstance(item, CounterTrackItem):
                item.matched = item.index in counters
            item.update()
        span = max(m.end_ns - m.start_ns, 1)
        x = (self.hits.ts - m.start_ns).astype(np.float64) / 1e9
        if len(x) > 4 * self.OVERVIEW_BINS:  # one tick per bin is all the strip can show
            x = np.unique(np.floor(x / (span / 1e9) * 4 * self.OVERVIEW_BINS)) * (span / 1e9) / (4 * self.OVERVIEW_BINS)
        top = self.overview.getViewBox().viewRange()[1][1]
        self.overview_ticks.setData(np.repeat(x, 2), np.tile([0.0, top], len(x)), connect="pairs")

    def search_step(self, direction: int) -> int:
        """Go to the next (1) or previous (-1) match after the current one, in time order; returns the row
        (of its kind: ``self.hits.kind[self.match_index]``) or -1."""
        if not len(self.hits):
            return -1
        if self.match_index < 0:
            # the first match at or after the middle of the view (or before it, going back)
            (x0, x1), _ = self.plot.getViewBox().viewRange()
            mid = self.model.start_ns + int((x0 + x1) / 2 * 1e9)
            k = int(np.searchsorted(self.hits.ts, mid))
            self.match_index = (k if direction > 0 else k - 1) % len(self.hits)
        else:
            self.match_index = (self.match_index + direction) % len(self.hits)
        kind = KINDS[int(self.hits.kind[self.match_index])]
        row = int(self.hits.row[self.match_index])
        self.go_to_item(kind, row)
        self.search_status.setText(f"{self.match_index + 1} of {len(self.hits)}")
        return row

    # ------------------------------------------------------------------ area selection
    #: lane kinds an area selection sums up (the aggregate panel's tabs)
    AREA_KINDS = ("thread", "async", "cpu", "state")

    def select_area(self, xa: float, xb: float, ya: float, yb: float, final: bool = True) -> tuple[int, int, list]:
        """Mark the time range between two view x positions over the lanes between two y positions (the
        highlight covers those lanes only); on ``final``, emit ``areaSelected`` with the thread tracks in
        it (:attr:`area_keys` holds every lane's key, CPU lanes, state strips and async tracks too).
        Returns (start ns, end ns, threads)."""
        a, b = sorted((xa, xb))
        lo, hi = sorted((ya, yb))
        lanes = [lane for lane in self.visible_lanes()
                 if lane.item.y0 < hi and lane.item.y0 + lane.item.rows * ROW_HEIGHT > lo]  # fmt: skip
        self.area_keys = [lane.key for lane in lanes if lane.key[0] in self.AREA_KINDS]
        if self.area_region is None:
            self.area_region = QGraphicsRectItem()
            pen = QPen(QColor("#2e9e5b"))
            pen.setCosmetic(True)
            self.area_region.setPen(pen)
            self.area_region.setBrush(QColor(46, 158, 91, 40))
            self.area_region.setZValue(30)
            self.plot.addItem(self.area_region, ignoreBounds=True)
        if lanes:
            y0 = min(lane.item.y0 for lane in lanes)
            y1 = max(lane.item.y0 + lane.item.rows * ROW_HEIGHT for lane in lanes)
        else:
            y0, y1 = lo, hi
        self.area_region.setRect(QRectF(a, y0, b - a, y1 - y0))
        self.area_region.show()
        threads = [lane.key[1] for lane in lanes if lane.key[0] == "thread"]
        start, end = self.model.start_ns + round(a * 1e9), self.model.start_ns + round(b * 1e9)
        if final:
            self.areaSelected.emit(start, end, threads)
        return start, end, threads

    def visible_lanes(self) -> list[Lane]:
        """The lanes shown now: pinned ones first, then the content lanes (not under the pinned block)."""
        pinned = [lane for lane, _off in self._pinned_offsets]
        return pinned + [lane for lane in self.lanes() if lane.key not in self.pinned and lane.item.isVisible()]

    # ------------------------------------------------------------------ measuring
    SNAP_PX = 8

    def snap(self, x_s: float, y_rows: float) -> float:
        """``x_s`` moved to the nearest slice start or end of the lane under ``y_rows`` within SNAP_PX
        pixels (Perfetto's measure does not snap; edges are what one measures between)."""
        lane = self.lane_at(y_rows)
        vb = self.plot.getViewBox()
        (x0, x1), _ = vb.viewRange()
        tol = self.SNAP_PX * (x1 - x0) / max(vb.width(), 1.0)
        if lane is None or not hasattr(lane.item, "track"):
            return x_s
        track = lane.item.track
        s = self.model.slices
        o = self.model.start_ns
        # in integers from the trace start: a float of an absolute time hours (or 2**62 ns) after boot
        # is off by up to a microsecond
        t = o + int(round(x_s * 1e9))
        best, best_d = x_s, tol
        for rows in track.by_depth:
            i = int(np.searchsorted(s.ts[rows], t))
            for j in (i - 1, i):
                if 0 <= j < len(rows):
                    r = int(rows[j])
                    for edge in (int(s.ts[r]), int(s.ts[r]) + int(s.dur[r])):
                        d = abs(edge - t) / 1e9
                        if d < best_d:
                            best, best_d = (edge - o) / 1e9, d
        return best

    def measure(self, xa: float, xb: float, y_rows: float, final: bool = True) -> tuple[int, int]:
        """Show the span between two view x positions (snapped); returns it in ns (start, end)."""
        a, b = sorted((self.snap(xa, y_rows), self.snap(xb, y_rows)))
        start, end = self.model.start_ns + round(a * 1e9), self.model.start_ns + round(b * 1e9)
        return self.show_span(start, end, y_rows)

    def show_span(self, start: int, end: int, y_rows: float) -> tuple[int, int]:
        """Mark [start, end) ns with the measure region and its duration label (at row ``y_rows``)."""
        o = self.model.start_ns
        a, b = (start - o) / 1e9, (end - o) / 1e9
        if self.measure_region is None:
            self.measure_region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 170, 0, 45),
                                                      pen=pg.mkPen("#e08a00"))  # fmt: skip
            # over the slices, on its own background: the label never hides behind a track
            self.measure_label = pg.TextItem(color="#5c3800", anchor=(0.5, 1.0), fill=pg.mkBrush(255, 244, 214, 235),
                                             border=pg.mkPen("#e08a00"))  # fmt: skip
            self.measure_label.setZValue(60)
            self.measure_region.setZValue(25)
            self.plot.addItem(self.measure_region, ignoreBounds=True)
            self.plot.addItem(self.measure_label, ignoreBounds=True)
        self.measure_region.setRegion((a, b))
        self.measure_region.show()
        self.measure_label.show()
        from fxscope.app.timeline.details import format_ns

        self.measure_label.setText(f"Δ {format_ns(end - start)}")
        self.measure_label.setPos((a + b) / 2, y_rows)
        self.measured = (start, end)
        return start, end

    def mark_selection(self) -> tuple[int, int] | None:
        """M (as in Perfetto): mark the selection's time span across the tracks, with its duration."""
        span = self.selection_span()
        if span is None:
            self.clear_marks()
            return None
        y = self.selection_y()
        if y is None:
            (_x0, _x1), (y0, _y1) = self.plot.getViewBox().viewRange()
            y = y0 + 1.0
        return self.show_span(span[0], span[1], y)

    def clear_marks(self) -> None:
        """Esc: the measured or marked span, and the area selection, go away."""
        for item in (self.measure_region, self.measure_label, self.area_region):
            if item is not None:
                item.hide()
        self.measured = None

    # ------------------------------------------------------------------ overview strip
    OVERVIEW_BINS = 1000

    def _build_overview(self, model: TraceModel) -> pg.PlotWidget:
        """The whole trace as an event-density strip, with the visible window as a draggable region."""
        strip = pg.PlotWidget(background="#f4f5f7", enableMenu=False, viewBox=pg.ViewBox(enableMenu=False))
        strip.setFixedHeight(46)
        strip.hideAxis("left")
        strip.hideAxis("bottom")
        strip.hideButtons()
        strip.setMouseEnabled(x=False, y=False)
        strip.setMenuEnabled(False)
        span = max(model.end_ns - model.start_ns, 1)
        counts = model.density(self.OVERVIEW_BINS)
        edges = np.linspace(0.0, span / 1e9, self.OVERVIEW_BINS + 1)
        level = np.log1p(counts).astype(np.float64)
        self.density_curve = strip.plot(edges, level, stepMode="center", fillLevel=0, brush=pg.mkBrush("#9aa7b8"),
                                        pen=pg.mkPen("#6b7a90"))  # fmt: skip
        strip.setXRange(0.0, span / 1e9, padding=0.0)
        strip.setYRange(0.0, max(float(level.max()), 1.0), padding=0.05)
        self.region = pg.LinearRegionItem(brush=pg.mkBrush(31, 78, 156, 50), pen=pg.mkPen("#1f4e9c"))
        self.region.setZValue(10)
        strip.addItem(self.region)
        self.overview_ticks = pg.PlotCurveItem(pen=pg.mkPen("#d08a00", width=1))  # search matches
        self.overview_ticks.setZValue(5)
        strip.addItem(self.overview_ticks)
        strip.scene().sigMouseClicked.connect(self._overview_clicked)
        return strip

    def _sync_overview(self, *_args) -> None:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        self.region.blockSignals(True)
        self.region.setRegion((x0, x1))
        self.region.blockSignals(False)

    def _overview_moved(self) -> None:
        x0, x1 = self.region.getRegion()
        if x1 > x0:
            self.plot.getViewBox().setXRange(x0, x1, padding=0.0)

    def _overview_clicked(self, event) -> None:
        """A click on the strip centres the timeline there, keeping the zoom."""
        x = self.overview.getViewBox().mapSceneToView(event.scenePos()).x()
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        half = (x1 - x0) / 2
        self.plot.getViewBox().setXRange(x - half, x + half, padding=0.0)

    def show_time(self, ts_ns: int) -> None:
        """Mark ``ts_ns`` with a line and bring it to the middle of the view (a log line was clicked)."""
        x = (ts_ns - self.model.start_ns) / 1e9
        self.marker.setPos(x)
        self.marker.show()
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        half = (x1 - x0) / 2
        self.plot.getViewBox().setXRange(x - half, x + half, padding=0.0)

    # ------------------------------------------------------------------ navigation
    #: pixels per track row: tracks keep their height when the window grows or shrinks, and the view
    #: scrolls, as in Perfetto (stretching 40 rows into a short window made labels overlap)
    ROW_PX = 19.0

    def visible_rows(self) -> float:
        """How many rows the view shows at :attr:`ROW_PX` (40 before it has a size)."""
        height = self.plot.getViewBox().height()
        return height / self.ROW_PX if height > 1 else 40.0

    def _keep_row_height(self, *_args) -> None:
        """After a resize or a new layout: the same top row, rows :attr:`ROW_PX` high, blank space below
        the last track rather than stretched tracks."""
        vb = self.plot.getViewBox()
        rows = self.visible_rows()
        vb.setLimits(yMin=0.0, yMax=max(self.total_rows, rows, 1.0))
        _, (y0, _y1) = vb.viewRange()
        top = min(max(y0, 0.0), max(self.total_rows - rows, 0.0))
        vb.setYRange(top, top + rows, padding=0.0)

    def fit_all(self) -> None:
        vb = self.plot.getViewBox()
        vb.setXRange(0.0, self.duration_s, padding=0.01)
        vb.setYRange(0.0, self.visible_rows(), padding=0.0)

    def set_range_ns(self, start_ns: int, end_ns: int) -> None:
        o = self.model.start_ns
        self.plot.getViewBox().setXRange((start_ns - o) / 1e9, (end_ns - o) / 1e9, padding=0.0)

    def visible_range_ns(self) -> tuple[int, int]:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        o = self.model.start_ns
        return o + int(x0 * 1e9), o + int(x1 * 1e9)

    def zoom(self, factor: float, anchor: float | None = None) -> None:
        """Scale the visible time span by ``factor`` keeping view x ``anchor`` where it is on screen (the
        pointer's time, as Perfetto's W/S keep it); the centre when None."""
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        if anchor is None or not x0 <= anchor <= x1:
            anchor = (x0 + x1) / 2
        self.plot.getViewBox().setXRange(anchor - (anchor - x0) * factor, anchor + (x1 - anchor) * factor, padding=0.0)

    def reset_zoom(self) -> None:
        """View > Reset zoom: the whole trace, scrolled to the top."""
        self.fit_all()

    def pan(self, fraction: float) -> None:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        shift = (x1 - x0) * fraction
        self.plot.getViewBox().setXRange(x0 + shift, x1 + shift, padding=0.0)

    def scroll_rows(self, rows: float) -> None:
        """Scroll the tracks vertically by ``rows`` (within the laid-out height)."""
        vb = self.plot.getViewBox()
        _, (y0, y1) = vb.viewRange()
        height = y1 - y0
        top = min(max(y0 + rows, 0.0), max(self.total_rows - height, 0.0))
        vb.setYRange(top, top + height, padding=0.0)

    def fit_selection(self) -> None:
        """F: the selection fills the view (with a margin; a point in time gets a 10 us window); with
        nothing selected, the whole trace."""
        span = self.selection_span()
        if span is None:
            self.fit_all()
            return
        start, end = span
        dur = max(end - start, 10_000 if end == start else 1)
        if end == start:
            start -= dur // 2
        self.set_range_ns(start - dur // 10, start + dur + dur // 10)

    def selection_span(self) -> tuple[int, int] | None:
        """(start ns, end ns) of the selected row, from its table; None when nothing is selected."""
        kind, row = self.selection
        m = self.model
        if row < 0:
            return None
        if kind == "slice":
            return int(m.slices.ts[row]), int(m.slices.ts[row]) + int(m.slices.dur[row])
        if kind in ("async", "cpu", "state"):
            table = {"async": lambda: m.async_spans, "cpu": lambda: m.sched.cpu_slices,
                     "state": lambda: m.sched.thread_states}[kind]()  # fmt: skip
            return int(table.start[row]), int(table.end[row])
        if kind == "counter":
            d = counter_details(m, row)
            return int(d["ts_ns"]), int(d["ts_ns"]) + int(d["duration_ns"])
        if kind == "crash":
            ts = m.logs.report_marks()[0]
            return int(ts[row]), int(ts[row])
        ts = m.instants.ts if kind == "instant" else m.logs.ts
        return int(ts[row]), int(ts[row])

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        key = event.key()
        if key == Qt.Key.Key_W:
            self.zoom(ZOOM_STEP, self.pointer_x)
        elif key == Qt.Key.Key_S:
            self.zoom(1 / ZOOM_STEP, self.pointer_x)
        elif key == Qt.Key.Key_A:
            self.pan(-PAN_STEP)
        elif key == Qt.Key.Key_D:
            self.pan(PAN_STEP)
        elif key == Qt.Key.Key_F:
            self.fit_selection()
        elif key == Qt.Key.Key_BracketRight:
            self.follow_flow(outgoing=True)
        elif key == Qt.Key.Key_BracketLeft:
            self.follow_flow(outgoing=False)
        elif key == Qt.Key.Key_M:
            self.mark_selection()
        elif key == Qt.Key.Key_Escape:
            self.clear_marks()
            self.select_item("", -1)
        elif key == Qt.Key.Key_Question:
            self.show_shortcuts()
        else:
            super().keyPressEvent(event)

    def show_shortcuts(self):
        """?: the keys and mouse gestures of the timeline, in a small non-modal window."""
        from fxscope.app.timeline.shortcuts import ShortcutsDialog

        if getattr(self, "_shortcuts", None) is None:
            self._shortcuts = ShortcutsDialog(self)
        self._shortcuts.show()
        self._shortcuts.raise_()
        return self._shortcuts

    # ------------------------------------------------------------------ selection
    def hit_test(self, x_s: float, y_rows: float) -> int:
        """Slice row under view coordinates (seconds from start, rows), or -1."""
        t = self.model.start_ns + int(round(x_s * 1e9))
        lane = self.lane_at(y_rows)
        item = lane.item if lane is not None else None
        if isinstance(item, SliceTrackItem) and y_rows < item.y0 + item.rows * ROW_HEIGHT:
            return self.model.slice_at(item.track, int((y_rows - item.y0) // ROW_HEIGHT), t)
        return -1

    def hit_item(self, x_s: float, y_rows: float) -> tuple[str, int]:
        """(kind, table row) of the box under view coordinates, on any box track (thread slices, async
        spans, CPU slices, thread states), or ("", -1)."""
        t = self.model.start_ns + int(round(x_s * 1e9))
        vb = self.plot.getViewBox()
        (x0, x1), _ = vb.viewRange()
        tol_ns = 4 * (x1 - x0) * 1e9 / max(vb.width(), 1.0)  # points in time: within 4 pixels
        lane = self.lane_at(y_rows)
        item = lane.item if lane is not None else None
        if item is not None and hasattr(item, "hit") and y_rows < item.y0 + item.rows * ROW_HEIGHT:
            return item.hit(y_rows - item.y0, t, tol_ns)
        return "", -1

    def select(self, row: int) -> None:
        """Select thread slice ``row`` (-1: clear the selection)."""
        self.select_item("slice" if row >= 0 else "", row)

    def select_item(self, kind: str, row: int) -> None:
        """Select a row of one kind ("slice", "async", "cpu", "state", "instant", "log"); ("", -1) clears.
        Emits ``itemSelected`` and, for thread slices (or a cleared selection), ``sliceSelected``."""
        self.selection = (kind, row) if row >= 0 else ("", -1)
        self.selected_row = row if kind == "slice" else -1
        instant = row if kind == "instant" else -1
        for lane in self.lanes():
            item = lane.item
            new = row if getattr(item, "kind", "") == kind else -1
            changed = getattr(item, "selected_row", -1) != new or new >= 0
            if hasattr(item, "selected_row"):
                item.selected_row = new
            if hasattr(item, "selected_instant"):  # a thread's instants are drawn on its slice track
                changed |= item.selected_instant != instant or instant >= 0
                item.selected_instant = instant
            if hasattr(item, "selected_crash"):  # and its crash reports
                crash = row if kind == "crash" else -1
                changed |= item.selected_crash != crash or crash >= 0
                item.selected_crash = crash
            if changed:
                item.update()
        self.flow_arrows.show_for(self.selected_row)
        self.wakeup_arrow.show_for(kind, row)
        if kind == "slice" or row < 0:
            self.sliceSelected.emit(self.selected_row)
        self.itemSelected.emit(self.selection[0], self.selection[1])

    def lane_y(self, key: tuple) -> float | None:
        """Middle of a lane's first row in view units, or None when it is collapsed (or absent)."""
        lane = next((lane for lane in self.lanes() if lane.key == key), None)
        if lane is None or not lane.item.isVisible():
            return None
        return lane.item.y0 + 0.43

    def selection_y(self) -> float | None:
        """Middle of the selected box's row in view units (None: hidden, or nothing selected)."""
        kind, row = self.selection
        if kind == "slice":
            return self.slice_y(row)
        if kind == "crash":  # the top row of the report's thread
            thread = int(self.model.logs.report_marks()[1][row])
            item = next((it for it in self.items if it.track.thread == thread), None)
            return item.y0 + 0.43 if item is not None and item.isVisible() else None
        for lane in self.lanes():
            item = lane.item
            if kind in ("cpu", "state") and getattr(item, "kind", "") == kind and item.lo <= row < item.hi:
                return item.y0 + 0.43 if item.isVisible() else None
        return None

    def slice_y(self, row: int) -> float | None:
        """Middle of a slice's row in view units, or None when its track is collapsed."""
        thread = int(self.model.slices.thread[row])
        for item in self.items:
            if item.track.thread == thread:
                if not item.isVisible():
                    return None
                return item.y0 + int(self.model.slices.depth[row]) * ROW_HEIGHT + 0.43
        return None

    def follow_flow(self, outgoing: bool) -> int:
        """Select the slice at the other end of the selection's first outgoing (``]``) or incoming (``[``)
        flow and bring it into view; returns it (-1: none)."""
        if self.selected_row < 0:
            return -1
        flows = self.model.flows
        links = flows.outgoing(self.selected_row) if outgoing else flows.incoming(self.selected_row)
        if not len(links):
            return -1
        link = int(links[0])
        other = int(flows.dst_slice[link] if outgoing else flows.src_slice[link])
        self.go_to_slice(other)
        return other

    def go_to_item(self, kind: str, row: int) -> None:
        """Select a row of any kind and centre it, keeping the zoom; scroll (and expand its process) so
        that its box is in view."""
        self.reveal(kind, row)
        self.select_item(kind, row)
        span = self.selection_span()
        if span is None:
            return
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        half = (x1 - x0) / 2
        mid = ((span[0] + span[1]) // 2 - self.model.start_ns) / 1e9
        self.plot.getViewBox().setXRange(mid - half, mid + half, padding=0.0)

    def go_to_slice(self, row: int) -> None:
        """Select ``row`` and centre it, keeping the zoom; scroll (and expand its process) so that it is in
        view."""
        self.reveal("slice", row)
        self.select(row)
        s = self.model.slices
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        half = (x1 - x0) / 2
        mid = (int(s.ts[row]) + int(s.dur[row]) // 2 - self.model.start_ns) / 1e9
        self.plot.getViewBox().setXRange(mid - half, mid + half, padding=0.0)

    def describe(self, kind: str, row: int) -> str:
        """One line about a box or point, for the hover tooltip: its name and how long it lasted."""
        from fxscope.app.timeline.details import format_ns

        m = self.model
        if kind == "slice":
            return f"{m.name_of(row)}  {format_ns(int(m.slices.dur[row]))}  ·  {m.thread_name(int(m.slices.thread[row]))}"
        if kind == "async":
            t = m.async_spans
            name = int(t.name[row])
            text = m.strings[name] if 0 <= name < len(m.strings) else "?"
            return f"{text} (async)  {format_ns(int(t.end[row]) - int(t.start[row]))}"
        if kind == "cpu":
            cs = m.sched.cpu_slices
            return f"{m.objects.koid_label(int(cs.tid[row]))}  {format_ns(int(cs.end[row]) - int(cs.start[row]))}"
        if kind == "state":
            from fxscope.core.trace.sched import STATE_NAMES

            st = m.sched.thread_states
            return f"{STATE_NAMES.get(int(st.state[row]), '?')}  {format_ns(int(st.end[row]) - int(st.start[row]))}"
        if kind == "instant":
            name = int(m.instants.name[row])
            return m.strings[name] if 0 <= name < len(m.strings) else "?"
        if kind == "log":
            text = m.logs.text(row)
            return text if len(text) <= 120 else text[:117] + "…"
        if kind == "crash":
            return f"crash report {row + 1}: click to open it"
        if kind == "counter":
            d = counter_details(m, row)
            from fxscope.core.units import format_quantity

            return f"{d['series']} = {format_quantity(d['value'])}"
        return ""

    def _hover(self, scene_pos) -> None:
        """The box under the pointer, named in a tooltip at once (as Perfetto's hover shows it)."""
        from PySide6.QtGui import QCursor
        from PySide6.QtWidgets import QToolTip

        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            found = ("", -1)
            self.set_pointer(None)
        else:
            pos = vb.mapSceneToView(scene_pos)
            self.set_pointer(pos.x())
            found = self.hit_item(pos.x(), pos.y())
        if found == self._hovered:
            return
        self._hovered = found
        if found[1] < 0:
            QToolTip.hideText()
            return
        QToolTip.showText(QCursor.pos(), self.describe(*found), self.plot)

    def _on_click(self, event) -> None:
        pos = self.plot.getViewBox().mapSceneToView(event.scenePos())
        self.setFocus()
        if event.button() == Qt.MouseButton.RightButton:
            self._context_menu(pos.y(), event.screenPos().toPoint())
            return
        header = self.header_at(pos.y())
        if isinstance(header, int):  # a process header: collapse or expand the group
            self.toggle_group(header)
            return
        self.select_item(*self.hit_item(pos.x(), pos.y()))

    def set_pointer(self, x: float | None) -> None:
        """The view x under the mouse pointer (None: it left the tracks): W/S zoom around it and the
        counter tracks show their value there."""
        if x == self.pointer_x:
            return
        self.pointer_x = x
        for lane in self.lanes():
            if isinstance(lane.item, CounterTrackItem) and lane.item.isVisible():
                lane.item.set_cursor(None if x is None else self.model.start_ns + int(round(x * 1e9)))

    def leaveEvent(self, event) -> None:  # noqa: N802 - Qt API
        self.set_pointer(None)
        super().leaveEvent(event)

    # ------------------------------------------------------------------ theme
    def set_theme(self, theme: Theme) -> None:
        """Paint with ``theme``'s colours (View > Theme)."""
        self.theme = theme
        self.plot.setBackground(theme.plot_background)
        self.overview.setBackground(theme.overview_background)
        self.density_curve.setBrush(pg.mkBrush(theme.density))
        self.density_curve.setPen(pg.mkPen(theme.summary))
        self.grid.set_colour(theme.grid)
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setTextPen(pg.mkPen(theme.axis_text))
            axis.setPen(pg.mkPen(theme.grid))
        for group in self.groups:
            if group.summary is not None:
                group.summary.set_colour(theme.summary)
        mark = QBrush(QColor(theme.mark))
        for lane in self.lanes():
            item = lane.item
            if isinstance(item, SliceTrackItem):
                item.instant_brush = mark
            elif isinstance(item, MarkerTrackItem) and item.kind == "instant":
                item._brush = mark
            item.update()
        self.flow_arrows.set_colour(theme.mark)
        self.backdrop.update()
        self.plot.getAxis("left").update()
