"""The Analysis tab (pytest-qt, offscreen): flame graph / bottom-up / butterfly of a scope computed off the
UI thread, a click on a frame selects its slices on the timeline, per-name statistics with a histogram
whose bars list their slices, the area selected on the timeline as a scope."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from fxscope.app.main_window import MainWindow
from fxscope.core.analysis.call_tree import bottom_up, callers, top_down
from fxscope.core.analysis.selection import Area
from fxscope.core.analysis.stats import name_stats
from tests.core.analysis.nested_trace import nested_trace
from tests.core.analysis.reference import tree_dict


def _analysis_tab(qtbot, path, width: int, height: int):
    """The trace tab of ``path`` in a shown window of that size, its Analysis tab up with a result."""
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(width, height)
    assert win.open_path(str(path))
    win.show()
    qtbot.waitExposed(win)
    tab = win.current_tab()
    tab.bottom.setCurrentWidget(tab.analysis)
    qtbot.waitUntil(lambda: tab.analysis.result is not None, timeout=10000)
    return tab


@pytest.fixture
def tab(qtbot, tmp_path):
    path = tmp_path / "nested.fxt"
    path.write_bytes(nested_trace(11))
    return _analysis_tab(qtbot, path, 1400, 900)


def test_flame_graph_frame_click_selects_its_slices(tab, qtbot):
    panel, model = tab.analysis, tab.model
    assert tree_dict(panel.flame.tree, model) == tree_dict(top_down(model), model)
    flame = panel.flame
    deep = int(np.flatnonzero(flame.lay.w * flame.width() > 20)[-1])  # a frame wide enough to click
    rect = flame.frame_rect(deep)
    qtbot.mouseClick(flame, Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    rows = flame.tree.slice_rows(deep)
    assert len(rows) == int(flame.tree.count[deep]) > 0
    assert tab.timeline.selected_row in set(rows.tolist())
    assert panel.slices.count() == min(len(rows), 2000)
    assert {panel.slices.item(i).data(Qt.ItemDataRole.UserRole) for i in range(panel.slices.count())} == set(rows.tolist())
    # a click on a listed slice shows it on the timeline
    item = panel.slices.item(panel.slices.count() - 1)
    qtbot.mouseClick(panel.slices.viewport(), Qt.MouseButton.LeftButton, pos=panel.slices.visualItemRect(item).center())
    assert tab.timeline.selected_row == item.data(Qt.ItemDataRole.UserRole)


def test_modes_and_search(tab, qtbot):
    panel, model = tab.analysis, tab.model
    td = top_down(model)
    panel.mode.setCurrentIndex(1)
    assert tree_dict(panel.flame.tree, model) == tree_dict(bottom_up(td), model)
    eval_id = model.strings.index("eval")
    panel.select_name(eval_id)
    panel.mode.setCurrentIndex(2)
    assert tree_dict(panel.flame.tree, model) == tree_dict(callers(td, eval_id), model)
    panel.search.setText("ALLOC")
    assert panel.flame.matches() and all(panel.flame._names[i] == "alloc" for i in panel.flame.matches())


def test_zoom_into_a_frame_and_out(tab, qtbot):
    """Double-click a frame: it spans the width, its subtree below it, its ancestors full-width bars above,
    the rest hidden; Esc (or a double-click on it again) zooms out."""
    flame = tab.analysis.flame
    tree = flame.tree
    node = int(np.flatnonzero((tree.depth == 1) & (flame.lay.w * flame.width() > 20))[0])
    sub = {node}
    for i in range(node + 1, len(tree)):  # parents before children in id order
        if int(tree.parent[i]) in sub:
            sub.add(i)
    qtbot.mouseDClick(flame, Qt.MouseButton.LeftButton, pos=flame.frame_rect(node).center().toPoint())
    lay = flame.lay
    assert flame.zoom_node == node and lay.x[node] == 0.0 and lay.w[node] == pytest.approx(1.0)
    assert set(np.flatnonzero(lay.visible).tolist()) == sub | {int(tree.parent[node])}
    kids = [i for i in sub if tree.parent[i] == node]
    assert sum(lay.w[kids]) == pytest.approx(tree.total[kids].sum() / tree.total[node])
    assert flame.node_at(flame.width() - 2, flame.frame_rect(node).center().y()) == node
    qtbot.keyClick(flame, Qt.Key.Key_Escape)
    assert flame.zoom_node == -1 and flame.lay.visible.all()


def test_histogram_bar_lists_its_slices(tab, qtbot):
    panel, model = tab.analysis, tab.model
    stats = name_stats(model)
    row = panel.table.findItems("eval", Qt.MatchFlag.MatchExactly)[0].row()
    panel.table.selectRow(row)
    hist = panel.histogram.hist
    i = stats.row_of("eval")
    assert int(hist.counts.sum()) + hist.zero == int(stats.count[i])
    b = int(np.argmax(hist.counts))
    x = panel.histogram._bar_rect(b).center()
    qtbot.mouseClick(panel.histogram, Qt.MouseButton.LeftButton, pos=QPointF(x.x(), x.y() + 1).toPoint())
    listed = [panel.slices.item(k).data(Qt.ItemDataRole.UserRole) for k in range(panel.slices.count())]
    assert len(listed) == int(hist.counts[b])
    dur = model.slices.dur[listed]
    assert np.all((dur >= hist.edges[b]) & (dur < hist.edges[b + 1]))
    assert list(dur) == sorted(dur, reverse=True)
    assert {model.name_of(r) for r in listed} == {"eval"}


def test_area_selection_is_analysed(tab, qtbot):
    panel, model = tab.analysis, tab.model
    t0 = model.start_ns + (model.end_ns - model.start_ns) // 4
    t1 = t0 + (model.end_ns - model.start_ns) // 3
    threads = [model.tracks[0].thread]
    panel.result = None
    tab._area(t0, t1, threads)
    assert panel.scope.currentText().startswith("Area: ")
    tab.bottom.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.result is not None and panel.result.area.t0 == t0, timeout=10000)
    area = Area(t0, t1, tuple(threads))
    assert tree_dict(panel.flame.tree, model) == tree_dict(top_down(model, area), model)
    assert panel.result.stats.records() == name_stats(model, area).records()


def test_scheduling_tab_on_the_demo(qtbot):
    """The demo has a four-CPU schedule: the Scheduling tab sums CPU time per thread as the core does, for
    the whole trace and for an area, with the wakeup latency histogram."""
    from fxscope.core.analysis.sched_stats import sched_summary
    from fxscope.resources import DEMO_TRACE

    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(DEMO_TRACE))
    win.show()
    tab = win.current_tab()
    panel = tab.sched
    tab.bottom.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.summary is not None, timeout=10000)
    model = tab.model
    want = sched_summary(model, model.start_ns, model.end_ns + 1)
    assert panel.threads.rowCount() == len(want.thread_tid) > 1
    assert panel.threads.item(0, 0).text() == str(int(want.thread_tid[0]))
    assert int(panel.latency.hist.counts.sum()) + panel.latency.hist.zero == len(want.latency_ns) > 0
    t0, t1 = model.start_ns + 1_000_000, model.start_ns + 5_000_000
    threads = [t.thread for t in model.tracks[:3]]
    panel.summary = None
    tab._area(t0, t1, threads)
    tab.bottom.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.summary is not None, timeout=10000)
    tids = {int(model.cols.threads_tid[t]) for t in threads}
    want = sched_summary(model, t0, t1, tids)
    assert panel.summary.thread_cpu_ns.tolist() == want.thread_cpu_ns.tolist()
    assert set(panel.summary.thread_tid.tolist()) <= tids


def _outlined(tl) -> set[int]:
    """The slice rows the timeline's slice tracks outline (their shared mask over the slice table)."""
    out: set[int] = set()
    for lane in tl.lanes():
        mask = getattr(lane.item, "match_mask", None)
        if lane.key[0] == "thread" and mask is not None:
            out |= set(np.flatnonzero(mask).tolist())
    return out


