"""A fresh Python process with the main window open offscreen, as the `fxscope` command opens it (app/gui.py
first): for tests of what a new window's process holds (its classes, its memory), which a pytest process that
has imported everything already cannot show."""

from __future__ import annotations

import json
import os
import subprocess
import sys

#: what the process runs before the test's own code: the window shown (as ``window``, ``app`` its application)
OPEN_WINDOW = r"""
import json, os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from fxscope.app.gui import application
app = application()
from fxscope.app.main_window import MainWindow
window = MainWindow()
window.show()
app.processEvents()
"""


def in_window_process(code: str) -> dict:
    """Run ``code`` after :data:`OPEN_WINDOW` in a new process; the JSON object it prints last."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", OPEN_WINDOW + code], capture_output=True, text=True, env=env,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])
