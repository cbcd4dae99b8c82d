"""What packaging relies on in the app: icon, one settings file, window geometry kept, version from pyproject."""

from __future__ import annotations

import os
import re
from pathlib import Path

from PySide6.QtCore import QSize

from fxscope.app import gui, version
from fxscope.app.main_window import MainWindow
from fxscope.resources import ICON_SIZES

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_application_has_the_bundled_icon_at_every_size(qtbot) -> None:
    app = gui.application()
    icon = app.windowIcon()
    assert not icon.isNull()
    assert sorted(s.width() for s in icon.availableSizes()) == sorted(ICON_SIZES)
    image = icon.pixmap(QSize(64, 64)).toImage()
    assert image.pixelColor(32, 32).alpha() == 255 and image.pixelColor(0, 0).alpha() == 0  # opaque tile, clear corner
    assert (app.organizationName(), app.applicationName()) == ("fxscope", "fxscope")


def test_settings_live_in_one_xdg_file(qtbot) -> None:
    gui.application()
    path = Path(gui.settings().fileName())
    assert path == Path(os.environ["XDG_CONFIG_HOME"]) / "fxscope" / "fxscope.conf"


def test_window_geometry_is_restored_from_settings(qtbot, monkeypatch) -> None:
    monkeypatch.setenv("FXSCOPE_NEW_INSTANCE", "1")
    app = gui.application()
    monkeypatch.setattr(app, "exec", lambda: 0)
    saved = MainWindow()
    qtbot.addWidget(saved)
    saved.resize(700, 500)  # inside the offscreen platform's 800x600 screen
    gui.settings().setValue("window/geometry", saved.saveGeometry())
    windows: list[MainWindow] = []
    monkeypatch.setattr(gui, "build_window", lambda paths, **_: windows.append(MainWindow()) or windows[-1])
    try:
        assert gui.launch([]) == 0
        qtbot.addWidget(windows[0])
        assert windows[0].size() == QSize(700, 500)
    finally:
        gui.settings().remove("window/geometry")


def test_version_comes_from_pyproject() -> None:
    declared = re.search(r'^version = "([^"]+)"', (REPO_ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert version() == declared
