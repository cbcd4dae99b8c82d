"""The bar above the timeline: the search box and its match count, the track filter, and Collapse all /
Expand all. It only lays the controls out; the timeline connects them (search, filter, collapse)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget


class SearchBar(QWidget):
    """The search box (``search_box``, its count in ``search_status``), the track filter (``filter_box``)
    and the ``collapse_button`` and ``expand_button``. Emits ``escaped`` when Esc is pressed in a box."""

    escaped = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 2, 4, 2)
        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText(
            "Search slices, async spans, instants, counters, categories, logs  (Enter: next, Shift+Enter: previous; Ctrl+F)"
        )
        self.search_box.setClearButtonEnabled(True)
        self.search_status = QLabel("")
        self.filter_box = QLineEdit()
        self.filter_box.setPlaceholderText("Filter tracks")
        self.filter_box.setToolTip("Show only the tracks whose process or thread name or id contains the text")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.setMaximumWidth(260)
        self.collapse_button = QToolButton()
        self.collapse_button.setText("Collapse all")
        self.expand_button = QToolButton()
        self.expand_button.setText("Expand all")
        row.addWidget(self.search_box, 1)
        row.addWidget(self.search_status)
        row.addWidget(self.filter_box)
        row.addWidget(self.collapse_button)
        row.addWidget(self.expand_button)
        for box in (self.search_box, self.filter_box):  # Esc hands the keys back to the timeline
            box.installEventFilter(self)

    def clear_filter(self) -> None:
        """Empty the track filter box without telling the timeline (it cleared its filter itself)."""
        self.filter_box.blockSignals(True)
        self.filter_box.clear()
        self.filter_box.blockSignals(False)

    def eventFilter(self, obj, event) -> bool:
        """Esc in the search or filter box gives the focus back to the timeline (W zooms again rather than
        typing a W); the box keeps its text and matches."""
        if event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Escape:
            self.escaped.emit()
            return True
        return super().eventFilter(obj, event)
