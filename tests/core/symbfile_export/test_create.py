"""Symbfile export from the upstream AArch64 fixture binary: the same ranges as the upstream symbfile and the
return pads of the upstream generator's test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fxscope.core.symbfile_export.create import create_symbfiles
from fxscope.formats.errors import FormatError
from fxscope.formats.symbfile.codec import read_symbfile, write_symbfile


def _key(r) -> tuple:
    return (r.elf_va, r.length, r.func, r.file, r.call_file, r.call_line, r.depth, list(r.line_table))


def test_ranges_equal_the_upstream_symbfile(testdata: Path) -> None:
    folder = testdata / "symbfile"
    ranges, _pads = create_symbfiles(folder / "inline-no-tco")
    upstream = read_symbfile((folder / "inline-no-tco.ranges.symbfile").read_bytes()).ranges
    assert sorted(map(_key, ranges)) == sorted(map(_key, upstream))


def test_return_pads_equal_the_upstream_expectations(testdata: Path) -> None:
    folder = testdata / "symbfile"
    _ranges, pads = create_symbfiles(folder / "inline-no-tco")
    expected = json.loads((folder / "upstream-retpad-expectations.json").read_text())["return_pads"]
    got = [(hex(p.elf_va), [{"func": f, "file": fi, "line": ln} for f, fi, ln in p.entries]) for p in pads]
    assert got == sorted((e["elf_va"], e["entries"]) for e in expected)


def test_written_files_read_back(testdata: Path) -> None:
    ranges, pads = create_symbfiles(testdata / "symbfile" / "inline-no-tco")
    assert read_symbfile(write_symbfile(ranges)).records == ranges
    assert read_symbfile(write_symbfile(pads)).records == pads


def test_x86_binary_and_a_file_without_dwarf(testdata: Path, tmp_path: Path) -> None:
    ranges, pads = create_symbfiles(testdata / "gsym" / "crashdemo" / "binary")
    assert any(r.func == "on_node" and r.depth == 0 for r in ranges)
    assert any(r.func == "payload_weight" and r.depth >= 1 for r in ranges)
    assert pads and all(p.entries for p in pads)
    text = tmp_path / "x"
    text.write_text("nope")
    with pytest.raises(FormatError):
        create_symbfiles(text)


@pytest.mark.parametrize("case", ["crashdemo", "libdemo", "textstats", "tiny"])
def test_ranges_lookup_equals_gsym(testdata: Path, case: str) -> None:
    """A ranges file answers an address with the same inline stack as llvm-gsymutil's GSYM of the binary
    (at every recorded address where GSYM has line information; hot/cold splits and header inlines included)."""
    from fxscope.formats.gsym.reader import GsymReader
    from fxscope.formats.symbfile.codec import lookup

    folder = testdata / "gsym" / case
    ranges, _ = create_symbfiles(folder / "binary")
    ranges = read_symbfile(write_symbfile(ranges)).ranges  # through the file format
    gsym = GsymReader(folder / "binary.gsym")
    compared = 0
    for address in (int(w, 16) for w in (folder / "addresses.txt").read_text().split()):
        result = gsym.lookup(address)
        if not result.ok or not result.locations[0].base:
            continue
        assert lookup(ranges, address) == [(loc.name, loc.path, loc.line) for loc in result.locations], hex(address)
        compared += 1
    assert compared >= 10


def test_negative_line_from_a_corrupt_line_program(testdata: Path, tmp_path: Path) -> None:
    """Issue 13 finding 2: the line program byte that drives a line negative (textstats-dwarf4 0x6621: 0x7a ->
    0xfa) made symbfile create fail with "ValueError: Value out of range: -4" in the protobuf encoder. The DWARF
    reader drops that sequence with a warning; both files are written, every line in range."""
    from fxscope.formats.dwarf.functions import read_dwarf

    data = bytearray((testdata / "gsym" / "textstats-dwarf4" / "binary").read_bytes())
    data[0x6621] = 0xFA
    path = tmp_path / "mutated"
    path.write_bytes(bytes(data))
    assert any("line -4853: sequence ignored" in w for w in read_dwarf(path).warnings)
    ranges, pads = create_symbfiles(path)
    assert ranges and pads
    back = read_symbfile(write_symbfile(ranges)).records
    assert len(back) == len(ranges)
    assert all(0 <= line <= 0xFFFFFFFF for r in back for _, line in r.line_table)
    read_symbfile(write_symbfile(pads))


def test_writer_rejects_values_its_fields_cannot_hold() -> None:
    from fxscope.formats.symbfile.codec import Range

    with pytest.raises(FormatError, match=r"cannot encode the record at 0x1000: .*-4"):
        write_symbfile([Range(0x1000, 16, "f", "a.c", None, None, 0, [(0, -4)])])
