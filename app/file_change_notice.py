"""Noticing that an open trace's file changed on disk, and the bar that says so with a Reload button.

Why: a trace stays memory-mapped while open. When another program truncates it (a tracer re-run with the
same output path), the reads past its new end read zeros (:mod:`fxscope.formats.mapped_file`): the window
keeps running, but what it shows may be incomplete. A :class:`TraceFileWatch` per trace tab asks
:func:`~fxscope.core.trace.file_change.trace_file_change` when a ``QFileSystemWatcher`` signals the file (a
moment later, once a burst of writes settles) and when the window is activated (for platforms or
filesystems where the watcher says nothing); :class:`FileChangeBar`, above the tabs, shows the change of the
tab in front, non-modal, with Reload and Dismiss.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from fxscope.core.trace.file_change import trace_file_change
from fxscope.formats.mapped_file import FileChange

#: ms from a watcher signal to the check: a writer's burst of changes gives one check
SETTLE_MS = 150


class TraceFileWatch(QObject):
    """Watches the file of one open trace. ``changed(FileChange)`` when the check finds it differs from what
    was opened (again whenever the change differs from the one last signalled)."""

    changed = Signal(object)

    def __init__(self, cols, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.cols = cols
        mapped = getattr(cols, "mapped_file", None)
        #: the watched path (None: columns not mapped from a file the user named, e.g. a decompressed copy)
        self.path = getattr(mapped, "path", None)
        self.last: FileChange | None = None
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self.check)
        self._watcher = QFileSystemWatcher(self)
        if self.path is not None:
            self._watcher.addPath(self.path)
            self._watcher.fileChanged.connect(self._signalled)
            # (a rename over it also removes the path from the watcher: the parent folder says when it is back)
            self._watcher.addPath(os.path.dirname(os.path.abspath(self.path)))
            self._watcher.directoryChanged.connect(self._signalled)

    def _signalled(self, *_args) -> None:
        self._settle.start()

    def check(self) -> FileChange | None:
        """Compare the file with what was opened (two ``stat`` calls); signal a new change."""
        if self.path is None:
            return None
        if self.path not in self._watcher.files() and os.path.exists(self.path):
            self._watcher.addPath(self.path)  # replaced by a rename: watch the new file at the path
        change = trace_file_change(self.cols)
        if change is not None and change != self.last:
            self.last = change
            self.changed.emit(change)
        return change


class FileChangeBar(QFrame):
    """A strip above the tabs: the change of the trace in front, Reload (``reloadRequested``) and Dismiss."""

    reloadRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("fileChangeBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#fileChangeBar { background: #fff3cd; border: 1px solid #e0c060; }"
            " #fileChangeBar QLabel { color: #4a3b00; }"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.reload_button = QPushButton("Reload")
        self.reload_button.clicked.connect(self.reloadRequested)
        layout.addWidget(self.reload_button)
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.clicked.connect(self.hide)
        layout.addWidget(self.dismiss_button)
        self.hide()

    def show_change(self, change: FileChange | None) -> None:
        """Show ``change`` (None: hide the bar)."""
        if change is None:
            self.hide()
            return
        message = change.message()
        self.label.setText(message[:1].upper() + message[1:] + ".")
        self.show()
