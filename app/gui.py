"""GUI entry point: ``fxscope [FILE...]`` opens the main window (the bundled demo when no file is given).

A second ``fxscope FILE`` while a window is open hands FILE to that window (``app/single_instance.py``),
which is what a desktop file's ``Exec=fxscope %F`` needs to behave like other viewers.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from fxscope.app.pyside_source_scan import scan_sources_uncached
from fxscope.app.settings_store import APPLICATION, ORGANIZATION, settings
from fxscope.app.ui_thread_gc import collect_on_ui_thread

# before the window's modules are imported: PySide6's check of each would keep its source (see there)
scan_sources_uncached()

#: the desktop file's base name, so Wayland compositors match windows to packaging/linux/*.desktop
DESKTOP_FILE = "io.github.fxscope.fxscope"


def application():
    """The QApplication, created once with the names QSettings and the desktop integration use."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    if app.applicationName() != APPLICATION:  # also an instance made by someone else (pytest-qt, an embedder)
        app.setOrganizationName(ORGANIZATION)
        app.setApplicationName(APPLICATION)
        app.setDesktopFileName(DESKTOP_FILE)
        app.setWindowIcon(app_icon())
    return app


def app_icon():
    """The application icon from the bundled renderings (every size, so no size is scaled at run time)."""
    from PySide6.QtGui import QIcon

    from fxscope.resources import ICON_SIZES, icon_png

    icon = QIcon()
    for size in ICON_SIZES:
        icon.addFile(str(icon_png(size)))
    return icon


def build_window(paths: Sequence[str], background: bool = False):
    """The main window with ``paths`` (the demo when none) opening; ``background`` loads traces in a
    thread (the interactive app), without it they are open when this returns (screenshots, tests)."""
    from fxscope.app.main_window import MainWindow
    from fxscope.resources import DEMO_TRACE

    window = MainWindow()
    for path in list(paths) or [str(DEMO_TRACE)]:
        window.open_path(path, background=background)
    return window


def open_in(window, paths: Sequence[str]) -> None:
    """Open files sent by another ``fxscope`` as new tabs and bring the window to the front."""
    for path in paths:
        window.open_path(path, background=True)
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()


#: Qt platform plugins that need no display server
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "linuxfb", "eglfs", "vkkhrdisplay")


def display_problem(environ=None) -> str | None:
    """Why the window cannot open here (no display server to talk to), or None. Qt itself aborts the
    process (``could not connect to display``, a core dump) where this returns a message."""
    import os

    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux") and "bsd" not in sys.platform:
        return None  # Windows and macOS always have their window system
    platform = env.get("QT_QPA_PLATFORM", "").split(":", 1)[0].split(";", 1)[0]
    if platform in HEADLESS_PLATFORMS:
        return None
    x11, wayland = bool(env.get("DISPLAY")), bool(env.get("WAYLAND_DISPLAY"))
    if platform == "xcb" and not x11:
        return "cannot open the window: QT_QPA_PLATFORM=xcb but DISPLAY is not set"
    if platform.startswith("wayland") and not wayland:
        return "cannot open the window: QT_QPA_PLATFORM=wayland but WAYLAND_DISPLAY is not set"
    if not platform and not (x11 or wayland):
        return ("cannot open the window: no display (DISPLAY and WAYLAND_DISPLAY are not set); the commands "
                "work without one (fxscope --help), and fxscope screenshot renders offscreen")
    return None


def launch(paths: Sequence[str], new_window: bool = False) -> int:
    from fxscope.app import single_instance
    from fxscope.app.cli_error import CliError

    problem = display_problem()
    if problem:
        raise CliError(problem)
    app = application()
    collect_on_ui_thread()  # (never on the loader's or the build's threads: see app/ui_thread_gc.py)
    server = None
    if single_instance.enabled(new_window):
        if single_instance.send_to_running(paths):
            return 0  # the running window took the files
        server = single_instance.InstanceServer(app)
        if not server.listen():
            server = None  # could not listen (e.g. a racing start): run on our own, still correct
    window = build_window(single_instance.absolute_paths(paths), background=True)
    store = settings()
    geometry = store.value("window/geometry")
    if geometry is None or not window.restoreGeometry(geometry):
        window.resize(1400, 850)
    if server is not None:
        server.pathsReceived.connect(lambda received: open_in(window, received))
    app.aboutToQuit.connect(lambda: store.setValue("window/geometry", window.saveGeometry()))
    window.show()
    return app.exec()
