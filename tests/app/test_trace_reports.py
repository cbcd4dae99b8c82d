"""Crash reports in a trace: the Info tab says so, the Crash reports tab lists them, each is marked on its
thread's track, a mark (or a log mark of a report) opens the report, and the crash view leads back."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.app.crash.reports_list import ReportsList
from fxscope.app.crash.view import CrashView
from fxscope.app.main_window import MainWindow, TraceTab
from fxscope.resources import DEMO_TRACE


@pytest.fixture
def demo_tab(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(DEMO_TRACE))
    tab = win.tabs.currentWidget()
    assert isinstance(tab, TraceTab)
    yield win, tab
    tab.reports.wait()


def test_info_tab_and_reports_list(demo_tab) -> None:
    win, tab = demo_tab
    logs = tab.model.logs
    assert len(logs.reports) == 4
    tree = tab.info.tree
    head = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
                if tree.topLevelItem(i).text(0) == "Crash reports")  # fmt: skip
    assert head.text(1) == "4" and head.childCount() == 4
    assert head.child(3).text(1) == "signal 11 (SEGV), fault address (nil), at crashdemo+0x13ff"
    tree.itemActivated.emit(head.child(3), 0)  # a row of the Info tab opens its report
    assert isinstance(win.tabs.currentWidget(), CrashView) and win.tabs.count() == 2
    win.tabs.setCurrentWidget(tab)
    titles = [tab.bottom.tabText(i) for i in range(tab.bottom.count())]
    assert "Crash reports (4)" in titles
    tab.reports.wait()
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()  # the symbolized summaries arrive as queued signals
    model = tab.reports.reports_model
    last = [model.data(model.index(3, c)) for c in range(model.columnCount())]
    assert last[2:7] == ["11 (SEGV)", "(nil)", tab.model.thread_name(int(logs.thread[logs.reports[3].rows[0]])),
                         "payload_weight", "crashdemo+0x13ff"]  # fmt: skip
    assert model.data(model.index(0, 6)) == "libfoo.so+0x234"  # the synthetic reports: no symbols
    # every column but the notes as wide as the demo's values: the thread's name and koid not cut
    view = tab.reports
    assert isinstance(view, ReportsList)
    metrics, header = view.fontMetrics(), view.horizontalHeader()
    for col in range(7):
        widest = max(metrics.horizontalAdvance(str(model.data(model.index(r, col)))) for r in range(4))
        assert header.sectionSize(col) >= widest + 6, (model.HEADERS[col], header.sectionSize(col), widest)


def test_a_mark_per_report_on_its_threads_track_opens_it(demo_tab, qtbot) -> None:
    win, tab = demo_tab
    logs = tab.model.logs
    ts, threads = logs.report_marks()
    item = next(it for it in tab.timeline.items if it.track.thread == int(threads[3]))
    assert item.hit(0.1, int(ts[3]), 1000.0) == ("crash", 3)
    assert item.hit(0.1, int(ts[3]) + 10_000_000, 1000.0)[0] != "crash"
    # clicking the mark selects it (drawn boxed) and opens the report in a crash tab
    tab.timeline.select_item("crash", 3)
    view = win.tabs.currentWidget()
    assert isinstance(view, CrashView) and win.tabs.tabText(win.tabs.currentIndex()) == "crash 4 in demo.fxt"
    qtbot.waitUntil(lambda: view.report is not None, timeout=60_000)  # symbolized in a thread
    assert view.report is not None and [e.number for e in view.report.backtrace] == list(range(10))
    assert "fatal signal 11" in view.report.text and item.selected_crash == 3


def test_a_log_mark_opens_its_report_and_the_crash_view_leads_back(demo_tab, qtbot) -> None:
    win, tab = demo_tab
    logs = tab.model.logs
    bt = next(r for r in range(len(logs)) if logs.text(r).startswith("{{{bt:4:"))
    tab.timeline.select_item("log", bt)
    view = win.tabs.currentWidget()
    assert isinstance(view, CrashView) and view.timeline_button.isVisibleTo(view)
    qtbot.waitUntil(lambda: view.report is not None, timeout=60_000)
    assert view.report.text.count("run_pipeline") >= 1
    plain = [r for r in range(len(logs)) if logs.report_of_row(r) < 0]
    count = win.tabs.count()
    tab.timeline.select_item("log", plain[0])  # an ordinary record opens nothing
    assert win.tabs.count() == count
    # "Show on timeline": the trace tab, the report's time in the middle, its thread's track in view
    tab.timeline.set_range_ns(tab.model.start_ns, tab.model.start_ns + 1_000_000)
    tab.timeline.scroll_rows(-1000)
    view.timeline_button.click()
    assert win.tabs.currentWidget() is tab
    assert tab.timeline.selection == ("crash", 3)
    t0, t1 = tab.timeline.visible_range_ns()
    when = int(logs.report_marks()[0][3])
    assert t0 < when < t1 and abs((t0 + t1) // 2 - when) < (t1 - t0) // 50
    _, (y0, y1) = tab.timeline.plot.getViewBox().viewRange()
    assert y0 <= tab.timeline.selection_y() < y1
    assert tab.reports.currentIndex().row() == 3


def test_clicking_a_listed_report_opens_it(demo_tab, qtbot) -> None:
    from PySide6.QtCore import Qt

    win, tab = demo_tab
    model = tab.reports.reports_model
    tab.bottom.setCurrentWidget(tab.reports)
    qtbot.mouseClick(tab.reports.viewport(), Qt.MouseButton.LeftButton,
                     pos=tab.reports.visualRect(model.index(1, 2)).center())
    view = win.tabs.currentWidget()
    assert isinstance(view, CrashView)
    qtbot.waitUntil(lambda: view.report is not None, timeout=60_000)
    assert view.report.text.startswith("crash report:") and len(view.report.backtrace) == 1
    assert np.all(tab.model.logs.reports[1].rows == tab.model.logs.report_rows(int(tab.model.logs.reports[1].rows[0])))


def test_the_crash_mark_is_drawn_on_its_threads_track(demo_tab, qtbot) -> None:
    from fxscope.app.timeline.tracks import _CRASH_BRUSH

    win, tab = demo_tab
    win.resize(1400, 900)
    win.show()
    tab.show_report(3)
    when = int(tab.model.logs.report_marks()[0][3])
    tab.timeline.set_range_ns(when - 200_000, when + 200_000)
    qtbot.wait(50)
    image = tab.timeline.grab().toImage()
    red = _CRASH_BRUSH.color().name()
    hits = [(x, y) for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)
            if image.pixelColor(x, y).name() == red]
    assert hits, "no crash mark on screen"
    xs = [x for x, _y in hits]
    assert max(xs) - min(xs) < 20  # one mark, at the report's time (the middle of the view)
    assert abs((min(xs) + max(xs)) / 2 - image.width() * 0.55) < image.width() * 0.2
