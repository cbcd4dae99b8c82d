"""``fxscope gsym lookup/dump`` print exactly what llvm-gsymutil 19 printed for the same files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _fxscope(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fxscope", *args], capture_output=True, text=True, timeout=120, cwd=cwd,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )


@pytest.mark.parametrize("case", ["tiny", "crashdemo"])
def test_lookup_matches_llvm_gsymutil(testdata: Path, case: str) -> None:
    case_dir = testdata / "gsym" / case
    addresses = (case_dir / "addresses.txt").read_text().split()
    result = _fxscope("gsym", "lookup", "binary.gsym", *addresses, cwd=case_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (case_dir / "lookup.llvm19.txt").read_text()


@pytest.mark.parametrize("case", ["tiny", "libdemo"])
def test_dump_matches_llvm_gsymutil(testdata: Path, case: str) -> None:
    case_dir = testdata / "gsym" / case
    result = _fxscope("gsym", "dump", "binary.gsym", cwd=case_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (case_dir / "dump.llvm19.txt").read_text()


def test_not_a_gsym_is_one_line_error(testdata: Path) -> None:
    case_dir = testdata / "gsym" / "tiny"
    result = _fxscope("gsym", "dump", "binary", cwd=case_dir)  # the ELF, not the GSYM
    assert result.returncode == 2
    assert result.stderr.startswith("fxscope: error: binary: offset 0x0: invalid GSYM magic")
    assert "Traceback" not in result.stderr


def test_convert_then_lookup(testdata: Path, tmp_path: Path) -> None:
    case_dir = testdata / "gsym" / "crashdemo"
    out = tmp_path / "crashdemo.gsym"
    result = _fxscope("gsym", "convert", str(case_dir / "binary"), "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Pruned 14 functions, ended with 21 total" in result.stdout  # as llvm-gsymutil 19 reports
    addresses = (case_dir / "addresses.txt").read_text().split()
    result = _fxscope("gsym", "lookup", str(out), *addresses, cwd=tmp_path)
    assert result.stdout.split("\n", 1)[1] == (case_dir / "lookup.llvm19.txt").read_text().split("\n", 1)[1]


def test_convert_of_a_non_elf_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x7fELF\x02\x01" + bytes(10))
    result = _fxscope("gsym", "convert", str(bad), "-o", str(tmp_path / "x.gsym"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"fxscope: error: {bad}")
    assert not (tmp_path / "x.gsym").exists()


def test_convert_of_a_hostile_line_program_finishes_with_a_warning(testdata: Path, tmp_path: Path) -> None:
    """Issue 13 finding 1: textstats-dwarf4 with byte 0x6621 set to 0xfa ran forever at 2.4 GB and growing; now
    the conversion ends (well within the subprocess timeout) with a warning and a readable file."""
    data = bytearray((testdata / "gsym" / "textstats-dwarf4" / "binary").read_bytes())
    data[0x6621] = 0xFA
    (tmp_path / "binary").write_bytes(bytes(data))
    out = tmp_path / "out.gsym"
    result = _fxscope("gsym", "convert", "binary", "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "warning: compile unit at 0x" in result.stdout and "line -4853: sequence ignored" in result.stdout
    assert _fxscope("gsym", "dump", str(out), cwd=tmp_path).returncode == 0
