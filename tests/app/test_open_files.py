"""Opening files in the window by what they are (core/filetype.py): traces in either byte order and
compressed, crash logs, and a clear message for anything else; one tab per file; Ctrl+W closes a tab.
And the commands read compressed traces too."""

from __future__ import annotations

import gzip
import json
import lzma
import shutil
from pathlib import Path

import zstandard
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from fxscope.app.cli import main
from fxscope.app.main_window import MainWindow, TraceTab
from fxscope.core.synthetic_trace import generate_trace
from fxscope.resources import DEMO_TRACE
from tests.app.conftest import shown_window

REPO = Path(__file__).resolve().parents[2]


def _window(qtbot) -> MainWindow:
    return shown_window(qtbot)


def _messages(win) -> list[str]:
    return [box.text() for box in win.findChildren(QMessageBox) if box.isVisible()]


def test_a_big_endian_trace_named_log_opens_in_the_timeline(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "capture.log"
    path.write_bytes(generate_trace(1200, seed=2, big_endian=True))
    win = _window(qtbot)
    assert win.open_path(str(path))
    assert isinstance(win.tabs.currentWidget(), TraceTab) and len(win.current_tab().model.slices) > 0


def test_compressed_traces_open_in_the_background(qtbot, tmp_path: Path) -> None:
    data = DEMO_TRACE.read_bytes()
    win = _window(qtbot)
    for suffix, pack in ((".gz", gzip.compress), (".xz", lzma.compress),
                         (".zst", zstandard.ZstdCompressor().compress)):  # fmt: skip
        path = tmp_path / f"demo.fxt{suffix}"
        path.write_bytes(pack(data))
        n = win.tabs.count()
        win.open_path(str(path), background=True)
        qtbot.waitUntil(lambda n=n: win.tabs.count() == n + 1, timeout=30000)
        assert isinstance(win.tabs.currentWidget(), TraceTab)
        assert win.tabs.tabText(win.tabs.currentIndex()) == path.name


def test_other_files_are_a_clear_message_not_a_crash_view(qtbot, tmp_path: Path) -> None:
    win = _window(qtbot)
    readme = tmp_path / "README.md"
    shutil.copy(REPO / "README.md", readme)
    png = REPO / "resources" / "icons" / "fxscope-16.png"
    for path in (readme, png):
        assert not win.open_path(str(path))
    assert win.tabs.count() == 0
    texts = _messages(win)
    assert any("README.md: not a trace or crash log" in t for t in texts)
    assert any("fxscope-16.png: not a trace or crash log" in t for t in texts)
    # in the background too: the loader reports the same message
    win.open_path(str(png), background=True)
    qtbot.waitUntil(lambda: not win.loaders, timeout=10000)
    assert win.tabs.count() == 0


def test_crash_logs_still_open_in_the_crash_view(qtbot, testdata: Path) -> None:
    from fxscope.app.crash.view import CrashView

    win = _window(qtbot)
    assert win.open_path(str(testdata / "markup" / "crash-demo" / "input.log"))
    assert isinstance(win.tabs.currentWidget(), CrashView)


def test_a_compressed_crash_log_opens_in_the_crash_view(qtbot, testdata: Path, tmp_path: Path) -> None:
    from fxscope.app.crash.view import CrashView

    packed = tmp_path / "crash.log.gz"
    packed.write_bytes(gzip.compress((testdata / "markup" / "crash-demo" / "input.log").read_bytes()))
    win = _window(qtbot)
    assert win.open_path(str(packed))
    view = win.tabs.currentWidget()
    assert isinstance(view, CrashView)
    assert view.crash_log is not None and len(view.crash_log.reports) == 1
    assert "fatal signal 11 (SEGV)" in view.log.toPlainText()


def test_the_same_file_twice_is_one_tab_and_ctrl_w_closes_it(qtbot, tmp_path: Path) -> None:
    win = _window(qtbot)
    assert win.open_path(str(DEMO_TRACE))
    link = tmp_path / "same.fxt"
    link.symlink_to(DEMO_TRACE)
    other = tmp_path / "other.fxt"
    other.write_bytes(DEMO_TRACE.read_bytes())
    assert win.open_path(str(other))
    assert win.tabs.count() == 2 and win.tabs.currentIndex() == 1
    assert win.open_path(str(link))  # the demo again, by another name: its tab comes to the front
    assert win.tabs.count() == 2 and win.tabs.currentIndex() == 0
    win.open_path(str(DEMO_TRACE), background=True)  # no second load either
    assert not win.loaders and win.tabs.count() == 2
    with qtbot.waitActive(win):
        win.activateWindow()
    win.tabs.currentWidget().timeline.setFocus()
    qtbot.keyClick(win.tabs.currentWidget().timeline, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert win.tabs.count() == 1 and win.tab_of(str(DEMO_TRACE)) == -1
    qtbot.keyClick(win.tabs.currentWidget().timeline, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert win.tabs.count() == 0


def test_commands_read_compressed_traces(tmp_path: Path, capsys) -> None:
    packed = tmp_path / "demo.fxt.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(DEMO_TRACE.read_bytes()))
    assert main(["info", str(packed), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert main(["info", str(DEMO_TRACE), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in info.items() if k != "path"} == {k: v for k, v in plain.items() if k != "path"}
    out = tmp_path / "demo.json"
    assert main(["export", str(packed), "--format", "chrome-json", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["traceEvents"]
    capsys.readouterr()
    assert main(["info", str(REPO / "README.md")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a trace or crash log" in err[0]
