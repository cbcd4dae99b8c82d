"""The Notes tab of a trace: named bookmarks with text (click one to go there), "Copy link", and the keeper
of the sidecar ``TRACE.fxscope.json`` (:mod:`fxscope.core.analysis.notes`): pins, the marked span, bookmarks, the
track filter and the view range are restored when the trace opens and saved when its tab closes.

A sidecar is written only once there is something to keep (a pin, a mark, a bookmark, a track filter) or
when one exists already, so opening a trace leaves nothing beside it. A sidecar that cannot be used is a message; the
trace opens without its notes. A failed write is a message too. Notes are not kept for the files that ship
with fxscope (the bundled demo: its directory may be read-only, and it is everyone's), nor at all when
``FXSCOPE_NO_NOTES=1`` (the test suite sets it, so that tests pinning tracks in the corpus's traces leave no
sidecars in the repository)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from fxscope.app.timeline.details import format_ns
from fxscope.core.analysis.notes import (
    Bookmark,
    Notes,
    ViewLink,
    load_notes,
    make_link,
    save_notes,
    sidecar_path,
)


def notes_enabled(path: str) -> bool:
    """Whether notes are kept for ``path`` (see the module docstring)."""
    import os
    from pathlib import Path

    from fxscope import resources

    if os.environ.get("FXSCOPE_NO_NOTES") == "1":
        return False
    bundled = Path(resources.__file__).resolve().parent
    return bundled not in Path(path).resolve().parents


def apply_link(tab, link: ViewLink | None) -> None:
    """Show ``link``'s range and select its slice (by thread koid and start) in ``tab``'s timeline; a slice
    that is not in the trace is a message in the tab's Notes panel, not an error."""
    if link is None or not hasattr(tab, "timeline"):
        return
    tl = tab.timeline
    if link.range:
        tl.set_range_ns(*link.range)
    if link.select:
        import numpy as np

        tid, ts, depth = link.select
        s = tl.model.slices
        threads = np.flatnonzero(tl.model.cols.threads_tid == tid)
        rows = np.flatnonzero((s.ts == ts) & np.isin(s.thread, threads) & ((s.depth == depth) | (depth < 0)))
        if len(rows):
            tl.select(int(rows[0]))
        elif getattr(tab, "notes", None) is not None:
            tab.notes.message.emit(f"No slice of thread {tid} starts at {ts} ns")


