"""Tinted rows and cells, severity colours and the analysis panel's drawings in either theme: the text on a tint
is readable (WCAG contrast 4.5:1 or more) in the light and in the dark theme, and a cell tinted under one theme
stays readable after a switch. The dark theme's light text on the light theme's tints was not (the crash report
rows of the Logs tab, a register pointing into a module, a regression in Compare: contrast 1.1-1.3)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette

from fxscope.app.main_window import MainWindow
from fxscope.app.theme import (
    DARK,
    LIGHT,
    SEVERITY_COLOURS,
    TINTS,
    apply_theme,
    contrast_ratio,
    is_dark,
    severity_colour,
    tinted,
)
from fxscope.core.trace.log_filter import SEVERITIES
from fxscope.resources import DEMO_TRACE
from tests.core.analysis.nested_trace import nested_trace


@pytest.fixture
def themed():
    """Switch themes in a test; the light theme (every other test's) afterwards."""
    yield apply_theme
    apply_theme(LIGHT)


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=lambda t: t.name)
def test_every_tint_and_severity_is_readable_on_its_theme(theme) -> None:
    dark = theme is DARK
    base = QColor(theme.base)
    for name in TINTS:
        background, text = tinted(name, dark)
        assert text == QColor(theme.text)
        assert contrast_ratio(text, background) >= 4.5, name
        for severity in SEVERITY_COLOURS:  # (a crash report's records are tinted, and have a severity)
            assert contrast_ratio(severity_colour(severity, dark), background) >= 4.5, (name, severity)
    for severity in SEVERITY_COLOURS:
        assert contrast_ratio(severity_colour(severity, dark), base) >= 4.5, severity
    assert severity_colour("INFO", dark) is None  # (the theme's own text)


def test_logs_tab_rows_follow_the_theme(qtbot, themed) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.open_path(str(DEMO_TRACE))
    model = win.current_tab().logs.log_model
    markup = next(r for r in range(model.rowCount()) if model.logs.markup[int(model.rows[r])])
    plain = next(r for r in range(model.rowCount()) if not model.logs.markup[int(model.rows[r])])
    for theme in (DARK, LIGHT):
        themed(theme)
        assert is_dark() == (theme is DARK)
        background = model.data(model.index(markup, 1), Qt.ItemDataRole.BackgroundRole)
        assert background == tinted("markup", theme is DARK)[0]
        assert contrast_ratio(QColor(theme.text), background) >= 4.5
        assert model.data(model.index(plain, 1), Qt.ItemDataRole.BackgroundRole) is None
    warn = SEVERITIES.index("WARN")
    [row] = [r for r in range(model.rowCount()) if int(model.facts.severity[int(model.rows[r])]) == warn]
    for theme in (DARK, LIGHT):
        themed(theme)
        shown = model.data(model.index(row, 2), Qt.ItemDataRole.ForegroundRole)
        assert shown == severity_colour("WARN", theme is DARK) and contrast_ratio(shown, QColor(theme.base)) >= 4.5


def test_a_tinted_cell_keeps_its_text_readable_after_a_switch(qtbot, tmp_path, themed) -> None:
    """Compare's regression cells are tinted when filled: each carries the tint's text colour, so switching
    themes afterwards leaves them readable; and the flame graph and histogram take the theme's background."""
    a, b = tmp_path / "a.fxt", tmp_path / "b.fxt"
    a.write_bytes(nested_trace(7))
    b.write_bytes(nested_trace(7, slow={"alloc": 3}))
    themed(DARK)
    win = MainWindow()
    qtbot.addWidget(win)
    win.set_theme("dark", remember=False)
    assert win.open_path(str(a))
    win.resize(1200, 800)
    win.show()
    tab = win.current_tab()
    tab.bottom.setCurrentWidget(tab.compare)
    panel = tab.compare
    with qtbot.waitSignal(panel.compared, timeout=20000):
        panel.compare_with(str(b))
    cell = panel.table.item(0, 0)
    assert cell.text() == "alloc" and cell.background().color() == QColor(TINTS["worse"][1])
    for theme in (DARK, LIGHT):
        themed(theme)
        assert contrast_ratio(cell.foreground().color(), cell.background().color()) >= 4.5
    themed(DARK)
    tab.bottom.setCurrentWidget(tab.analysis)
    qtbot.wait(50)
    for view in (panel.flame, panel.histogram):
        image = view.grab().toImage()
        corner = image.pixelColor(image.width() - 3, image.height() - 3)
        assert corner == view.palette().color(QPalette.ColorRole.Base) and corner.lightness() < 60, corner.name()


def test_a_register_pointing_into_a_module_is_readable_in_either_theme(qtbot, themed) -> None:
    """The demo crash's registers that point into a module are tinted; their text stays readable when the
    report was opened under either theme and the theme switched afterwards."""
    from fxscope.app.crash.view import CrashView
    from fxscope.resources import DEMO_CRASH_LOG

    for opened in (DARK, LIGHT):
        themed(opened)
        view = CrashView()
        qtbot.addWidget(view)
        view.open_log(DEMO_CRASH_LOG)
        table = view.registers
        cells = [table.item(r, c) for r in range(table.rowCount()) for c in range(table.columnCount())]
        tinted_cells = [c for c in cells if c is not None and c.background().style() != Qt.BrushStyle.NoBrush]
        assert tinted_cells, "the demo's RIP and RDI point into crashdemo"
        assert all(c.background().color() == QColor(TINTS["markup"][opened is DARK]) for c in tinted_cells)
        for now in (DARK, LIGHT):
            themed(now)
            assert all(contrast_ratio(c.foreground().color(), c.background().color()) >= 4.5 for c in tinted_cells)
