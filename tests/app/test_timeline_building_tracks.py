"""A large trace's window shows its first frame with the thread slices only: the other track kinds (async
spans, counters, CPUs and thread states, instants, the overview's density) draw "building…" until the
background build after the first frame has made their tables, then the window is exactly (its pixels, its
track list) what a trace whose loader built everything shows. No table is built on the UI thread meanwhile,
and a click on a building track selects nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from fxscope.app.deferred_tables import DeferredTables
from fxscope.app.timeline.building_track import BuildingTrackItem
from fxscope.app.timeline.widget import TimelineWidget
from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.timeline.track_order import BUILDING, STATE_STRIP, prebuild_groups
from fxscope.core.trace import async_spans, counters, instants, sched
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import TRACK_STEPS, pending_tables, prepare_model
from fxscope.formats.fxt.reader import read_fxt_bytes

SIZE = (1200, 900)


@pytest.fixture(scope="module")
def trace() -> bytes:
    """A trace with every kind of track: async spans, counters, a schedule, instants, logs."""
    return generate_trace(60_000, seed=4, scheduling=True)


def _shown(qtbot, model: TraceModel) -> TimelineWidget:
    widget = TimelineWidget(model)
    qtbot.addWidget(widget)
    widget.resize(*SIZE)
    widget.show()
    qtbot.waitExposed(widget)
    widget.fit_all()
    qtbot.wait(10)
    return widget


@pytest.fixture
def builds(monkeypatch) -> list[tuple[str, bool]]:
    """(table, built on the UI thread?) of each build of a deferred kind's table: the hook the test asserts on."""
    seen: list[tuple[str, bool]] = []
    on_ui = lambda: threading.current_thread() is threading.main_thread()  # noqa: E731
    for module, name in ((async_spans, "build_async"), (counters, "build_counters"), (sched, "build_sched"),
                         (instants, "build_instants")):  # fmt: skip
        real = getattr(module, name)

        def hooked(*args, _real=real, _name=name, **kwargs):
            seen.append((_name, on_ui()))
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, hooked)
    real_density = TraceModel._density

    def density(self, bins):
        seen.append(("density", on_ui()))
        return real_density(self, bins)

    monkeypatch.setattr(TraceModel, "_density", density)
    return seen


def _tracks(widget: TimelineWidget) -> list[tuple]:
    return [(g.pid, g.name, lane.key, lane.label, lane.rows) for g in widget.groups for lane in g.lanes]


def _pixels(widget: TimelineWidget) -> tuple:
    """The timeline's and the overview's pixels (not the search box: its cursor blinks)."""
    return widget.plot.grab().toImage(), widget.overview.grab().toImage()


