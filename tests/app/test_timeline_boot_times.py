"""The window's interactions on traces stamped as real ones are: hours after boot (first timestamp past
2**33 ns) and near 2**63 ns, with three providers at different tick rates and 315 thread tracks.

Every time, koid and id crosses Qt signals here; a 32-bit signal argument wraps (a Ctrl+drag at 3 s once
aggregated "-1.295 s .. -1.294 s", a log click raised ``SystemError``). The fixtures are in tests/conftest.py.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt

from fxscope.core.trace.query import aggregate


def click_at(qtbot, timeline, t_ns: int, y_rows: float) -> None:
    """A left click on the timeline's view at a time and a row (view units), scrolled into view first."""
    vb = timeline.plot.getViewBox()
    _, (y0, y1) = vb.viewRange()
    if not y0 + 0.5 <= y_rows <= y1 - 0.5:
        timeline.scroll_rows(y_rows - (y0 + y1) / 2)
    scene_pt = vb.mapViewToScene(QPointF((t_ns - timeline.model.start_ns) / 1e9, y_rows))
    qtbot.mouseClick(timeline.plot.viewport(), Qt.MouseButton.LeftButton, pos=timeline.plot.mapFromScene(scene_pt))


def show_around(qtbot, timeline, start: int, end: int) -> None:
    pad = max(end - start, 2_000)
    timeline.set_range_ns(start - pad, end + pad)
    qtbot.wait(5)


def test_boot_traces_are_what_the_tests_need(boot_trace) -> None:
    m = boot_trace
    assert m.start_ns >= 1 << 33
    assert len(set(m.cols.ticks_per_second)) > 1  # providers at different tick rates
    assert sum(len(g.tracks) for g in m.processes) >= 300
    assert len(m.logs) and len(m.flows) and len(m.counters) and len(m.async_spans) and len(m.sched.cpu_slices)


def test_area_selection_aggregates_what_core_aggregate_gives(boot_trace, trace_tab, qtbot) -> None:
    tab = trace_tab(boot_trace)
    timeline, m = tab.timeline, boot_trace
    timeline.set_collapsed(False)  # 315 threads open collapsed: every track, expanded, for the area
    # Ctrl+drag from 30% to 60% of the trace over every track
    span_s = (m.end_ns - m.start_ns) / 1e9
    with qtbot.waitSignal(timeline.areaSelected, timeout=2000) as blocker:
        t0, t1, threads = timeline.select_area(0.3 * span_s, 0.6 * span_s, 0.0, timeline.total_rows)
    assert blocker.args[0] == t0 and blocker.args[1] == t1 and t0 > m.start_ns and t1 > t0
    expected = aggregate(m, t0, t1, threads)
    assert len(threads) > 300 and sum(r["count"] for r in expected) > 0
    panel = tab.aggregate
    assert panel.rows == expected
    assert panel.title.text().startswith(f"{sum(r['count'] for r in expected)} slices on {len(threads)} tracks, ")
    assert "-" not in panel.title.text().split(",", 1)[1]  # no negative (wrapped) time in the title