def test_frame_click_outlines_its_slices_on_the_timeline(tab, qtbot):
    panel, tl, model = tab.analysis, tab.timeline, tab.model
    flame = panel.flame
    tree = flame.tree
    node = int(next(i for i in np.argsort(-tree.count).tolist()
                    if tree.depth[i] >= 1 and flame.lay.w[i] * flame.width() > 20))  # fmt: skip
    qtbot.mouseClick(flame, Qt.MouseButton.LeftButton, pos=flame.frame_rect(node).center().toPoint())
    rows = tree.slice_rows(node)
    assert len(rows) > 1 and _outlined(tl) == set(rows.tolist())
    first = int(rows[np.argmin(model.slices.ts[rows])])
    assert tl.selected_row == first  # the earliest selected, in view
    assert tab.bottom.currentWidget() is panel  # (not the details: the frame's slices stay listed)
    tl.repaint()
    tl.grab()
    lane = next(lane for lane in tl.lanes() if lane.key == ("thread", int(model.slices.thread[first])))
    assert lane.item.last_matches > 0  # drawn as outlines (as search matches are)
    # with a search, both show; a new scope takes the frame's outlines away, the search's stay
    tl.search_box.setText("render")
    searched = set(tl.matches.tolist())
    assert searched and _outlined(tl) == searched | set(rows.tolist())
    panel.scope.setCurrentIndex(1)
    assert _outlined(tl) == searched
    tl.search_box.clear()
    assert _outlined(tl) == set()


