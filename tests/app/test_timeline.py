"""The timeline window on the bundled demo and on a real third-party trace (pytest-qt, offscreen)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from fxscope.app.main_window import MainWindow
from fxscope.resources import DEMO_TRACE


@pytest.fixture
def window(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1400, 900)
    assert win.open_path(str(DEMO_TRACE))
    win.show()
    qtbot.waitExposed(win)
    return win


def test_click_selects_the_slice_the_model_has_there(window, qtbot) -> None:
    tab = window.current_tab()
    timeline, model = tab.timeline, tab.model
    item = timeline.items[0]
    row = int(item.track.by_depth[0][len(item.track.by_depth[0]) // 2])
    start, dur = int(model.slices.ts[row]), int(model.slices.dur[row])
    timeline.set_range_ns(start - dur, start + 2 * dur)
    qtbot.wait(10)
    vb = timeline.plot.getViewBox()
    centre_x = (start + dur / 2 - model.start_ns) / 1e9
    scene_pt = vb.mapViewToScene(pg_point(centre_x, item.y0 + 0.4))
    view_pt = timeline.plot.mapFromScene(scene_pt)
    with qtbot.waitSignal(timeline.sliceSelected, timeout=2000) as blocker:
        qtbot.mouseClick(timeline.plot.viewport(), Qt.MouseButton.LeftButton, pos=view_pt)
    assert blocker.args == [row]
    text = tab.details.toPlainText()
    assert model.name_of(row) in text
    assert "Self time" in text


def pg_point(x: float, y: float):
    from PySide6.QtCore import QPointF

    return QPointF(x, y)


def test_keyboard_zoom_and_pan(window, qtbot) -> None:
    timeline = window.current_tab().timeline
    a0, b0 = timeline.visible_range_ns()
    qtbot.keyClick(timeline, Qt.Key.Key_W)
    a1, b1 = timeline.visible_range_ns()
    assert (b1 - a1) < (b0 - a0) * 0.9
    qtbot.keyClick(timeline, Qt.Key.Key_D)
    a2, b2 = timeline.visible_range_ns()
    assert a2 > a1 and b2 > b1
    qtbot.keyClick(timeline, Qt.Key.Key_S)
    assert (timeline.visible_range_ns()[1] - timeline.visible_range_ns()[0]) > (b2 - a2)


def test_a_pan_or_zoom_is_one_paint_of_the_view(window, qtbot) -> None:
    """pyqtgraph applies a new range in the paint, which dirtied the scene again: every step was painted
    twice. The timeline applies it at once, so a step costs one paint."""
    from PySide6.QtCore import QEvent, QObject

    timeline = window.current_tab().timeline
    viewport = timeline.plot.viewport()

    class Counter(QObject):
        paints = 0

        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                self.paints += 1
            return False

    counter = Counter()
    viewport.installEventFilter(counter)
    qtbot.wait(50)
    for step in (lambda: timeline.zoom(0.5), lambda: timeline.pan(0.2), lambda: qtbot.keyClick(timeline, Qt.Key.Key_W)):
        counter.paints = 0
        before = timeline.visible_range_ns()
        step()
        qtbot.wait(50)
        assert timeline.visible_range_ns() != before
        assert counter.paints == 1
    viewport.removeEventFilter(counter)


def test_bad_file_shows_a_message_and_the_window_survives(window, qtbot, tmp_path: Path, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    bad = tmp_path / "bad.fxt"
    bad.write_bytes(b"not a trace at all")
    assert not window.open_path(str(bad))
    shown = [box.text() for box in window.findChildren(QMessageBox) if box.isVisible()]
    assert shown and "bad.fxt" in shown[0]  # a non-modal message: no nested event loop
    assert window.tabs.count() == 1


def test_real_trace_opens(qtbot, testdata: Path) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(testdata / "fxt" / "richiesams_fxt-python_trace.fxt"))
    model = win.current_tab().model
    assert len(model.slices) == 17296
    assert [t.name for t in model.tracks] == ["main 2"]  # thread name from the kernel object record


def test_screenshot_draws_slices_where_the_model_says(tmp_path: Path) -> None:
    out = tmp_path / "shot.png"
    from fxscope.core.trace.model import TraceModel
    from fxscope.formats.fxt.reader import read_fxt

    model = TraceModel(read_fxt(DEMO_TRACE))
    track = model.tracks[0]
    row = int(track.by_depth[0][0])
    start, dur = int(model.slices.ts[row]), int(model.slices.dur[row])
    result = subprocess.run(
        [sys.executable, "-m", "fxscope", "screenshot", str(DEMO_TRACE), "-o", str(out), "--size", "1200x800",
         "--range", f"{start - dur}:{start + 2 * dur}"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert image.width() == 1200 and image.height() == 800
    pixels = np.array([[image.pixelColor(x, y).name() for x in range(0, 1200, 8)] for y in range(0, 800, 8)])
    assert len(np.unique(pixels)) > 5  # not blank
    # the slice fills the middle third of the plot horizontally on the first thread track's depth-0 row
    # (below the overview strip and the process's async track)
    colours = {image.pixelColor(x, y).name() for x in range(560, 760, 10) for y in range(50, 400, 2)}
    from fxscope.app.timeline.tracks import PALETTE, colour_index

    assert PALETTE[colour_index(model.name_of(row))] in colours


def test_process_groups_collapse_and_tracks_pin_to_the_top(window) -> None:
    timeline = window.current_tab().timeline
    processes = [g for g in timeline.groups if any(lane.key[0] == "thread" for lane in g.lanes)]
    first, second = processes[0], processes[1]
    assert timeline.groups.index(second) == timeline.groups.index(first) + 1
    header_y = {what: y for y, what in timeline.headers}
    assert timeline.header_at(header_y[second.pid] + 0.5) == second.pid
    before = header_y[second.pid]
    timeline.toggle_group(first.pid)  # collapse: its lanes hide, the next group moves up to the row after
    assert all(not lane.item.isVisible() for lane in first.lanes)
    assert {w: y for y, w in timeline.headers}[second.pid] == header_y[first.pid] + 1.0 < before
    timeline.toggle_group(first.pid)
    assert all(lane.item.isVisible() for lane in first.lanes)

    lane = next(lane for lane in second.lanes if lane.key[0] == "thread")
    timeline.pin(lane.key)
    assert timeline.header_at(0.5) == "pinned" and lane.item.y0 == 1.0  # right under the pinned header
    track = lane.item.track
    model = timeline.model
    row = int(track.by_depth[0][len(track.by_depth[0]) // 2])  # a depth-0 slice of that thread
    x = (int(model.slices.ts[row]) + int(model.slices.dur[row]) // 2 - model.start_ns) / 1e9
    assert timeline.hit_test(x, 1.0 + 0.4) == row  # clicks land on the pinned track where it is drawn now
    timeline.unpin(lane.key)
    assert timeline.header_at(0.5) != "pinned"
    timeline.pin_process(second.pid)
    assert list(timeline.pinned) == [lane.key for lane in second.lanes]
    assert timeline.pinned[0][0] == "async"  # the process's async track is pinned with it


def test_measure_snaps_to_slice_edges(window) -> None:
    timeline = window.current_tab().timeline
    model = timeline.model
    lane = next(lane for lane in timeline.lanes() if lane.key[0] == "thread")
    track = lane.item.track
    s = model.slices
    row = int(track.by_depth[0][3])
    start, end = int(s.ts[row]), int(s.ts[row] + s.dur[row])
    timeline.set_range_ns(start - 4 * (end - start), end + 4 * (end - start))
    (x0, x1), _ = timeline.plot.getViewBox().viewRange()
    px = (x1 - x0) / timeline.plot.getViewBox().width()
    o = model.start_ns
    y = lane.item.y0 + 0.4
    # two points a few pixels off the slice's edges snap onto them exactly
    got = timeline.measure((start - o) / 1e9 - 3 * px, (end - o) / 1e9 + 2 * px, y)
    assert got == (start, end)
    assert timeline.measure_label.toPlainText().startswith("Δ ")
    # far from any edge: no snapping
    a = (start - o) / 1e9 - 30 * px
    got = timeline.measure(a, (end - o) / 1e9, y)
    assert got[1] == end and abs(got[0] - (o + round(a * 1e9))) <= 1


def test_every_kind_of_lane_draws_what_the_model_has(window, qtbot) -> None:
    timeline = window.current_tab().timeline
    model = timeline.model
    kinds = {lane.key[0] for lane in timeline.lanes()}
    assert {"thread", "async", "logs", "counter", "cpu", "state"} <= kinds
    assert len([lane for lane in timeline.lanes() if lane.key[0] == "counter"]) == len(model.counters)
    async_pids = {lane.pid for lane in timeline.lanes() if lane.key[0] == "async"}
    assert async_pids == {pid for pid, _n in model.async_spans.tracks()}
    timeline.plot.viewport().repaint()
    for lane in timeline.lanes():
        if lane.key[0] in ("async", "logs", "counter", "state") and lane.item.isVisible():
            view_top = timeline.plot.getViewBox().viewRange()[1][1]
            if lane.item.y0 < view_top:
                assert lane.item.last_drawn > 0, lane.key
    from fxscope.core.trace.instants import SCOPE_GLOBAL, SCOPE_PROCESS

    marks = {lane.key[1]: len(lane.item.ts) for lane in timeline.lanes() if lane.key[0] == "instants"}
    scoped = len(model.instants.scoped(SCOPE_GLOBAL)) + len(model.instants.scoped(SCOPE_PROCESS))
    assert sum(marks.values()) == scoped > 0  # process- and global-scope instants get lanes of their own
    logs = [lane for lane in timeline.lanes() if lane.key[0] == "logs"]
    assert sum(len(lane.item.ts) for lane in logs) == len(model.cols.log_ts)


def click_at(qtbot, timeline, t_ns: int, y_rows: float) -> None:
    """A left click on the timeline's view at a time and a row (view units)."""
    vb = timeline.plot.getViewBox()
    scene_pt = vb.mapViewToScene(pg_point((t_ns - timeline.model.start_ns) / 1e9, y_rows))
    qtbot.mouseClick(timeline.plot.viewport(), Qt.MouseButton.LeftButton, pos=timeline.plot.mapFromScene(scene_pt))


