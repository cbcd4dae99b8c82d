"""A module's DWARF is decoded once per resolver: for its conversion to GSYM and for the columns and line
rows the frames then need (it used to be decoded twice, by build_gsym and by the column lookup)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from fxscope.core.symbolize.markup_filter import filter_text
from fxscope.core.symbolize.resolver import SymbolFileResolver
from fxscope.core.symbols.store import SymbolStore


def _demo(testdata: Path) -> Path:
    return testdata / "markup" / "crash-demo"


def test_debug_directory_modules_decode_their_dwarf_once(testdata: Path, decodes: Counter) -> None:
    demo = _demo(testdata)
    out, err = filter_text((demo / "input.log").read_text(), SymbolFileResolver(debug_file_directories=[demo]))
    assert out == (demo / "expected.llvm19.stdout").read_text()  # converted, with DWARF columns
    assert err == (demo / "expected.llvm19.stderr").read_text()
    modules = sorted(p.name for p in (demo / ".build-id").glob("*/*.debug"))
    assert len(modules) == 2
    assert dict(decodes) == dict.fromkeys(modules, 1)


def test_store_conversions_decode_dwarf_once(testdata: Path, tmp_path: Path, decodes: Counter) -> None:
    demo = _demo(testdata)
    store = SymbolStore([demo], debuginfod_urls=[], cache_dir=tmp_path / "cache")
    out, _err = filter_text((demo / "input.log").read_text(), SymbolFileResolver(store=store))
    assert out == (demo / "expected.llvm19.stdout").read_text()
    assert len(list((tmp_path / "cache" / "gsym").glob("*.gsym"))) == 2  # the store converted and cached both
    assert sorted(decodes.values()) == [1, 1]