def test_clicks_select_every_kind_of_box(boot_trace, trace_tab, qtbot) -> None:
    from fxscope.core.trace.details import counter_row

    tab = trace_tab(boot_trace)
    timeline, m = tab.timeline, boot_trace
    timeline.set_collapsed(False)  # 315 threads open collapsed: clicks here aim at expanded tracks
    lanes = timeline.lanes()
    # a thread slice on one of the last (hundreds of) tracks
    item = timeline.items[-1]
    row = int(item.track.by_depth[0][0])
    s, d = int(m.slices.ts[row]), int(m.slices.dur[row])
    show_around(qtbot, timeline, s, s + d)
    with qtbot.waitSignal(timeline.itemSelected, timeout=2000) as blocker:
        click_at(qtbot, timeline, s + d // 2, item.y0 + 0.4)
    assert blocker.args == ["slice", row] and timeline.selected_row == row
    assert m.name_of(row) in tab.details.toPlainText()
    # an async span, a CPU slice, a thread state
    for kind, table, key in (("async", m.async_spans, "async"), ("cpu", m.sched.cpu_slices, "cpu"),
                             ("state", m.sched.thread_states, "state")):  # fmt: skip
        lane = next(lane for lane in lanes if lane.key[0] == key and getattr(lane.item, "lo", 0) < getattr(lane.item, "hi", 1))
        if key == "async":
            lo, hi = table.lane_rows(lane.pid, 0)
            r, y = (lo + hi) // 2, lane.item.y0 + 0.4
        else:
            r, y = (lane.item.lo + lane.item.hi) // 2, lane.item.y0 + 0.4
        a, b = int(table.start[r]), int(table.end[r])
        show_around(qtbot, timeline, a, b)
        with qtbot.waitSignal(timeline.itemSelected, timeout=2000) as blocker:
            click_at(qtbot, timeline, (a + b) // 2, y)
        assert blocker.args == [kind, r], kind
        assert timeline.selection_span() == (a, b)
    # a counter sample: the one in force at the click
    lane = next(lane for lane in lanes if lane.key[0] == "counter" and len(lane.item.series) > 2)
    series = lane.item.series
    i = len(series) // 2
    a = int(series.ts[i])
    b = int(series.ts[i + 1]) if i + 1 < len(series) else a + 1000
    show_around(qtbot, timeline, a, b)
    with qtbot.waitSignal(timeline.itemSelected, timeout=2000) as blocker:
        click_at(qtbot, timeline, a + (b - a) // 2, lane.item.y0 + 0.5)
    assert blocker.args == ["counter", counter_row(lane.key[1], i)]
    # a global-scope instant on its own lane
    from fxscope.app.timeline.widget import GLOBAL_GROUP

    lane = next(lane for lane in lanes if lane.key == ("instants", GLOBAL_GROUP))
    row = int(lane.item.point_rows[len(lane.item.point_rows) // 2])
    t = int(m.instants.ts[row])
    show_around(qtbot, timeline, t - 20_000, t + 20_000)
    with qtbot.waitSignal(timeline.itemSelected, timeout=2000) as blocker:
        click_at(qtbot, timeline, t, lane.item.y0 + 0.4)
    assert blocker.args == ["instant", row]
    assert timeline.selection_span() == (t, t)
    # a log mark selects its record in the Logs tab
    lane = next(lane for lane in lanes if lane.key[0] == "logs")
    row = int(lane.item.point_rows[-1])
    t = int(m.logs.ts[row])
    show_around(qtbot, timeline, t - 10_000, t + 10_000)
    click_at(qtbot, timeline, t, lane.item.y0 + 0.4)
    assert timeline.selection == ("log", row)
    assert [i.row() for i in tab.logs.selectionModel().selectedRows()] == [row]


def test_log_click_moves_the_view_to_the_record(boot_trace, trace_tab) -> None:
    tab = trace_tab(boot_trace)
    timeline, panel, m = tab.timeline, tab.logs, boot_trace
    timeline.set_range_ns(m.start_ns, m.start_ns + 100_000)
    row = len(panel.logs) - 1
    panel.clicked.emit(panel.log_model.index(row, 2))
    t0, t1 = timeline.visible_range_ns()
    ts = int(panel.logs.ts[row])
    assert t0 <= ts <= t1 and abs((t0 + t1) // 2 - ts) < (t1 - t0) // 50
    assert timeline.marker.isVisible() and abs(timeline.marker.value() - (ts - m.start_ns) / 1e9) < 1e-9


def test_measure_marks_search_flows_and_overview(boot_trace, trace_tab, qtbot) -> None:
    tab = trace_tab(boot_trace)
    timeline, m = tab.timeline, boot_trace
    # M marks the selection's exact span
    row = int(timeline.items[0].track.by_depth[0][3])
    timeline.go_to_slice(row)
    s, d = int(m.slices.ts[row]), int(m.slices.dur[row])
    assert timeline.mark_selection() == (s, s + d)
    # Shift+drag measures, snapping to the slice's edges
    show_around(qtbot, timeline, s, s + d)
    y = timeline.slice_y(row)
    o = m.start_ns
    assert timeline.measure((s - o + 20) / 1e9, (s + d - o - 20) / 1e9, y) == (s, s + d)
    assert timeline.measured == (s, s + d)
    # search: Enter goes to a match and brings it into view
    name = m.name_of(row)
    timeline.search_box.setText(name)
    assert len(timeline.matches) > 1
    qtbot.keyClick(timeline.search_box, Qt.Key.Key_Return)
    hit = timeline.selected_row
    assert hit in timeline.matches.tolist()
    t0, t1 = timeline.visible_range_ns()
    assert t0 <= int(m.slices.ts[hit]) <= t1
    # ] follows a flow to its destination, and the view goes there
    flows = m.flows
    link = len(flows) // 2
    src = int(flows.src_slice[link])
    timeline.go_to_slice(src)
    assert timeline.follow_flow(outgoing=True) in flows.dst_slice[flows.outgoing(src)].tolist()
    t0, t1 = timeline.visible_range_ns()
    r = timeline.selected_row
    assert int(m.slices.ts[r]) <= t1 and t0 <= int(m.slices.ts[r]) + int(m.slices.dur[r])  # centred on it
    # the overview strip: dragging its region moves the view to that time
    span_s = (m.end_ns - m.start_ns) / 1e9
    timeline.region.setRegion((0.5 * span_s, 0.6 * span_s))
    t0, t1 = timeline.visible_range_ns()
    assert abs(t0 - (m.start_ns + int(0.5 * span_s * 1e9))) < 2_000
    assert abs(t1 - t0 - int(0.1 * span_s * 1e9)) < 2_000
    timeline.plot.viewport().repaint()


def test_boot_traces_screenshot_draws_tracks(boot_trace_files, tmp_path, qapp) -> None:
    """The offscreen screenshot of a boot-stamped trace draws (not a blank view): the same figures as the
    window's own frame."""
    from PySide6.QtGui import QImage

    from fxscope.app.cli import main

    for name, path in boot_trace_files.items():
        out = tmp_path / f"{name}.png"
        assert main(["screenshot", str(path), "-o", str(out), "--size", "1000x700"]) == 0
        image = QImage(str(out))
        assert image.width() == 1000
        colours = {image.pixel(x, y) for x in range(0, 1000, 7) for y in range(80, 700, 7)}
        assert len(colours) > 20, name
