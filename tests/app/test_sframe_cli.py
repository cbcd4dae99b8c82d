"""``fxscope sframe dump`` prints what objdump --sframe (binutils 2.40) printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_dump_like_objdump(testdata: Path) -> None:
    folder = testdata / "sframe" / "crashdemo"
    result = _run("sframe", "dump", "binary", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (folder / "objdump-sframe.txt").read_text()


def test_elf_without_sframe(testdata: Path) -> None:
    result = _run("sframe", "dump", "binary", cwd=testdata / "gsym" / "tiny")
    assert result.returncode == 2
    assert result.stderr.strip() == "fxscope: error: binary: no .sframe section"
