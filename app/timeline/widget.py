"""The timeline widget: tracks stacked by process and thread on one zoomable time axis.

Navigation follows Perfetto: W/S zoom around the pointer (the centre when it is elsewhere), A/D pan,
Ctrl+wheel zooms, the wheel and the scrollbar scroll the tracks, drag pans, F fits the selection (or the
whole trace). Pinned tracks stay in a block on top of the view, the header of the process scrolled under
it stays too (sticky); a track filter and collapse/expand all keep hundreds of threads navigable. The x axis is seconds from the trace start and pyqtgraph picks the unit
(s, ms, us, ns) as the user zooms.

This class puts the parts together and keeps Qt in step with them: which tracks there are and where they
go is :mod:`fxscope.core.timeline.track_order` and :mod:`fxscope.core.timeline.layout`, what is selected,
measured or searched is :mod:`fxscope.core.timeline.view_state`, hover text is
:func:`fxscope.core.trace.details.describe`; the search bar, overview strip, measure marks, view box,
overlay items, track items and their selection and match marks are modules of their own here. What is
left (~800 lines) is one job: keeping the Qt view (the view box's range, the items' y and visibility, the
axis names, the scrollbar, the overview window) in step with that state, and turning keys and clicks into
changes of it; its methods are the timeline's public API (lanes, reveal, locate, select_area, pin...).
"""

from __future__ import annotations

import gc

import numpy as np
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsView,
    QHBoxLayout,
    QMenu,
    QScrollBar,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.pyqtgraph_import import pg
from fxscope.app.theme import LIGHT, Theme
from fxscope.app.timeline.counter_track import CounterTrackItem
from fxscope.app.timeline.debug_track_items import make_debug_item
from fxscope.app.timeline.marker_track import MarkerTrackItem
from fxscope.app.timeline.measure import MeasureMarks
from fxscope.app.timeline.overlays import FlowArrowsItem, PinnedBackdropItem, TimeGridItem, WakeupItem
from fxscope.app.timeline.overview import OverviewStrip
from fxscope.app.timeline.search_bar import SearchBar
from fxscope.app.timeline.search_indexing import START_DELAY_MS, SearchIndexing
from fxscope.app.timeline.slice_track import SliceTrackItem
from fxscope.app.timeline.summary_track import GroupSummaryItem
from fxscope.app.timeline.time_axis import TimeAxisItem
from fxscope.app.timeline.track_marks import mark_matches, mark_selected
from fxscope.app.timeline.track_menu import build_track_menu
from fxscope.app.timeline.tracks import make_item
from fxscope.app.timeline.view_activity import ViewActivity
from fxscope.app.timeline.viewbox import TimelineViewBox
from fxscope.core.timeline import view_state
from fxscope.core.timeline.debug_tracks import KIND as DEBUG_KIND
from fxscope.core.timeline.debug_tracks import DebugTracks
from fxscope.core.timeline.layout import (
    CPU_GROUP,
    GLOBAL_GROUP,
    LANE_GAP,
    PROCESS_HEADER_ROWS,
    ROW_HEIGHT,
    Group,
    Lane,
    TrackLayout,
)
from fxscope.core.timeline.track_order import BUILDING, STATE_STRIP, take_groups, thread_tracks
from fxscope.core.timeline.view_state import AREA_KINDS, SearchState, ViewState
from fxscope.core.trace.details import describe
from fxscope.core.trace.model import TraceModel
from fxscope.core.units import format_duration_ns

__all__ = ["CPU_GROUP", "GLOBAL_GROUP", "LANE_GAP", "PROCESS_HEADER_ROWS", "Group", "Lane", "TimelineWidget"]

