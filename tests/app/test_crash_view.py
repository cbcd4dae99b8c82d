"""The crash view on the real crash-demo log: frames, source pane, registers, dumpfile, main-window dispatch."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QTextFormat

from fxscope.app.crash.editor import editor_command
from fxscope.app.crash.source_pane import map_source
from fxscope.app.crash.view import CrashView
from fxscope.app.main_window import MainWindow


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
    result = subprocess.run([sys.executable, "-m", "fxscope", "screenshot", str(crash_dir / "input.log"), "-o", str(out),
                             "--size", "1400x800"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1400, 800)
    # the marked source line's highlight colour is on screen
    colours = {image.pixelColor(x, y).name() for x in range(800, 1400, 7) for y in range(300, 800, 3)}
    assert "#ffe08a" in colours


def test_dumpfile_link_opens_the_trace_in_the_timeline(qtbot, crash_dir: Path) -> None:
    from PySide6.QtCore import QUrl

    from fxscope.app.main_window import TraceTab
    from fxscope.resources import DEMO_TRACE

    shutil.copy(DEMO_TRACE, crash_dir / "crashdemo.3829.state")  # the dump the log names, an FXT trace
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(crash_dir / "input.log"))
    view = win.tabs.currentWidget()
    assert [t.handler.name for t in view.dump_targets] == ["trace"]
    assert view.dumps.item(0, 2).text().startswith("FXT trace")
    assert "crashdemo (3d3a8557" in view.dumps.item(0, 3).text()  # the module context a dump tool needs
    assert 'href="dump:0"' in view.log.toHtml()
    view.log.anchorClicked.emit(QUrl("dump:0"))
    assert win.tabs.count() == 2 and isinstance(win.tabs.currentWidget(), TraceTab)


def test_dumps_without_a_handler_are_listed(qtbot, crash_dir: Path, tmp_path: Path) -> None:
    view = CrashView(dump_dirs=[str(tmp_path / "dumps")])
    qtbot.addWidget(view)
    view.open_log(crash_dir / "input.log")
    assert view.dump_targets[0].path is None and "not found in" in view.dumps.item(0, 2).text()
    assert str(tmp_path / "dumps") in view.dumps.item(0, 2).text()
    assert not view.open_dump(0)
    (tmp_path / "dumps").mkdir()
    (tmp_path / "dumps" / "crashdemo.3829.state").write_bytes(b"\x7fELF not a trace")
    view.open_log(crash_dir / "input.log")
    assert view.dump_targets[0].handler is None and "no handler" in view.dumps.item(0, 2).text()
    assert not view.open_dump(0) and "crashdemo-state:crashdemo.3829.state" in view.source_title.text()


def test_preferences_round_trip_and_source_roots(qtbot, crash_dir: Path, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings

    from fxscope.app.preferences import PreferencesDialog, load_settings, save_settings
    from fxscope.core.symbols.settings import SymbolSettings

    prefs = SymbolSettings(["/syms/a", "/syms/b"], ["https://debuginfod.example"], "/tmp/cache",
                           [("/build/x", "/src/x")], ["/dumps"])  # fmt: skip
    dialog = PreferencesDialog(prefs)
    qtbot.addWidget(dialog)
    assert dialog.settings() == prefs
    dialog.urls.setPlainText("")
    assert dialog.settings().debuginfod_urls is None  # empty: $DEBUGINFOD_URLS
    store = QSettings(str(tmp_path / "prefs.ini"), QSettings.Format.IniFormat)
    save_settings(prefs, store)
    assert load_settings(QSettings(str(tmp_path / "prefs.ini"), QSettings.Format.IniFormat)) == prefs
    assert load_settings(QSettings(str(tmp_path / "empty.ini"), QSettings.Format.IniFormat)) == SymbolSettings()

    # the sources live elsewhere: a source root set in the preferences finds them for an open crash view
    shutil.move(crash_dir / "crashdemo", tmp_path / "checkout")
    win = MainWindow()
    qtbot.addWidget(win)
    win.open_path(str(crash_dir / "input.log"))
    view = win.tabs.currentWidget()
    assert view.current_source is None
    recorded = view.backtrace.rows[0][1].file
    prefix = recorded[: recorded.index("/src/")]
    win.apply_preferences(SymbolSettings(source_roots=[(prefix, str(tmp_path / "checkout"))]))
    view.select_frame(1)
    view.select_frame(0)
    assert view.current_source == (tmp_path / "checkout" / "src" / "payload.h", 24)
    assert load_settings().source_roots == [(prefix, str(tmp_path / "checkout"))]


def test_log_colours_are_preserved(qtbot, crash_dir: Path) -> None:
    from fxscope.app.crash.log_html import sgr_to_html

    assert sgr_to_html("\x1b[1m\x1b[31m*** x <y> ***\x1b[0m done") == (
        '<span style="color:#c0392b;font-weight:bold;">*** x &lt;y&gt; ***</span> done')
    assert sgr_to_html("plain") == "plain"
    view = CrashView()
    qtbot.addWidget(view)
    view.open_log(crash_dir / "input.log")
    page = view.log.toHtml()
    assert "fatal signal 11" in page and "#c0392b" in page  # the log's red crash line stays red
    assert "#2e8b57" in page  # green: INFO tags and the symbolizer's highlighted values
    assert [e.number for e in view.report.backtrace] == list(range(10))  # recording unaffected by caches


def test_symbols_only_in_the_symbol_cache(qtbot, testdata: Path, tmp_path: Path) -> None:
    """Issue 14 defect 4: debug files that only the cache holds (debuginfod downloads of an earlier session,
    no server configured now) give the Modules tab, the columns and the register names."""
    demo = testdata / "markup" / "crash-demo"
    (tmp_path / "logs").mkdir()
    shutil.copy(demo / "input.log", tmp_path / "logs" / "input.log")
    for debug in (demo / ".build-id").glob("*/*.debug"):
        target = tmp_path / "cache" / "debuginfod" / (debug.parent.name + debug.stem) / "debuginfo"
        target.parent.mkdir(parents=True)
        shutil.copy(debug, target)
    view = CrashView(cache_dir=str(tmp_path / "cache"), debuginfod_urls=[])
    qtbot.addWidget(view)
    view.open_log(tmp_path / "logs" / "input.log")
    symbols = {view.modules.item(r, 0).text(): view.modules.item(r, 3).text() for r in range(view.modules.rowCount())}
    assert symbols["crashdemo"] == symbols["libdemo.so"] == "found"
    assert symbols["libc.so.6"] == "not found"
    items = {item.text(0): item for item in view.frame_items()}
    assert items["0.1"].text(3) == "payload.h:24:31"  # the column, as llvm-symbolizer prints it
    regs = {view.registers.item(r, 0).text(): view.registers.item(r, 2).text() for r in range(view.registers.rowCount())}
    assert regs["RBX"] == "nodes (crashdemo+0x4240)"


def test_gsym_only_in_the_symbol_cache_counts_as_found(qtbot, testdata: Path, tmp_path: Path) -> None:
    """Issue 14 defect 4: a module symbolized from a cached GSYM file is not "not found" in the Modules tab."""
    demo = testdata / "markup" / "crash-demo"
    (tmp_path / "logs").mkdir()
    shutil.copy(demo / "input.log", tmp_path / "logs" / "input.log")
    (tmp_path / "cache" / "gsym").mkdir(parents=True)
    shutil.copy(testdata / "gsym" / "crashdemo" / "binary.gsym",
                tmp_path / "cache" / "gsym" / "3d3a85572513e6cff897b8e9637d480eeb092027.gsym")
    view = CrashView(cache_dir=str(tmp_path / "cache"), debuginfod_urls=[])
    qtbot.addWidget(view)
    view.open_log(tmp_path / "logs" / "input.log")
    symbols = {view.modules.item(r, 0).text(): view.modules.item(r, 3).text() for r in range(view.modules.rowCount())}
    assert view.frame_items()[0].text(2) == "payload_weight"
    assert symbols["crashdemo"].startswith("found") and symbols["libdemo.so"] == "not found"


def test_a_log_with_two_reports_lists_them_and_shows_one(qtbot, crash_dir: Path) -> None:
    """Issue 14 defect 2: two crashes are two reports, not one tree with frames 0-9 twice."""
    log = (crash_dir / "input.log").read_text()
    two = crash_dir / "two.log"
    two.write_text(log + "[  1.000000] INFO crashdemo: restarted\n" + log.replace("0x55bc37e493ff", "0x55bc37e493f0"))
    view = CrashView()
    qtbot.addWidget(view)
    view.open_log(two)
    assert view.reports_list.isVisibleTo(view) and view.reports_list.reports_model.rowCount() == 2
    assert [e.number for e in view.report.backtrace] == list(range(10))
    assert view.modules.rowCount() == 6 and view.registers.rowCount() == 20
    model = view.reports_list.reports_model
    row = [model.data(model.index(0, c)) for c in range(model.columnCount())]
    assert row[2:7] == ["11 (SEGV)", "(nil)", "", "payload_weight", "crashdemo+0x13ff"]
    assert model.data(model.index(1, 5)) == "on_node"  # the second crash's pc is elsewhere in on_node
    # one click opens the other report
    qtbot.mouseClick(view.reports_list.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.reports_list.visualRect(model.index(1, 3)).center())
    assert view.report_index == 1 and view.report.backtrace[0].relative == 0x13F0
    assert "restarted" not in view.report.text and view.report.text.count("fatal signal 11") == 1


def test_inline_frames_innermost_first_and_log_links_select_the_exact_frame(qtbot, crash_dir: Path) -> None:
    """Issue 14 defect 3: the backtrace lists #0.1, #0.2, #0 in llvm-symbolizer's order, and a click on the
    #0 or #0.2 line of the log text selects that frame."""
    from PySide6.QtCore import QUrl

    view = CrashView()
    qtbot.addWidget(view)
    view.open_log(crash_dir / "input.log")
    labels = [item.text(0) for item in view.frame_items()]
    assert labels[:5] == ["0.1", "0.2", "0", "1", "2"]
    assert [view.backtrace.indexOfTopLevelItem(item) for item in view.frame_items()] == list(range(len(labels)))
    for label, function in (("0", "on_node"), ("0.2", "score_node"), ("0.1", "payload_weight")):
        assert f'href="frame:{label}"' in view.log.toHtml()
        view.log.anchorClicked.emit(QUrl(f"frame:{label}"))
        assert view.backtrace.currentItem().text(0) == label and view.backtrace.currentItem().text(2) == function


