"""The menu of a right-click on the timeline's tracks: pin or unpin the track or its whole process, and
"Analyse thread" / "Analyse process", which open the Analysis tab with that scope (the timeline emits
``analyseRequested(kind, key)``; the trace tab routes it). On a process's header row only the process's
entries are offered; a debug track (a query result) offers its removal, the debug group's header the
removal of them all."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QMenu

from fxscope.core.timeline.debug_tracks import DEBUG_GROUP, KIND
from fxscope.core.timeline.layout import Lane
from fxscope.core.trace.model import TraceModel


class TrackMenuHost(Protocol):
    """What the menu needs of the timeline widget (named here, so that this module does not import it)."""

    model: TraceModel
    analyseRequested: SignalInstance
    pinned: list[tuple]

    def header_at(self, y_rows: float): ...
    def lane_at(self, y_rows: float) -> Lane | None: ...
    def lanes(self) -> list[Lane]: ...
    def pin(self, key: tuple) -> None: ...
    def unpin(self, key: tuple) -> None: ...
    def pin_process(self, pid: int) -> None: ...
    def remove_debug_track(self, key: tuple) -> None: ...


def build_track_menu(timeline: TrackMenuHost, y_rows: float) -> QMenu | None:
    """The menu for a right-click at ``y_rows`` (view rows), None where there is no track or header."""
    analysable = {g.pid for g in timeline.model.processes}  # processes with thread slices
    header = timeline.header_at(y_rows)
    menu = QMenu(timeline)  # (the widget: parented to it)
    if header == DEBUG_GROUP:  # the query results' group
        keys = [lane.key for lane in timeline.lanes() if lane.pid == DEBUG_GROUP]
        menu.addAction("Remove all debug tracks", lambda: [timeline.remove_debug_track(k) for k in keys])
        return menu
    if isinstance(header, int) and not isinstance(header, bool):  # a process header ("pinned" is a str)
        if header in analysable:
            menu.addAction("Analyse process", lambda: timeline.analyseRequested.emit("process", header))
        menu.addAction("Pin the whole process", lambda: timeline.pin_process(header))
        return menu
    lane = timeline.lane_at(y_rows)
    if lane is None:
        return None
    if lane.key in timeline.pinned:
        menu.addAction("Unpin track", lambda: timeline.unpin(lane.key))
    else:
        menu.addAction("Pin track to the top", lambda: timeline.pin(lane.key))
    if lane.key[0] == KIND:
        menu.addAction("Remove debug track", lambda: timeline.remove_debug_track(lane.key))
        return menu
    menu.addAction("Pin the whole process", lambda: timeline.pin_process(lane.pid))
    if lane.key[0] in ("thread", "state") or lane.pid in analysable:
        menu.addSeparator()
    if lane.key[0] in ("thread", "state"):  # a state strip reads as part of its thread
        menu.addAction("Analyse thread", lambda: timeline.analyseRequested.emit("thread", int(lane.key[1])))
    if lane.pid in analysable:
        menu.addAction("Analyse process", lambda: timeline.analyseRequested.emit("process", lane.pid))
    return menu
