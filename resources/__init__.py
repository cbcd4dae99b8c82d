"""Bundled resources: icons and the demo (trace, crash log with its debug files and sources).

Paths are computed from this file so they work alike from a source tree, an installed wheel and a
PyInstaller bundle (which unpacks the package data next to the frozen modules).
"""

from __future__ import annotations

from pathlib import Path

RESOURCES_DIR = Path(__file__).resolve().parent
DEMO_DIR = RESOURCES_DIR / "demo"
DEMO_TRACE = DEMO_DIR / "demo.fxt"
DEMO_CRASH_LOG = DEMO_DIR / "crash.log"
ICONS_DIR = RESOURCES_DIR / "icons"
ICON_SVG = ICONS_DIR / "fxscope.svg"
#: square sizes of the committed PNG renderings of ICON_SVG (packaging/render-icons.py writes them)
ICON_SIZES = (16, 32, 48, 64, 128, 256)


def icon_png(size: int) -> Path:
    """The PNG rendering of the application icon at ``size`` x ``size`` pixels."""
    return ICONS_DIR / f"fxscope-{size}.png"
