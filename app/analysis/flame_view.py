"""An icicle flame graph of a :class:`~fxscope.core.analysis.call_tree.CallTree`: widths are total time, colours the
timeline's name colours, labels where they fit. Click a frame to select it (``frameClicked``), double-click
to zoom into it (double-click the top bar or press Esc to zoom out); frames whose name contains the search
text are drawn highlighted, the others faded."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QMouseEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from fxscope.app.analysis.flame_layout import FlameLayout, layout
from fxscope.app.timeline.details import format_ns
from fxscope.app.timeline.lane_item import PALETTE, colour_index
from fxscope.core.analysis.call_tree import CallTree
from fxscope.core.analysis.selection import name_text

ROW_PX = 18


class FlameGraphView(QWidget):
    """The icicle view (see the module docstring)."""

    frameClicked = Signal(int)  # node id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = None
        self.tree: CallTree | None = None
        self.lay: FlameLayout | None = None
        self.zoom_node = -1
        self.selected = -1
        self.search = ""
        self._names: list[str] = []
        self.colours: list[QColor] | None = None
        self.setMouseTracking(True)
        self.setMinimumHeight(120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)

    def set_tree(self, model, tree: CallTree, colours: list[QColor] | None = None) -> None:
        """Show ``tree``; ``colours`` (one per node) replace the name colours (the differential graph)."""
        self.model, self.tree = model, tree
        self.colours = colours
        self._names = [name_text(model, int(i)) for i in tree.name.tolist()]  # per node
        self.zoom_node, self.selected = -1, -1
        self.lay = layout(tree)
        self.update()

    def set_search(self, text: str) -> None:
        self.search = text.casefold()
        self.update()

    def matches(self) -> list[int]:
        """Nodes whose name contains the search text."""
        if not self.search:
            return []
        return [i for i, n in enumerate(self._names) if self.search in n.casefold()]

    def zoom_to(self, node: int) -> None:
        if self.tree is None:
            return
        self.zoom_node = node
        self.lay = layout(self.tree, node)
        self.update()

    def node_at(self, px: float, py: float) -> int:
        """The node drawn at widget pixel (px, py), or -1."""
        lay = self.lay
        if lay is None or not len(lay.x) or self.width() <= 0:
            return -1
        row = int(py // ROW_PX)
        f = px / self.width()
        hit = np.flatnonzero(lay.visible & (lay.row == row) & (lay.x <= f) & (lay.x + lay.w > f))
        return int(hit[0]) if len(hit) else -1

    def frame_rect(self, node: int) -> QRectF:
        lay = self.lay
        return QRectF(lay.x[node] * self.width(), lay.row[node] * ROW_PX, lay.w[node] * self.width(), ROW_PX - 1)

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        pal = self.palette()  # (the theme's: the frames' own colours are the same in both)
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        lay, tree = self.lay, self.tree
        if lay is None or tree is None or not len(lay.x):
            p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No slices in this selection")
            return
        width = self.width()
        fm = QFontMetrics(self.font())
        matches = set(self.matches())
        shown = np.flatnonzero(lay.visible & (lay.w * width >= 0.5) & (lay.row * ROW_PX < self.height()))
        for i in shown.tolist():  # nodes a half pixel or wider: bounded by the width times the rows
            rect = self.frame_rect(i)
            colour = QColor(PALETTE[colour_index(self._names[i])]) if self.colours is None else self.colours[i]
            if self.search and i not in matches:
                colour = colour.lighter(170)
            p.fillRect(rect, colour)
            if i == self.selected or i in matches:
                p.setPen(QPen(pal.color(QPalette.ColorRole.Text), 2 if i == self.selected else 1))
                p.drawRect(rect.adjusted(0.5, 0.5, -0.5, -0.5))
            if rect.width() > 30:
                light = self.colours is not None or (self.search and i not in matches)
                p.setPen(QColor("#202020" if light else "#ffffff"))
                label = fm.elidedText(self._names[i], Qt.TextElideMode.ElideRight, int(rect.width()) - 6)
                p.drawText(rect.adjusted(3, 0, -3, 0), Qt.AlignmentFlag.AlignVCenter, label)
        p.end()

    def describe(self, node: int) -> str:
        t = self.tree
        root = float(t.total[t.parent < 0].sum()) or 1.0
        return (f"{self._names[node]}\ntotal {format_ns(int(t.total[node]))} ({100 * t.total[node] / root:.1f}%)"
                f"\nself {format_ns(int(t.self_ns[node]))}\n{int(t.count[node])} slices")  # fmt: skip

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        node = self.node_at(event.position().x(), event.position().y())
        if node >= 0:
            QToolTip.showText(event.globalPosition().toPoint(), self.describe(node), self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        node = self.node_at(event.position().x(), event.position().y())
        if node >= 0:
            self.selected = node
            self.update()
            self.frameClicked.emit(node)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        node = self.node_at(event.position().x(), event.position().y())
        self.zoom_to(-1 if node < 0 or node == self.zoom_node else node)

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.zoom_to(-1)
            return
        super().keyPressEvent(event)
