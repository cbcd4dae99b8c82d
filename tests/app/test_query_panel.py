"""The Query tab: a query runs off the UI thread into the results grid, errors show in the status line,
history keeps the queries, a long query is cancelled, and a result row selects its slice on the timeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "demo.fxt"


@pytest.fixture(scope="module")
def model() -> TraceModel:
    return TraceModel(read_fxt(DEMO))


def _run(qtbot, panel, sql: str) -> None:
    panel.editor.setPlainText(sql)
    panel.run()
    qtbot.waitUntil(lambda: not panel.running and panel.run_button.isEnabled(), timeout=30_000)


def test_query_tab_runs_shows_and_selects(qtbot, trace_tab, model) -> None:
    tab = trace_tab(model)
    panel = tab.query
    tab.bottom.setCurrentWidget(panel)
    _run(qtbot, panel, "SELECT id, ts, dur, name, utid FROM thread_slice WHERE depth = 1 AND utid IS NOT NULL "
                       "ORDER BY dur DESC LIMIT 5")
    assert panel.results.rowCount() == 5 and panel.results.columnCount() == 5
    assert panel.status.text().startswith("5 rows")
    row_id = int(panel.results.value(2, 0))
    assert panel.results.data(panel.results.index(2, 3)) == model.name_of(row_id)
    with qtbot.waitSignal(tab.timeline.sliceSelected, timeout=5_000) as sig:
        panel.view.clicked.emit(panel.results.index(2, 1))
    assert sig.args == [row_id] and tab.timeline.selected_row == row_id
    assert tab.bottom.currentWidget() is panel  # the results stay in view while rows are stepped through
    # without the id, the slice is found by its thread, start and duration
    s = model.slices
    _run(qtbot, panel, f"SELECT ts, dur, track_id FROM slice WHERE id = {row_id + 1}")
    with qtbot.waitSignal(tab.timeline.sliceSelected, timeout=5_000) as sig:
        panel.show_row(0)
    assert sig.args == [row_id + 1] and int(s.ts[row_id + 1]) == panel.results.value(0, 0)
    # an async span (slice ids after the thread slices) is selected on its process's async track
    _run(qtbot, panel, "SELECT id, ts, dur FROM slice WHERE track_id IN (SELECT id FROM process_track) ORDER BY dur DESC LIMIT 1")
    with qtbot.waitSignal(tab.timeline.itemSelected, timeout=5_000) as sig:
        panel.show_row(0)
    assert sig.args == ["async", panel.results.value(0, 0) - len(s)]
    assert int(model.async_spans.start[sig.args[1]]) == panel.results.value(0, 1)
    # a span that is no slice zooms the timeline to it
    _run(qtbot, panel, "SELECT ts, dur FROM thread_state ORDER BY dur DESC LIMIT 1")
    ts, dur = panel.results.value(0, 0), panel.results.value(0, 1)
    with qtbot.waitSignal(panel.rangeRequested, timeout=5_000) as sig:
        panel.show_row(0)
    assert sig.args == [ts, ts + dur]
    assert panel.history.count() == 4 and panel.history.itemData(0).startswith("SELECT ts, dur FROM thread_state")


def test_query_tab_error_and_cancel(qtbot, trace_tab, model) -> None:
    tab = trace_tab(model)
    panel = tab.query
    _run(qtbot, panel, "SELECT * FROM no_such_table")
    assert panel.status.text().startswith("Error:") and "no_such_table" in panel.status.text()
    # a query that would run for minutes: cancelled, the tab usable again
    panel.editor.setPlainText("SELECT count(*) FROM range(100000000000) a, range(1000) b WHERE a.range % 7 = b.range")
    panel.run()
    qtbot.waitUntil(lambda: panel.running, timeout=5_000)
    qtbot.wait(300)
    panel.cancel()
    qtbot.waitUntil(lambda: not panel.running and panel.run_button.isEnabled(), timeout=20_000)
    assert "Error" in panel.status.text() and "nterrupt" in panel.status.text()
    _run(qtbot, panel, "SELECT count(*) AS n FROM slice")
    assert panel.results.value(0, 0) == len(model.slices) + len(model.async_spans)


def _click(qtbot, timeline, t_ns: int, y_rows: float) -> None:
    """A left click on the timeline's view at a time and a row (view units)."""
    from PySide6.QtCore import QPointF, Qt

    vb = timeline.plot.getViewBox()
    scene = vb.mapViewToScene(QPointF((t_ns - timeline.model.start_ns) / 1e9, y_rows))
    qtbot.mouseClick(timeline.plot.viewport(), Qt.MouseButton.LeftButton, pos=timeline.plot.mapFromScene(scene))