def test_tracks_build_after_the_first_frame_and_end_as_before(qtbot, trace, builds, tmp_path: Path) -> None:
    reference = TraceModel(read_fxt_bytes(trace))
    prepare_model(reference)  # everything before the first frame, as a small trace's loader does
    before = _shown(qtbot, reference)
    expected_tracks, expected_pixels = _tracks(before), _pixels(before)
    builds.clear()

    model = TraceModel(read_fxt_bytes(trace))
    prepare_model(model, first_frame_only=True)  # a large trace's loader
    prebuild_groups(model)
    assert pending_tables(model) == {name for name, _ in TRACK_STEPS}
    widget = _shown(qtbot, model)
    widget.plot.viewport().repaint()
    building = [lane for lane in widget.lanes() if lane.key[0] == BUILDING]
    assert {lane.source for lane in building} == {"async_pyramid", "counters", "sched", "instants"}
    assert {lane.label for lane in building} == {"async", "counters", "CPUs", "instants", "  state"}
    building_strips = {lane.key[2] for lane in building if lane.key[1] == STATE_STRIP}  # (threads)
    assert building_strips == {key[1] for _, _, key, _, _ in expected_tracks if key[0] == "state"}
    assert all(isinstance(lane.item, BuildingTrackItem) for lane in building)
    _, (_top, bottom) = widget.plot.getViewBox().viewRange()
    in_view = [lane for lane in building if lane.y0 + lane.rows < bottom]
    assert len(in_view) >= 4 and all(lane.item.last_drawn for lane in in_view)  # drawn: "building…"
    assert widget.overview.building.isVisible()
    assert not any(key[0] in ("async", "counter", "cpu", "state", "instants") for _, _, key, _, _ in _tracks(widget))
    widget.grab().save(str(tmp_path / "building.png"))
    # a click on a building track selects nothing (and builds nothing)
    lane = next(lane for lane in building if lane.source == "async_pyramid")
    vb = widget.plot.getViewBox()
    (x0, x1), _ = vb.viewRange()
    assert widget.hit_item((x0 + x1) / 2, lane.y0 + 0.4) == ("", -1)
    widget.select_item(*widget.hit_item((x0 + x1) / 2, lane.y0 + 0.4))
    assert widget.selection == ("", -1)
    # a search hit on a track still building (the search's thread builds the spans table, not its pyramid)
    searching = threading.Thread(target=lambda: model.async_spans)
    searching.start()
    searching.join()
    widget.go_to_item("async", 0)
    assert widget.selection == ("async", 0)  # selected (the Details panel shows it), no track to reveal yet
    widget.plot.viewport().repaint()
    widget.select_item("", -1)
    widget.fit_all()
    widget.zoom(0.5)
    widget.plot.viewport().repaint()
    widget.fit_all()
    widget.plot.viewport().repaint()
    assert builds == [("build_async", False)]  # the paints, clicks and hit built no table (the "search" did)

    deferred = DeferredTables(model, widget)
    steps: list[str] = []
    deferred.tablesBuilt.connect(lambda name, _groups: steps.append(name))
    deferred.tablesBuilt.connect(widget.tables_built)
    with qtbot.waitSignal(deferred.done, timeout=120_000):
        deferred.start()
    assert sorted(steps) == sorted(name for name, _ in TRACK_STEPS) and not pending_tables(model)  # (two at once)
    assert {name for name, _ in builds} == {"build_async", "build_counters", "build_sched", "build_instants", "density"}
    assert not any(ui for _, ui in builds), builds  # every one in the background build's thread
    assert not widget.overview.building.isVisible()
    assert _tracks(widget) == expected_tracks  # the same tracks, names and order as when the loader built all
    widget.fit_all()
    qtbot.wait(10)
    widget.grab().save(str(tmp_path / "built.png"))
    assert _pixels(widget) == expected_pixels  # and the same pixels


def test_a_refresh_keeps_pins_collapsed_groups_and_the_selection(qtbot, trace) -> None:
    """The track list given again when a kind's table is in keeps what the user did meanwhile."""
    model = TraceModel(read_fxt_bytes(trace))
    prepare_model(model, first_frame_only=True)
    widget = _shown(qtbot, model)
    thread = next(lane for lane in widget.lanes() if lane.key[0] == "thread")
    widget.pin(thread.key)
    strip = widget.layout_state.lane((BUILDING, STATE_STRIP, thread.key[1]))
    assert strip is not None  # the thread's state strip, building
    cpus = next(lane for lane in widget.lanes() if lane.key[0] == BUILDING and lane.source == "sched")
    widget.pin(cpus.key)  # a building track pinned: the tracks it stood for are pinned once in
    widget.toggle_group(thread.pid)
    # an area selected and a measure across building tracks: the slice tracks' only
    (x0, x1), _ = widget.plot.getViewBox().viewRange()
    widget.select_area(x0, x1, 0.0, widget.total_rows)
    assert widget.area_keys and all(key[0] == "thread" for key in widget.area_keys)
    widget.measure(x0, (x0 + x1) / 2, cpus.y0 + 0.4)
    assert widget.measured is not None
    row = thread.source.lo
    widget.select(row)
    deferred = DeferredTables(model, widget)
    deferred.tablesBuilt.connect(widget.tables_built)
    with qtbot.waitSignal(deferred.done, timeout=120_000):
        deferred.start()
    assert not any(lane.key[0] == BUILDING for lane in widget.lanes())
    assert thread.key in widget.pinned and widget.layout_state.lane(thread.key).item is thread.item
    assert ("state", thread.key[1]) in widget.pinned  # its state strip pinned with it, as a pin does
    group = next(g for g in widget.groups if g.pid == thread.pid)
    assert group.collapsed
    assert widget.selection == ("slice", row)
    cpu_keys = [lane.key for lane in widget.lanes() if lane.key[0] == "cpu"]
    assert cpu_keys and set(cpu_keys) <= set(widget.pinned)


