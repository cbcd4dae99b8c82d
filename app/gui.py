"""GUI entry point: ``fxscope [FILE...]`` opens the main window (the bundled demo when no file is given)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def application():
    """The QApplication, created once with the names QSettings and the desktop integration use."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setOrganizationName("fxscope")
        app.setApplicationName("fxscope")
    return app


def build_window(paths: Sequence[str]):
    from app.main_window import MainWindow
    from resources import DEMO_TRACE

    window = MainWindow()
    for path in list(paths) or [str(DEMO_TRACE)]:
        window.open_path(path)
    return window


def launch(paths: Sequence[str]) -> int:
    app = application()
    window = build_window(paths)
    window.resize(1400, 850)
    window.show()
    return app.exec()
