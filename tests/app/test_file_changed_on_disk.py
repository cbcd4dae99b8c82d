"""The window notices that an open trace's file changed on disk (app/file_change_notice.py): truncated in
place (a tracer re-run with the same output path), it keeps running, panning, zooming, searching and
selecting over what the map now reads (zeros past the new end), shows a bar with the change and a Reload
button; Reload opens the file as it is now. Replaced by a rename: the bar says so too."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from fxscope.app.main_window import MainWindow, TraceTab
from fxscope.core.synthetic_trace import generate_trace
from fxscope.formats import mapped_file
from fxscope.resources import DEMO_TRACE
from tests.app.conftest import shown_window


def _open_copy(qtbot, tmp_path: Path) -> tuple[MainWindow, Path]:
    path = tmp_path / "trace.fxt"
    shutil.copy(DEMO_TRACE, path)
    win = shown_window(qtbot, 1100)
    assert win.open_path(str(path))
    assert not win.file_change_bar.isVisible()
    return win, path


def test_truncated_trace_shows_the_notice_keeps_working_and_reloads(qtbot, tmp_path: Path) -> None:
    win, path = _open_copy(qtbot, tmp_path)
    tab = win.current_tab()
    old_model = tab.model
    size = path.stat().st_size
    os.truncate(path, 4096)
    if mapped_file.mapping_guard is None:  # (no compiled guard: the check zero-maps the lost pages)
        win.check_trace_files()
    qtbot.waitUntil(win.file_change_bar.isVisible, timeout=5000)
    text = win.file_change_bar.label.text()
    assert f"changed on disk while open (truncated from {size} to 4096 bytes" in text
    assert "reload it" in text
    # the timeline over the zeroed pages: pan, zoom, search, select, step through matches
    tl = tab.timeline
    tl.zoom(0.25)
    tl.pan(0.4)
    tl.zoom(8.0)
    qtbot.wait(50)
    tl.search_box.setText("a")
    qtbot.waitUntil(lambda: "match" in tl.search_status.text(), timeout=30000)
    tl.search_step(1)
    tl.select(len(old_model.slices) - 1)  # its details decode arguments from the zeroed pages
    qtbot.wait(50)
    if os.environ.get("FXSCOPE_NOTICE_SHOT"):
        win.grab().save(os.environ["FXSCOPE_NOTICE_SHOT"])
    # a tracer re-run writes its new trace at the same path; Reload opens it
    path.write_bytes(generate_trace(900, seed=3))
    win.file_change_bar.reload_button.click()
    qtbot.waitUntil(lambda: win.tabs.count() == 1 and win.current_tab() is not None
                    and win.current_tab() is not tab, timeout=30000)  # fmt: skip
    new = win.current_tab()
    assert isinstance(new, TraceTab) and new.model is not old_model
    assert new.model.cols.mapped_file.opened.size == path.stat().st_size
    assert not win.file_change_bar.isVisible()
    assert new.file_watch.check() is None


def test_a_trace_replaced_by_rename_is_noticed_and_dismissed(qtbot, tmp_path: Path) -> None:
    win, path = _open_copy(qtbot, tmp_path)
    other = tmp_path / "next.fxt"
    other.write_bytes(generate_trace(300, seed=4))
    os.replace(other, path)  # an atomic write: the old file stays mapped, nothing faults
    qtbot.waitUntil(win.file_change_bar.isVisible, timeout=5000)
    assert "(replaced by another file)" in win.file_change_bar.label.text()
    assert "reload it to see the new one" in win.file_change_bar.label.text()
    win.current_tab().timeline.zoom(0.5)
    win.file_change_bar.dismiss_button.click()
    assert not win.file_change_bar.isVisible()
    win.check_trace_files()  # (the same change: stays dismissed)
    win._tab_changed(win.tabs.currentIndex())
    assert not win.file_change_bar.isVisible()


def test_a_trace_that_grew_reloads_at_the_same_range(qtbot, tmp_path: Path) -> None:
    """A trace still being written (appended to): the bar says it grew; Reload opens it at the same range."""
    win, path = _open_copy(qtbot, tmp_path)
    tab = win.current_tab()
    tab.timeline.zoom(0.1)
    shown = tab.timeline.visible_range_ns()
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(DEMO_TRACE.read_bytes()[8:4096])  # (more records after the magic's)
    qtbot.waitUntil(win.file_change_bar.isVisible, timeout=5000)
    assert f"(grew from {size} to {size + 4088} bytes)" in win.file_change_bar.label.text()
    win.file_change_bar.reload_button.click()
    qtbot.waitUntil(lambda: win.current_tab() not in (None, tab), timeout=30000)
    new = win.current_tab()
    assert new.model.cols.mapped_file.opened.size == size + 4088
    start, end = new.timeline.visible_range_ns()
    assert abs(start - shown[0]) <= 1000 and abs(end - shown[1]) <= 1000


def test_reload_puts_the_trace_back_in_its_tab_place(qtbot, tmp_path: Path) -> None:
    """With two traces open, reloading the first opens it again as the first tab, not after the second."""
    win, path = _open_copy(qtbot, tmp_path)
    second = tmp_path / "second.fxt"
    shutil.copy(DEMO_TRACE, second)
    assert win.open_path(str(second))
    win.tabs.setCurrentIndex(0)
    first = win.current_tab()
    os.truncate(path, 4096)
    if mapped_file.mapping_guard is None:
        win.check_trace_files()
    qtbot.waitUntil(win.file_change_bar.isVisible, timeout=5000)
    shutil.copy(DEMO_TRACE, path)  # (the tracer wrote it again)
    win.file_change_bar.reload_button.click()
    qtbot.waitUntil(lambda: win.tabs.count() == 2 and win.current_tab() not in (None, first), timeout=30000)
    assert win.tabs.currentIndex() == 0
    assert win.tabs.tabText(0) == "trace.fxt" and win.tabs.tabText(1) == "second.fxt"
