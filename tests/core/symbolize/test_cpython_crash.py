"""A real program's crash log (CPython embedded in C++; frames in Debian's stripped libpython and libc, and in
assembly that only the line table covers) symbolized byte for byte as llvm-symbolizer-19 does: against the
recorded output, and live when LLVM 19 is installed. The libraries come from tests/data (xz copies), so the
recorded comparison does not depend on this machine's libc or libpython."""

from __future__ import annotations

import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fxscope.core.symbolize.markup_filter import filter_text
from fxscope.core.symbolize.resolver import SymbolFileResolver
from fxscope.formats.elf.reader import read_elf

ROOT = Path(__file__).resolve().parents[3]
BUILD_IDS = {
    "pycrash": "da1f0be86e80dcbcb74d0ce78a80563083096381",
    "libc.so.6.xz": "93ac61ec5a8eb1396f9fbd350e3169a558528a40",
    "libpython3.11.so.1.0.xz": "9c43ffefa67ac31d2070c69c46db6d8ced25b942",
}


@pytest.fixture(scope="module")
def crash(testdata: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the case folder, a debug file directory whose .build-id tree holds the program and both libraries)."""
    case = testdata / "markup" / "cpython-crash"
    tree = tmp_path_factory.mktemp("cpython-crash")
    for name, build_id in BUILD_IDS.items():
        target = tree / ".build-id" / build_id[:2] / f"{build_id[2:]}.debug"
        target.parent.mkdir(parents=True, exist_ok=True)
        data = (case / name).read_bytes()
        target.write_bytes(lzma.decompress(data) if name.endswith(".xz") else data)
        assert read_elf(target).build_id.hex() == build_id
    return case, tree


def test_libraries_are_stripped_to_dynsym(crash) -> None:
    """The case is what it claims: both libraries have no .symtab and no DWARF, only .dynsym."""
    _case, tree = crash
    for name in ("libc.so.6.xz", "libpython3.11.so.1.0.xz"):
        build_id = BUILD_IDS[name]
        info = read_elf(tree / ".build-id" / build_id[:2] / f"{build_id[2:]}.debug")
        assert ".symtab" not in info.section_names and ".dynsym" in info.section_names
        assert not info.has_dwarf and not info.functions and info.symbols


@pytest.mark.parametrize("color", [False, True], ids=["plain", "color"])
def test_byte_identical_to_llvm_symbolizer_19(crash, color: bool) -> None:
    case, tree = crash
    suffix = ".color" if color else ""
    out, err = filter_text((case / "input.log").read_text(), SymbolFileResolver(debug_file_directories=[tree]), color=color)
    assert out == (case / f"expected.llvm19{suffix}.stdout").read_text()
    assert err == (case / f"expected.llvm19{suffix}.stderr").read_text()


def test_cxx_data_and_pc_elements(crash) -> None:
    """Data names are demangled as frames are (``_ZL9module_id`` -> ``module_id``), pc elements print the
    outermost function in LLVM's demangling style."""
    case, tree = crash
    out, err = filter_text((case / "data-cxx.log").read_text(), SymbolFileResolver(debug_file_directories=[tree]))
    assert out == (case / "data-cxx.llvm19.stdout").read_text()
    assert err == (case / "data-cxx.llvm19.stderr").read_text()


def test_each_interop_class_is_in_the_output(crash) -> None:
    """The lines the issue names, so a regression says which class broke."""
    case, tree = crash
    out, _err = filter_text((case / "input.log").read_text(), SymbolFileResolver(debug_file_directories=[tree]))
    assert " __libc_start_main <invalid>:0:0 (libc.so.6+0x27304)" in out  # .dynsym of a stripped library
    assert " _PyEval_EvalFrameDefault <invalid>:0:0 (libpython3.11.so.1.0+0x109c62)" in out
    assert " <invalid> /build/pycrash/guard.S:21:0 (pycrash+0x3821)" in out  # line table, no function
    assert " on_crash(int, siginfo_t*, void*) /build/pycrash/pycrash.cc:66:22 " in out  # symbol-table name
    assert "std::allocator<char>>>(std::vector<" in out  # LLVM's demangling style
    assert "runtime state _PyRuntime\n" in out  # data through .dynsym


def test_command_line(crash, tmp_path: Path) -> None:
    case, tree = crash
    for run in ("cold", "warm"):  # converting into the cache, then from the cache's GSYM and columns
        result = subprocess.run(
            [sys.executable, "-m", "fxscope", "symbolize", "--no-color", "--debug-file-directory", str(tree)],
            input=(case / "input.log").read_bytes(), capture_output=True, timeout=120,
            # a private symbol cache: the libraries converted here must not answer for other tests' logs
            env={**os.environ, "PYTHONPATH": str(ROOT), "FXSCOPE_CACHE_DIR": str(tmp_path / "cache")},
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == (case / "expected.llvm19.stdout").read_bytes(), run
        assert result.stderr == b"", run
    assert list((tmp_path / "cache" / "gsym").glob("*.columns"))


def test_live_llvm_symbolizer_19(crash) -> None:
    tool = shutil.which("llvm-symbolizer-19")
    if tool is None:
        pytest.skip("llvm-symbolizer-19 is not installed (apt-get install llvm-19)")
    case, tree = crash
    text = (case / "input.log").read_text()
    for color in (False, True):
        args = [tool, "--filter-markup", f"--debug-file-directory={tree}"] + (["--color=always"] if color else [])
        llvm = subprocess.run(args, input=text, capture_output=True, text=True, timeout=120)
        out, err = filter_text(text, SymbolFileResolver(debug_file_directories=[tree]), color=color)
        assert (out, err) == (llvm.stdout, llvm.stderr)
