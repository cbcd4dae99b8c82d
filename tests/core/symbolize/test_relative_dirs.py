"""A relative compilation directory (``./build``, as distributions build: Debian's libc has ``./nptl``) is not
prepended twice: the filter and the GSYM converter print ``./build/main.c`` as llvm-symbolizer-19 and
llvm-gsymutil-19 do, in DWARF 4 and 5."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fxscope.core.symbolize.markup_filter import filter_text
from fxscope.core.symbolize.resolver import SymbolFileResolver
from fxscope.core.symbols.gsym_convert import build_gsym
from fxscope.formats.elf.reader import read_elf
from fxscope.formats.gsym.reader import GsymReader, format_lookup


@pytest.fixture
def case(testdata: Path) -> Path:
    return testdata / "markup" / "relative-dirs"


def test_filter_as_llvm_symbolizer_19(case: Path, tmp_path: Path) -> None:
    for version in (4, 5):
        binary = case / f"reldirs-dwarf{version}"
        build_id = read_elf(binary).build_id.hex()
        target = tmp_path / ".build-id" / build_id[:2] / f"{build_id[2:]}.debug"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(binary, target)
    out, err = filter_text((case / "reldirs.log").read_text(), SymbolFileResolver(debug_file_directories=[tmp_path]))
    assert out == (case / "expected.llvm19.stdout").read_text()
    assert err == (case / "expected.llvm19.stderr").read_text()


@pytest.mark.parametrize("version", [4, 5])
def test_gsym_lookups_as_llvm_gsymutil_19(case: Path, version: int) -> None:
    data, _report = build_gsym(case / f"reldirs-dwarf{version}")
    reader = GsymReader.from_bytes(data)
    text = "".join(format_lookup(reader.lookup(address)) for address in (0x112D, 0x1147, 0x1149))
    assert text == (case / f"lookup-dwarf{version}.llvm-gsymutil19.txt").read_text()
