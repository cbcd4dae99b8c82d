"""Where each track of the timeline goes: process groups (a header row, then their lanes) stacked top to
bottom, a pinned block held at the top of the view, a track filter and collapsed groups.

The role of Hotspot's filter-and-zoom stack for the vertical axis, kept apart from Qt so that the rules
(what a filter hides, which header sticks, which lane is under a y) are tested on real traces without a
window. The widget mirrors :attr:`Lane.y0` and :attr:`Lane.visible` onto its graphics items after each
:meth:`TrackLayout.place` and :meth:`TrackLayout.float_pinned`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROW_HEIGHT = 1.0  # view units per depth row
PROCESS_HEADER_ROWS = 1.0
LANE_GAP = 0.3  # rows between two lanes
#: the group keys of the CPU lanes and of global-scope instants (no process has these koids)
CPU_GROUP = -1
GLOBAL_GROUP = -2


@dataclass(eq=False)
class Lane:
    """One labelled track of the timeline, ``rows`` high. ``source`` is what its track draws (a
    :class:`~fxscope.core.trace.model.ThreadTrack`, a tid, a CPU, a counter index, marker rows...);
    ``item`` is the app's graphics item for it (never read here)."""

    key: tuple  # ("thread", thread index), ...: what pins refer to
    label: str
    pid: int
    rows: int = 1
    source: object = None
    row_range: tuple[int, int] | None = None  # CPU lanes and state strips: their rows of the sched table
    match: str = ""  # what the track filter looks in: process and thread names and ids, case-folded
    item: object = None
    y0: float = 0.0  # where it is drawn (view rows), while visible
    visible: bool = True
    on_top: bool = False  # pinned: drawn over the content lanes


@dataclass(eq=False)
class Group:
    """A process: a header row and its lanes, collapsible."""

    pid: int
    name: str
    lanes: list[Lane]
    collapsed: bool = False
    summary: object = None  # the app's busy-time strip drawn in its header row while collapsed
    summary_shown: bool = False  # whether that strip shows (collapsed and not filtered out)
    y0: float = 0.0  # where its header row is, and where its last lane ends (-1: filtered out)
    y1: float = 0.0


def lane_height(lane: Lane) -> float:
    """Rows a lane takes in the layout, its gap below included."""
    return lane.rows * ROW_HEIGHT + LANE_GAP


