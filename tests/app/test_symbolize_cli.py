"""``fxscope symbolize`` on the real crash log, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_crash_log_from_stdin(testdata: Path) -> None:
    demo = testdata / "markup" / "crash-demo"
    result = subprocess.run(
        [sys.executable, "-m", "app", "symbolize", "--no-color",
         "--symbols", str(testdata / "gsym" / "crashdemo" / "binary.gsym"),
         "--symbols", str(testdata / "gsym" / "libdemo" / "binary.gsym"),
         "--debug-file-directory", str(demo)],
        input=(demo / "input.log").read_text(), capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (demo / "expected.llvm19.stdout").read_text()
    assert result.stderr == (demo / "expected.llvm19.stderr").read_text()


def test_missing_symbol_file_is_one_line_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "app", "symbolize", "--symbols", str(tmp_path / "nope.gsym")],
        input="", capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 2
    assert result.stderr.strip().endswith("nope.gsym: no such file or directory")
