"""Navigation on traces as real systems record them: stamped hours after boot (and near 2**63 ns), more
processes and threads than the window shows (issue 12: defects 5, 6, 7, 8, 9, 12 and "Navigation that
scales"). Every window test runs on both starts."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt, QUrl
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

STARTS = ["2h", "2^63"]


def in_view(timeline, kind: str, row: int) -> bool:
    """Whether the box of (kind, row) is drawn inside the view, below the pinned block and a sticky
    header (what the user sees)."""
    found = timeline.locate(kind, row)
    assert found is not None
    lane, offset = found
    if not lane.item.isVisible():
        return False
    y = lane.item.y0 + offset
    _, (y0, y1) = timeline.plot.getViewBox().viewRange()
    covered = 0.0 if lane.key in timeline.pinned else timeline.covered_rows()
    return y0 + covered - 1e-9 <= y and y + 1.0 <= y1 + 1e-9


def flow_source(model) -> int:
    """The slice the trace's one flow leaves from (first thread), and its destination (last thread)."""
    return int(model.flows.src_slice[0]), int(model.flows.dst_slice[0])


@pytest.mark.parametrize("start", STARTS)
def test_flow_follow_search_log_click_and_flow_links_bring_the_target_into_view(start, late_trace, trace_tab, qtbot) -> None:
    """Defect 5: ]/[, search Enter, a log record click and a flow link in the details scroll vertically
    and expand a collapsed process so that the selected box is visible."""
    model = late_trace(start, processes=12, threads=5)
    assert model.start_ns >= 1 << 33
    tab = trace_tab(model, 1200, 700)
    timeline = tab.timeline
    src, dst = flow_source(model)
    timeline.set_collapsed(False)
    assert timeline.total_rows > 3 * timeline.visible_rows()  # the flow's end is screens below

    timeline.go_to_slice(src)
    assert in_view(timeline, "slice", src)
    timeline.setFocus()
    qtbot.keyClick(timeline, Qt.Key.Key_BracketRight)
    assert timeline.selection == ("slice", dst) and in_view(timeline, "slice", dst)
    qtbot.keyClick(timeline, Qt.Key.Key_BracketLeft)
    assert timeline.selection == ("slice", src) and in_view(timeline, "slice", src)

    # collapsed: following the flow expands the destination's process
    timeline.set_collapsed(True)
    timeline.select(src)
    qtbot.keyClick(timeline, Qt.Key.Key_BracketRight)
    assert timeline.selection == ("slice", dst) and in_view(timeline, "slice", dst)
    dst_group = next(g for g in timeline.groups if any(lane.key == ("thread", int(model.slices.thread[dst]))
                                                       for lane in g.lanes))  # fmt: skip
    assert not dst_group.collapsed

    # search: the one log record of the last thread, from the top of the trace
    timeline.set_collapsed(True)
    timeline.scroll_rows(-1e6)
    timeline.search_box.setText("last thread logs")
    qtbot.keyClick(timeline.search_box, Qt.Key.Key_Return)
    kind, row = timeline.selection
    assert kind == "log" and "last thread" in model.logs.text(row) and in_view(timeline, "log", row)

    # a click on a log row: its mark selected and scrolled into view
    timeline.set_collapsed(True)
    timeline.scroll_rows(-1e6)
    panel = tab.logs
    log_row = next(r for r in range(len(model.logs)) if "last thread" in model.logs.text(r))
    panel.clicked.emit(panel.log_model.index(panel.log_model.view_row(log_row), 2))
    assert timeline.selection == ("log", log_row) and in_view(timeline, "log", log_row)
    t0, t1 = timeline.visible_range_ns()
    assert t0 <= int(model.logs.ts[log_row]) <= t1

    # a flow link in the details panel
    timeline.set_collapsed(True)
    timeline.scroll_rows(-1e6)
    timeline.go_to_slice(src)
    assert f"slice:{dst}" in tab.details.toHtml()
    tab.details.anchorClicked.emit(QUrl(f"slice:{dst}"))
    assert timeline.selection == ("slice", dst) and in_view(timeline, "slice", dst)