def test_a_plain_log_says_it_has_no_crash_report(qtbot, tmp_path: Path) -> None:
    """Issue 14 defect 5: a .log without markup is not an empty crash view without a word."""
    plain = tmp_path / "service.log"
    plain.write_text("[  0.1] INFO service: started\n[  0.2] INFO service: stopped\n")
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(plain))
    view = win.tabs.currentWidget()
    assert isinstance(view, CrashView) and view.report is None
    assert view.message.isVisibleTo(view) and "no crash report" in view.message.text()
    assert "INFO service: started" in view.log.toPlainText()
    assert not view.copy_button.isEnabled() and not view.save_button.isEnabled()


def test_copy_and_save_the_symbolized_report(qtbot, crash_dir: Path, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QApplication

    view = CrashView()
    qtbot.addWidget(view)
    view.open_log(crash_dir / "input.log")
    view.copy_report()
    copied = QApplication.clipboard().text()
    assert "#0.1  0x000055bc37e493ff payload_weight" in copied and "\x1b[" not in copied
    view.select_frame(2)
    view.copy_frame()
    assert QApplication.clipboard().text() == "#0    0x000055bc37e493ff on_node /build/crashdemo/src/stages.c:17:14 " \
        "(crashdemo+0x13ff)"
    out = tmp_path / "out" / "report.txt"
    assert not view.save_report(out)  # no such directory: a message, no traceback
    assert "Cannot save" in view.message.text()
    out.parent.mkdir()
    assert view.save_report(out) and out.read_text() == copied


def test_the_window_splits_and_symbolizes_a_log_in_the_background(qtbot, crash_dir: Path) -> None:
    log = (crash_dir / "input.log").read_text()
    many = crash_dir / "many.log"
    many.write_text(log * 30)
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(many), background=True)
    view = win.tabs.currentWidget()
    assert isinstance(view, CrashView) and view.report is None  # nothing done on the UI thread yet
    with qtbot.waitSignal(view.reportShown, timeout=60_000):
        pass
    model = view.reports_list.reports_model
    qtbot.waitUntil(lambda: None not in model.summaries, timeout=60_000)
    assert model.rowCount() == 30 and {s.top_frame for s in model.summaries} == {"payload_weight"}
    assert view.report_index == 0 and [e.number for e in view.report.backtrace] == list(range(10))
    with qtbot.waitSignal(view.reportShown, timeout=60_000):
        view.reports_list.reportChosen.emit(29)
    assert view.report_index == 29 and view.reports_list.currentIndex().row() == 29
    win.close_tab(win.tabs.currentIndex())  # running or not, its threads stop with it