def test_analyse_thread_and_process_from_the_track_menu(tab, qtbot):
    panel, tl, model = tab.analysis, tab.timeline, tab.model
    tab.bottom.setCurrentWidget(tab.details)
    track = model.tracks[-1]
    y = tl.lane_y(("thread", track.thread))
    menu = tl.track_menu(y + 0.5)
    actions = {a.text(): a for a in menu.actions()}
    assert {"Analyse thread", "Analyse process"} <= set(actions)
    actions["Analyse thread"].trigger()
    assert tab.bottom.currentWidget() is panel
    assert panel.scope.currentData() == ("thread", track.thread)
    qtbot.waitUntil(lambda: panel.result is not None and panel.result.area.threads == (track.thread,), timeout=10000)
    area = Area(threads=(track.thread,))
    assert tree_dict(panel.flame.tree, model) == tree_dict(top_down(model, area), model)
    # the process: from its header row
    pid = track.pid
    header = next(y for y, what in tl.headers if what == pid)
    menu = tl.track_menu(header + 0.1)
    actions = {a.text(): a for a in menu.actions()}
    assert "Analyse process" in actions and "Analyse thread" not in actions
    actions["Analyse process"].trigger()
    assert panel.scope.currentData() == ("process", pid)
    threads = tuple(t.thread for g in model.processes if g.pid == pid for t in g.tracks)
    qtbot.waitUntil(lambda: panel.result is not None and panel.result.area.threads == threads, timeout=10000)
    assert panel.result.stats.records() == name_stats(model, Area(threads=threads)).records()


def test_the_statistics_show_several_names_in_a_window_of_common_size(qtbot):
    """At 1600x1000 the bottom panel is ~250 px high: the table must still show several names at once, with
    the histogram and its listed slices beside each other under it (stacked three high, one row showed)."""
    from fxscope.resources import DEMO_TRACE

    panel = _analysis_tab(qtbot, DEMO_TRACE, 1600, 1000).analysis
    table = panel.table
    assert table.rowCount() >= 5
    view_h = table.viewport().height()
    whole_rows = [r for r in range(table.rowCount())
                  if table.rowViewportPosition(r) >= 0 and table.rowViewportPosition(r) + table.rowHeight(r) <= view_h]
    assert len(whole_rows) >= 4, (view_h, table.rowHeight(0))
    hist, listed = panel.histogram.geometry(), panel.slices.geometry()
    hist_at = panel.histogram.mapTo(panel, hist.topLeft() * 0)
    listed_at = panel.slices.mapTo(panel, listed.topLeft() * 0)
    assert hist.width() >= 200 and listed.width() >= 200
    assert listed_at.x() > hist_at.x() and abs(listed_at.y() - hist_at.y()) <= 2  # side by side
    assert hist_at.y() >= panel.table.mapTo(panel, table.rect().bottomLeft()).y()  # under the table
