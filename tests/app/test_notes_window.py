"""Notes kept with a trace (pytest-qt, offscreen): pins, the marked span, bookmarks and the view survive
closing and reopening the trace in a new window; a corrupt sidecar is a message and the trace still opens;
``TRACE#range=...&select=...`` opens that view."""

from __future__ import annotations

import os

import pytest

from fxscope.app.main_window import MainWindow
from fxscope.core.analysis.notes import sidecar_path


@pytest.fixture(autouse=True)
def notes_on(monkeypatch):
    monkeypatch.delenv("FXSCOPE_NO_NOTES", raising=False)


@pytest.fixture
def trace(tmp_path, testdata):
    path = tmp_path / "magic.fxt"
    path.write_bytes((testdata / "fxt" / "richiesams_fxt-python_trace.fxt").read_bytes())
    return str(path)


def _window(qtbot, arg: str) -> MainWindow:
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1200, 800)
    assert win.open_path(arg)
    win.show()
    qtbot.waitExposed(win)
    return win


def _close_and_reopen(qtbot, win: MainWindow, trace: str) -> MainWindow:
    win.close_tab(win.tabs.currentIndex())
    win.close()
    return _window(qtbot, trace)


def test_notes_survive_a_restart(qtbot, trace):
    win = _window(qtbot, trace)
    tab = win.current_tab()
    tl, model = tab.timeline, tab.model
    lane = tl.lanes()[-1].key
    tl.pin(lane)
    span = model.end_ns - model.start_ns
    view = (model.start_ns + span // 5, model.start_ns + span // 2)
    tl.set_range_ns(*view)
    tl.show_span(model.start_ns + span // 4, model.start_ns + span // 3, 1.0)
    tab.notes.add_bookmark("odd spike", "look here\nand here", ts_ns=model.start_ns + 1234)
    got_view = tl.visible_range_ns()
    assert not os.path.exists(sidecar_path(trace))  # written when the tab closes
    win2 = _close_and_reopen(qtbot, win, trace)
    assert os.path.exists(sidecar_path(trace))
    tab2 = win2.current_tab()
    assert lane in tab2.timeline.pinned
    assert tab2.timeline.visible_range_ns() == pytest.approx(got_view, abs=span * 1e-6)
    assert tab2.timeline.measured == (model.start_ns + span // 4, model.start_ns + span // 3)
    assert [(b.ts_ns, b.name, b.text) for b in tab2.notes.bookmarks] == [
        (model.start_ns + 1234, "odd spike", "look here\nand here")]  # fmt: skip
    assert tab2.notes.list.count() == 1 and "odd spike" in tab2.notes.list.item(0).text()
    assert tab2.notes.loaded_message is None


def test_opening_leaves_no_sidecar(qtbot, trace):
    win = _window(qtbot, trace)
    win.close_tab(win.tabs.currentIndex())
    assert not os.path.exists(sidecar_path(trace))


@pytest.mark.parametrize("content", [b"{\"format\": \"fxscope-notes\", \"version\": 1, \"tr", b"\x00\x01binary"])
def test_corrupt_sidecar_is_a_message_and_the_trace_opens(qtbot, trace, content):
    with open(sidecar_path(trace), "wb") as fh:
        fh.write(content)
    win = _window(qtbot, trace)
    tab = win.current_tab()
    assert tab is not None and len(tab.model.slices) > 0
    assert "ignored" in win.statusBar().currentMessage()
    assert "ignored" in tab.notes.loaded_message
    tab.notes.add_bookmark("x")
    win.close_tab(win.tabs.currentIndex())
    with open(sidecar_path(trace), "rb") as fh:
        assert fh.read() == content  # not overwritten


def test_link_opens_the_view_and_selects_the_slice(qtbot, trace):
    win = _window(qtbot, trace)
    tab = win.current_tab()
    tl, model = tab.timeline, tab.model
    s = model.slices
    # a slice that starts together with its parent: the link must tell them apart
    row = int(next(r for r in range(len(s)) if s.parent[r] >= 0 and s.ts[r] == s.ts[s.parent[r]]))
    tl.set_range_ns(int(model.slices.ts[row]) - 5000, int(model.slices.ts[row]) + 9000)
    tl.select(row)
    link = tab.notes.copy_link()
    assert "#range=" in link and "&select=slice:" in link
    view = tl.visible_range_ns()
    win2 = _window(qtbot, link)
    tab2 = win2.current_tab()
    assert tab2.timeline.visible_range_ns() == pytest.approx(view, abs=10)
    assert tab2.timeline.selected_row == row
    # a link naming no slice is a message, the trace opens
    win3 = _window(qtbot, f"{trace}#select=slice:424242:1")
    assert win3.current_tab() is not None and "No slice" in win3.statusBar().currentMessage()


def test_no_notes_for_the_bundled_demo(qtbot):
    from fxscope.resources import DEMO_TRACE

    win = _window(qtbot, str(DEMO_TRACE))
    tab = win.current_tab()
    assert not tab.notes.enabled
    tab.timeline.pin(tab.timeline.lanes()[0].key)
    tab.notes.add_bookmark("mine")
    win.close_tab(win.tabs.currentIndex())
    assert not os.path.exists(sidecar_path(str(DEMO_TRACE)))


def test_track_filter_survives_a_restart(qtbot, tmp_path):
    from tests.core.analysis.nested_trace import nested_trace

    trace = str(tmp_path / "threads.fxt")  # three threads in two processes
    with open(trace, "wb") as fh:
        fh.write(nested_trace(7))
    win = _window(qtbot, trace)
    tl = win.current_tab().timeline
    everything = len(tl.visible_lanes())
    text = "101"  # a thread's id (the filter matches process and thread names and ids)
    tl.filter_box.setText(f" {text} ")  # kept trimmed
    shown = [lane.key for lane in tl.visible_lanes()]
    assert 0 < len(shown) < everything
    win2 = _close_and_reopen(qtbot, win, trace)  # the filter alone is a note worth a sidecar
    tl2 = win2.current_tab().timeline
    assert tl2.filter_box.text() == text
    assert [lane.key for lane in tl2.visible_lanes()] == shown
    tl2.filter_box.clear()  # cleared, the next open shows every track again
    win3 = _close_and_reopen(qtbot, win2, trace)
    assert win3.current_tab().timeline.filter_box.text() == ""
    assert len(win3.current_tab().timeline.visible_lanes()) == everything
