"""The log panel: a trace's log records, the crash report inside them symbolized, and opened in the crash view."""

from __future__ import annotations

from pathlib import Path

from fxscope.app.crash.view import CrashView, default_resolver
from fxscope.app.main_window import MainWindow, TraceTab
from fxscope.core.trace.logs import LogTable
from fxscope.formats.fxt.reader import read_fxt
from fxscope.resources import DEMO_CRASH_LOG, DEMO_TRACE


def test_the_crash_report_in_the_demo_trace_reads_as_llvm_symbolizer_prints_it(testdata: Path) -> None:
    from fxscope.core.symbolize.markup_filter import filter_text

    logs = LogTable(read_fxt(DEMO_TRACE))
    resets = [r for r in range(len(logs)) if logs.text(r) == "{{{reset}}}"]
    assert resets, "the demo trace carries the crash demo's report"
    crash = DEMO_CRASH_LOG.read_text()
    text = logs.report_text(resets[-1])
    banner = crash.index("\x1b[1m\x1b[31m*** crashdemo: fatal signal 11")
    assert text == crash[banner:]  # the report, from its banner to its closing line
    resolver = default_resolver(DEMO_TRACE.parent / "log")
    expected = (testdata / "markup" / "crash-demo" / "expected.llvm19.stdout").read_text()
    assert filter_text(text, resolver)[0] == expected[expected.index("*** crashdemo: fatal"):]
    # each backtrace record shows its frames as llvm-symbolizer prints them (inline frames included)
    for row in logs.report_rows(resets[-1]).tolist():
        if logs.text(row).lstrip().startswith("{{{bt:"):
            shown = logs.symbolized(row, resolver)
            assert shown and all(line in expected.splitlines() for line in shown.splitlines()), shown
    assert not logs.markup[0] and logs.symbolized(0, resolver) == logs.text(0)


def test_report_boundaries_in_the_demo_trace() -> None:
    """Issue 14 defect 1: the banner before {{{reset}}} is the report's own, and the previous report does not
    take the process's ordinary records logged after it."""
    logs = LogTable(read_fxt(DEMO_TRACE))
    bt0 = next(r for r in range(len(logs)) if logs.text(r).startswith("{{{bt:0:0x55bc37e493ff"))
    rows = logs.report_rows(bt0)
    assert "fatal signal 11 (SEGV)" in logs.text(int(rows[0])) and "fault address" in logs.text(int(rows[0]))
    assert "end of crash report" in logs.text(int(rows[-1]))
    earlier = logs.report_rows(int(rows[0]) - 1 - next(
        k for k in range(int(rows[0])) if logs.markup[int(rows[0]) - 1 - k]))
    texts = [logs.text(int(r)) for r in earlier]
    assert len(texts) == 1 and texts[0].startswith("crash report:\n{{{reset}}}")  # no "chunk N: frames queued"
    assert not any("fatal signal" in t for t in texts)
    assert len(logs.reports) == 4 and all(len(set(logs.pid[r.rows].tolist())) == 1 for r in logs.reports)


def test_log_panel_opens_the_crash_view(qtbot) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(DEMO_TRACE))
    tab = win.tabs.currentWidget()
    assert isinstance(tab, TraceTab)
    panel = tab.logs
    assert panel.log_model.rowCount() == len(panel.logs) > 50
    bt = next(r for r in range(len(panel.logs)) if panel.logs.text(r).lstrip().startswith("{{{bt:4:"))
    shown = panel.log_model.data(panel.log_model.index(bt, 2))
    assert "run_pipeline" in shown and "pipeline.c:20" in shown
    assert not panel.open_crash(0)  # an ordinary record
    assert panel.open_crash(bt)
    view = win.tabs.currentWidget()
    assert isinstance(view, CrashView) and win.tabs.count() == 2
    qtbot.waitUntil(lambda: view.current_source is not None, timeout=60_000)  # symbolized in a thread
    assert view.current_source is not None and view.current_source[0].name == "payload.h"
    assert [e.number for e in view.report.backtrace][:3] == [0, 1, 2]


def test_clicking_a_log_line_shows_its_time_on_the_timeline(qtbot) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    win.open_path(str(DEMO_TRACE))
    tab = win.tabs.currentWidget()
    timeline, panel = tab.timeline, tab.logs
    timeline.set_range_ns(tab.model.start_ns, tab.model.start_ns + 1_000_000)  # the first millisecond
    row = len(panel.logs) - 1  # the crash report's last line, near the end of the trace
    panel.clicked.emit(panel.log_model.index(row, 2))
    t0, t1 = timeline.visible_range_ns()
    ts = int(panel.logs.ts[row])
    assert t0 <= ts <= t1 and abs((t0 + t1) // 2 - ts) < (t1 - t0) // 50  # centred, zoom kept
    assert 0.9e6 < t1 - t0 < 1.1e6
    assert timeline.marker.isVisible() and abs(timeline.marker.value() - (ts - tab.model.start_ns) / 1e9) < 1e-9
    # the overview strip's region follows the view, and moving it moves the view
    x0, _x1 = timeline.region.getRegion()
    assert abs(x0 - (t0 - tab.model.start_ns) / 1e9) < 1e-6
    timeline.region.setRegion((0.0, 0.002))
    t0, t1 = timeline.visible_range_ns()
    assert abs(t0 - tab.model.start_ns) < 1000 and abs(t1 - t0 - 2_000_000) < 1000
