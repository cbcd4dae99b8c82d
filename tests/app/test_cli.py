"""The command line's contract: --help works, errors are one line with exit status 2."""

from __future__ import annotations

import subprocess
import sys


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fxscope", *args], capture_output=True, text=True, timeout=120)


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


def _headless_env(**extra: str) -> dict[str, str]:
    """This environment without a display server (and without the test run's offscreen platform)."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(extra)
    return env


def test_a_mistyped_command_is_one_line_error_listing_the_commands() -> None:
    result = subprocess.run([sys.executable, "-m", "fxscope", "statz"], capture_output=True, text=True, timeout=120,
                            env=_headless_env())  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fxscope: error: no such command or file: statz")
    assert "info" in lines[0] and "symbolize" in lines[0]


def test_the_window_without_a_display_is_one_line_error(tmp_path) -> None:
    from fxscope.resources import DEMO_TRACE

    for extra in ({}, {"QT_QPA_PLATFORM": "xcb"}, {"QT_QPA_PLATFORM": "wayland"}):
        for args in ([], [str(DEMO_TRACE)]):
            result = subprocess.run([sys.executable, "-m", "fxscope", *args], capture_output=True, text=True,
                                    timeout=120, env=_headless_env(FXSCOPE_NEW_INSTANCE="1", **extra))  # fmt: skip
            assert result.returncode == 2, (extra, args, result.stderr)
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and "cannot open the window" in lines[0], (extra, lines)