@dataclass
class TrackLayout:
    """The groups in their order and the vertical state: pins, the track filter, collapse, and where each
    lane and header is. :meth:`place` after a change of that state, :meth:`float_pinned` after a scroll."""

    groups: list[Group]
    pinned: list[tuple] = field(default_factory=list)  # lane keys, in pin order, drawn first
    track_filter: str = ""
    headers: list[tuple[float, object]] = field(default_factory=list)  # (y, group pid or "pinned")
    pinned_rows: float = 0.0  # height of the pinned block (its header and lanes), on top of the view
    sticky: tuple[float, int] | None = None  # (y, pid) of the process header held at the top
    total_rows: float = 1.0
    pinned_offsets: list[tuple[Lane, float]] = field(default_factory=list)
    content_ticks: list[tuple[float, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_key = {lane.key: lane for lane in self.lanes()}

    # ------------------------------------------------------------------ reading
    def lanes(self) -> list[Lane]:
        return [lane for group in self.groups for lane in group.lanes]

    def lane(self, key: tuple) -> Lane | None:
        """The lane with ``key``, or None."""
        return self._by_key.get(key)

    def group_of(self, lane: Lane) -> Group:
        return next(g for g in self.groups if lane in g.lanes)

    def expanded_rows(self) -> float:
        """Rows every group would take expanded (decides whether a trace opens collapsed)."""
        return sum(PROCESS_HEADER_ROWS + sum(lane_height(lane) for lane in g.lanes) for g in self.groups)

    def lane_passes(self, lane: Lane) -> bool:
        """Whether the track filter shows ``lane`` (its process or thread name or id contains the text)."""
        return not self.track_filter or self.track_filter in lane.match

    def covered_rows(self) -> float:
        """Rows at the top of the view covered by the pinned block and a sticky header."""
        return self.pinned_rows + (PROCESS_HEADER_ROWS if self.sticky else 0.0)

    def visible_lanes(self) -> list[Lane]:
        """The lanes shown now: pinned ones first, then the content lanes (not under the pinned block)."""
        pinned = [lane for lane, _off in self.pinned_offsets]
        return pinned + [lane for lane in self.lanes() if lane.key not in self.pinned and lane.visible]

    def lane_at(self, y_rows: float, top: float) -> Lane | None:
        """The lane drawn at ``y_rows`` with the view's top at ``top``: a pinned one over the pinned block,
        else a visible content lane below what the pinned block and a sticky header cover."""
        if self.pinned_offsets and y_rows < top + self.pinned_rows:
            candidates = [lane for lane, _off in self.pinned_offsets]
        elif y_rows < top + self.covered_rows():
            return None
        else:
            candidates = [lane for lane in self.lanes() if lane.key not in self.pinned]
        for lane in candidates:
            if lane.visible and lane.y0 <= y_rows < lane.y0 + lane_height(lane):
                return lane
        return None

    def header_at(self, y_rows: float, top: float):
        """The header row at ``y_rows``: a group's pid, "pinned" (the pinned block's header), or None."""
        if self.pinned_offsets and top <= y_rows < top + PROCESS_HEADER_ROWS:
            return "pinned"
        if self.pinned_offsets and y_rows < top + self.pinned_rows:
            return None
        if self.sticky is not None and self.sticky[0] <= y_rows < self.sticky[0] + PROCESS_HEADER_ROWS:
            return self.sticky[1]
        for y, what in self.headers:
            if y <= y_rows < y + PROCESS_HEADER_ROWS:
                return what
        return None

    def lane_y(self, key: tuple) -> float | None:
        """Middle of a lane's first row in view units, or None when it is hidden (or absent)."""
        lane = self.lane(key)
        if lane is None or not lane.visible:
            return None
        return lane.y0 + 0.43

    def row_y(self, key: tuple, depth: int) -> float | None:
        """Middle of row ``depth`` of a lane, or None when it is hidden (or absent)."""
        lane = self.lane(key)
        if lane is None or not lane.visible:
            return None
        return lane.y0 + depth * ROW_HEIGHT + 0.43

    def lanes_between(self, lo: float, hi: float) -> list[Lane]:
        """The shown lanes that overlap rows [lo, hi) (an area selection's lanes)."""
        return [lane for lane in self.visible_lanes() if lane.y0 < hi and lane.y0 + lane.rows * ROW_HEIGHT > lo]

    # ------------------------------------------------------------------ changing
    def add_lane(self, pid: int, name: str, lane: Lane, at: int = 0) -> Group:
        """Append ``lane`` to group ``pid``, which is made (named ``name``, at position ``at`` among the
        groups) when there is none: tracks added while the trace is open (a query's debug tracks)."""
        group = next((g for g in self.groups if g.pid == pid), None)
        if group is None:
            group = Group(pid, name, [])
            self.groups.insert(min(max(at, 0), len(self.groups)), group)
        group.lanes.append(lane)
        self._by_key[lane.key] = lane
        return group

    def remove_lane(self, key: tuple) -> Lane | None:
        """Take lane ``key`` out (unpinned first); its group goes with its last lane. The lane, or None."""
        lane = self._by_key.pop(key, None)
        if lane is None:
            return None
        if key in self.pinned:
            self.pinned.remove(key)
        group = self.group_of(lane)
        group.lanes.remove(lane)
        if not group.lanes:
            self.groups.remove(group)
        return lane

    def toggle_group(self, pid: int) -> None:
        for group in self.groups:
            if group.pid == pid:
                group.collapsed = not group.collapsed

    def set_collapsed(self, collapsed: bool) -> None:
        for group in self.groups:
            group.collapsed = collapsed

    def collapse_processes(self) -> None:
        """Collapse every group but the CPUs (a trace too tall to open expanded)."""
        for group in self.groups:
            if group.pid != CPU_GROUP:
                group.collapsed = True

    def set_track_filter(self, text: str) -> None:
        self.track_filter = text.strip().casefold()

    @staticmethod
    def _with_state(key: tuple) -> list[tuple]:
        """A key and, for a thread, its state strip's key (a thread and its strip read as one)."""
        return [key] + ([("state", key[1])] if key[0] == "thread" else [])

    def pin(self, key: tuple) -> None:
        for k in self._with_state(key):
            if k in self._by_key and k not in self.pinned:
                self.pinned.append(k)

    def unpin(self, key: tuple) -> None:
        for k in self._with_state(key):
            if k in self.pinned:
                self.pinned.remove(k)

    def pin_process(self, pid: int) -> None:
        for lane in self.lanes():
            if lane.pid == pid and lane.key not in self.pinned:
                self.pinned.append(lane.key)

    # ------------------------------------------------------------------ placing
    def place(self) -> None:
        """Place every lane: the pinned ones in a block that stays on top of the view (placed by
        :meth:`float_pinned` as the view scrolls), then each process group (a header row, and its lanes
        unless collapsed; with a track filter, only the matching lanes, their groups expanded)."""
        ticks: list[tuple[float, str]] = []
        self.headers = []
        pinned = [self._by_key[k] for k in self.pinned if k in self._by_key]
        self.pinned_offsets = []
        y = PROCESS_HEADER_ROWS if pinned else 0.0
        for lane in pinned:
            self.pinned_offsets.append((lane, y))
            lane.visible, lane.on_top = True, True
            y += lane_height(lane)
        self.pinned_rows = y
        filtering = bool(self.track_filter)
        for group in self.groups:
            shown = [lane for lane in group.lanes if lane.key not in self.pinned and self.lane_passes(lane)]
            if filtering and not shown:
                for lane in group.lanes:
                    if lane.key not in self.pinned:
                        lane.visible = False
                group.summary_shown = False
                group.y0 = group.y1 = -1.0
                continue
            collapsed = group.collapsed and not filtering
            group.y0 = y
            self.headers.append((y, group.pid))
            ticks.append((y + 0.5, f"{'▸' if collapsed else '▾'} {group.name}"))
            group.summary_shown = collapsed
            y += PROCESS_HEADER_ROWS
            for lane in group.lanes:
                if lane.key in self.pinned:
                    continue
                if collapsed or lane not in shown:
                    lane.visible = False
                    continue
                lane.y0, lane.on_top, lane.visible = y, False, True
                ticks.append((y + 0.45, f"   {lane.label}"))
                y += lane_height(lane)
            group.y1 = y
        self.total_rows = max(y, 1.0)
        self.content_ticks = ticks

    def float_pinned(self, top: float) -> list[tuple[float, str]]:
        """With the view's top at ``top``: the pinned block moved there, and the header of the process
        whose lanes are scrolled under it held just below (sticky). Returns the track names to show (y,
        text): the pinned ones, the sticky header, and the content names not covered by them."""
        ticks: list[tuple[float, str]] = []
        if self.pinned_offsets:
            ticks.append((top + 0.5, "Pinned"))
            for lane, offset in self.pinned_offsets:
                lane.y0 = top + offset
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
        ticks.extend(t for t in self.content_ticks if t[0] >= covered + 0.2 or (top <= 0 and t[0] >= covered))
        return ticks

    def reveal_top(self, lane: Lane, offset: float, view: tuple[float, float]) -> float | None:
        """The view top that brings row ``offset`` of ``lane`` into view below the pinned block (a third
        of the way down the free area), or None when it is in view already in ``view`` (top, bottom)."""
        y0, y1 = view
        height = y1 - y0
        ya = lane.y0 + offset
        covered = self.pinned_rows + PROCESS_HEADER_ROWS  # a sticky header may cover one more row
        if ya >= y0 + covered and ya + ROW_HEIGHT <= y1:
            return None
        top = ya - covered - max((height - covered) / 3, 0.0)
        return min(max(top, 0.0), max(self.total_rows - height, 0.0))

    def scrolled_top(self, top: float, height: float) -> float:
        """``top`` kept within the laid-out rows for a view ``height`` rows high."""
        return min(max(top, 0.0), max(self.total_rows - height, 0.0))