def test_clicking_an_async_span_shows_its_details_and_f_fits_it(window, qtbot) -> None:
    tab = window.current_tab()
    timeline, model = tab.timeline, tab.model
    spans = model.async_spans
    lane = next(lane for lane in timeline.lanes() if lane.key[0] == "async")
    lo, hi = spans.lane_rows(lane.pid, 1)
    row = (lo + hi) // 2  # a span in the track's second lane
    start, end = int(spans.start[row]), int(spans.end[row])
    timeline.set_range_ns(start - (end - start), end + (end - start))
    qtbot.wait(10)
    with qtbot.waitSignal(timeline.itemSelected, timeout=2000) as blocker:
        click_at(qtbot, timeline, (start + end) // 2, lane.item.y0 + 1.4)
    assert blocker.args == ["async", row]
    assert lane.item.selected_row == row and timeline.selected_row == -1
    text = tab.details.toPlainText()
    name = model.strings[int(spans.name[row])]
    assert f"{name} (async)" in text and f"Async id\n{int(spans.id[row])}\n" in text
    bound = spans.instants_of(row)
    if len(bound):  # the async instants bound to the span are listed with it
        assert "Async instants" in text
    qtbot.keyClick(timeline, Qt.Key.Key_F)
    a, b = timeline.visible_range_ns()
    assert a <= start and end <= b and (b - a) < 1.5 * (end - start) + 10
    # a click on empty space clears the selection and the panel
    click_at(qtbot, timeline, model.start_ns - 1000, lane.item.y0 + 0.4)
    assert timeline.selection == ("", -1) and lane.item.selected_row == -1
    assert "Click a slice" in tab.details.toPlainText()


def test_clicking_instants_and_log_marks_selects_them(window, qtbot) -> None:
    from fxscope.app.timeline.widget import GLOBAL_GROUP
    from fxscope.core.trace.instants import SCOPE_THREAD

    tab = window.current_tab()
    timeline, model = tab.timeline, tab.model
    inst = model.instants
    # a global-scope instant on its own lane
    lane = next(lane for lane in timeline.lanes() if lane.key == ("instants", GLOBAL_GROUP))
    row = int(lane.item.point_rows[len(lane.item.point_rows) // 2])
    t = int(inst.ts[row])
    timeline.set_range_ns(t - 50_000, t + 50_000)
    qtbot.wait(10)
    with qtbot.waitSignal(timeline.itemSelected, timeout=2000) as blocker:
        click_at(qtbot, timeline, t + 150, lane.item.y0 + 0.4)  # 150 ns off: about 2 px of 100 us
    assert blocker.args == ["instant", row]
    text = tab.details.toPlainText()
    assert "(instant)" in text and "Scope\nglobal" in text and model.strings[int(inst.name[row])] in text
    click_at(qtbot, timeline, t + 3_000, lane.item.y0 + 0.4)  # ~36 px away: nothing there
    assert timeline.selection == ("", -1)
    timeline.select_item("instant", row)
    qtbot.keyClick(timeline, Qt.Key.Key_F)  # a point in time: F centres a short window on it
    a, b = timeline.visible_range_ns()
    assert a < t < b and b - a < 50_000
    # a thread-scope instant: its mark on the top edge of its thread's slice track
    item = next(i for i in timeline.items if i.isVisible() and inst.thread_rows(i.track.thread)[1] > inst.thread_rows(i.track.thread)[0])
    lo, hi = inst.thread_rows(item.track.thread)
    row = next(r for r in range(lo, hi) if int(inst.scope[r]) == SCOPE_THREAD)
    t = int(inst.ts[row])
    timeline.set_range_ns(t - 20_000, t + 20_000)
    qtbot.wait(10)
    click_at(qtbot, timeline, t, item.y0 + 0.1)
    assert timeline.selection == ("instant", row) and item.selected_instant == row
    assert "Scope\nthread" in tab.details.toPlainText()
    # a log mark selects its record in the log panel
    lane = next(lane for lane in timeline.lanes() if lane.key[0] == "logs")
    row = int(lane.item.point_rows[0])
    t = int(model.logs.ts[row])
    timeline.set_range_ns(t - 20_000, t + 20_000)
    qtbot.wait(10)
    click_at(qtbot, timeline, t, lane.item.y0 + 0.4)
    assert timeline.selection == ("log", row)
    assert tab.bottom.currentWidget() is tab.logs_tab
    assert [i.row() for i in tab.logs.selectionModel().selectedRows()] == [row]


def test_clicking_a_cpu_slice_shows_its_wakeup_and_links_to_the_thread_state(window, qtbot) -> None:
    from fxscope.core.trace.sched import cpu_slice_details

    tab = window.current_tab()
    timeline, model = tab.timeline, tab.model
    cs = model.sched.cpu_slices
    # a CPU slice whose thread was woken (by a named waker) on another CPU
    row = next(r for r in range(len(cs)) if (d := cpu_slice_details(model, r))["waker"] and d["wakeup_cpu"] != int(cs.cpu[r]))
    d = cpu_slice_details(model, row)
    start, end = int(cs.start[row]), int(cs.end[row])
    timeline.set_range_ns(int(d["wakeup_ns"]) - (end - start), end + (end - start))
    qtbot.wait(10)
    lane = next(lane for lane in timeline.lanes() if lane.key == ("cpu", int(cs.cpu[row])))
    with qtbot.waitSignal(timeline.itemSelected, timeout=2000) as blocker:
        click_at(qtbot, timeline, (start + end) // 2, lane.item.y0 + 0.4)
    assert blocker.args == ["cpu", row] and lane.item.selected_row == row
    text = tab.details.toPlainText()
    assert f"on CPU {int(cs.cpu[row])}" in text and f"Waker\n{d['waker']}" in text
    assert "Scheduling latency" in text and "End state" in text
    # the wakeup is drawn: the arrow runs from the waker's CPU lane at the wakeup to the slice's start
    assert timeline.wakeup_arrow.wakeup == (int(d["wakeup_ns"]), int(d["wakeup_cpu"]), start)
    assert timeline.lane_y(("cpu", int(d["wakeup_cpu"]))) is not None and timeline.selection_y() is not None
    # the details link goes to the thread's running interval, which points back at this CPU slice
    with qtbot.waitSignal(timeline.itemSelected, timeout=2000) as blocker:
        tab.details.itemRequested.emit("state", int(d["state_row"]))
    assert blocker.args == ["state", int(d["state_row"])]
    assert "running" in tab.details.toPlainText()
    strip = next(lane.item for lane in timeline.lanes() if lane.key[0] == "state" and lane.item.lo <= d["state_row"] < lane.item.hi)
    assert strip.selected_row == int(d["state_row"]) and lane.item.selected_row == -1
    # the thread's state strip marks its wakeups
    timeline.plot.getViewBox().setYRange(strip.y0 - 2, strip.y0 + 6, padding=0)
    timeline.plot.viewport().repaint()
    assert strip.last_wakeups >= 1


def test_state_strip_wakeup_marks_read_in_chunks_match_reading_them_all(window, qtbot) -> None:
    """The strip reads its wakeups in chunks and stops once they are clutter: the pixels it marks, and
    whether it marks any, are those of reading every wakeup in view (a first chunk of 5 here: across the
    joins; and the sample read first decides only when it is clutter)."""
    from fxscope.app.timeline.lane_item import run_starts

    tab = window.current_tab()
    timeline, model = tab.timeline, tab.model
    wakeups = model.sched.wakeups
    strip = max((lane.item for lane in timeline.lanes() if lane.key[0] == "state"),
                key=lambda item: len(wakeups.rows_in(model.start_ns, model.end_ns + 1, tid=item.tid)))  # fmt: skip
    rows = wakeups.rows_in(model.start_ns, model.end_ns + 1, tid=strip.tid)
    assert len(rows) > 20
    strip.WAKEUP_CHUNK = 5
    joined = 0
    for sx in (10.0, 100.0, 1e3, 1e5, 1e9):  # pixels a second: wakeups sharing pixels, then each its own
        every = np.floor(strip.px(wakeups.ts[rows], sx, 3.0))
        every = every[run_starts(every)]
        for most in (1.0, len(every) - 1.0, float(len(every)), 1e9):
            got = strip._wakeup_pixels(wakeups.ts, rows, sx, 3.0, most)
            if len(every) > most:
                assert got is None
            else:
                assert got is not None and got.tolist() == every.tolist()
                joined += len(rows) > 5  # (read in more than one chunk)
    assert joined


def test_box_colours_from_the_colour_table_are_those_of_searching_the_name_ids(window) -> None:
    """CPU lanes and state strips colour their boxes from a table of their name ids' colours: every id,
    between, below and above the names, gets the colour that searching the sorted ids gives."""
    timeline = window.current_tab().timeline
    items = [lane.item for lane in timeline.lanes() if lane.key[0] in ("cpu", "state")]
    assert {item.kind for item in items} == {"cpu", "state"}
    for item in items:
        ids = item._name_ids
        names = np.r_[ids, ids - 1, ids + 1, ids.min() - 1000, ids.max() + 1000, -(2**62), 2**62].astype(np.int64)
        searched = item._name_colours[np.searchsorted(ids, names).clip(0, len(ids) - 1)]
        assert item._colour_table() is not None
        assert item._colours_of(names).tolist() == searched.tolist()
        item.COLOUR_TABLE_SPAN = 0  # (the search itself, as for ids spread over a wide range)
        item._colour_table_of = None
        assert item._colour_table() is None and item._colours_of(names).tolist() == searched.tolist()


def test_clicking_a_counter_selects_the_sample_in_force_and_hovering_names_what_is_under_the_pointer(window, qtbot) -> None:
    from fxscope.core.trace.details import counter_row

    tab = window.current_tab()
    timeline, model = tab.timeline, tab.model
    lane = next(lane for lane in timeline.lanes() if lane.key[0] == "counter" and len(model.counters.series[lane.key[1]].ts) > 4)
    index = lane.key[1]
    series = model.counters.series[index]
    i = len(series.ts) // 2
    a, b = int(series.ts[i]), int(series.ts[i + 1])
    timeline.set_range_ns(a - (b - a), b + (b - a))
    timeline.plot.getViewBox().setYRange(lane.item.y0 - 1, lane.item.y0 + 10, padding=0)
    qtbot.wait(10)
    with qtbot.waitSignal(timeline.itemSelected, timeout=2000) as blocker:
        click_at(qtbot, timeline, (a + b) // 2, lane.item.y0 + 1.0)
    assert blocker.args == ["counter", counter_row(index, i)]
    text = tab.details.toPlainText()
    assert f"{series.label} (counter)" in text and f"Value\n{float(series.value[i]):g}\n" in text
    delta = float(series.value[i]) - float(series.value[i - 1])
    assert f"Delta\n{delta:+g}" in text
    qtbot.keyClick(timeline, Qt.Key.Key_F)  # the sample's extent, until the next one
    va, vb = timeline.visible_range_ns()
    assert va <= a and b <= vb and vb - va < 2 * (b - a)
    # hovering a thread slice names it (and its duration) at once
    item = timeline.items[0]
    row = int(item.track.by_depth[0][len(item.track.by_depth[0]) // 2])
    start, dur = int(model.slices.ts[row]), int(model.slices.dur[row])
    timeline.set_range_ns(start - dur, start + 2 * dur)
    timeline.plot.getViewBox().setYRange(item.y0 - 1, item.y0 + 10, padding=0)
    qtbot.wait(10)
    box = timeline.plot.getViewBox()
    timeline._hover(box.mapViewToScene(pg_point((start + dur / 2 - model.start_ns) / 1e9, item.y0 + 0.4)))
    assert timeline._hovered == ("slice", row)
    assert timeline.describe("slice", row).startswith(model.name_of(row))


def test_m_marks_the_selection_escape_clears_and_question_mark_lists_the_keys(window, qtbot) -> None:
    from fxscope.app.timeline.shortcuts import SHORTCUTS

    timeline = window.current_tab().timeline
    model = timeline.model
    row = int(timeline.items[0].track.by_depth[0][3])
    timeline.go_to_slice(row)
    qtbot.keyClick(timeline, Qt.Key.Key_M)
    start, dur = int(model.slices.ts[row]), int(model.slices.dur[row])
    assert timeline.measured == (start, start + dur) and timeline.measure_region.isVisible()
    assert timeline.measure_label.toPlainText().startswith("Δ ")
    qtbot.keyClick(timeline, Qt.Key.Key_Escape)
    assert timeline.selection == ("", -1) and timeline.measured is None
    assert not timeline.measure_region.isVisible()
    qtbot.keyClick(timeline, Qt.Key.Key_Question)
    from PySide6.QtWidgets import QLabel

    dialog = timeline._shortcuts
    assert dialog.isVisible()
    label = dialog.findChild(QLabel).text()
    assert all(keys in label for keys, _what in SHORTCUTS)


def test_tracks_keep_their_height_when_the_window_is_resized(window, qtbot) -> None:
    timeline = window.current_tab().timeline
    vb = timeline.plot.getViewBox()
    timeline.scroll_rows(5)
    for height in (900, 600, 1100):
        window.resize(1400, height)
        qtbot.wait(30)
        (_x0, _x1), (y0, y1) = vb.viewRange()
        assert abs(vb.height() / (y1 - y0) - timeline.ROW_PX) < 0.01  # pixels per row
        assert y0 == 5 or y1 == max(timeline.total_rows, timeline.visible_rows())  # the same top row if it fits


def test_flows_show_as_arrows_and_are_followed_with_brackets(window, qtbot) -> None:
    tab = window.current_tab()
    timeline, model = tab.timeline, tab.model
    flows = model.flows
    assert len(flows) > 0
    link = 0
    src, dst = int(flows.src_slice[link]), int(flows.dst_slice[link])
    timeline.go_to_slice(src)
    assert timeline.selected_row == src and link in timeline.flow_arrows.links.tolist()
    assert "Outgoing flows" in tab.details.toHtml() and f"slice:{dst}" in tab.details.toHtml()
    qtbot.keyClick(timeline, Qt.Key.Key_BracketRight)  # follow it
    assert timeline.selected_row == dst
    t0, t1 = timeline.visible_range_ns()
    assert t0 <= int(model.slices.ts[dst]) <= t1
    qtbot.keyClick(timeline, Qt.Key.Key_BracketLeft)  # and back
    assert timeline.selected_row in flows.src_slice[flows.incoming(dst)].tolist()
    from PySide6.QtCore import QUrl

    tab.details.anchorClicked.emit(QUrl(f"slice:{dst}"))  # the details link goes there too
    assert timeline.selected_row == dst
    timeline.plot.viewport().repaint()


def test_search_steps_through_matches_and_area_selection_aggregates(window, qtbot) -> None:
    tab = window.current_tab()
    timeline, model = tab.timeline, tab.model
    name = model.name_of(int(model.tracks[0].by_depth[0][0]))
    timeline.search_box.setText(name.upper()[:4])  # case-insensitive substring
    n = len(timeline.matches)
    assert n > 1 and timeline.search_status.text() == f"{n} matches"
    qtbot.keyClick(timeline.search_box, Qt.Key.Key_Return)  # the first match from the middle of the view
    first, k = timeline.selected_row, timeline.match_index
    assert first in timeline.matches.tolist() and name.upper()[:4] in model.name_of(first).upper()
    qtbot.keyClick(timeline.search_box, Qt.Key.Key_Return)
    second = timeline.selected_row
    assert model.slices.ts[second] >= model.slices.ts[first]
    total = len(timeline.hits)  # every kind's matches, counted as "3 of 120"
    assert timeline.search_status.text() == f"{(k + 1) % total + 1} of {total}"
    timeline.search_step(-1)
    assert timeline.selected_row == first

    # Ctrl+drag over the first process's threads for the whole trace: the table sums what the model has
    group = next(g for g in timeline.groups if any(lane.key[0] == "thread" for lane in g.lanes))
    ys = [lane.item.y0 for lane in group.lanes if lane.key[0] == "thread"]
    span = (model.end_ns - model.start_ns) / 1e9
    _t0, _t1, threads = timeline.select_area(0.0, span, min(ys), max(ys) + 0.5)
    assert sorted(threads) == sorted(lane.key[1] for lane in group.lanes if lane.key[0] == "thread")
    panel = tab.aggregate
    assert tab.bottom.currentWidget() is panel and panel.table.rowCount() == len(panel.rows) > 0
    in_threads = np.isin(model.slices.thread, threads)
    assert sum(r["count"] for r in panel.rows) == int(in_threads.sum())


def test_details_label_pointer_and_koid_arguments_with_their_objects(window) -> None:
    from fxscope.formats.fxt.args import ArgType

    tab = window.current_tab()
    model, s = tab.model, tab.model.slices
    row = next(r for r in range(len(s))
               if any(a.type == ArgType.POINTER for a in model.cols.event_args(int(s.event[r]))))  # fmt: skip
    arg = next(a for a in model.cols.event_args(int(s.event[row])) if a.type == ArgType.POINTER)
    obj = next(o for o in model.cols.userspace_objects if o.pointer == arg.value)
    tab.timeline.select(row)
    page = tab.details.toPlainText()
    assert f"{obj.name} (0x{arg.value:x})" in page  # the object's name, not just a number


def test_wheel_scrolls_tracks_and_ctrl_wheel_zooms(window, qtbot) -> None:
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent

    timeline = window.current_tab().timeline
    view = timeline.plot

    def wheel(delta: int, mods) -> None:
        pos = QPointF(view.width() / 2, view.height() / 2)
        event = QWheelEvent(pos, view.mapToGlobal(pos), QPoint(0, 0), QPoint(0, delta), Qt.MouseButton.NoButton,
                            mods, Qt.ScrollPhase.NoScrollPhase, False)  # fmt: skip
        view.wheelEvent(event)

    (x0, x1), (y0, _y1) = view.getViewBox().viewRange()
    wheel(-120, Qt.KeyboardModifier.NoModifier)  # scroll down: tracks move, the time range stays
    (a0, a1), (b0, _b1) = view.getViewBox().viewRange()
    assert b0 > y0 and (a0, a1) == (x0, x1)
    wheel(120, Qt.KeyboardModifier.ControlModifier)  # Ctrl+wheel: zoom in
    (c0, c1), _ = view.getViewBox().viewRange()
    assert c1 - c0 < x1 - x0
    wheel(120, Qt.KeyboardModifier.ShiftModifier)  # Shift+wheel: pan, same zoom
    (d0, d1), _ = view.getViewBox().viewRange()
    assert d0 < c0 and abs((d1 - d0) - (c1 - c0)) < 1e-12


def test_absurd_timestamps_neither_crash_nor_hide_the_real_events(qtbot, trace_tab) -> None:
    """A corrupt timestamp (ticks past 2**63 read back as a huge negative, another near 2**63) makes the
    trace span more than int64 holds: every track must still draw, the normal events where they are."""
    from fxscope.core.trace.model import TraceModel
    from fxscope.formats.fxt.args import ArgType
    from fxscope.formats.fxt.columns import EventKind as K
    from fxscope.formats.fxt.reader import read_fxt_bytes
    from fxscope.formats.fxt.writer import FxtWriter

    w = FxtWriter()
    w.initialization(1_000_000_000)
    thread = (1, 10)
    for i in range(50):
        t = 1_000_000 + i * 10_000
        w.event(K.DURATION_BEGIN, t, thread, "cat", "work")
        w.event(K.COUNTER, t + 1_000, thread, "cat", "load", [("v", ArgType.DOUBLE, float(i))], data=1)
        w.event(K.DURATION_END, t + 5_000, thread, "cat", "work")
    w.event(K.INSTANT, (1 << 63) + 10, thread, "cat", "corrupt-early")  # reads as about -9.2e18 ns
    w.event(K.INSTANT, (1 << 63) - 10, thread, "cat", "corrupt-late")
    model = TraceModel(read_fxt_bytes(w.getvalue()))
    assert model.end_ns - model.start_ns > (1 << 63)
    tab = trace_tab(model)
    timeline = tab.timeline
    item = timeline.items[0]
    drawn = []
    for a, b in ((model.start_ns, model.end_ns), (1_000_000, 1_500_000), (model.end_ns - 1000, model.end_ns + 1000)):
        timeline.set_range_ns(a, b)
        qtbot.wait(30)
        drawn.append(item.last_drawn)
        timeline.select_item(*timeline.hit_item(0.0, item.y0 + 0.4))
    # zoomed out, the per-pixel summaries (times taken from the trace start, past int64) still hold the
    # 50 slices, as one merged box in the middle of the trace; zoomed in on them, each is drawn
    assert drawn[:2] == [1, 50]
    vis = model.visible(model.tracks[0], model.start_ns, model.end_ns, (model.end_ns - model.start_ns) / 1000)
    assert vis.count.tolist() == [50] and 0 < vis.start[0] <= 1_000_000 < 1_495_000 <= vis.end[0]
    timeline.set_range_ns(1_000_000, 1_500_000)
    qtbot.wait(30)
    assert item.last_drawn >= 40  # the 50 slices, about where the model has them
    counter = next(lane.item for lane in timeline.lanes() if lane.key[0] == "counter")
    assert counter.last_drawn > 0
