"""The architecture contracts of pyproject.toml ([tool.importlinter]) hold, and would catch a violation.

Layers app -> core -> formats, no Qt below app, no import cycle between sibling modules, with no exception
listed (``ignore_imports``): issue 15 broke the last cycles. ``lint-imports`` is import-linter's command;
running it here makes the suite, and with it CI, enforce the contracts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    if not LINT_IMPORTS.exists():
        pytest.fail(f"{LINT_IMPORTS} missing: install the test extra (pip install -e '.[test]')")
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_project_keeps_its_import_contracts() -> None:
    out = _lint(ROOT, ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def test_no_contract_lists_exceptions() -> None:
    """Every import is held to the contracts: a new cycle is fixed, not listed as ignored."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert {c["id"] for c in contracts} == {"layers", "no-qt-below-app", "acyclic"}
    assert [c["id"] for c in contracts if c.get("ignore_imports")] == []


def test_the_contracts_catch_a_layer_breach_qt_below_app_and_a_cycle(tmp_path: Path) -> None:
    """The same contracts over a small tree with one of each violation: all three are reported broken."""
    files = {
        "fxscope/__init__.py": "",
        "fxscope/app/__init__.py": "",
        "fxscope/app/window.py": "import fxscope.core.model\n",
        "fxscope/core/__init__.py": "",
        "fxscope/core/model.py": "import fxscope.formats.reader\nfrom fxscope.app import window\n",  # core must not import app
        "fxscope/core/view.py": "import PySide6.QtWidgets\n",  # Qt below app
        "fxscope/formats/__init__.py": "",
        "fxscope/formats/reader.py": "import fxscope.formats.tables\n",
        "fxscope/formats/tables.py": "import fxscope.formats.reader\n",  # a cycle
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    # the project's own contracts (lint-imports reads [tool.importlinter]; the rest of the file is inert)
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    out = _lint(tmp_path, tmp_path)
    assert out.returncode != 0
    assert "3 broken" in out.stdout, out.stdout + out.stderr
    assert "fxscope.core.model -> fxscope.app.window" in out.stdout
    assert "fxscope.core.view -> PySide6" in out.stdout
    assert "No cycles are allowed in fxscope.formats." in out.stdout
