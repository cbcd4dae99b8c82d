"""Loading traces off the UI thread: the tab appears when ready, Cancel stops a load, a bad file is a
message and the window keeps working; opened files are remembered as recent files."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QThread

from fxscope.app.loading import TraceLoader
from fxscope.app.main_window import MainWindow, TraceTab
from fxscope.resources import DEMO_TRACE


def test_background_load_adds_the_tab_and_remembers_the_file(qtbot) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(DEMO_TRACE), background=True)
    assert win.tabs.count() == 0 and win.cancel_button.isVisibleTo(win)  # still loading
    qtbot.waitUntil(lambda: win.tabs.count() == 1, timeout=30000)
    assert isinstance(win.tabs.currentWidget(), TraceTab)
    qtbot.waitUntil(lambda: not win.loaders, timeout=5000)
    assert not win.progress.isVisibleTo(win) and not win.cancel_button.isVisibleTo(win)
    # (remembered a moment after the tab is shown: the settings write is not part of the tab's stall)
    qtbot.waitUntil(lambda: win.recent_files()[:1] == [str(DEMO_TRACE.resolve())], timeout=5000)
    win._fill_recent()
    assert win.recent_menu.actions()[0].text() == str(DEMO_TRACE.resolve())


def test_cancel_stops_the_load(qtbot) -> None:
    loader = TraceLoader(str(DEMO_TRACE))
    loader.cancel()  # pressed before the first progress report: the reader unwinds at its first block
    with qtbot.waitSignal(loader.cancelled, timeout=10000):
        loader.start()
    loader.wait()

    win = MainWindow()
    qtbot.addWidget(win)
    started = win.load_in_background(str(DEMO_TRACE))
    started.cancel()
    qtbot.waitUntil(lambda: not win.loaders, timeout=10000)
    assert win.tabs.count() <= 1  # a load that finished before the click still shows its tab


def test_a_bad_file_is_a_message_and_the_window_keeps_working(qtbot, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QMessageBox

    bad = tmp_path / "bad.fxt"
    bad.write_bytes(b"\x10\x00\x04\x46\x78\x54\x16\x00" + b"\xff" * 3)  # magic, then a torn record
    worse = tmp_path / "worse.fxt"
    worse.write_bytes(b"not a trace at all, but long enough")
    win = MainWindow()
    qtbot.addWidget(win)
    win.open_path(str(worse), background=True)
    qtbot.waitUntil(lambda: not win.loaders, timeout=10000)
    boxes = [w for w in win.findChildren(QMessageBox) if w.isVisible()]
    assert boxes and "not a trace or crash log" in boxes[0].text() and win.tabs.count() == 0
    win.open_path(str(bad), background=True)  # readable with a warning: opens
    qtbot.waitUntil(lambda: win.tabs.count() == 1, timeout=10000)
    assert win.open_path(str(DEMO_TRACE))  # and the window still opens files
    assert win.tabs.count() == 2


def test_closing_a_trace_tab_frees_its_model(qtbot, tmp_path: Path) -> None:
    """removeTab alone kept the page, and with it the model (hundreds of MB for a big trace), alive; a
    background load also freezes its objects for the collector, which must not keep a closed tab's cycles."""
    import gc
    import weakref

    from PySide6.QtCore import QCoreApplication, QEvent

    win = MainWindow()
    qtbot.addWidget(win)
    win.open_path(str(DEMO_TRACE))
    copy = tmp_path / "demo-copy.fxt"  # (the same file twice is one tab)
    copy.write_bytes(DEMO_TRACE.read_bytes())
    assert win.open_path(str(copy), background=True)
    qtbot.waitUntil(lambda: win.tabs.count() == 2, timeout=30000)
    refs = [weakref.ref(win.tabs.widget(i).model) for i in range(2)]
    for _ in range(2):
        win.tabs.tabCloseRequested.emit(0)
        for _ in range(3):  # deleteLater's event, then the collection it schedules
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
            qtbot.wait(20)
    assert win.tabs.count() == 0
    gc.collect()  # (only what the app's own collection left: nothing, if it ran)
    assert [r() for r in refs] == [None, None]


def test_the_loader_gives_back_what_it_freed_after_the_track_list(qtbot, monkeypatch) -> None:
    """The loader's thread gives its freed memory back to the system last, after the track list and the tab's
    imports (its own heap's free top only its own thread can give back: left there, it stayed resident until
    the window's background build was well under way)."""
    from fxscope.core import freed_memory
    from fxscope.core.timeline import track_order

    calls: list[tuple[bool, bool]] = []  # (in the loader's thread?, the track list built?)
    real = freed_memory.return_freed_memory
    loader = TraceLoader(str(DEMO_TRACE))

    def recorded() -> bool:
        calls.append((QThread.currentThread() is loader, len(track_order._PREBUILT) > 0))
        return real()

    monkeypatch.setattr(freed_memory, "return_freed_memory", recorded)
    with qtbot.waitSignal(loader.loaded, timeout=30000) as loaded:
        loader.start()
    loader.wait()
    assert calls and calls[-1] == (True, True)
    track_order.take_groups(loaded.args[0])