def test_why_a_frame_is_not_symbolized(qtbot, crash_dir: Path) -> None:
    """libc's frames: which build ID, where we looked, what the debuginfod server answered; the filter's
    diagnostics for the report in their own tab."""
    import http.server
    import threading

    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, *_args) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        view = CrashView(debuginfod_urls=[url])
        qtbot.addWidget(view)
        view.open_log(crash_dir / "input.log")
    finally:
        server.shutdown()
    items = {item.text(0): item for item in view.frame_items()}
    assert view.source.extraSelections()  # #0.1's source, its line marked
    view.backtrace.setCurrentItem(items["7"])
    assert view.source.toPlainText() == "" and view.source.extraSelections() == []  # no stale mark left
    why = view.source_title.text()
    assert why.startswith("Not symbolized: no debug file for libc.so.6 build ID 93ac61ec5a8eb1396f9fbd350e3169a558528a40")
    assert f"debug directories {crash_dir}" in why and "the symbol cache" in why
    assert f"debuginfod {url} ({url}: 404 (debuginfo); {url}: 404 (executable))" in why
    assert items["7"].toolTip(2) == why.removeprefix("Not symbolized: ").removesuffix(".")
    libc = next(r for r in range(view.modules.rowCount()) if view.modules.item(r, 0).text() == "libc.so.6")
    assert view.modules.item(libc, 3).toolTip().startswith("no debug file for libc.so.6")
    assert view.diagnostics.toPlainText().count("could not find build ID") == 2
    view.backtrace.setCurrentItem(items["9"])  # _start: a symbol, no line table
    assert "_start has no line information" in view.source_title.text()


