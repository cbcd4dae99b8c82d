"""The Info tab: a trace's problems are visible when it opens (tab title, status bar, highlighted rows at the
top of the panel), its blobs are listed and a blob saves to exactly the bytes the writer put in the trace."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog

from fxscope.app.main_window import MainWindow, TraceTab
from fxscope.app.timeline.info import WARNING_BACKGROUND
from fxscope.formats.fxt.columns import EventKind
from fxscope.formats.fxt.reader import read_fxt
from fxscope.formats.fxt.writer import FxtWriter
from fxscope.resources import DEMO_TRACE


def _open(qtbot, path: Path) -> tuple[MainWindow, TraceTab]:
    win = MainWindow()
    qtbot.addWidget(win)
    win.open_path(str(path), background=True)  # as the File menu does: the deferred tab
    qtbot.waitUntil(lambda: win.tabs.count() == 1, timeout=30000)
    tab = win.tabs.currentWidget()
    assert isinstance(tab, TraceTab)
    return win, tab


def _info_title(tab: TraceTab) -> str:
    return tab.bottom.tabText(tab.bottom.indexOf(tab.info))


def _children(item) -> list:
    return [item.child(i) for i in range(item.childCount())]


def test_a_truncated_trace_shows_its_warnings(qtbot, truncated_demo: Path) -> None:
    win, tab = _open(qtbot, truncated_demo)
    reader_warnings = read_fxt(truncated_demo).warnings
    assert any("truncated final record" in w for w in reader_warnings)
    n = tab.info.warning_count
    # the reader's warnings, and the model's problems: the truncated demo leaves async spans open
    unclosed = int((tab.model.async_spans.flags & 2).astype(bool).sum())
    assert unclosed > 0 and n == len(reader_warnings) + 1
    assert _info_title(tab) == f"Info ({n} warnings)"
    assert win.statusBar().currentMessage() == f"{n} warnings while reading truncated.fxt — see the Info tab"
    # the panel: a Warnings group first, each reader warning a highlighted row "offset | message"
    head = tab.info.tree.topLevelItem(0)
    assert head.text(0) == "Warnings" and head.text(1) == str(n)
    rows = _children(head)
    assert [f"{r.text(0)}: {r.text(1)}" for r in rows[: len(reader_warnings)]] == reader_warnings
    assert (rows[-1].text(0), rows[-1].text(1)) == ("Async spans: unclosed begins", str(unclosed))
    assert all(r.background(1).color() == WARNING_BACKGROUND for r in rows)
    # the same count in its own section, highlighted there too; plain counts are not
    sections = {tab.info.tree.topLevelItem(i).text(0): tab.info.tree.topLevelItem(i)
                for i in range(tab.info.tree.topLevelItemCount())}  # fmt: skip
    spans = {r.text(0): r for r in _children(sections["Async spans"])}
    assert spans["unclosed begins"].background(1).color() == WARNING_BACKGROUND
    assert spans["total"].text(1) == f"{len(tab.model.async_spans):,}"
    assert spans["total"].background(1).color() != WARNING_BACKGROUND
    # the rows copy as text, to paste into a bug report
    tab.info.copy_rows(rows[:1])
    assert QGuiApplication.clipboard().text() == reader_warnings[0]


def test_a_clean_trace_has_a_plain_info_tab(qtbot, tmp_path: Path) -> None:
    w = FxtWriter()
    w.initialization(1_000_000_000)
    w.event(EventKind.DURATION_BEGIN, 100, (1, 2), "cat", "work")
    w.event(EventKind.DURATION_END, 900, (1, 2), "cat", "work")
    path = tmp_path / "clean.fxt"
    path.write_bytes(w.getvalue())
    win, tab = _open(qtbot, path)
    assert tab.info.warning_count == 0 and _info_title(tab) == "Info"
    assert "warning" not in win.statusBar().currentMessage()
    assert tab.info.tree.topLevelItem(0).text(0) == "File"
    assert not tab.info.blob_box.isVisibleTo(tab.info)  # no blobs, no blob list


def test_the_demo_lists_its_blobs_and_saves_one(qtbot, tmp_path: Path, monkeypatch) -> None:
    win, tab = _open(qtbot, DEMO_TRACE)
    assert _info_title(tab) == f"Info ({tab.info.warning_count} warnings)"  # "buffer filled up", among others
    win.resize(1200, 800)
    win.show()
    tab.bottom.setCurrentWidget(tab.info)
    qtbot.waitExposed(win)
    table = tab.info.blob_table
    blobs = tab.model.cols.blobs
    assert table.topLevelItemCount() == len(blobs) == 8
    listed = [tuple(table.topLevelItem(i).text(c) for c in range(4)) for i in range(len(blobs))]
    assert listed[:5] == [
        ("raw-data", "data", "37", ""),
        ("bytes", "last branch", "32", ""),
        ("perfetto", "perfetto", "4", ""),
        ("big-snapshot", "large blob", "40,960", f"2.000 µs  ({blobs[3].ts} ns)"),
        ("attachment", "large blob (no metadata)", "18", ""),
    ]
    assert table.topLevelItem(3).text(4) == tab.model.thread_name(blobs[3].thread)
    # a double click asks where to save (the dialog answered here) and writes the payload bytes
    out = tmp_path / "saved" / "blob.bin"
    out.parent.mkdir()
    asked = []

    def answer(parent, caption, start, filters):
        asked.append(Path(start).name)
        return str(out), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(answer))
    item = table.topLevelItem(0)
    rect = table.visualItemRect(item)
    for event in (qtbot.mouseClick, qtbot.mouseDClick):  # a double click: a click, then the second press
        event(table.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.left() + 8, rect.center().y()))
    assert asked == ["raw-data.bin"]
    assert out.read_bytes() == bytes(range(37))  # core.synthetic_trace: chunk 0's raw-data blob
    tab.info.save_blob_dialog(3)
    assert asked[-1] == "big-snapshot.bin" and out.read_bytes() == bytes(range(256)) * 160
    assert [p.name for p in out.parent.iterdir()] == ["blob.bin"]  # written atomically: no temporary left


def test_a_large_traces_statistics_come_after_its_first_frame(qtbot, truncated_demo: Path, monkeypatch) -> None:
    """A trace of DEFER_EVENTS events or more opens before its flows and statistics are built: the Info tab
    says so, then shows the same rows, title and status-bar warning as a trace whose load built them."""
    from fxscope.core.trace import prepare
    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.reading import read_trace

    monkeypatch.setattr(prepare, "DEFER_EVENTS", 0)  # the truncated demo counts as large
    win, tab = _open(qtbot, truncated_demo)
    assert tab.deferred is not None and tab.info.pending and not tab.model.stats_ready
    assert _info_title(tab) == "Info (…)"
    assert tab.info.tree.topLevelItem(0).text(0) == tab.info.PENDING_TEXT
    assert tab.timeline.search_indexing.held  # the search index is built after these, not beside them
    qtbot.waitUntil(lambda: not tab.info.pending, timeout=30000)
    assert not tab.timeline.search_indexing.held
    assert tab.model.flows_ready and tab.model.stats_ready
    expected = TraceModel(read_trace(str(truncated_demo))).stats
    assert tab.info.stats == expected  # the same rows as when the load built them
    n = tab.info.warning_count
    assert n == len([s for s in expected if s.severity == "warning"]) > 0
    assert _info_title(tab) == f"Info ({n} warnings)"
    assert win.statusBar().currentMessage().startswith(f"{n} warnings while reading truncated.fxt")
    assert tab.info.tree.topLevelItem(0).text(0) == "Warnings"
