#!/usr/bin/env python3
"""Render resources/icons/fxscope.svg to the PNG sizes desktops look up (hicolor 16..256).

The SVG is the one source of the icon; the PNGs are committed because icon themes, the window icon on
platforms without an SVG image plugin and the PyInstaller bundle all want raster files, and rendering at
build time would make packaging depend on Qt's SVG module. Run it again after editing the SVG:

    .venv/bin/python packaging/render-icons.py [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fxscope.resources import ICON_SIZES, ICON_SVG, ICONS_DIR, icon_png  # noqa: E402 - after the path set-up


def render(svg: Path, size: int):
    """The icon as a size x size QImage with a transparent background."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():  # QSvgRenderer only warns; an empty icon must not be written
        raise SystemExit(f"render-icons: {svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ICONS_DIR, help="output directory (default: next to the SVG)")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    from fxscope.core.atomic_file import atomic_output

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    args.out.mkdir(parents=True, exist_ok=True)
    for size in ICON_SIZES:
        target = args.out / icon_png(size).name
        with atomic_output(target) as tmp:
            if not render(ICON_SVG, size).save(tmp, "PNG"):
                raise SystemExit(f"render-icons: could not write {target}")
        print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