def test_source_pane_line_numbers_column_and_inline_call_sites(qtbot, crash_dir: Path, monkeypatch) -> None:
    from fxscope.app.crash.editor import NO_EDITOR
    from fxscope.app.crash.source_pane import CALL_SITE_COLOUR, COLUMN_COLOUR

    view = CrashView()
    qtbot.addWidget(view)
    view.resize(1400, 800)
    view.show()
    view.open_log(crash_dir / "input.log")
    source = view.source
    assert source.gutter.width() >= source.fontMetrics().horizontalAdvance("999")  # line numbers
    assert (source.marked_line, source.marked_column) == (24, 31)  # #0.1 payload.h:24:31
    column = [s for s in source.extraSelections() if s.format.background().color() == COLUMN_COLOUR]
    line24 = (crash_dir / "crashdemo" / "src" / "payload.h").read_text().splitlines()[23]
    assert len(column) == 1 and column[0].cursor.selectedText() == line24[30]
    assert view.source_title.text().startswith("/build/crashdemo/src/payload.h:24:31")
    chain = view.call_chain.text()
    assert view.call_chain.isVisibleTo(view) and "<b>#0.1 payload_weight payload.h:24:31</b>" in chain
    assert '<a href="frame:0.2">#0.2 score_node stages.c:11:19</a>' in chain and "#0 on_node stages.c:17:14" in chain
    view.call_chain.linkActivated.emit("frame:0.2")  # a link of the chain selects that frame
    assert view.backtrace.currentItem().text(0) == "0.2"
    assert source.marked_line == 11 and source.call_site_lines == [17]  # on_node's call, same file, tinted
    tinted = [s for s in source.extraSelections() if s.format.background().color() == CALL_SITE_COLOUR]
    assert [s.cursor.blockNumber() + 1 for s in tinted] == [17]
    view.select_frame(3)  # #1 visit_one: no inline frames, no chain
    assert not view.call_chain.isVisibleTo(view)
    # open in editor: explained when none is set, the setting's pattern otherwise
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    view.select_frame(0)
    assert view.open_button.isEnabled() and view.open_button.toolTip() == NO_EDITOR
    assert view.open_in_editor() is None and view.message.text() == NO_EDITOR
    view.editor = "true --goto {file}:{line}:{column}"
    assert view.open_in_editor() == ["true", "--goto", f"{crash_dir}/crashdemo/src/payload.h:24:31"]