def test_the_window_opens_a_large_trace_with_building_tracks_and_searches_after(qtbot, trace, builds, tmp_path,
                                                                                monkeypatch) -> None:  # fmt: skip
    """Through the window's loader (the trace counted as large): the tab opens with "building…" tracks, a
    search typed meanwhile runs in a background thread, finds async spans and steps through them once their
    tracks are in; no table is built on the UI thread."""
    from fxscope.app.main_window import MainWindow
    from fxscope.app.timeline import search_indexing
    from fxscope.core.trace import prepare

    monkeypatch.setattr(prepare, "DEFER_EVENTS", 0)
    monkeypatch.setattr(search_indexing, "SYNC_INDEX_SLICES", 0)  # its searches off the UI thread, as a large one's
    path = tmp_path / "large.fxt"
    path.write_bytes(trace)
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(*SIZE)
    win.show()
    win.open_path(str(path), background=True)
    qtbot.waitUntil(lambda: win.tabs.count() == 1, timeout=60_000)
    tab = win.tabs.currentWidget()
    timeline = tab.timeline
    assert tab.deferred is not None
    assert any(lane.key[0] == BUILDING for lane in timeline.lanes())
    timeline.search_box.setText("fetch")  # an async span name
    assert timeline.search_status.text() in ("searching…", "indexing…")  # in a background thread
    qtbot.waitUntil(lambda: not tab.deferred.pending(), timeout=120_000)
    qtbot.waitUntil(lambda: timeline.search_status.text().endswith("matches"), timeout=120_000)
    # the tables are built (pending() reads the model) before the UI thread has handled the last step's
    # signal that swaps its "building…" lanes for the tracks: under load the search can end in between
    qtbot.waitUntil(lambda: not any(lane.key[0] == BUILDING for lane in timeline.lanes()), timeout=60_000)
    assert len(timeline.hits.rows_of("async"))
    for _ in range(3):
        timeline.search_step(1)
    assert timeline.selection[0] in ("slice", "async", "instant", "log", "counter")
    assert builds and not any(ui for _, ui in builds), builds


def test_a_search_while_tracks_build_runs_off_the_ui_thread(qtbot, trace, builds) -> None:
    """A trace with few slices searches on the UI thread, but not while its track tables are pending: the
    search reads the async spans, instants and counters, which would then be built on the UI thread."""
    from fxscope.app.timeline.search_indexing import SYNC_INDEX_SLICES

    model = TraceModel(read_fxt_bytes(trace))
    prepare_model(model, first_frame_only=True)
    prebuild_groups(model)
    assert len(model.slices) < SYNC_INDEX_SLICES  # (a small trace: it would search on the UI thread)
    widget = _shown(qtbot, model)
    assert pending_tables(model) and widget.search_indexing.searches_in_background()
    builds.clear()
    with qtbot.waitSignal(widget.search_indexing.found, timeout=60_000):
        widget.search_box.setText("queue")
    assert builds and not any(ui for _, ui in builds), builds  # the search's thread built what it read
    qtbot.waitUntil(lambda: "match" in widget.search_status.text(), timeout=10_000)


def test_the_cpu_lanes_come_in_whichever_scheduling_step_finishes_last(qtbot, trace, monkeypatch) -> None:
    """The background build finishes its steps in any order (two at once): here the thread-state pyramid
    before the CPU pyramid, which the track list waited for as the last one; the CPU lanes still come in."""
    from fxscope.core.trace import prepare

    after = dict(prepare.STEP_AFTER, sched_pyramid_cpu=frozenset({"sched", "sched_pyramid_state"}))
    monkeypatch.setattr(prepare, "STEP_AFTER", after)
    model = TraceModel(read_fxt_bytes(trace))
    prepare_model(model, first_frame_only=True)
    widget = _shown(qtbot, model)
    finished: list[str] = []
    deferred = DeferredTables(model, widget)
    deferred.tablesBuilt.connect(lambda step, _groups: finished.append(step))
    deferred.tablesBuilt.connect(widget.tables_built)
    with qtbot.waitSignal(deferred.done, timeout=120_000):
        deferred.start()
    assert finished.index("sched_pyramid_state") < finished.index("sched_pyramid_cpu")
    assert not any(lane.key[0] == BUILDING for lane in widget.lanes())
    assert any(lane.key[0] == "cpu" for lane in widget.lanes())
