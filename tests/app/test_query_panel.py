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
    _run(qtbot, panel, "SELECT id, ts, dur, name, utid FROM slice WHERE depth = 1 AND utid IS NOT NULL "
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
    _run(qtbot, panel, "SELECT id, ts, dur FROM slice WHERE utid IS NULL ORDER BY dur DESC LIMIT 1")
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