#: the kinds of track that a "building…" track of each background build step stands for (its pin carries
#: over to them)
BUILT_KINDS = {"async_pyramid": ("async",), "counters": ("counter",), "sched": ("cpu",), "instants": ("instants",)}
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
    #: "Analyse thread/process" in a track's menu: ("thread", reader thread index) or ("process", pid)
    analyseRequested = Signal(str, object)

    def __init__(self, model: TraceModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.state = ViewState(model)
        self.search = SearchState(model)
        self.highlighted = np.zeros(0, np.int64)  # slice rows outlined besides the search's (highlight_slices)
        self.plot = pg.PlotWidget(background="w", viewBox=TimelineViewBox(self), axisItems={"bottom": TimeAxisItem()})
        self.plot.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # the background filled at each paint, not copied from a cached pixmap (pyqtgraph's default): a solid
        # colour either way, and the fill writes the viewport once where the copy read and wrote it (~1 ms of
        # a frame's CPU at 1920x1080, every frame: 10M events, pan/zoom p50 14.4 -> 13.0 ms)
        self.plot.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
        # and only there: the view's paint fills its whole viewport (that background, then the tracks), so Qt's
        # own fill of the viewport with the palette before each paint (the widget's erase: another 1920x1080
        # write a frame) is skipped (10M events, the benchmark's pan/zoom steps with the tracks' drawing
        # stubbed, alternating in one process: 7.5-8.1 -> 6.8-7.1 ms a frame; the window's pixels the same)
        self.plot.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        # background builds pause while the view draws frames or takes input (app/timeline/view_activity.py)
        self._activity = ViewActivity(self)
        self.plot.viewport().installEventFilter(self._activity)
        self.installEventFilter(self._activity)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self._build_search_bar())
        self.overview = OverviewStrip(model)
        self.density_curve, self.region = self.overview.density_curve, self.overview.region
        self.overview_ticks = self.overview.overview_ticks
        self.overview.clicked.connect(self._overview_clicked)
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
        # two tick levels (labelled and minor, as the grid's lines): pyqtgraph's third level is ~90 ticks a
        # frame that no one reads, and half the axis' cost on every pan or zoom
        bottom.setStyle(maxTickLevel=1)
        # the tracks and their order (core), one graphics item per lane
        self.layout_state = TrackLayout(take_groups(model))  # (built by the loader thread, when it loaded the trace)
        self.debug_tracks = DebugTracks()  # query results added as tracks (the Query tab)
        self.items: list[SliceTrackItem] = []
        for lane in self.layout_state.lanes():
            lane.item = make_item(model, lane)
            self.plot.addItem(lane.item, ignoreBounds=True)
            if isinstance(lane.item, SliceTrackItem):
                self.items.append(lane.item)
        for group in self.groups:
            tracks = thread_tracks(group)
            if tracks:
                group.summary = GroupSummaryItem(model, tracks, 0.0)
                self.plot.addItem(group.summary, ignoreBounds=True)
        self.backdrop = PinnedBackdropItem(self)
        self.plot.addItem(self.backdrop, ignoreBounds=True)
        left = self.plot.getAxis("left")
        left.setStyle(tickLength=0, textFillLimits=[(0, 2.0), (2, 2.0)])
        # the track names do not change when the view pans: keep their rendering as a pixmap
        left.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if self.layout_state.expanded_rows() > self.collapse_above_rows():  # hundreds of threads: collapsed
            self.layout_state.collapse_processes()
        self._user_collapsed = False  # the user collapsed or expanded groups (a refresh keeps that)
        self._layout()
        self._size_axis()
        self.duration_s = (model.end_ns - model.start_ns) / 1e9
        vb.setLimits(xMin=-0.05 * self.duration_s, xMax=1.05 * self.duration_s, minXRange=1e-9)
        self.fit_all()
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.plot.scene().sigMouseMoved.connect(self._hover)
        self._hovered: tuple[str, int] = ("", -1)
        self.pointer_x: float | None = None  # view x under the mouse pointer, None when it is elsewhere
        self.flow_arrows = FlowArrowsItem(self)
        self.plot.addItem(self.flow_arrows, ignoreBounds=True)
        self.wakeup_arrow = WakeupItem(self)
        self.plot.addItem(self.wakeup_arrow, ignoreBounds=True)
        vb.sigXRangeChanged.connect(self._sync_overview)
        vb.sigYRangeChanged.connect(self._float_pinned)
        vb.sigResized.connect(self._keep_row_height)
        self.region.sigRegionChanged.connect(self._overview_moved)
        self._sync_overview()
        self.marks = MeasureMarks(self.plot)
        self.theme = LIGHT
        self._float_pinned()

    # ------------------------------------------------------------------ state held in core
    @property
    def groups(self) -> list[Group]:
        return self.layout_state.groups

    @property
    def pinned(self) -> list[tuple]:
        return self.layout_state.pinned

    @property
    def track_filter(self) -> str:
        return self.layout_state.track_filter

    @property
    def headers(self) -> list[tuple[float, object]]:
        return self.layout_state.headers

    @property
    def sticky(self) -> tuple[float, int] | None:
        return self.layout_state.sticky

    @property
    def pinned_rows(self) -> float:
        return self.layout_state.pinned_rows

    @property
    def total_rows(self) -> float:
        return self.layout_state.total_rows

    @property
    def selection(self) -> tuple[str, int]:
        return self.state.selection

    @property
    def selected_row(self) -> int:
        return self.state.selected_slice

    @property
    def measured(self) -> tuple[int, int] | None:
        return self.state.measured

    @property
    def area_keys(self) -> list[tuple]:
        return self.state.area_keys

    @property
    def hits(self):
        return self.search.hits

    @property
    def match_index(self) -> int:
        return self.search.index

    @property
    def measure_region(self):
        return self.marks.measure_region

    @property
    def measure_label(self):
        return self.marks.measure_label

    @property
    def area_region(self):
        return self.marks.area_region

    @property
    def marker(self):
        return self.marks.marker

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

    def lanes(self) -> list[Lane]:
        return self.layout_state.lanes()

    def lane_passes(self, lane: Lane) -> bool:
        """Whether the track filter shows ``lane`` (its process or thread name or id contains the text)."""
        return self.layout_state.lane_passes(lane)

    def _layout(self) -> None:
        """Place every lane (:meth:`TrackLayout.place`) and move the items there: tracks keep their items;
        only their y, stacking and visibility change."""
        self.layout_state.place()
        for group in self.groups:
            if group.summary is not None:
                if group.y0 >= 0:
                    group.summary.set_y(group.y0)
                group.summary.setVisible(group.summary_shown)
        for lane in self.layout_state.lanes():
            item = lane.item
            if lane.visible:
                if not lane.on_top:
                    item.set_y(lane.y0)
                item.setZValue(20 if lane.on_top else 0)
            item.setVisible(lane.visible)
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
        ticks = self.layout_state.float_pinned(top)
        for lane, _offset in self.layout_state.pinned_offsets:
            lane.item.set_y(lane.y0)
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
        bar.setValue(round(max(y0, 0.0) * self.SCROLL_STEPS))
        bar.blockSignals(False)

    def _scrolled(self, value: int) -> None:
        vb = self.plot.getViewBox()
        _, (y0, y1) = vb.viewRange()
        top = value / self.SCROLL_STEPS
        vb.setYRange(top, top + (y1 - y0), padding=0.0)

    def covered_rows(self) -> float:
        """Rows at the top of the view covered by the pinned block and a sticky header."""
        return self.layout_state.covered_rows()

    def toggle_group(self, pid: int) -> None:
        """Collapse or expand a process group."""
        self._user_collapsed = True
        self.layout_state.toggle_group(pid)
        self._layout()

    def set_collapsed(self, collapsed: bool) -> None:
        """Collapse (or expand) every process group: View > Collapse all / Expand all."""
        self._user_collapsed = True
        self.layout_state.set_collapsed(collapsed)
        self._layout()

    def set_track_filter(self, text: str) -> None:
        """Show only the tracks whose process or thread name or id contains ``text`` (case-insensitive)."""
        self.layout_state.set_track_filter(text)
        self._layout()

    def pin(self, key: tuple) -> None:
        """Pin a track to the top; a thread's state strip goes with it (they read as one)."""
        self.layout_state.pin(key)
        self._layout()

    def unpin(self, key: tuple) -> None:
        self.layout_state.unpin(key)
        self._layout()

    def pin_process(self, pid: int) -> None:
        """Pin every lane of a process (Perfetto pins whole processes too)."""
        self.layout_state.pin_process(pid)
        self._layout()

    def lane_at(self, y_rows: float) -> Lane | None:
        """The lane drawn at ``y_rows``: a pinned one over the pinned block, else a visible content lane
        below what the pinned block and a sticky header cover."""
        return self.layout_state.lane_at(y_rows, self.view_top())

    def header_at(self, y_rows: float):
        return self.layout_state.header_at(y_rows, self.view_top())

    def track_menu(self, y_rows: float) -> QMenu | None:
        """The right-click menu of the track or process header at ``y_rows`` (:mod:`.track_menu`)."""
        return build_track_menu(self, y_rows)

    def _context_menu(self, y_rows: float, screen_pos) -> None:
        menu = self.track_menu(y_rows)
        if menu is not None:
            menu.popup(screen_pos)

    def _size_axis(self) -> None:
        """pyqtgraph drops a tick label that does not fit the axis: size the axis to the longest name."""
        left = self.plot.getAxis("left")
        metrics = QFontMetrics(left.font() if hasattr(left, "font") else QFont())
        labels = [f"   {lane.label}" for g in self.groups for lane in g.lanes] + [f"▾ {g.name}" for g in self.groups]
        widest = max((metrics.horizontalAdvance(text) for text in labels), default=100)
        self.axis_width = min(widest + 24, 360)
        left.setWidth(self.axis_width)
        self.overview.align_left(self.axis_width)  # the strip's time axis lines up with the timeline's

    # ------------------------------------------------------------------ tracks built after the first frame
    def tables_built(self, step: str, groups: list[Group] | None) -> None:
        """The background build made step ``step``'s table (:func:`fxscope.core.trace.prepare.prepare_tracks`):
        the overview's density, or a kind of track whose "building…" lanes give way to the real ones
        (``groups``: the track list :func:`build_groups` made in that build's thread, off the UI thread)."""
        if step == "density":
            self.overview.show_density()
        if step == "instants":  # the instants drawn on the thread tracks
            for item in self.items:
                item.instants_built()
        if groups is not None:
            self.replace_groups(groups)

    def replace_groups(self, groups: list[Group]) -> None:
        """Show ``groups`` (the same trace's track list with more of its tables built) in place of the current
        ones: lanes of the same key keep their items (a thread's slices, its pictures), the others are made
        or dropped; pins, the filter, collapsed groups, the selection and search marks carry over, as do the
        query's debug tracks."""
        old = self.layout_state
        by_key = {lane.key: lane for lane in old.lanes()}
        old_groups = {g.pid: g for g in old.groups}
        debug = [g for g in old.groups if g.lanes and g.lanes[0].key[0] == DEBUG_KIND]
        groups = debug + [g for g in groups if g.pid not in {d.pid for d in debug}]
        for group in groups:
            for lane in group.lanes:
                before = by_key.get(lane.key)
                if before is not None and before.item is not None and lane.key[0] != BUILDING:
                    lane.item = before.item
                elif lane.item is None:
                    lane.item = make_item(self.model, lane)
                    self.plot.addItem(lane.item, ignoreBounds=True)
            if group.summary is None:
                before_group = old_groups.get(group.pid)
                if before_group is not None and before_group.summary is not None:
                    group.summary = before_group.summary
                elif tracks := thread_tracks(group):
                    group.summary = GroupSummaryItem(self.model, tracks, 0.0)
                    self.plot.addItem(group.summary, ignoreBounds=True)
        used = {id(lane.item) for g in groups for lane in g.lanes}
        for lane in by_key.values():
            if lane.item is not None and id(lane.item) not in used:
                self.plot.removeItem(lane.item)
        summaries = {id(g.summary) for g in groups if g.summary is not None}
        for group in old.groups:
            if group.summary is not None and id(group.summary) not in summaries:
                self.plot.removeItem(group.summary)
        layout = TrackLayout(groups)
        layout.track_filter = old.track_filter
        pinned = []
        for key in old.pinned:  # a pinned "building…" track: the tracks it stood for, pinned
            if key[0] == BUILDING and layout.lane(key) is None:
                if key[1] == STATE_STRIP:  # (a thread's state strip: its third element is the thread)
                    pinned.append(("state", key[2]))
                kinds = BUILT_KINDS.get(key[1], ())
                pinned += [lane.key for lane in layout.lanes() if lane.key[0] in kinds and lane.pid == key[2]]
            else:  # a thread pinned while its state strip was building: the strip with it, as a pin does
                pinned += TrackLayout._with_state(key)
        layout.pinned = [key for key in dict.fromkeys(pinned) if layout.lane(key) is not None]
        if self._user_collapsed or layout.expanded_rows() <= self.collapse_above_rows():
            for group in groups:
                before_group = old_groups.get(group.pid)
                group.collapsed = before_group.collapsed if before_group is not None else False
        else:  # too tall now that every track is in: as it would have opened
            layout.collapse_processes()
        self.layout_state = layout
        self.items = [lane.item for lane in layout.lanes() if isinstance(lane.item, SliceTrackItem)]
        self._layout()
        self._size_axis()
        if self.theme is not LIGHT:
            self.set_theme(self.theme)
        kind, row = self.selection
        mark_selected(self.lanes(), kind, row)
        self._show_matches()

    # ------------------------------------------------------------------ debug tracks
    def add_debug_track(self, track) -> Lane:
        """A query result (:mod:`fxscope.core.sql.debug_track`) as a track in the "Debug tracks" group at
        the top; the view scrolls up to it. Returns its lane (key ``("debug", id)``)."""
        lane = self.debug_tracks.add(self.layout_state, track)
        # pyqtgraph drops an axis name wider than the axis: long titles (a query's text) are elided
        metrics = QFontMetrics(self.plot.getAxis("left").font())
        lane.label = metrics.elidedText(lane.label, Qt.TextElideMode.ElideRight, max(self.axis_width - 40, 40))
        lane.item = make_debug_item(self.model, lane)
        self.plot.addItem(lane.item, ignoreBounds=True)
        self._layout()
        self.scroll_rows(-self.total_rows)
        return lane

    def remove_debug_track(self, key: tuple) -> None:
        """Take a debug track away (its selection with it)."""
        kind, row = self.selection
        if kind == DEBUG_KIND and (found := self.debug_tracks.lane_of(row)) is not None and found[0] == key:
            self.select_item("", -1)
        lane = self.debug_tracks.remove(self.layout_state, key)
        if lane is not None:
            self.plot.removeItem(lane.item)
            self._layout()

    # ------------------------------------------------------------------ bringing things into view
    def locate(self, kind: str, row: int) -> tuple[Lane, float] | None:
        """The lane that draws row ``row`` of ``kind`` and the row within it (depth, async lane), or None."""
        if kind == DEBUG_KIND:
            found = self.debug_tracks.lane_of(row)
            lane = self.layout_state.lane(found[0]) if found is not None else None
            return (lane, found[1]) if lane is not None else None
        key, offset = view_state.lane_key_of(self.model, kind, row)
        if key is not None:
            lane = self.layout_state.lane(key)
            return (lane, offset) if lane is not None else None
        for lane in self.lanes():
            if lane.key[0] == kind and lane.row_range is not None and lane.row_range[0] <= row < lane.row_range[1]:
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
            self.layout_state.set_track_filter("")
            self.search_bar.clear_filter()
            self._layout()
        group = self.layout_state.group_of(lane)
        if group.collapsed:
            group.collapsed = False
            self._layout()
        vb = self.plot.getViewBox()
        _, (y0, y1) = vb.viewRange()
        top = self.layout_state.reveal_top(lane, offset, (y0, y1))
        if top is not None:
            vb.setYRange(top, top + (y1 - y0), padding=0.0)
        return True

    # ------------------------------------------------------------------ search and the track filter
    def _build_search_bar(self) -> QWidget:
        self.search_bar = bar = SearchBar()
        self.search_box, self.search_status, self.filter_box = bar.search_box, bar.search_status, bar.filter_box
        self.search_box.returnPressed.connect(lambda: self.search_step(1))
        self.search_box.textChanged.connect(self._search_changed)
        self.filter_box.textChanged.connect(self.set_track_filter)
        bar.collapse_button.clicked.connect(lambda: self.set_collapsed(True))
        bar.expand_button.clicked.connect(lambda: self.set_collapsed(False))
        bar.escaped.connect(self._search_escaped)
        shortcut = QShortcut(QKeySequence.StandardKey.Find, self)
        shortcut.activated.connect(lambda: (self.search_box.setFocus(), self.search_box.selectAll()))
        back = QShortcut(QKeySequence("Shift+Return"), self.search_box)
        back.activated.connect(lambda: self.search_step(-1))
        # the search index is built in the background after the tab's first frame: a search never waits on the UI thread
        self.search_indexing = SearchIndexing(self.model, self)
        self.search_indexing.done.connect(self._search_index_built)
        self.search_indexing.found.connect(self._search_found)
        self.search_indexing.failed.connect(lambda message: self.search_status.setText(f"search failed: {message}"))
        QTimer.singleShot(START_DELAY_MS, self.search_indexing, self.search_indexing.start_soon)
        return bar

    @property
    def matches(self) -> np.ndarray:
        """The thread-slice rows among the search hits, in time order."""
        return self.hits.row[self.hits.kind == 0]

    def _search_changed(self, text: str) -> None:
        indexing = self.search_indexing
        if text.strip() and indexing.searches_in_background():  # a large trace: off the UI thread
            indexing.start()  # (the argument index, when not built yet: the hits leave them out until it is)
            self.search_status.setText("searching…")
            indexing.search(text)
            return
        indexing.cancel_search()  # (cleared: a running search's hits would no longer be shown)
        self.search.set_text(text)
        self.search_status.setText(self.search.status())
        self._show_matches()

    def _search_arguments(self, text: str) -> None:
        """The argument index is built: the hits of ``text``, found without the argument matches, completed
        (in the background: only the arguments are searched, and when they add no slice the hits stay)."""
        indexing = self.search_indexing
        if text == self.search.text and not self.hits.complete and indexing.searches_in_background():
            indexing.start()
            indexing.search(text, without_arguments=self.hits)
            return
        self._search_changed(text)

    def _search_found(self, text: str, hits) -> None:
        """A background search is done: its hits shown, unless the box's text changed since (then a newer
        search is running, or the box was cleared). Hits without the argument matches are searched again
        once the index is built (here, when it was built while this search ran)."""
        if text != self.search_box.text():
            return
        self.search.set_hits(text, hits)
        self.search_status.setText(self.search.status())
        self._show_matches()
        if not hits.complete and self.model.search_index_ready:
            self._search_arguments(text)

    def _search_index_built(self) -> None:
        """The background build finished: search the box's text as it is now (the latest typed wins), and
        again a text whose hits left the argument matches out. The index's objects are long-lived: frozen
        (as the load's), out of the collections that may run during frames."""
        gc.freeze()
        text = self.search_box.text()
        if text.strip() and self.search_indexing.searching is None and (text != self.search.text or not self.hits.complete):
            self._search_arguments(text)

    def _search_escaped(self) -> None:
        """Esc in the search bar: the keys go back to the timeline, and a running search stops (the count
        says so; Enter searches the box's text again)."""
        if self.search_indexing.searching is not None:
            self.search_indexing.cancel_search()
            self.search_status.setText("search stopped")
        self.setFocus()

    def highlight_slices(self, rows: np.ndarray) -> None:
        """Outline these slice rows as search matches are (a flame-graph frame's slices), together with
        the search's; empty rows take them away."""
        self.highlighted = np.asarray(rows, np.int64)
        self._show_matches()

    def _show_matches(self) -> None:
        """Matches outlined on the tracks (a mask over each kind's table) and as ticks on the overview."""
        mark_matches(self.lanes(), self.model, self.hits, self.highlighted)
        self.overview.show_matches(self.hits.ts)

    def search_step(self, direction: int) -> int:
        """Go to the next (1) or previous (-1) match after the current one, in time order; returns the row
        (of its kind: ``self.hits.kind[self.match_index]``) or -1."""
        if self.search_box.text() != self.search.text and self.search_indexing.searching is None:
            self._search_changed(self.search_box.text())  # (a search stopped by Esc: its text searched again)
            return -1
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        found = self.search.step(direction, self.model.start_ns + int((x0 + x1) / 2 * 1e9))
        if found is None:
            return -1
        self.go_to_item(*found)
        self.search_status.setText(self.search.status())
        return found[1]

    # ------------------------------------------------------------------ area selection
    #: lane kinds an area selection sums up (the aggregate panel's tabs)
    AREA_KINDS = AREA_KINDS

    def select_area(self, xa: float, xb: float, ya: float, yb: float, final: bool = True) -> tuple[int, int, list]:
        """Mark the time range between two view x positions over the lanes between two y positions (the
        highlight covers those lanes only); on ``final``, emit ``areaSelected`` with the thread tracks in
        it (:attr:`area_keys` holds every lane's key, CPU lanes, state strips and async tracks too).
        Returns (start ns, end ns, threads)."""
        a, b = sorted((xa, xb))
        lo, hi = sorted((ya, yb))
        lanes = self.layout_state.lanes_between(lo, hi)
        self.state.area_keys = [lane.key for lane in lanes if lane.key[0] in self.AREA_KINDS]
        if lanes:
            y0 = min(lane.y0 for lane in lanes)
            y1 = max(lane.y0 + lane.rows * ROW_HEIGHT for lane in lanes)
        else:
            y0, y1 = lo, hi
        self.marks.show_area(QRectF(a, y0, b - a, y1 - y0))
        threads = [lane.key[1] for lane in lanes if lane.key[0] == "thread"]
        start, end = self.model.start_ns + round(a * 1e9), self.model.start_ns + round(b * 1e9)
        if final:
            self.areaSelected.emit(start, end, threads)
        return start, end, threads

    def visible_lanes(self) -> list[Lane]:
        """The lanes shown now: pinned ones first, then the content lanes (not under the pinned block)."""
        return self.layout_state.visible_lanes()

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
        o = self.model.start_ns
        edge = view_state.nearest_edge(self.model, lane.item.track, o + round(x_s * 1e9), tol)
        return x_s if edge is None else (edge - o) / 1e9

    def measure(self, xa: float, xb: float, y_rows: float, final: bool = True) -> tuple[int, int]:
        """Show the span between two view x positions (snapped); returns it in ns (start, end)."""
        a, b = sorted((self.snap(xa, y_rows), self.snap(xb, y_rows)))
        start, end = self.model.start_ns + round(a * 1e9), self.model.start_ns + round(b * 1e9)
        return self.show_span(start, end, y_rows)

    def show_span(self, start: int, end: int, y_rows: float) -> tuple[int, int]:
        """Mark [start, end) ns with the measure region and its duration label (at row ``y_rows``)."""
        o = self.model.start_ns
        self.marks.show_span((start - o) / 1e9, (end - o) / 1e9, y_rows, f"Δ {format_duration_ns(end - start)}")
        self.state.measured = (start, end)
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
        self.marks.clear()
        self.state.measured = None

    # ------------------------------------------------------------------ overview strip
    OVERVIEW_BINS = OverviewStrip.BINS

    def _sync_overview(self, *_args) -> None:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        self.overview.show_window(x0, x1)

    def _overview_moved(self) -> None:
        x0, x1 = self.region.getRegion()
        if x1 > x0:
            self.plot.getViewBox().setXRange(x0, x1, padding=0.0)

    def _overview_clicked(self, x: float) -> None:
        """A click on the strip centres the timeline there, keeping the zoom."""
        self._centre_on(x)

    def _centre_on(self, x: float) -> None:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        self.plot.getViewBox().setXRange(*view_state.centred(x0, x1, x), padding=0.0)

    def show_time(self, ts_ns: int) -> None:
        """Mark ``ts_ns`` with a line and bring it to the middle of the view (a log line was clicked)."""
        x = (ts_ns - self.model.start_ns) / 1e9
        self.marks.show_time(x)
        self._centre_on(x)

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
        top = self.layout_state.scrolled_top(y0, rows)
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
        self.plot.getViewBox().setXRange(*view_state.zoomed(x0, x1, factor, anchor), padding=0.0)

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
        top = self.layout_state.scrolled_top(y0 + rows, height)
        vb.setYRange(top, top + height, padding=0.0)

    def fit_selection(self) -> None:
        """F: the selection fills the view (with a margin; a point in time gets a 10 us window); with
        nothing selected, the whole trace."""
        span = self.selection_span()
        if span is None:
            self.fit_all()
            return
        self.set_range_ns(*view_state.fit_range(span))

    def selection_span(self) -> tuple[int, int] | None:
        """(start ns, end ns) of the selected row, from its table; None when nothing is selected."""
        kind, row = self.selection
        if kind == DEBUG_KIND:
            return self.debug_tracks.span(row, self.model.end_ns)
        return self.state.span()

    def keyPressEvent(self, event: QKeyEvent) -> None:
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
        t = self.model.start_ns + round(x_s * 1e9)
        lane = self.lane_at(y_rows)
        item = lane.item if lane is not None else None
        if isinstance(item, SliceTrackItem) and y_rows < item.y0 + item.rows * ROW_HEIGHT:
            return self.model.slice_at(item.track, int((y_rows - item.y0) // ROW_HEIGHT), t)
        return -1

    def hit_item(self, x_s: float, y_rows: float) -> tuple[str, int]:
        """(kind, table row) of the box under view coordinates, on any box track (thread slices, async
        spans, CPU slices, thread states), or ("", -1)."""
        t = self.model.start_ns + round(x_s * 1e9)
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
        self.state.select(kind, row)
        mark_selected(self.lanes(), kind, row)
        self.flow_arrows.show_for(self.selected_row)
        self.wakeup_arrow.show_for(kind, row)
        if kind == "slice" or row < 0:
            self.sliceSelected.emit(self.selected_row)
        self.itemSelected.emit(self.selection[0], self.selection[1])

    def lane_y(self, key: tuple) -> float | None:
        """Middle of a lane's first row in view units, or None when it is collapsed (or absent)."""
        return self.layout_state.lane_y(key)

    def selection_y(self) -> float | None:
        """Middle of the selected box's row in view units (None: hidden, or nothing selected)."""
        kind, row = self.selection
        if kind == "slice":
            return self.slice_y(row)
        if kind == "crash":  # the top row of the report's thread
            return self.layout_state.lane_y(("thread", int(self.model.logs.report_marks()[1][row])))
        if kind in ("cpu", "state", DEBUG_KIND):
            found = self.locate(kind, row)
            if found is not None:
                return found[0].y0 + found[1] * ROW_HEIGHT + 0.43 if found[0].visible else None
        return None

    def slice_y(self, row: int) -> float | None:
        """Middle of a slice's row in view units, or None when its track is collapsed."""
        s = self.model.slices
        return self.layout_state.row_y(("thread", int(s.thread[row])), int(s.depth[row]))

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
        self._centre_on(((span[0] + span[1]) // 2 - self.model.start_ns) / 1e9)

    def go_to_slice(self, row: int) -> None:
        """Select ``row`` and centre it, keeping the zoom; scroll (and expand its process) so that it is in
        view."""
        self.reveal("slice", row)
        self.select(row)
        s = self.model.slices
        self._centre_on((int(s.ts[row]) + int(s.dur[row]) // 2 - self.model.start_ns) / 1e9)

    def describe(self, kind: str, row: int) -> str:
        """One line about a box or point, for the hover tooltip: its name and how long it lasted."""
        if kind == DEBUG_KIND:
            return self.debug_tracks.text(row)
        return describe(self.model, kind, row)

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
                lane.item.set_cursor(None if x is None else self.model.start_ns + round(x * 1e9))

    def leaveEvent(self, event) -> None:
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
            axis.setPen(pg.mkPen(theme.grid))  # (first: pyqtgraph gives the axis' label the line's colour too)
            axis.setTextPen(pg.mkPen(theme.axis_text))  # the tick labels and the axis' label "(ms)"
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