def test_source_marks_are_readable_in_either_theme(qtbot, crash_dir: Path) -> None:
    """The marked line and the call sites keep the theme's text readable (the dark theme's light text on the
    light theme's yellow was not: contrast 1.2), and a theme switch recolours them without moving the view."""
    from fxscope.app.crash.source_pane import SYNTAX_COLOURS
    from fxscope.app.theme import DARK, LIGHT, apply_theme, contrast_ratio

    view = CrashView()
    qtbot.addWidget(view)
    view.resize(1400, 800)
    view.show()
    try:
        for theme in (DARK, LIGHT, DARK):
            apply_theme(theme)
            qtbot.wait(10)
            view.open_log(crash_dir / "input.log")
            view.call_chain.linkActivated.emit("frame:0.2")  # line 11 marked, line 17 a call site
            source = view.source
            text = QColor(theme.text)
            marks = {s.cursor.blockNumber() + 1: s.format.background().color() for s in source.extraSelections()
                     if s.format.property(QTextFormat.Property.FullWidthSelection)}  # fmt: skip
            assert sorted(marks) == [11, 17]
            dark = theme is DARK
            assert source.highlighter.dark == dark  # (the syntax colours follow the theme too)
            syntax = [f.foreground().color() for _pattern, f in source.highlighter.rules]
            assert {c.name() for c in syntax} == set(SYNTAX_COLOURS[dark])
            for background in (QColor(theme.base), *marks.values()):
                assert all(contrast_ratio(c, background) >= 4.5 for c in (text, *syntax)), (theme.name, background.name())
        # switched with the view elsewhere: recoloured, not scrolled back
        source.verticalScrollBar().setValue(0)
        top = source.firstVisibleBlock().blockNumber()
        apply_theme(LIGHT)
        qtbot.wait(10)
        marks = [s.format.background().color() for s in source.extraSelections()
                 if s.format.property(QTextFormat.Property.FullWidthSelection)]  # fmt: skip
        assert all(contrast_ratio(QColor(LIGHT.text), colour) >= 4.5 for colour in marks) and len(marks) == 2
        assert source.firstVisibleBlock().blockNumber() == top
    finally:
        apply_theme(LIGHT)


def test_block_comments_span_lines() -> None:
    """A ``/* ... */`` comment over several lines (a file's header comment) is a comment on every line it
    covers, its keywords too; the code after it is code; ``/*`` inside a ``//`` comment opens nothing."""
    from PySide6.QtGui import QTextDocument

    from fxscope.app.crash.source_pane import SYNTAX_COLOURS, CHighlighter

    doc = QTextDocument("/* static a\n * inline b */ int x;\nint y; // see /* no\nchar z;")
    highlighter = CHighlighter(doc)
    keyword, _string, _pre, comment = SYNTAX_COLOURS[False]

    def colour(line: int, column: int) -> str | None:
        block = doc.findBlockByLineNumber(line)
        for r in block.layout().formats():
            if r.start <= column < r.start + r.length:
                return r.format.foreground().color().name()
        return None

    assert colour(0, 0) == colour(0, 3) == colour(0, 10) == comment  # "static" inside the comment
    assert colour(1, 3) == colour(1, 12) == comment and colour(1, 15) == keyword  # "inline" in it; "int" after
    assert colour(2, 0) == keyword and colour(2, 7) == colour(2, 14) == comment
    assert colour(3, 0) == keyword and colour(3, 5) is None  # not left inside a comment by the // line
    assert highlighter.dark is False


