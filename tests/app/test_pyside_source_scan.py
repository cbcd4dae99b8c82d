"""PySide6's import-time check of each module (does its source name PySide6?) through
:mod:`fxscope.app.pyside_source_scan`: the window's process keeps no module's source in :mod:`linecache`, and
the check answers as PySide6's own for modules that use PySide6 and modules that do not."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.app.window_process import in_window_process

#: run in a new window's process: the check in place, its answers, the sources kept
_CHECKS = r"""
import linecache
import shibokensupport.feature as feature
import fxscope.app.main_window, fxscope.core.units, fxscope.app.pyside_source_scan, json as stdlib_json
check = feature._mod_uses_pyside
modules = [fxscope.app.main_window, fxscope.core.units, fxscope.app.pyside_source_scan, stdlib_json, sys]
with_source = [path for path in linecache.cache if path.endswith(".py")]
print(json.dumps({
    "ours": bool(getattr(check, "_reads_file", False)),
    "answers": [check(m) for m in modules],
    "pyside_answers": [check.pyside_check(m) for m in modules],
    "features": [feature.pyside_feature_dict.get(m.__name__) for m in modules[:2]],
    "sources_kept": with_source,
    "modules": len(sys.modules),
    "late_files": [m.__file__ for m in (fxscope.app.main_window, sys.modules["pyqtgraph"], sys.modules["numpy"])],
}))
"""


def test_the_window_keeps_no_module_source_and_pyside_gets_the_same_answers():
    got = in_window_process(_CHECKS)
    assert got["ours"]
    # main_window imports PySide6; units and json do not; this module's own text names it; sys has no file
    assert got["answers"] == [True, False, True, False, False]
    assert got["answers"] == got["pyside_answers"]
    # PySide's import hook recorded them as it would: 0 = may switch features, -1 = ignored
    assert got["features"] == [0, -1]
    # hundreds of modules imported after PySide6, none of their sources kept (PySide's own check kept each);
    # only those PySide checks as shiboken6 itself loads, before the check can be replaced
    assert got["modules"] > 400
    kept = got["sources_kept"]
    assert len(kept) <= 10, kept
    assert not set(kept) & set(got["late_files"]), kept


def test_without_the_replacement_pyside_keeps_the_sources():
    """The cost the module removes is real with this PySide6: its own check fills linecache."""
    code = (
        "import linecache, shiboken6, sys\n"
        "import PySide6.QtCore\n"
        "import fxscope.app.main_window\n"
        "print(sum(p.endswith('.py') for p in linecache.cache))\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip().splitlines()[-1]) > 100
