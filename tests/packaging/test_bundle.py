"""packaging/build-bundle.sh builds the PyInstaller one-folder bundle, which starts, reports its version, reads
the bundled demo and renders it offscreen without any Python installation on the path.

Slow (about 35 s with the build venv in place; the first run also creates build/bundle-venv from PyPI).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_bundle_builds_and_starts(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["FXSCOPE_BUNDLE_WORK"] = str(tmp_path / "work")
    result = subprocess.run(["bash", str(REPO_ROOT / "packaging" / "build-bundle.sh"), str(tmp_path / "dist")],
                            capture_output=True, text=True, env=env, timeout=1200)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert re.search(r"^fxscope 0\.1\.0$", output, re.M)
    assert re.search(r"build-bundle: fxscope screenshot \(demo, offscreen\): \d+ ms", output)
    bundle = tmp_path / "dist" / "fxscope"
    internal = bundle / "_internal"
    # what the spec leaves out is really out, and the data the app needs is in
    assert not list(internal.rglob("libqgtk3.so")) and not list(internal.rglob("*.qm"))
    assert not [p for p in internal.rglob("*") if p.name in ("pytest", "_pytest", "hypothesis", "tkinter")]
    assert list(internal.rglob("record_scan*.so")), "the FXT reader's compiled loops are not in the bundle"
    assert list(internal.rglob("slice_kernels*.so")), "the model build's compiled loops are not in the bundle"
    assert list(internal.rglob("span_kernels*.so")), "the model's compiled span kernels are not in the bundle"
    assert (internal / "fxscope" / "resources" / "demo" / ".build-id" / "5c"
            / "7743dceebb74fe9bb07feedcededf0da0e852d.debug").is_file()

    # the bundle runs on its own: an empty PATH (no python3 to fall back on), started from elsewhere
    shot = subprocess.run([str(bundle / "fxscope"), "screenshot", str(internal / "fxscope" / "resources" / "demo" / "crash.log"), "-o", "crash.png"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/nonexistent", "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen",
                               "FXSCOPE_CACHE_DIR": str(tmp_path / "cache")})
    assert shot.returncode == 0, shot.stderr
    image = QImage(str(tmp_path / "crash.png"))
    assert image.width() == 1600 and len({image.pixel(x, 300) for x in range(0, 1600, 5)}) > 5
    assert list((tmp_path / "cache").rglob("*.gsym")), "the crash view did not convert the bundled debug files"
    shutil.rmtree(tmp_path / "dist")  # 200 MB
