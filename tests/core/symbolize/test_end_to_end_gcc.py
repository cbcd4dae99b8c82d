"""End to end on a binary built here: gcc -O2 -g (with an inlined function) prints markup for its own
backtrace; ``fxscope symbolize`` must name every frame of the program with the function, file and line of the
source markers, and (when installed) print exactly what llvm-symbolizer 19 prints for the same log."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SOURCE = Path(__file__).parent / "data" / "selfcrash.c"


@pytest.fixture(scope="module")
def crashed(tmp_path_factory) -> tuple[Path, str]:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed (apt-get install gcc)")
    work = tmp_path_factory.mktemp("selfcrash")
    source = work / "selfcrash.c"
    shutil.copy(SOURCE, source)
    binary = work / "selfcrash"
    subprocess.run(["gcc", "-O2", "-g", "-o", str(binary), str(source)], check=True, cwd=work)
    log = subprocess.run([str(binary)], capture_output=True, text=True, cwd=work).stdout
    assert "{{{bt:" in log
    return binary, log


def _markers() -> dict[str, int]:
    return {m.group(1): i for i, line in enumerate(SOURCE.read_text().splitlines(), 1)
            for m in [re.search(r"LINE:(\w+)", line)] if m}  # fmt: skip


def _symbolize(*args: str, log: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fxscope", "symbolize", "--no-color", *args], input=log,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})  # fmt: skip


def test_every_frame_names_its_source_line(crashed) -> None:
    binary, log = crashed
    result = _symbolize("--symbols", str(binary), log=log)
    frames = re.findall(r"#(\d+(?:\.\d+)?)\s+0x[0-9a-f]+ (\S+) (\S+):(\d+):(\d+) \(selfcrash\+0x[0-9a-f]+\)", result.stdout)
    got = [(n, fn, Path(f).name, int(line)) for n, fn, f, line, _col in frames]
    lines = _markers()
    expected = [
        ("0", "report", "selfcrash.c", lines["report"]),
        ("1.1", "leaf", "selfcrash.c", lines["leaf"]),  # inlined into middle
        ("1", "middle", "selfcrash.c", lines["middle"]),
        ("2", "main", "selfcrash.c", lines["main"]),
    ]
    assert got[:4] == expected, result.stdout
    assert all(int(col) > 0 for *_rest, col in frames[:4])  # columns from DWARF: the ELF is at hand


def test_same_output_as_llvm_symbolizer(crashed, tmp_path: Path) -> None:
    llvm = shutil.which("llvm-symbolizer-19")
    if llvm is None:
        pytest.skip("llvm-symbolizer-19 is not installed (apt-get install llvm-19)")
    binary, log = crashed
    build_id = re.search(r"elf:([0-9a-f]+)", log).group(1)
    debug = tmp_path / ".build-id" / build_id[:2]
    debug.mkdir(parents=True)
    shutil.copy(binary, debug / f"{build_id[2:]}.debug")
    theirs = subprocess.run([llvm, "--filter-markup", f"--debug-file-directory={tmp_path}"], input=log,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    cache = {"FXSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    for run in ("cold", "warm"):  # converted and cached, then from the cache (GSYM and columns, no DWARF)
        ours = _symbolize("--debug-file-directory", str(tmp_path), log=log, env=cache)
        assert ours.stdout == theirs.stdout, run
        assert ours.stderr == theirs.stderr, run
    assert len(list((tmp_path / "cache" / "gsym").glob("*.columns"))) == 1