@pytest.mark.parametrize("start", STARTS)
def test_timeline_keys_work_after_clicking_the_panels_and_esc_leaves_the_search_box(start, late_trace, trace_tab, qtbot) -> None:
    """Defect 6: after a click on a log row or in the details, W/A/S/D still act on the timeline; Esc in
    the search box gives the keys back (W zooms instead of typing a W)."""
    tab = trace_tab(late_trace(start))
    timeline = tab.timeline
    tab.bottom.setCurrentWidget(tab.logs_tab)
    qtbot.wait(10)
    rect = tab.logs.visualRect(tab.logs.log_model.index(0, 2))
    qtbot.mouseClick(tab.logs.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert QApplication.focusWidget() is tab.logs
    a0, b0 = timeline.visible_range_ns()
    qtbot.keyClick(tab.logs, Qt.Key.Key_W)
    a1, b1 = timeline.visible_range_ns()
    assert b1 - a1 < (b0 - a0) * 0.9
    qtbot.keyClick(tab.logs, Qt.Key.Key_D)
    assert timeline.visible_range_ns()[0] > a1

    tab.bottom.setCurrentWidget(tab.details)
    tab.details.setFocus()
    a2, b2 = timeline.visible_range_ns()
    qtbot.keyClick(tab.details, Qt.Key.Key_S)
    a3, b3 = timeline.visible_range_ns()
    assert b3 - a3 > (b2 - a2) * 1.1

    timeline.search_box.setFocus()
    qtbot.keyClicks(timeline.search_box, "draw")
    qtbot.keyClick(timeline.search_box, Qt.Key.Key_Escape)
    focused = QApplication.focusWidget()
    assert focused is timeline
    qtbot.keyClick(focused, Qt.Key.Key_W)
    assert timeline.search_box.text() == "draw"
    a4, b4 = timeline.visible_range_ns()
    assert b4 - a4 < (b3 - a3) * 0.9


def _area_over(timeline, keys: list[tuple], t0_s: float, t1_s: float):
    lanes = [lane for lane in timeline.lanes() if lane.key in keys]
    ya = min(lane.item.y0 for lane in lanes)
    yb = max(lane.item.y0 + lane.item.rows for lane in lanes) - 0.01
    return timeline.select_area(t0_s, t1_s, ya, yb)


@pytest.mark.parametrize("start", STARTS)
def test_area_selection_highlights_its_lanes_and_sums_cpu_time_and_thread_states(start, late_trace, trace_tab) -> None:
    """Defect 9: the highlight covers the selected lanes only; over CPU lanes the table sums CPU time per
    thread and process, over state strips time per state (not "0 slices on 0 tracks"); tables open sorted
    by time in the area, largest first."""
    model = late_trace(start)
    tab = trace_tab(model)
    timeline, panel = tab.timeline, tab.aggregate
    span = (model.end_ns - model.start_ns) / 1e9
    cpu_keys = [("cpu", 0), ("cpu", 1)]
    t0, t1, threads = _area_over(timeline, cpu_keys, 0.0, 0.00045)  # 450 us: cuts two CPU slices
    assert threads == [] and set(cpu_keys) <= set(timeline.area_keys)
    rect = timeline.area_region.rect()
    cpu_lanes = [lane for lane in timeline.lanes() if lane.key in cpu_keys]
    assert rect.top() == min(lane.item.y0 for lane in cpu_lanes)
    assert rect.bottom() == pytest.approx(max(lane.item.y0 + lane.item.rows for lane in cpu_lanes))
    assert rect.bottom() < timeline.total_rows / 2  # not every track

    cs = model.sched.cpu_slices  # brute force: each slice clipped to the window, summed per thread
    expected: dict[int, int] = {}
    for a, b, tid in zip(cs.start.tolist(), cs.end.tolist(), cs.tid.tolist(), strict=True):
        inside = min(b, t1) - max(a, t0)
        if inside > 0:
            expected[tid] = expected.get(tid, 0) + inside
    assert {r["tid"]: r["total"] for r in panel.cpu_threads} == expected
    assert sum(r["total"] for r in panel.cpu_processes) == sum(expected.values())
    assert "CPU time" in panel.title.text() and "0 slices on 0 tracks" not in panel.title.text()
    assert panel.tabs.currentWidget() is panel.cpu_thread_table
    shown = [panel.cpu_thread_table.item(i, 3).value for i in range(panel.cpu_thread_table.rowCount())]
    assert shown == sorted(shown, reverse=True) and len(shown) == len(expected)

    # state strips: time per state
    state_keys = [lane.key for lane in timeline.lanes() if lane.key[0] == "state"][:1]
    _area_over(timeline, state_keys, 0.0, span)
    st = model.sched.thread_states
    tid = int(model.cols.threads_tid[state_keys[0][1]])
    rows = np.flatnonzero(st.tid == tid)
    per_state = {}
    for r in rows.tolist():
        name = {1: "running", 3: "blocked"}[int(st.state[r])]
        per_state[name] = per_state.get(name, 0) + int(st.end[r]) - int(st.start[r])
    assert {r["state"]: r["total"] for r in panel.states} == per_state

    # an async track: spans per name, clipped to the window
    async_key = next(lane.key for lane in timeline.lanes() if lane.key[0] == "async")
    t0, t1, _threads = _area_over(timeline, [async_key], 0.0, 0.0004)
    spans = model.async_spans
    brute: dict[str, int] = {}
    for r in range(len(spans.start)):
        if int(spans.pid[r]) == async_key[1]:
            inside = min(int(spans.end[r]), t1) - max(int(spans.start[r]), t0)
            if inside > 0:
                name = model.strings[int(spans.name[r])]
                brute[name] = brute.get(name, 0) + inside
    assert {r["name"]: r["total"] for r in panel.async_rows} == brute and len(brute) == 2
    assert panel.tabs.currentWidget() is panel.async_table and "async spans on 1 tracks" in panel.title.text()

    # slices: sorted by wall time in the area, not by name Z -> A
    group = next(g for g in timeline.groups if any(lane.key[0] == "thread" for lane in g.lanes))
    keys = [lane.key for lane in group.lanes if lane.key[0] == "thread"]
    _area_over(timeline, keys, 0.0, span)
    table = panel.table
    assert table.horizontalHeader().sortIndicatorSection() == 2
    values = [table.item(i, 2).value for i in range(table.rowCount())]
    assert values == sorted(values, reverse=True) and [table.item(0, 0).text()] == ["frame"]
    assert panel.tabs.currentWidget() is table


@pytest.mark.parametrize("start", STARTS)
def test_pinned_tracks_stay_on_top_take_the_state_strip_and_have_a_readable_header(start, late_trace, trace_tab) -> None:
    """Defect 8: the pinned block stays at the top while the tracks scroll under it; pinning a thread pins
    its state strip too; the pinned header is text the font has (no tofu box)."""
    model = late_trace(start, processes=12, threads=5)
    tab = trace_tab(model)
    timeline = tab.timeline
    timeline.set_collapsed(False)
    thread = next(lane for lane in timeline.lanes() if lane.key[0] == "thread" and
                  int(model.cols.threads_tid[lane.key[1]]) == int(model.sched.thread_states.tid[0]))  # fmt: skip
    timeline.pin(thread.key)
    assert timeline.pinned == [thread.key, ("state", thread.key[1])]
    timeline.scroll_rows(40.0)
    _, (y0, _y1) = timeline.plot.getViewBox().viewRange()
    assert y0 >= 40.0 - 1e-9
    assert timeline.header_at(y0 + 0.5) == "pinned"
    assert thread.item.y0 == pytest.approx(y0 + 1.0)
    state = next(lane for lane in timeline.lanes() if lane.key == ("state", thread.key[1]))
    assert state.item.y0 == pytest.approx(thread.item.y0 + thread.item.rows + 0.3)
    row = int(thread.item.track.by_depth[0][0])
    x = (int(model.slices.ts[row]) + 1000 - model.start_ns) / 1e9
    assert timeline.hit_test(x, thread.item.y0 + 0.4) == row  # clicks land on the pinned track
    # the tracks under the pinned block are hidden by it: nothing else is hit there
    under = timeline.lane_at(y0 + 1.4)
    assert under is thread
    # every character of the track names is in the axis font (a missing glyph draws a box)
    axis = timeline.plot.getAxis("left")
    metrics = QFontMetrics(axis.style.get("tickFont") or axis.font())
    texts = [text for level in axis._tickLevels for _y, text in level]
    assert any(t.strip() == "Pinned" for t in texts)
    missing = {ch for text in texts for ch in text if not metrics.inFontUcs4(ord(ch))}
    assert not missing
    timeline.unpin(thread.key)
    assert timeline.pinned == []


@pytest.mark.parametrize("start", STARTS)
def test_logs_tab_strips_ansi_shows_every_line_and_filters_by_text_and_severity(start, late_trace, trace_tab, qtbot) -> None:
    """Defect 7: no raw escapes, multi-line records at full height, the thread column fits its names, a
    filter box and a severity filter."""
    model = late_trace(start)
    tab = trace_tab(model)
    panel, logs_tab = tab.logs, tab.logs_tab
    lm = panel.log_model
    texts = [lm.data(lm.index(i, 2)) for i in range(lm.rowCount())]
    assert all("\x1b" not in t for t in texts)
    assert "ERROR: disk full" in texts
    multi = texts.index("first line of a report\nsecond line\nthird line")
    assert panel.rowHeight(multi) >= 3 * QFontMetrics(panel.font()).height()
    names = {lm.data(lm.index(i, 1)) for i in range(lm.rowCount())}
    metrics = QFontMetrics(panel.font())
    assert panel.columnWidth(1) >= max(metrics.horizontalAdvance(n) for n in names)

    logs_tab.filter_box.setText("DISK")
    assert [lm.data(lm.index(i, 2)) for i in range(lm.rowCount())] == ["ERROR: disk full"]
    logs_tab.filter_box.clear()
    logs_tab.severity.setCurrentIndex(3)  # WARN and above
    shown = [lm.data(lm.index(i, 2)) for i in range(lm.rowCount())]
    assert shown == ["ERROR: disk full", "WARN: queue is deep"]
    assert logs_tab.count.text() == f"2 of {len(model.logs)}"
    # a click on a filtered row still selects its record
    row = panel.log_row(1)
    assert "queue is deep" in model.logs.text(row)
    panel.clicked.emit(lm.index(1, 2))
    assert tab.timeline.selection == ("log", row)
    # a record the filter hides, selected from the timeline: the filter makes way
    hidden = next(r for r in range(len(model.logs)) if "last thread" in model.logs.text(r))
    tab.timeline.select_item("log", hidden)
    assert lm.rowCount() == len(model.logs) and logs_tab.filter_box.text() == ""
    assert [i.row() for i in panel.selectionModel().selectedRows()] == [lm.view_row(hidden)]


@pytest.mark.parametrize("start", STARTS)
def test_measure_label_over_the_slices_status_bar_per_tab_and_a_resizable_remembered_panel(start, late_trace, qtbot, tmp_path, truncated_demo) -> None:
    """Defect 12: the measure label is drawn over the tracks on its own background; the status bar
    speaks of the tab in front; the panel below gets a fair share at 1280x720, and its size is kept."""
    from fxscope.app.gui import settings
    from fxscope.app.main_window import MainWindow

    settings().remove("trace_tab/split")
    model = late_trace(start)
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    assert win.open_path(str(truncated_demo))
    assert "warning" in win.statusBar().currentMessage()
    assert win.open_path(model.cols.path)
    assert win.statusBar().currentMessage() == ""  # the clean trace is in front: no stale note
    win.tabs.setCurrentIndex(0)
    assert "warning" in win.statusBar().currentMessage()
    win.tabs.setCurrentIndex(1)
    tab = win.current_tab()
    qtbot.wait(10)
    assert tab.bottom.height() >= 180  # (it was ~100 px)
    # ... and no more than its default share: the Analysis and Compare pages' minimum heights (300+ px) had
    # pushed the timeline down to ~280 px of 640
    assert tab.timeline.height() >= 0.6 * (tab.timeline.height() + tab.bottom.height())
    assert not tab.childrenCollapsible()
    # measure: the label is above every track and has its own background
    timeline = tab.timeline
    item = timeline.items[0]
    timeline.measure(0.0001, 0.0002, item.y0 + 0.5)
    label = timeline.measure_label
    assert label.isVisible() and label.zValue() > max(lane.item.zValue() for lane in timeline.lanes())
    assert label.fill.style() != Qt.BrushStyle.NoBrush
    # the user's split is kept for the next tab
    tab.moveSplitter(300, 1)
    height = tab.bottom.height()
    assert win.open_path(model.cols.path)
    second = win.current_tab()
    qtbot.wait(10)
    assert abs(second.bottom.height() - height) <= 2
    settings().remove("trace_tab/split")


# ---------------------------------------------------------------------------------- navigation that scales
@pytest.mark.parametrize("start", STARTS)
def test_three_hundred_threads_open_collapsed_with_busy_strips_and_filter_to_a_thread(start, late_trace, trace_tab, qtbot) -> None:
    model = late_trace(start, processes=60, threads=5)
    tab = trace_tab(model, 1280, 720)
    timeline = tab.timeline
    processes = [g for g in timeline.groups if g.summary is not None]
    assert len(processes) == 60 and all(g.collapsed for g in processes)
    assert timeline.total_rows < 80  # a header row per process (and the CPU lanes)
    # the summary is the busy fraction of the process's threads, exactly
    summary = processes[0].summary
    assert summary.isVisible()
    edges = np.array([0, 100_000, 350_000, 729_000], np.float64)
    s = model.slices
    top = np.concatenate([t.by_depth[0] for t in summary.tracks])
    starts = (s.ts[top] - model.start_ns).astype(np.float64)
    ends = starts + s.dur[top]
    brute = [float(np.clip(e - starts, 0, ends - starts).sum()) for e in edges]
    assert np.allclose(summary.busy(edges), brute)
    tab.grab()
    assert summary.last_drawn > 0

    # collapse all / expand all
    timeline.set_collapsed(False)
    assert timeline.total_rows > 600 and all(not g.collapsed for g in processes)
    timeline.set_collapsed(True)
    assert timeline.total_rows < 80

    # the filter: one thread by name, then a process by its koid
    timeline.filter_box.setText("worker-37-3")
    shown = [lane for lane in timeline.lanes() if lane.item.isVisible()]
    assert [lane.label for lane in shown if lane.key[0] == "thread"] == ["worker-37-3 47004"]
    assert [pid for _y, pid in timeline.headers] == [47000]
    timeline.filter_box.setText("47000")
    shown = [lane for lane in timeline.lanes() if lane.item.isVisible()]
    assert len([lane for lane in shown if lane.key[0] == "thread"]) == 5
    assert {lane.pid for lane in shown} == {47000}
    timeline.filter_box.clear()
    assert all(g.collapsed for g in processes) and timeline.total_rows < 80


@pytest.mark.parametrize("start", STARTS)
def test_scrollbar_and_sticky_process_header(start, late_trace, trace_tab, qtbot) -> None:
    model = late_trace(start, processes=12, threads=5)
    tab = trace_tab(model)
    timeline = tab.timeline
    timeline.set_collapsed(False)
    bar = timeline.scrollbar
    assert bar.isVisible() and bar.maximum() > 0
    bar.setValue(bar.maximum() // 2)
    _, (y0, _y1) = timeline.plot.getViewBox().viewRange()
    assert y0 == pytest.approx(bar.value() / timeline.SCROLL_STEPS)
    timeline.scroll_rows(3.0)
    assert bar.value() == round(timeline.view_top() * timeline.SCROLL_STEPS)
    # the process whose threads are under the top of the view keeps its header there
    assert timeline.sticky is not None
    y, pid = timeline.sticky
    group = next(g for g in timeline.groups if g.pid == pid)
    assert group.y0 < y < group.y1 and y == pytest.approx(timeline.view_top())
    assert timeline.header_at(y + 0.5) == pid
    timeline.toggle_group(pid)  # a click there collapses it
    assert group.collapsed


@pytest.mark.parametrize("start", STARTS)
def test_w_and_s_zoom_around_the_pointer(start, late_trace, trace_tab, qtbot) -> None:
    tab = trace_tab(late_trace(start))
    timeline = tab.timeline
    vb = timeline.plot.getViewBox()
    (x0, x1), (y0, _y1) = vb.viewRange()
    x = x0 + (x1 - x0) * 0.8
    scene = vb.mapViewToScene(QPointF(x, y0 + 2.0))
    timeline._hover(scene)
    assert timeline.pointer_x == pytest.approx(x)
    qtbot.keyClick(timeline, Qt.Key.Key_W)
    (a0, a1), _ = vb.viewRange()
    assert a1 - a0 < (x1 - x0) * 0.9
    assert (x - a0) / (a1 - a0) == pytest.approx(0.8, abs=1e-6)  # the pointer's time stays under it
    qtbot.keyClick(timeline, Qt.Key.Key_S)
    (b0, b1), _ = vb.viewRange()
    assert (x - b0) / (b1 - b0) == pytest.approx(0.8, abs=1e-6)
    timeline.set_pointer(None)  # away from the tracks: around the centre
    qtbot.keyClick(timeline, Qt.Key.Key_W)
    (c0, c1), _ = vb.viewRange()
    assert (c0 + c1) / 2 == pytest.approx((b0 + b1) / 2)


@pytest.mark.parametrize("start", STARTS)
def test_async_tracks_are_named_after_their_spans_and_counters_show_their_scale(start, late_trace, trace_tab) -> None:
    model = late_trace(start)
    tab = trace_tab(model)
    timeline = tab.timeline
    labels = {lane.label for lane in timeline.lanes() if lane.key[0] == "async"}
    assert labels == {"fetch, upload"}
    counter = next(lane.item for lane in timeline.lanes() if lane.key[0] == "counter")
    assert counter.scale_text() == "max 8.389 M"  # engineering units, as the details show them
    counter.set_cursor(model.start_ns + 450_000)  # the third sample (5) holds from 400 us
    assert counter.scale_text() == "max 8.389 M   at cursor 5"


@pytest.mark.parametrize("start", STARTS)
def test_search_covers_every_kind_highlights_matches_and_counts_them(start, late_trace, trace_tab, qtbot) -> None:
    from fxscope.core.trace.search_hits import search_all

    model = late_trace(start)
    tab = trace_tab(model)
    timeline = tab.timeline
    kinds = {
        "draw": "slice", "upload": "async", "vsync": "instant", "queue_depth": "counter", "disk full": "log",
        "app": "slice",  # a category
    }  # fmt: skip
    for text, kind in kinds.items():
        hits = search_all(model, text)
        assert kind in {("slice", "async", "instant", "counter", "log")[k] for k in hits.kind.tolist()}, text
    hits = search_all(model, "draw")
    assert len(hits) == int((np.asarray(model.slices.name) == model.strings.index("draw")).sum())
    assert (np.diff(hits.ts) >= 0).all()

    timeline.search_box.setText("upload")
    n = len(timeline.hits)
    assert n == 6 and timeline.search_status.text() == "6 matches"
    timeline.search_step(1)
    timeline.search_step(1)
    timeline.search_step(1)
    assert timeline.search_status.text() == f"{timeline.match_index + 1} of 6"
    assert timeline.selection[0] == "async" and in_view(timeline, *timeline.selection)
    # outlined on the tracks and ticked on the overview
    tab.grab()
    async_items = [lane.item for lane in timeline.lanes() if lane.key[0] == "async" and lane.item.isVisible()]
    assert sum(item.last_matches for item in async_items) >= 1
    xs, _ys = timeline.overview_ticks.getData()
    assert len(xs) == 2 * n
    counter = next(lane.item for lane in timeline.lanes() if lane.key[0] == "counter")
    assert not counter.matched
    timeline.search_box.setText("queue_dep")  # a counter by name: its scale is drawn in the match colour
    assert counter.matched and timeline.search_status.text() == "1 matches"
    timeline.search_box.setText("vsync")  # thread instants: outlined where their thread's track marks them
    tab.grab()
    assert sum(getattr(lane.item, "last_instant_matches", 0) for lane in timeline.lanes()
               if lane.item.isVisible()) >= 1  # fmt: skip
    timeline.search_box.setText("disk full")
    assert timeline.search_status.text() == "1 matches"
    qtbot.keyClick(timeline.search_box, Qt.Key.Key_Return)
    assert timeline.selection[0] == "log" and timeline.search_status.text() == "1 of 1"


def test_menu_bar_view_and_help_and_the_dark_theme(late_trace, qtbot) -> None:
    """File, View (theme, collapse/expand all, reset zoom), Help (keys, about); the dark theme paints the
    window and the timeline dark, and is remembered."""
    from PySide6.QtGui import QColor, QPalette

    from fxscope.app.gui import settings
    from fxscope.app.main_window import MainWindow

    model = late_trace("2h", processes=12, threads=5)
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    assert win.open_path(model.cols.path)
    menus = {a.text().replace("&", ""): a.menu() for a in win.menuBar().actions()}
    assert list(menus) == ["File", "View", "Help"]
    view = [a.text().replace("&", "") for a in menus["View"].actions() if a.text()]
    assert {"Theme", "Collapse all processes", "Expand all processes", "Reset zoom"} <= set(view)
    timeline = win.current_tab().timeline
    next(a for a in menus["View"].actions() if "Collapse all" in a.text()).trigger()
    assert all(g.collapsed for g in timeline.groups)
    timeline.set_range_ns(model.start_ns, model.start_ns + 1000)
    next(a for a in menus["View"].actions() if "Reset zoom" in a.text()).trigger()
    t0, t1 = timeline.visible_range_ns()
    assert t0 <= model.start_ns and t1 >= model.end_ns
    help_items = [a.text().replace("&", "") for a in menus["Help"].actions()]
    assert help_items == ["Keys and mouse", "About fxscope"]
    assert win.show_keys().isVisible()
    def unit_colour() -> str:  # the time axis' unit label, "(ms)" and the like: as legible as its tick labels
        axis = timeline.plot.getAxis("bottom")
        return re.search(r"color:\s*(#[0-9a-f]{6})", axis.label.toHtml()).group(1)

    from fxscope.app.theme import DARK, LIGHT

    assert unit_colour() == LIGHT.axis_text  # (it was the grid's colour, #ececef on white)
    try:
        win.theme_actions["dark"].trigger()
        assert unit_colour() == DARK.axis_text
        assert settings().value("theme") == "dark"
        window_colour = QApplication.instance().palette().color(QPalette.ColorRole.Window)
        assert window_colour.lightness() < 60
        assert timeline.plot.backgroundBrush().color().lightness() < 40
        image = timeline.plot.grab().toImage()
        corner = QColor(image.pixel(image.width() - 20, image.height() - 40))  # blank space under the tracks
        assert corner.lightness() < 40
    finally:
        win.set_theme("light")
    assert QApplication.instance().palette().color(QPalette.ColorRole.Window).lightness() > 200


def test_screenshot_command_takes_a_theme_and_a_track_filter(late_trace, tmp_path) -> None:
    import subprocess
    import sys

    from PySide6.QtGui import QColor, QImage

    model = late_trace("2h", processes=60, threads=5)
    out = {}
    for name, extra in (("all", []), ("filtered", ["--filter", "worker-3-", "--theme", "dark"])):
        out[name] = tmp_path / f"{name}.png"
        done = subprocess.run([sys.executable, "-m", "fxscope", "screenshot", model.cols.path, "-o", str(out[name]),
                               "--size", "1280x720", *extra], capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
    light, dark = QImage(str(out["all"])), QImage(str(out["filtered"]))
    assert light.width() == dark.width() == 1280
    # the dark window: its menu bar and the blank space right of the tracks are dark
    assert QColor(dark.pixel(5, 5)).lightness() < 60 and QColor(light.pixel(5, 5)).lightness() > 180
    assert light != dark


def _pixel(timeline, x_s: float, y_rows: float, dx: float = 0.0, dy: float = 0.0):
    """The colour the timeline's view shows at view coordinates (x seconds, y rows), moved by (dx, dy)
    device pixels."""
    vb = timeline.plot.getViewBox()
    point = timeline.plot.mapFromScene(vb.mapViewToScene(QPointF(x_s, y_rows)))
    image = timeline.plot.viewport().grab().toImage()
    return image.pixelColor(int(point.x() + dx), int(point.y() + dy))


@pytest.mark.parametrize("start", STARTS)
def test_measured_span_stays_under_the_pinned_block_and_the_selection_shows_in_the_dark_theme(start, late_trace, trace_tab, qtbot) -> None:
    """The measure region tints the tracks that scroll, not the pinned block over them; the selected box's
    outline stands out on the dark background (a near-black outline alone did not)."""
    from fxscope.app.theme import DARK

    model = late_trace(start, processes=12, threads=5)
    tab = trace_tab(model)
    timeline = tab.timeline
    timeline.set_collapsed(False)
    thread = next(lane for lane in timeline.lanes() if lane.key[0] == "thread")
    timeline.pin(thread.key)
    timeline.scroll_rows(20.0)
    _, (y0, _y1) = timeline.plot.getViewBox().viewRange()
    assert timeline.header_at(y0 + 0.5) == "pinned"
    (x0, x1), _ = timeline.plot.getViewBox().viewRange()
    timeline.measure(x0 + 0.3 * (x1 - x0), x0 + 0.7 * (x1 - x0), y0 + 8.0)
    qtbot.wait(20)
    mid = x0 + 0.5 * (x1 - x0)
    # the pinned block's header row, inside the measured span: the pinned background, untinted
    assert _pixel(timeline, mid, y0 + 0.5).name() == timeline.theme.pinned_background
    assert timeline.measure_region.isVisible()
    timeline.clear_marks()
    # the dark theme: a slice selected and zoomed to; just outside its top edge the outline's light ring
    timeline.unpin(thread.key)
    timeline.set_theme(DARK)
    row = int(thread.item.track.by_depth[0][0])
    timeline.go_to_slice(row)
    timeline.fit_selection()
    qtbot.wait(20)
    s = model.slices
    x = (int(s.ts[row]) + int(s.dur[row]) // 2 - model.start_ns) / 1e9
    y = timeline.slice_y(row) - 0.43  # the box's top edge (rows are centred 0.43 below it)
    ring = _pixel(timeline, x, y, dy=-2.5)
    assert ring.lightness() > 200, ring.name()  # (the dark background there is #17181a)


@pytest.mark.parametrize("start", STARTS)
def test_a_box_begun_before_the_view_covers_it_zoomed_in_and_panned(start, late_trace, trace_tab, qtbot) -> None:
    """Zoomed into the middle of a long slice, the slice fills the view, also after pans within the
    picture the track keeps (its boxes are kept in pixels from a window wider than the view)."""
    model = late_trace(start)
    tab = trace_tab(model)
    timeline = tab.timeline
    timeline.set_collapsed(False)
    item = timeline.items[0]
    s = model.slices
    row = int(item.track.by_depth[0][0])
    begin, dur = int(s.ts[row]), int(s.dur[row])
    colour = item._colours_of(np.array([int(s.name[row])]))[0]
    from fxscope.app.timeline.lane_item import BRUSHES

    want = BRUSHES[int(colour)].color().name()
    timeline.set_range_ns(begin + dur * 4 // 10, begin + dur * 5 // 10)
    y = item.y0 + 0.43
    for step in (0.0, 0.2, -0.3):
        timeline.pan(step)
        qtbot.wait(20)
        (x0, x1), _ = timeline.plot.getViewBox().viewRange()
        assert item.last_drawn >= 1
        for fraction in (0.05, 0.5, 0.95):
            assert _pixel(timeline, x0 + fraction * (x1 - x0), y).name() == want, (step, fraction)