class NotesPanel(QWidget):
    """See the module docstring. ``message(text)``: something for the status bar."""

    message = Signal(str)

    def __init__(self, timeline, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self.model = timeline.model
        self.path = path
        self.bookmarks: list[Bookmark] = []
        self.loaded_message: str | None = None
        self.enabled = notes_enabled(path)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("Bookmark name")
        self.text_edit = QLineEdit()
        self.text_edit.setPlaceholderText("Text (optional)")
        add = QPushButton("Add bookmark")
        add.clicked.connect(lambda: self.add_bookmark(self.name_edit.text(), self.text_edit.text()))
        remove = QPushButton("Remove")
        remove.clicked.connect(self.remove_selected)
        link = QPushButton("Copy link")
        link.clicked.connect(self.copy_link)
        row = QHBoxLayout()
        for w in (self.name_edit, self.text_edit, add, remove, link):
            row.addWidget(w)
        self.list = QListWidget()
        self.list.itemClicked.connect(self._clicked)
        self.hint = QLabel(f"Pins, the marked span, bookmarks, the track filter and the view are kept in "
                           f"{sidecar_path(path)}"
                           if self.enabled else "Notes are not kept for this file (bundled with fxscope, or "
                           "FXSCOPE_NO_NOTES=1)")  # fmt: skip
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.hint)

    # ------------------------------------------------------------------ bookmarks
    def _here(self) -> int:
        """Where a new bookmark goes: the selection's start, else the middle of the view."""
        span = self.timeline.selection_span()
        if span is not None:
            return int(span[0])
        a, b = self.timeline.visible_range_ns()
        return (a + b) // 2

    def add_bookmark(self, name: str, text: str = "", ts_ns: int | None = None) -> Bookmark:
        mark = Bookmark(self._here() if ts_ns is None else int(ts_ns), name.strip() or "bookmark", text)
        self.bookmarks.append(mark)
        self.bookmarks.sort(key=lambda b: b.ts_ns)
        self._fill()
        self.name_edit.clear()
        self.text_edit.clear()
        return mark

    def remove_selected(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.bookmarks):
            del self.bookmarks[row]
            self._fill()

    def _fill(self) -> None:
        self.list.clear()
        for b in self.bookmarks:
            item = QListWidgetItem(f"{format_ns(b.ts_ns - self.model.start_ns)}  {b.name}"
                                   + (f" — {b.text}" if b.text else ""))  # fmt: skip
            item.setData(Qt.ItemDataRole.UserRole, b.ts_ns)
            self.list.addItem(item)

    def _clicked(self, item: QListWidgetItem) -> None:
        self.timeline.show_time(int(item.data(Qt.ItemDataRole.UserRole)))

    # ------------------------------------------------------------------ link
    def link(self) -> str:
        """``fxscope`` argument for this trace at the current view, with the selected slice."""
        select = None
        row = getattr(self.timeline, "selected_row", -1)
        if row >= 0:
            s = self.model.slices
            thread = int(s.thread[row])
            tid = int(self.model.cols.threads_tid[thread]) if thread >= 0 else 0
            select = (tid, int(s.ts[row]), int(s.depth[row]))
        return make_link(self.path, self.timeline.visible_range_ns(), select)

    def copy_link(self) -> str:
        text = self.link()
        QGuiApplication.clipboard().setText(text)
        self.message.emit(f"Copied: fxscope {text}")
        return text

    # ------------------------------------------------------------------ sidecar
    def capture(self) -> Notes:
        tl = self.timeline
        marks = [tuple(tl.measured)] if getattr(tl, "measured", None) else []
        return Notes(pins=[list(k) for k in tl.pinned], marks=marks, bookmarks=list(self.bookmarks),
                     track_filter=self.track_filter(), view=tuple(tl.visible_range_ns()))  # fmt: skip

    def track_filter(self) -> str:
        """The text in the timeline's track filter box, as typed (the timeline matches it case-folded)."""
        return self.timeline.filter_box.text().strip()

    def restore(self) -> Notes | None:
        """Apply the sidecar's notes (a message when it cannot be used)."""
        if not self.enabled:
            return None
        notes, message = load_notes(self.path)
        self.loaded_message = message
        if message:
            self.message.emit(message)
        if notes is None:
            return None
        tl = self.timeline
        keys = {lane.key for lane in tl.lanes()}
        for key in notes.pins:
            if tuple(key) in keys:
                tl.pin(tuple(key))
        if notes.track_filter:  # before the view: filtering re-lays the tracks out
            tl.filter_box.setText(notes.track_filter)
        if notes.view:
            tl.set_range_ns(*notes.view)
        for a, b in notes.marks[:1]:
            (_x0, _x1), (y0, _y1) = tl.plot.getViewBox().viewRange()
            tl.show_span(a, b, y0 + 1.0)
        self.bookmarks = sorted(notes.bookmarks, key=lambda b: b.ts_ns)
        self._fill()
        return notes

    def save(self) -> str | None:
        """Write the sidecar when there is something to keep (or one exists); returns its path."""
        import os

        if not self.enabled:
            return None
        if self.loaded_message:  # an unusable sidecar (another file's, corrupt) is not overwritten
            self.message.emit(f"{self.loaded_message}; notes not saved")
            return None
        notes = self.capture()
        if not (notes.pins or notes.marks or notes.bookmarks or notes.track_filter) and not os.path.exists(
            sidecar_path(self.path)
        ):
            return None
        try:
            return save_notes(self.path, notes)
        except OSError as exc:
            self.message.emit(f"Cannot save notes to {sidecar_path(self.path)}: {exc.strerror or exc}")
            return None
