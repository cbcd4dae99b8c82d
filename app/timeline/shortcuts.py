"""The timeline's keys and mouse gestures, listed where a user asks for them (``?``)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

#: (keys, what they do), in the order a new user needs them; Perfetto's keys where Perfetto has one
SHORTCUTS: list[tuple[str, str]] = [
    ("W / S", "zoom in / out around the pointer (around the centre when the pointer is elsewhere)"),
    ("A / D", "pan left / right"),
    ("Ctrl+wheel", "zoom around the pointer"),
    ("Shift+wheel", "pan"),
    ("wheel", "scroll the tracks"),
    ("drag", "pan"),
    ("click", "select a slice, span, CPU slice, thread state, instant, log record or counter sample"),
    ("F", "fit the selection (the whole trace with nothing selected)"),
    ("M", "mark the selection's time span, with its duration"),
    ("[ / ]", "follow the selected slice's incoming / outgoing flow"),
    ("Shift+drag", "measure between two points, snapping to slice edges"),
    ("Ctrl+drag", "select an area: the aggregate table of its tracks and time range"),
    ("Esc", "clear the selection and the marks"),
    ("Ctrl+F", "search slices (names, categories, arguments), async spans, instants, counters and log text; "
               "Enter / Shift+Enter: next / previous match; Esc: back to the timeline"),
    ("right-click a track", "pin the track (a thread with its state strip), or its whole process, to the top"),
    ("click a process header", "collapse or expand the process"),
    ("Ctrl+Shift+C / Ctrl+Shift+E", "collapse / expand every process"),
    ("Ctrl+Shift+F", "filter the tracks by process or thread name or id"),
    ("Ctrl+0", "reset the zoom: the whole trace"),
    ("?", "this list"),
]


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Timeline keys and mouse")
        self.setModal(False)
        rows = "".join(
            f"<tr><td style='padding:2px 14px 2px 2px'><b>{html.escape(k)}</b></td><td>{html.escape(v)}</td></tr>"
            for k, v in SHORTCUTS
        )
        label = QLabel(f"<table>{rows}</table>")
        label.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