def test_query_result_added_as_debug_track(qtbot, trace_tab, model, tmp_path) -> None:
    """Perfetto's "add debug track": a result with ts, dur and name becomes boxes on a track at the top of
    the timeline, drawn box for box, selectable by a click (the details show the result's row); a ts/value
    result a counter track; both removable."""
    import numpy as np
    from PySide6.QtCore import Qt

    from fxscope.app.timeline.debug_track_items import DebugCounterTrackItem, DebugSliceTrackItem
    from fxscope.core.sql.debug_track import debug_row
    from fxscope.core.timeline.debug_tracks import DEBUG_GROUP

    tab = trace_tab(model, 1200, 800)
    panel, timeline = tab.query, tab.timeline
    tab.bottom.setCurrentWidget(panel)
    thread = max(model.tracks, key=lambda t: (t.max_depth, t.hi - t.lo))
    assert not panel.debug_button.isEnabled()
    _run(qtbot, panel, "SELECT name FROM thread")
    assert not panel.debug_button.isEnabled()  # no ts and dur: nothing to draw
    _run(qtbot, panel, "SELECT name AS ts, 1 AS dur FROM thread")
    panel.add_debug_track()  # (built off the UI thread; a text ts is refused there)
    qtbot.waitUntil(lambda: panel.status.text().startswith("Not a debug track: column ts is string"), timeout=10_000)
    assert not timeline.debug_tracks.tracks and panel.debug_button.isEnabled()
    _run(qtbot, panel, f"SELECT id, ts, dur, name FROM thread_slice WHERE utid = {thread.thread} ORDER BY ts")
    assert panel.debug_button.isEnabled()
    with qtbot.waitSignal(panel.debugTrackRequested, timeout=5_000):
        qtbot.mouseClick(panel.debug_button, Qt.MouseButton.LeftButton)
    assert panel.status.text().startswith(f"Debug track added: {panel.results.rowCount()} slices")
    assert panel.debug_button.isEnabled() and not panel.building
    lane = timeline.layout_state.lane(("debug", 1))
    item, track = lane.item, lane.source
    assert isinstance(item, DebugSliceTrackItem) and timeline.groups[0].pid == DEBUG_GROUP
    assert item.rows == thread.max_depth + 1 and item.isVisible() and lane.y0 == 1.0
    # zoomed into a stretch of the thread: every row of the result there is drawn as its own box
    result = panel.results.table
    ts, dur = result.column("ts").to_numpy(), result.column("dur").to_numpy()
    mid = int(ts[len(ts) // 2])
    t0, t1 = mid - 2_000_000, mid + 2_000_000
    timeline.set_range_ns(t0, t1)
    want = int(np.count_nonzero((ts < t1) & (ts + dur > t0)))
    qtbot.waitUntil(lambda: item.last_drawn > 0, timeout=5_000)
    timeline.plot.viewport().repaint()
    assert item.last_drawn == want > 3
    # a click on a box of the deepest lane selects it; the details show the result's row
    r = int(track.lane_ranges[-1][0])
    t_box = int(track.start[r]) + max((int(track.end[r]) - int(track.start[r])) // 2, 0)
    timeline.set_range_ns(int(track.start[r]) - 1_000_000, int(track.end[r]) + 1_000_000)
    with qtbot.waitSignal(timeline.itemSelected, timeout=5_000) as sig:
        _click(qtbot, timeline, t_box, lane.y0 + int(track.lane[r]) + 0.4)
    assert sig.args == ["debug", debug_row(1, r)] and item.selected_row == debug_row(1, r)
    row = int(track.source_row[r])
    text = tab.details.toPlainText()
    assert "debug track" in text and result.column("name")[row].as_py() in text
    assert f"\nid\n{result.column('id')[row].as_py()}\n" in text and f"({ts[row]} ns)" in text
    assert timeline.selection_span() == (int(ts[row]), int(ts[row]) + int(dur[row]))
    timeline.grab().save(str(tmp_path / "debug_track.png"))
    # a counter result: a counter track under the first, its samples selectable
    base = int(panel.engine.query("SELECT min(id) FROM counter_track").column(0)[0].as_py())
    _run(qtbot, panel, f"SELECT ts, value FROM counter WHERE track_id = {base}")
    with qtbot.waitSignal(panel.debugTrackRequested, timeout=10_000):
        panel.add_debug_track()
    counter = timeline.layout_state.lane(("debug", 2))
    assert isinstance(counter.item, DebugCounterTrackItem) and timeline.groups[0].lanes == [lane, counter]
    sample_ts = int(counter.source.series.ts[1])
    timeline.set_range_ns(sample_ts - 1000, sample_ts + 1000)
    with qtbot.waitSignal(timeline.itemSelected, timeout=5_000) as sig:
        _click(qtbot, timeline, sample_ts, counter.y0 + 1.0)
    assert sig.args == ["debug", debug_row(2, 1)] and counter.item.selected_sample() == 1
    assert debug_row(2, 1) not in set(item.boxes(sample_ts - 1000, sample_ts + 1000, 1.0)[0].tolist())
    # removed from the track's menu: the selection goes with it, then the group
    menu = timeline.track_menu(counter.y0 + 0.5)
    remove = next(a for a in menu.actions() if a.text() == "Remove debug track")
    remove.trigger()
    assert timeline.layout_state.lane(("debug", 2)) is None and timeline.selection == ("", -1)
    timeline.scroll_rows(-timeline.total_rows)
    header = timeline.track_menu(0.5)  # the group's header row: all of them
    next(a for a in header.actions() if a.text() == "Remove all debug tracks").trigger()
    assert timeline.groups[0].pid != DEBUG_GROUP and item.scene() is None and not timeline.debug_tracks.tracks


def test_a_window_with_a_trace_holds_no_pyarrow_until_a_query(tmp_path: Path) -> None:
    """pyarrow (with its compute kernels ~9 MB resident, in every phase of a large trace's load) is imported
    by the first query's result, not by the window, its timeline or the empty Query tab (a fresh interpreter:
    this test process has imported it already)."""
    import subprocess
    import sys

    script = (
        "import os, sys, time\n"
        "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "from fxscope.app.gui import application\n"
        "app = application()\n"
        "from fxscope.app.main_window import MainWindow\n"
        "w = MainWindow(); w.show(); app.processEvents()\n"
        "w.open_path(sys.argv[1])\n"
        "t = time.time()\n"
        "while not w.tabs.count() and time.time() - t < 60:\n"
        "    app.processEvents(); time.sleep(0.01)\n"
        "tab = w.tabs.widget(0)\n"
        "tab.bottom.setCurrentWidget(tab.query); app.processEvents()\n"
        "assert tab.query.results.rowCount() == 0 and tab.query.results.columnCount() == 0\n"
        "tab.query.show_row(0)\n"
        "print('pyarrow' in sys.modules, w.tabs.count())\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(DEMO)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["False", "1"]
