"""The aggregate table of an area selection: per slice name, count and times over the selected tracks."""

from __future__ import annotations

from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from app.timeline.details import format_ns
from core.trace.model import TraceModel
from core.trace.query import aggregate


class _NumberItem(QTableWidgetItem):
    """Sorts by the number it shows, not by its text."""

    def __init__(self, text: str, value: float) -> None:
        super().__init__(text)
        self.value = value

    def __lt__(self, other) -> bool:
        return self.value < getattr(other, "value", 0)


class AggregatePanel(QWidget):
    COLUMNS = ("Name", "Count", "Wall in area", "Wall total", "Self total", "Average", "Min", "Max")

    def __init__(self, model: TraceModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.title = QLabel("Ctrl+drag across tracks on the timeline to aggregate an area.")
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(self.COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setSortingEnabled(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.title)
        layout.addWidget(self.table)
        self.rows: list[dict] = []

    def show_area(self, t0: int, t1: int, threads: list) -> None:
        self.rows = aggregate(self.model, t0, t1, threads)
        self.title.setText(
            f"{sum(r['count'] for r in self.rows)} slices on {len(threads)} tracks, "
            f"{format_ns(t0 - self.model.start_ns)} .. {format_ns(t1 - self.model.start_ns)} ({format_ns(t1 - t0)})"
        )
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(self.rows))
        for i, r in enumerate(self.rows):
            cells = [QTableWidgetItem(r["name"]), _NumberItem(str(r["count"]), r["count"])]
            for key in ("total", "wall_total", "self_total", "avg", "min", "max"):
                cells.append(_NumberItem(format_ns(int(r[key])), float(r[key])))
            for col, item in enumerate(cells):
                self.table.setItem(i, col, item)
        self.table.setSortingEnabled(True)
