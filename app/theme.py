"""Light and dark themes: the Qt palette of the window and the colours the timeline paints with.

The widgets take the palette (Fusion style, so that every platform honours it); the timeline's own
drawing (backgrounds, grid, axis text, the pinned block, process summaries) reads :class:`Theme`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication


@dataclass(frozen=True)
class Theme:
    name: str
    window: str
    base: str
    alt_base: str
    text: str
    button: str
    highlight: str
    highlight_text: str
    plot_background: str
    overview_background: str
    grid: str
    axis_text: str
    pinned_background: str
    header_background: str
    summary: str  # the busy-time bars of a collapsed process
    match: str  # outline of search matches on the tracks
    link: str
    mark: str  # instant marks and flow arrows (near-black on light, near-white on dark)
    density: str  # the overview strip's event density


LIGHT = Theme(
    name="light", window="#efeff1", base="#ffffff", alt_base="#f5f6f8", text="#1b1b1f", button="#e9e9ec",
    highlight="#3b6fd6", highlight_text="#ffffff", plot_background="#ffffff", overview_background="#f4f5f7",
    grid="#ececef", axis_text="#303036", pinned_background="#f3f6fb", header_background="#eef0f4",
    summary="#6b7a90", match="#f5b400", link="#1f5bbf", mark="#222222",
    density="#9aa7b8",
)  # fmt: skip
DARK = Theme(
    name="dark", window="#202124", base="#17181a", alt_base="#232427", text="#e6e6e8", button="#2c2d31",
    highlight="#4f7fdc", highlight_text="#ffffff", plot_background="#17181a", overview_background="#232427",
    grid="#2c2d31", axis_text="#d0d0d4", pinned_background="#1f2430", header_background="#26282c",
    summary="#8fa3bf", match="#ffd24a", link="#8ab4f8", mark="#d8d8dc",
    density="#3c4757",
)  # fmt: skip
THEMES = {t.name: t for t in (LIGHT, DARK)}

#: tints under text that mark a row or a cell, on a light base and on a dark one. Each comes with its theme's
#: text colour (:func:`tinted`), so a cell tinted under one theme stays readable after a switch; every pair,
#: and the severity colours below on them, keeps a contrast of 4.5:1 or more (tests/app/test_theme_tints.py)
TINTS: dict[str, tuple[str, str]] = {
    "markup": ("#fff4c2", "#4a3f14"),  # a log record of a crash report; a register pointing into a module
    "worse": ("#f6d5d1", "#5c2723"),  # a regression (Compare)
    "better": ("#d5f0dc", "#1e4a2b"),  # an improvement
}
#: log severities' text colours on a light base and on a dark one (the rest: the theme's text)
SEVERITY_COLOURS: dict[str, tuple[str, str]] = {
    "WARN": ("#8f5200", "#f2b366"),
    "ERROR": ("#b71c1c", "#ff9c94"),
    "FATAL": ("#b71c1c", "#ff9c94"),
    "DEBUG": ("#5f5f66", "#b0b0b8"),
    "TRACE": ("#5f5f66", "#b0b0b8"),
}


def palette(theme: Theme) -> QPalette:
    """The Qt palette of ``theme`` (all colour groups; disabled text dimmed)."""
    p = QPalette()
    role = QPalette.ColorRole
    for r, colour in (
        (role.Window, theme.window), (role.WindowText, theme.text), (role.Base, theme.base),
        (role.AlternateBase, theme.alt_base), (role.Text, theme.text), (role.Button, theme.button),
        (role.ButtonText, theme.text), (role.Highlight, theme.highlight),
        (role.HighlightedText, theme.highlight_text), (role.ToolTipBase, theme.base),
        (role.ToolTipText, theme.text), (role.Link, theme.link), (role.PlaceholderText, "#8a8a90"),
    ):  # fmt: skip
        p.setColor(r, QColor(colour))
    p.setColor(QPalette.ColorGroup.Disabled, role.Text, QColor("#8a8a90"))
    p.setColor(QPalette.ColorGroup.Disabled, role.WindowText, QColor("#8a8a90"))
    return p


def is_dark(p: QPalette | None = None) -> bool:
    """Whether ``p`` (the application's palette by default) draws light text on a dark base: the dark theme,
    or a dark system palette."""
    if p is None:
        p = QApplication.palette()
    return p.color(QPalette.ColorRole.Base).lightness() < 128


def contrast_ratio(a: QColor, b: QColor) -> float:
    """The WCAG 2 contrast ratio of two colours (1: the same; 21: black on white; 4.5: the least for text),
    by which the tints and text colours here were chosen."""

    def luminance(c: QColor) -> float:
        r, g, b = ((x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4) for x in (c.redF(), c.greenF(), c.blueF()))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def tinted(name: str, dark: bool | None = None) -> tuple[QColor, QColor]:
    """The background of tint ``name`` (:data:`TINTS`) and the text colour that goes with it, for a dark or a
    light theme (None: the application's palette decides)."""
    dark = is_dark() if dark is None else dark
    return QColor(TINTS[name][dark]), QColor((DARK if dark else LIGHT).text)


def severity_colour(name: str, dark: bool | None = None) -> QColor | None:
    """The text colour of log severity ``name`` on the theme's base (None: the theme's own text colour)."""
    pair = SEVERITY_COLOURS.get(name)
    if pair is None:
        return None
    return QColor(pair[is_dark() if dark is None else dark])


def apply_theme(theme: Theme) -> None:
    """Give the application ``theme``'s palette (Fusion style). Open timelines are told apart."""
    app = QApplication.instance()
    if app is None:
        return
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    app.setPalette(palette(theme))
