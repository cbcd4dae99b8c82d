"""Trace A's timeline above trace B's (the Compare tab), their time axes aligned at a chosen moment: the
starts, the slice selected in each, the mark (measured span) in each, or the first or the longest slice
of the name selected in the comparison table. Panning or zooming one moves the other by the same amount, so the two
runs are read side by side. The offset arithmetic is :mod:`fxscope.core.analysis.alignment`."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from fxscope.app.timeline.details import format_ns
from fxscope.app.timeline.widget import TimelineWidget
from fxscope.core.analysis.alignment import Alignment, first_slice_named, longest_slice_named, starts

#: what the two time axes can be aligned at (the combo box's entries, in order)
ANCHORS = ("starts", "slices", "marks", "first", "longest")
ANCHOR_LABELS = ("The traces' starts", "The slice selected in each", "The mark (M) in each",
                 "The first slice of the selected name", "The longest slice of the selected name")  # fmt: skip


def _pane(title: str, timeline: TimelineWidget) -> QWidget:
    pane = QWidget()
    layout = QVBoxLayout(pane)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    label = QLabel(title)
    label.setStyleSheet("font-weight: bold; padding: 1px 4px")
    layout.addWidget(label)
    layout.addWidget(timeline, 1)
    return pane


class AlignedTimelines(QWidget):
    """See the module docstring. ``name`` is the name an alignment at the first or longest slice of "the
    selected name" uses (the comparison table's selection)."""

    def __init__(self, model_a, model_b, label_a: str, label_b: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.a = TimelineWidget(model_a)
        self.b = TimelineWidget(model_b)
        self.alignment = Alignment()
        self.name = ""
        self._syncing = False
        self.anchor = QComboBox()
        self.anchor.addItems(ANCHOR_LABELS)
        self.anchor.setToolTip("Which moment of A is drawn above which moment of B")
        button = QPushButton("Align")
        button.clicked.connect(lambda: self.align(ANCHORS[self.anchor.currentIndex()]))
        self.status = QLabel("")
        bar = QHBoxLayout()
        bar.setContentsMargins(2, 0, 2, 0)
        for w in (QLabel("Align the time axes at:"), self.anchor, button):
            bar.addWidget(w)
        bar.addWidget(self.status, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(_pane(f"A: {label_a}", self.a))
        split.addWidget(_pane(f"B: {label_b}", self.b))
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(split, 1)
        self.a.plot.getViewBox().sigXRangeChanged.connect(lambda *_: self._follow(self.a))
        self.b.plot.getViewBox().sigXRangeChanged.connect(lambda *_: self._follow(self.b))
        self.align("starts")

    def _follow(self, moved: TimelineWidget) -> None:
        """The other timeline shows the moved one's range shifted by the offset."""
        if self._syncing:
            return
        self._syncing = True
        try:
            if moved is self.a:
                self.b.set_range_ns(*self.alignment.b_range(self.a.visible_range_ns()))
            else:
                self.a.set_range_ns(*self.alignment.a_range(self.b.visible_range_ns()))
        finally:
            self._syncing = False

    def _open_limits(self) -> None:
        """Let each timeline pan over the span of both traces: a timeline stops panning a little past its own
        trace's ends, which would clamp the follower's range and break the alignment."""
        al = self.alignment
        a, b = self.a.model, self.b.model
        lo = min(a.start_ns, al.a_range((b.start_ns, b.end_ns))[0])
        hi = max(a.end_ns, al.a_range((b.start_ns, b.end_ns))[1])
        pad = 0.05 * (hi - lo)
        for tl, (t0, t1) in ((self.a, (lo, hi)), (self.b, al.b_range((lo, hi)))):
            o = tl.model.start_ns
            tl.plot.getViewBox().setLimits(xMin=(t0 - o - pad) / 1e9, xMax=(t1 - o + pad) / 1e9)

    def _moments(self, anchor: str) -> tuple[int, int] | str:
        """(A's moment, B's moment) for ``anchor``, or why there is none."""
        a, b = self.a, self.b
        if anchor == "starts":
            return a.model.start_ns, b.model.start_ns
        if anchor == "slices":
            if a.selected_row < 0 or b.selected_row < 0:
                return "Select a slice in both timelines first (click one in A and one in B)"
            return int(a.model.slices.ts[a.selected_row]), int(b.model.slices.ts[b.selected_row])
        if anchor == "marks":
            if not a.measured or not b.measured:
                return "Mark a span in both timelines first (drag with Shift, or select a slice and press M)"
            return int(a.measured[0]), int(b.measured[0])
        if not self.name:
            return "Select a name in the comparison table first"
        find = first_slice_named if anchor == "first" else longest_slice_named
        ra, rb = find(a.model, self.name), find(b.model, self.name)
        if ra < 0 or rb < 0:
            return f"No slice named {self.name} in {'A' if ra < 0 else 'B'}"
        for tl, row in ((a, ra), (b, rb)):
            tl.reveal("slice", row)  # its track scrolled into view
            tl.select(row)
        return int(a.model.slices.ts[ra]), int(b.model.slices.ts[rb])

    def align(self, anchor: str) -> Alignment | None:
        """Align the axes at ``anchor`` (one of :data:`ANCHORS`): A keeps its zoom, centred on its moment
        (the whole trace for "starts"), and B follows. None, with a message, when that moment is missing."""
        moments = self._moments(anchor)
        if isinstance(moments, str):
            self.status.setText(moments)
            return None
        ta, tb = moments
        self.alignment = Alignment.at(ta, tb)
        self._open_limits()
        self.anchor.setCurrentIndex(ANCHORS.index(anchor))
        if anchor == "starts":
            end = max(self.a.model.end_ns, self.alignment.a_range((0, self.b.model.end_ns))[1])
            self.a.set_range_ns(self.a.model.start_ns, end)
        else:
            x0, x1 = self.a.visible_range_ns()
            half = max((x1 - x0) // 2, 1)
            self.a.set_range_ns(ta - half, ta + half)
        self._follow(self.a)
        shift = self.alignment.offset_ns - starts(self.a.model, self.b.model).offset_ns
        self.status.setText(f"B shifted by {'+' if shift >= 0 else '-'}{format_ns(abs(shift))} against the starts")
        return self.alignment
