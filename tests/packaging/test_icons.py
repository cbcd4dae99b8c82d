"""The committed icon PNGs are renderings of the SVG at every hicolor size (not stale after an SVG edit)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

from fxscope.resources import ICON_SIZES, icon_png

REPO_ROOT = Path(__file__).resolve().parents[2]


def _max_channel_difference(a: QImage, b: QImage) -> int:
    a = a.convertToFormat(QImage.Format.Format_RGBA8888)
    b = b.convertToFormat(QImage.Format.Format_RGBA8888)
    da, db = bytes(a.constBits()), bytes(b.constBits())
    return max(abs(x - y) for x, y in zip(da, db, strict=True))


def test_committed_pngs_match_a_fresh_rendering(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    subprocess.run([sys.executable, str(REPO_ROOT / "packaging" / "render-icons.py"), "--out", str(tmp_path)],
                   check=True, env=env, capture_output=True, timeout=60)
    for size in ICON_SIZES:
        committed, fresh = QImage(str(icon_png(size))), QImage(str(tmp_path / icon_png(size).name))
        assert (committed.width(), committed.height()) == (size, size)
        assert (fresh.width(), fresh.height()) == (size, size)
        assert _max_channel_difference(committed, fresh) <= 8, f"{icon_png(size).name} is stale: rerun render-icons.py"
        centre = committed.pixelColor(size // 2, size // 2)
        assert centre.alpha() == 255, "the icon is not blank in the middle"
