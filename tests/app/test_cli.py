"""The command line's contract: --help works, errors are one line with exit status 2."""

from __future__ import annotations

import subprocess
import sys


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120)


def test_help_lists_commands() -> None:
    result = _run("--help")
    assert result.returncode == 0
    assert "usage: fxscope" in result.stdout


def test_version() -> None:
    result = _run("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("fxscope ")


def test_unknown_option_is_one_line_error() -> None:
    result = _run("--no-such-option")
    assert result.returncode == 2
    assert "fxscope: error:" in result.stderr
    assert "Traceback" not in result.stderr
