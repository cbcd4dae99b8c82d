"""The main window: a tab per opened trace, each a timeline with its details panel."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox, QSplitter, QTabWidget, QWidget

from app.timeline.details import DetailsPanel
from app.timeline.widget import TimelineWidget
from core.trace.model import TraceModel


class TraceTab(QSplitter):
    """A timeline over a details panel for one trace."""

    def __init__(self, model: TraceModel, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.model = model
        self.timeline = TimelineWidget(model)
        self.details = DetailsPanel(model)
        self.addWidget(self.timeline)
        self.addWidget(self.details)
        self.setStretchFactor(0, 4)
        self.setStretchFactor(1, 1)
        self.timeline.sliceSelected.connect(self.details.show_row)


def is_crash_log(path: str) -> bool:
    """A text log (by suffix, or markup in its first 64 KiB) rather than an FXT trace."""
    if Path(path).suffix.lower() in (".log", ".txt"):
        return True
    with open(path, "rb") as fh:
        head = fh.read(65536)
    return not head.startswith(b"\x10\x00\x04\x46\x78\x54\x16\x00") and b"{{{" in head


def load_model(path: str) -> TraceModel:
    from formats.fxt.reader import read_fxt

    return TraceModel(read_fxt(path))


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("fxscope")
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self.tabs.removeTab)
        self.setCentralWidget(self.tabs)
        self.setAcceptDrops(True)
        menu = self.menuBar().addMenu("&File")
        open_action = QAction("&Open…", self)
        open_action.setShortcut(QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self._open_dialog)
        menu.addAction(open_action)
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        menu.addAction(quit_action)

    def open_path(self, path: str) -> bool:
        """Open a trace or a crash log in a new tab; a file that fails shows a message, the window stays."""
        try:
            if is_crash_log(path):
                from app.crash.view import CrashView

                view = CrashView()
                view.open_log(path)
                index = self.tabs.addTab(view, Path(path).name)
                self.tabs.setCurrentIndex(index)
                return True
            model = load_model(path)
        except Exception as exc:  # any reader failure is a message, never a crashed window
            QMessageBox.warning(self, "fxscope", f"Cannot open {path}:\n{exc}")
            return False
        tab = TraceTab(model)
        index = self.tabs.addTab(tab, Path(path).name)
        self.tabs.setCurrentIndex(index)
        tab.timeline.setFocus()
        return True

    def current_tab(self) -> TraceTab | None:
        tab = self.tabs.currentWidget()
        return tab if isinstance(tab, TraceTab) else None

    def _open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open trace or crash log", "", "Fuchsia traces (*.fxt);;Crash logs (*.log *.txt);;All files (*)"
        )
        if path:
            self.open_path(path)

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt API
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt API
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
