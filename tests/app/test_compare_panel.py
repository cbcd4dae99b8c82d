"""The Compare tab (pytest-qt, offscreen): B read off the UI thread, the slowed name first and marked as a
regression; itself gives no change; an unreadable B is a message."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from fxscope.app.main_window import MainWindow
from tests.core.analysis.nested_trace import nested_trace


@pytest.fixture
def tab(qtbot, tmp_path):
    a = tmp_path / "a.fxt"
    a.write_bytes(nested_trace(7))
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(a))
    win.show()
    tab = win.current_tab()
    tab.bottom.setCurrentWidget(tab.compare)
    return tab


def test_slowed_name_first_and_red(tab, qtbot, tmp_path):
    b = tmp_path / "b.fxt"
    b.write_bytes(nested_trace(7, slow={"alloc": 3}))
    panel = tab.compare
    with qtbot.waitSignal(panel.compared, timeout=20000):
        panel.compare_with(str(b))
    assert panel.table.item(0, 0).text() == "alloc"
    assert panel.table.item(0, 0).background().color() == QColor("#f6d5d1")
    assert "regressed" in panel.status.text()
    alloc = [i for i, n in enumerate(panel.flame._names) if n == "alloc"]
    assert alloc and all(panel.delta[i] >= 0 for i in alloc) and any(panel.delta[i] > 0 for i in alloc)
    grown = max(alloc, key=lambda i: panel.delta[i])
    assert panel.flame.colours[grown].red() > panel.flame.colours[grown].blue()


def test_against_itself_no_change(tab, qtbot, tmp_path):
    panel = tab.compare
    with qtbot.waitSignal(panel.compared, timeout=20000) as blocker:
        panel.compare_with(tab.model.cols.path)
    rows = blocker.args[0]
    assert rows and all(r.delta_ns == 0 and r.a == r.b for r in rows)
    assert all(panel.table.item(i, 6).text() == "+0.0%" for i in range(panel.table.rowCount()))


def test_unreadable_b_is_a_message(tab, qtbot, tmp_path):
    bad = tmp_path / "bad.fxt"
    bad.write_bytes(b"not a trace at all")
    panel = tab.compare
    panel.compare_with(str(bad))
    qtbot.waitUntil(lambda: panel.status.text().startswith("Cannot compare"), timeout=20000)
    assert panel.button.isEnabled()


@pytest.fixture
def compared(tab, qtbot, tmp_path):
    b = tmp_path / "b.fxt"
    b.write_bytes(nested_trace(7, slow={"alloc": 3}))
    with qtbot.waitSignal(tab.compare.compared, timeout=20000):
        tab.compare.compare_with(str(b))
    return tab.compare


def test_overlaid_histograms_of_the_selected_name(compared):
    from fxscope.core.analysis.stats import shared_histograms

    panel = compared
    assert panel.selected_name() == "alloc"  # the largest regression, selected first
    a, b = panel.histogram.series
    assert np.array_equal(a.hist.edges, b.hist.edges)
    ma, mb = panel.model, panel.result["model_b"]
    durs = [m.slices.dur[[m.strings[n] == "alloc" for n in m.slices.name.tolist()]] for m in (ma, mb)]  # brute
    for series, d, h in zip((a, b), durs, shared_histograms(*durs), strict=True):
        assert series.hist.counts.tolist() == h.counts.tolist() and series.hist.zero == h.zero
        assert int(series.hist.counts.sum()) + series.hist.zero == len(d) > 0
    centre = [np.average(np.arange(len(s.hist.counts)), weights=s.hist.counts) for s in (a, b)]
    assert centre[1] > centre[0]  # alloc made 3x slower: B's bars sit right of A's
    assert set(a.marks) == {"p50 A", "p99 A"} and set(b.marks) == {"p50 B", "p99 B"}
    # another name: both histograms follow the table's selection
    row = panel.table.findItems("parse", Qt.MatchFlag.MatchExactly)[0].row()
    panel.table.selectRow(row)
    assert panel.histogram.title.startswith("parse")


def test_timelines_aligned_and_kept_in_sync(compared, qtbot):
    from fxscope.core.analysis.alignment import first_slice_named, longest_slice_named

    panel = compared
    assert panel.timelines is None  # built when their tab is first shown
    panel.views.setCurrentWidget(panel.timelines_page)
    tl = panel.timelines
    assert tl is not None and tl.b.model is panel.result["model_b"]
    a, b = tl.a, tl.b
    assert tl.alignment.offset_ns == a.model.start_ns - b.model.start_ns

    def in_sync() -> bool:
        want = tl.alignment.b_range(a.visible_range_ns())
        return b.visible_range_ns() == pytest.approx(want, abs=2)

    a.zoom(0.25)
    a.pan(0.3)
    assert in_sync()
    b.zoom(2.0)  # moving B moves A as well
    assert in_sync()
    # aligned at the first alloc of each: that slice of A is drawn above that of B, both selected
    ra, rb = (first_slice_named(m, "alloc") for m in (a.model, b.model))
    assert tl.align("first") is not None
    assert (a.selected_row, b.selected_row) == (ra, rb)
    assert tl.alignment.offset_ns == int(a.model.slices.ts[ra]) - int(b.model.slices.ts[rb])
    x0, x1 = a.visible_range_ns()
    assert x0 < a.model.slices.ts[ra] < x1 and in_sync()
    a.pan(-0.4)
    assert in_sync()
    # the longest alloc of each (alloc is 3x slower in B: its longest is longer, and elsewhere)
    la, lb = (longest_slice_named(m, "alloc") for m in (a.model, b.model))
    assert tl.align("longest").offset_ns == int(a.model.slices.ts[la]) - int(b.model.slices.ts[lb])
    assert b.model.slices.dur[lb] > a.model.slices.dur[la] and (a.selected_row, b.selected_row) == (la, lb)
    # the selected slices as anchors; marks are missing, which is a message and keeps the alignment
    a.select(len(a.model.slices) - 1)
    assert tl.align("slices").offset_ns == int(a.model.slices.ts[a.selected_row]) - int(b.model.slices.ts[lb])
    before = tl.alignment
    assert tl.align("marks") is None and "Mark a span" in tl.status.text() and tl.alignment == before
