"""The Compare tab (pytest-qt, offscreen): B read off the UI thread, the slowed name first and marked as a
regression; itself gives no change; an unreadable B is a message."""

from __future__ import annotations

import pytest
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
