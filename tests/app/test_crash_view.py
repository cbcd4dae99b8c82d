"""The crash view on the real crash-demo log: frames, source pane, registers, dumpfile, main-window dispatch."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from app.crash.view import CrashView, editor_command, map_source
from app.main_window import MainWindow


@pytest.fixture
def crash_dir(testdata: Path, tmp_path: Path) -> Path:
    """The crash log with its .build-id tree, and the program's sources checked out next to it."""
    target = tmp_path / "crash"
    shutil.copytree(testdata / "markup" / "crash-demo", target)
    shutil.copytree(testdata / "gsym" / "crashdemo" / "src", target / "crashdemo" / "src")
    shutil.copytree(testdata / "gsym" / "crashdemo" / "lib", target / "crashdemo" / "lib")
    return target


def test_first_frame_is_the_crash_site_with_its_source(qtbot, crash_dir: Path) -> None:
    view = CrashView()
    qtbot.addWidget(view)
    view.open_log(crash_dir / "input.log")
    assert view.current_source is not None
    path, line = view.current_source
    assert path.name == "payload.h" and line == 24  # #0.1 payload_weight, as llvm-symbolizer says
    assert view.current_line_text() == (crash_dir / "crashdemo" / "src" / "payload.h").read_text().splitlines()[23]


def test_clicking_frames_moves_the_source_pane(qtbot, crash_dir: Path) -> None:
    view = CrashView()
    qtbot.addWidget(view)
    view.open_log(crash_dir / "input.log")
    items = {item.text(0): item for item in view.frame_items()}
    assert set(items) >= {"0", "0.1", "0.2", "1", "2", "3", "4", "4.1", "5", "6", "7", "8", "9"}
    view.backtrace.setCurrentItem(items["4"])
    assert view.current_source[0].name == "pipeline.c" and view.current_source[1] == 20
    view.backtrace.setCurrentItem(items["1"])
    assert view.current_source[0].name == "plugin.c" and view.current_source[1] == 17
    view.backtrace.setCurrentItem(items["7"])  # libc: no symbols
    assert view.current_source is None
    assert items["7"].text(2) == "??"


def test_registers_are_annotated_and_dumpfile_listed(qtbot, crash_dir: Path) -> None:
    view = CrashView()
    qtbot.addWidget(view)
    view.open_log(crash_dir / "input.log")
    regs = {view.registers.item(r, 0).text(): view.registers.item(r, 2).text() for r in range(view.registers.rowCount())}
    assert regs["RIP"] == "on_node (crashdemo+0x13ff)"
    assert regs["R11"] == "plugin_walk (libdemo.so+0x1130)"
    assert regs["RAX"] == ""
    assert [(d.kind, d.name) for d in view.report.dumps] == [("crashdemo-state", "crashdemo.3829.state")]
    assert view.modules.rowCount() == 6


def test_main_window_opens_logs_in_a_crash_tab(qtbot, crash_dir: Path) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(crash_dir / "input.log"))
    assert isinstance(win.tabs.currentWidget(), CrashView)


def test_source_roots_and_editor_commands(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text("int x;\n")
    assert map_source("/build/proj/src/a.c", [("/build/proj", str(tmp_path))], tmp_path / "elsewhere") \
        == tmp_path / "src" / "a.c"
    assert map_source("/nowhere/a.c", [], tmp_path / "x") is None
    monkeypatch.setenv("VISUAL", "code")
    assert editor_command(Path("/s/a.c"), 7) == ["code", "--goto", "/s/a.c:7"]
    monkeypatch.setenv("VISUAL", "nvim -p")
    assert editor_command(Path("/s/a.c"), 7) == ["nvim", "-p", "+7", "/s/a.c"]
    monkeypatch.delenv("VISUAL")
    monkeypatch.delenv("EDITOR", raising=False)
    assert editor_command(Path("/s/a.c"), 7) is None


def test_screenshot_of_a_crash_log(crash_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "crash.png"
    result = subprocess.run([sys.executable, "-m", "app", "screenshot", str(crash_dir / "input.log"), "-o", str(out),
                             "--size", "1400x800"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1400, 800)
    # the marked source line's highlight colour is on screen
    colours = {image.pixelColor(x, y).name() for x in range(800, 1400, 7) for y in range(300, 800, 3)}
    assert "#ffe08a" in colours