def test_editor_patterns(monkeypatch) -> None:
    from fxscope.app.crash.editor import editor_command

    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "emacsclient -n")
    assert editor_command(Path("/s/a.c"), 7, 3) == ["emacsclient", "-n", "+7", "/s/a.c"]
    monkeypatch.setenv("EDITOR", "kate")
    assert editor_command(Path("/s/a.c"), 7, 3) == ["kate", "--line", "7", "--column", "3", "/s/a.c"]
    assert editor_command(Path("/s/a.c"), 7) == ["kate", "--line", "7", "/s/a.c"]
    assert editor_command(Path("/s/a b.c"), 7, 2, "subl {file}:{line}:{column}") == ["subl", "/s/a b.c:7:2"]
    assert editor_command(Path("/s/a.c"), 7, 0, "myedit") == ["myedit", "/s/a.c"]  # no placeholder: file last
    assert editor_command(Path("/s/a.c"), 7, 0, "bad 'quote") is None


def test_source_refreshes_when_source_roots_change(qtbot, crash_dir: Path, tmp_path: Path) -> None:
    from fxscope.core.symbols.settings import SymbolSettings

    shutil.move(crash_dir / "crashdemo", tmp_path / "checkout")
    win = MainWindow()
    qtbot.addWidget(win)
    win.apply_preferences(SymbolSettings())  # not the roots an earlier test saved
    win.open_path(str(crash_dir / "input.log"))
    view = win.tabs.currentWidget()
    assert view.current_source is None and "source not found" in view.source_title.text()
    win.apply_preferences(SymbolSettings(source_roots=[("/build/crashdemo", str(tmp_path / "checkout"))]))
    assert view.current_source == (tmp_path / "checkout" / "src" / "payload.h", 24)  # no click needed


def test_disassembly_around_the_pc_marks_the_faulting_instruction(qtbot, crash_dir: Path) -> None:
    """The crashing frame's instructions from the module's file (capstone), source lines between them."""
    view = CrashView()
    qtbot.addWidget(view)
    view.open_log(crash_dir / "input.log")
    view.side.setCurrentIndex(view.disassembly_index)
    rows = view.disassembly_lines
    marked = [r for r in rows if r.marked]
    assert len(marked) == 1 and marked[0].address == 0x13FF
    # the marked instruction is the bytes at crashdemo+0x13ff in the debug file (a load-segment read),
    # decoded: R8 is 0 in the register dump, so this load faulted
    debug = crash_dir / ".build-id" / "3d" / "3a85572513e6cff897b8e9637d480eeb092027.debug"
    from fxscope.formats.elf.reader import read_elf

    seg = next(s for s in read_elf(debug).load_segments if s.vaddr <= 0x13FF < s.vaddr + s.filesz)
    raw = debug.read_bytes()[seg.offset + 0x13FF - seg.vaddr :][:3]
    assert marked[0].raw == raw.hex(" ") and marked[0].text == "mov r9d, dword ptr [r8]"
    addresses = [r.address for r in rows if r.address >= 0]
    assert addresses[0] == 0x13F0  # from on_node's start
    # the source line of the faulting instruction comes right before it: payload.h:24, its text
    before = rows[rows.index(marked[0]) - 1]
    assert (Path(before.file).name, before.line) == ("payload.h", 24)
    assert before.text == (crash_dir / "crashdemo" / "src" / "payload.h").read_text().splitlines()[23].strip()
    page = view.disassembly.toPlainText()
    assert "◀ faulting instruction" in page and "payload.h:24" in page
    # a return-address frame marks its call; a libc frame explains why there is nothing
    view.select_frame(3)  # #1 visit_one in libdemo.so, return address - 1
    call = next(r for r in view.disassembly_lines if r.marked)
    assert call.text.startswith("call") and call.address <= 0x110B < call.address + len(call.raw.split())
    assert "◀ call" in view.disassembly.toPlainText()
    items = {item.text(0): item for item in view.frame_items()}
    view.backtrace.setCurrentItem(items["7"])
    assert view.disassembly_lines == [] and "no debug file for libc.so.6" in view.disassembly.toPlainText()


def test_closing_a_crash_tab_while_its_log_is_still_loading(qtbot, crash_dir: Path) -> None:
    from fxscope.app.crash import workers

    many = crash_dir / "many.log"
    many.write_text((crash_dir / "input.log").read_text() * 200)
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(many), background=True)
    running = set(workers._LIVE)
    assert running  # the split is under way
    win.close_tab(win.tabs.currentIndex())
    qtbot.waitUntil(lambda: not (running & workers._LIVE), timeout=60_000)  # they finish (or stop), no abort
    assert win.tabs.count() == 0
