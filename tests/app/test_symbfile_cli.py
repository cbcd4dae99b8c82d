"""``fxscope symbfile dump`` on the upstream fixture."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_dump_json_equals_the_recorded_records(testdata: Path) -> None:
    folder = testdata / "symbfile"
    result = subprocess.run([sys.executable, "-m", "fxscope", "symbfile", "dump", "--json",
                             str(folder / "inline-no-tco.ranges.symbfile")], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    expected = json.loads((folder / "inline-no-tco.ranges.symbfile.expected.json").read_text())["records"]
    assert json.loads(result.stdout) == {"records": expected, "error": None}


def test_text_dump_and_bad_file(testdata: Path, tmp_path: Path) -> None:
    folder = testdata / "symbfile"
    ok = subprocess.run([sys.executable, "-m", "fxscope", "symbfile", "dump", str(folder / "inline-no-tco.ranges.symbfile")],
                        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert ok.returncode == 0 and ok.stdout.startswith("[0x640, 0x664) main")
    bad = tmp_path / "x.symbfile"
    bad.write_bytes(b"not one")
    result = subprocess.run([sys.executable, "-m", "fxscope", "symbfile", "dump", str(bad)], capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2 and "missing 'symbfile' magic" in result.stderr


def test_create_then_dump(testdata: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    prefix = tmp_path / "inline"
    made = subprocess.run([sys.executable, "-m", "fxscope", "symbfile", "create", str(testdata / "symbfile" / "inline-no-tco"),
                           "-o", str(prefix)], capture_output=True, text=True, timeout=120, env=env)
    assert made.returncode == 0, made.stderr
    assert "9 ranges" in made.stdout and "6 return pads" in made.stdout
    dumped = subprocess.run([sys.executable, "-m", "fxscope", "symbfile", "dump", "--json",
                             f"{prefix}.returnpads.symbfile"], capture_output=True, text=True, timeout=120, env=env)
    pads = json.loads(dumped.stdout)["records"]
    assert [p["elf_va"] for p in pads] == ["0x64b", "0x657", "0x7b3", "0x7cb", "0x7df", "0x7fb"]
