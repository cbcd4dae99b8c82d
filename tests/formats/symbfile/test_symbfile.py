"""Symbfiles: the upstream fixture decodes to the recorded records; round trips; bad input."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxscope.formats.errors import FormatError
from fxscope.formats.symbfile.codec import Range, ReturnPad, lookup, read_symbfile, write_symbfile


def _as_json(r: Range) -> dict:
    return {
        "record": "Range", "elf_va": hex(r.elf_va), "length": r.length, "func": r.func, "file": r.file,
        "call_file": r.call_file, "call_line": r.call_line, "depth": r.depth,
        "line_table": [{"offset": off, "line_number": line, "address": hex(r.elf_va + off)}
                       for off, line in r.line_table],
    }


def test_upstream_fixture_decodes_to_the_recorded_records(testdata: Path) -> None:
    folder = testdata / "symbfile"
    expected = json.loads((folder / "inline-no-tco.ranges.symbfile.expected.json").read_text())
    result = read_symbfile((folder / "inline-no-tco.ranges.symbfile").read_bytes())
    assert result.error is None
    assert [_as_json(r) for r in result.records] == expected["records"]


def test_lookup_gives_the_inline_stack(testdata: Path) -> None:
    result = read_symbfile((testdata / "symbfile" / "inline-no-tco.ranges.symbfile").read_bytes())
    ranges = result.ranges
    deepest = max(ranges, key=lambda r: r.depth)
    frames = lookup(ranges, deepest.elf_va)
    assert len(frames) == deepest.depth + 1
    assert frames[0][0] == deepest.func and frames[-1][0] == "main"


RANGE = st.builds(
    Range,
    elf_va=st.integers(0, 2**48),
    length=st.integers(1, 2**20),
    func=st.sampled_from(["main", "f", "g", "_ZN3foo3barEv"]),
    file=st.one_of(st.none(), st.sampled_from(["/a.c", "/b.h"])),
    call_file=st.one_of(st.none(), st.sampled_from(["/a.c", "/b.h"])),
    call_line=st.one_of(st.none(), st.integers(1, 5000)),
    depth=st.integers(0, 5),
    line_table=st.lists(st.tuples(st.integers(0, 100), st.integers(0, 5000)), max_size=5).map(
        lambda rows: [(sum(r[0] for r in rows[: i + 1]), rows[i][1]) for i in range(len(rows))]
    ),
)
PAD = st.builds(ReturnPad, elf_va=st.integers(0, 2**48),
                entries=st.lists(st.tuples(st.sampled_from(["main", "f"]), st.sampled_from(["/a.c", ""]),
                                           st.integers(0, 999)), min_size=1, max_size=4))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(RANGE, PAD), max_size=12))
def test_round_trip(records: list) -> None:
    assert read_symbfile(write_symbfile(records)).records == records


def test_errors() -> None:
    with pytest.raises(FormatError, match="magic"):
        read_symbfile(b"ELF")
    with pytest.raises(FormatError, match="MtHeader"):
        read_symbfile(b"symbfile\x00\x02")
    good = write_symbfile([Range(0x1000, 4, "f", None, None, None, 0)] * 3)
    partial = read_symbfile(good[:-3])
    assert partial.error and "prematurely" in partial.error and len(partial.records) == 2
    relative = b"symbfile\x00\x01" + bytes([4, 2]) + bytes([0x08, 0x02, 0x1A, 0x00])
    assert "without an absolute value" in read_symbfile(relative).error


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_never_crashes(tail: bytes) -> None:
    with contextlib.suppress(FormatError):
        read_symbfile(b"symbfile\x00\x01" + tail)
