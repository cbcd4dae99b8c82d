"""The columnar symbfile reader equals the protobuf-runtime reader: on the upstream fixture, on ranges
files made from real binaries, on unusual but valid encodings, and on corrupted bytes (records and error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxscope.core.symbfile_export.create import create_symbfiles
from fxscope.formats.errors import FormatError
from fxscope.formats.leb128 import encode_uleb
from fxscope.formats.symbfile import symbfile_pb2 as pb
from fxscope.formats.symbfile.codec import (
    MAGIC,
    MT_HEADER,
    MT_RANGE_V1,
    MT_RETURN_PAD_V1,
    MT_STRING_TABLE_V1,
    Range,
    ReturnPad,
    frame,
    lookup,
    read_symbfile,
    write_symbfile,
)
from fxscope.formats.symbfile.table import read_range_table


def _same(data: bytes) -> None:
    """Both readers give the same ranges and the same error (or both reject the file)."""
    try:
        expected = read_symbfile(data)
    except FormatError as exc:
        with pytest.raises(FormatError) as got:
            read_range_table(data)
        assert str(got.value) == str(exc)
        return
    table = read_range_table(data)
    ranges = [r for r in expected.records if isinstance(r, Range)]
    assert [table.record(i) for i in range(len(table))] == ranges
    assert table.error == expected.error


def test_upstream_fixture(testdata: Path) -> None:
    data = (testdata / "symbfile" / "inline-no-tco.ranges.symbfile").read_bytes()
    _same(data)
    table = read_range_table(data)
    assert len(table) == 9 and table.error is None
    ranges = read_symbfile(data).ranges
    for address in range(0x600, 0x900):
        assert table.lookup(address) == lookup(ranges, address), hex(address)
    assert table.lookup(0x64C)[0][0] == "d_inline" and len(table.lookup(0x64C)) == 5


@pytest.mark.parametrize("case", ["crashdemo", "libdemo", "textstats", "tiny"])
def test_real_binaries(testdata: Path, case: str) -> None:
    folder = testdata / "gsym" / case
    ranges, pads = create_symbfiles(folder / "binary")
    data = write_symbfile(ranges)
    _same(data)
    _same(write_symbfile(ranges[: len(ranges) // 2] + pads[:50] + ranges[len(ranges) // 2 :]))  # pads mixed in
    table = read_range_table(data)
    ranges = read_symbfile(data).ranges
    addresses = [int(w, 16) for w in (folder / "addresses.txt").read_text().split()]
    starts = [r.elf_va for r in ranges]
    for address in addresses + starts + [a - 1 for a in starts] + [0, 2**64 - 1]:
        assert table.lookup(address) == lookup(ranges, address), hex(address)


def _msg(mtype: int, body: bytes) -> bytes:
    return frame(mtype, body)


def _field(num: int, wt: int, payload: bytes) -> bytes:
    return encode_uleb(num << 3 | wt) + payload


def test_unusual_valid_encodings_take_the_runtime_path() -> None:
    """Unpacked line tables, repeated fields, both oneof members, unknown fields, a 2-byte message length,
    a string table replaced half way: protobuf semantics (last one wins, merges) are kept."""
    unpacked = (
        _field(12, 0, encode_uleb(0x1000)) + _field(2, 0, encode_uleb(16)) + _field(3, 2, b"\x01f")
        + _field(8, 2, encode_uleb(8) + _field(1, 0, b"\x00") + _field(2, 0, b"\x05")
                 + _field(1, 0, b"\x04") + _field(2, 0, b"\x06"))
    )  # fmt: skip
    both = (
        _field(1, 0, encode_uleb(64)) + _field(2, 0, encode_uleb(8))  # zigzag: +32 + _field(3, 2, b"\x03old")
        + _field(9, 0, b"\x00") + _field(7, 0, b"\x01") + _field(7, 0, b"\x02")
        + _field(15, 0, b"\x07") + _field(14, 2, b"\x02zz") + _field(13, 5, b"abcd") + _field(13, 1, b"abcdefgh")
    )  # fmt: skip
    long_name = pb.RangeV1(deltaElfVA=64, length=4, funcStr="x" * 300, fileRef=1).SerializeToString()
    data = (
        MAGIC + _msg(MT_HEADER, b"")
        + _msg(MT_STRING_TABLE_V1, pb.StringTableV1(strings=["a", "b"]).SerializeToString())
        + _msg(MT_RANGE_V1, unpacked) + _msg(MT_RANGE_V1, both)
        + _msg(MT_STRING_TABLE_V1, pb.StringTableV1(strings=["c", "d.c"]).SerializeToString())
        + _msg(MT_RANGE_V1, long_name)
        + _msg(MT_RETURN_PAD_V1, pb.ReturnPadV1(deltaElfVA=-8, func=[0], file=[1], line=[3]).SerializeToString())
        + _msg(MT_RANGE_V1, pb.RangeV1(deltaElfVA=4, length=2, funcRef=0).SerializeToString())
        + _msg(99, b"\x08\x01")  # an unknown message type is skipped by length
    )  # fmt: skip
    _same(data)
    table = read_range_table(data)
    assert table.error is None and len(table) == 4
    first, second, third, fourth = (table.record(i) for i in range(4))
    assert first.line_table == [(0, 5), (4, 6)]
    assert (second.elf_va, second.func, second.depth) == (0x1020, "a", 2)
    assert (third.func, third.file) == ("x" * 300, "d.c")
    assert (fourth.elf_va, fourth.func) == (0x1020 + 64 - 8 + 4, "c")


def test_errors_match() -> None:
    good = write_symbfile([Range(0x10, 4, "f", "a.c", None, None, 0, [(0, 1)]), Range(0x20, 4, "g", "a.c", None, None, 0)])
    _same(good[:-3])  # truncated
    _same(good + b"\x05")  # a message cut short
    _same(MAGIC + _msg(MT_HEADER, b"") + _msg(MT_RANGE_V1, pb.RangeV1(deltaElfVA=4, funcStr="f").SerializeToString()))
    _same(MAGIC + _msg(MT_HEADER, b"") + _msg(MT_RANGE_V1, pb.RangeV1(setElfVA=4, funcRef=3).SerializeToString()))
    _same(MAGIC + _msg(MT_HEADER, b"") + _msg(MT_RANGE_V1, pb.RangeV1(setElfVA=4).SerializeToString()))
    _same(MAGIC + _msg(MT_HEADER, b"") + _msg(MT_RANGE_V1, _field(12, 0, b"\x04") + _field(3, 2, b"\x02\xff\xfe")))
    bad_lt = pb.RangeV1(setElfVA=4, funcStr="f")
    bad_lt.lineTable.offset.extend([1, 2])
    bad_lt.lineTable.lineNumber.extend([1])
    _same(MAGIC + _msg(MT_HEADER, b"") + _msg(MT_RANGE_V1, bad_lt.SerializeToString()))
    _same(MAGIC + _msg(MT_RANGE_V1, b""))
    with pytest.raises(FormatError):
        read_range_table(b"not a symbfile")


_RECORDS = st.lists(
    st.one_of(
        st.builds(
            Range,
            st.integers(0, 2**40), st.integers(0, 2**20), st.sampled_from(["f", "g", "main", "é"]),
            st.sampled_from([None, "a.c", "b.h"]), st.sampled_from([None, "a.c"]), st.one_of(st.none(), st.integers(1, 500)),
            st.integers(0, 4),
            st.lists(st.tuples(st.integers(0, 300), st.integers(0, 2**20)), max_size=6).map(
                lambda rows: sorted(rows)),
        ),
        st.builds(ReturnPad, st.integers(0, 2**40), st.lists(st.tuples(st.just("f"), st.just("a.c"), st.integers(0, 99)), min_size=1, max_size=3)),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=_RECORDS, edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4),
       cut=st.integers(0, 10**6))
def test_fuzzed_files_read_the_same(records, edits, cut) -> None:
    """Random files, then random byte edits and a random cut: both readers agree on every input."""
    data = bytearray(write_symbfile(records))
    for pos, value in edits:
        data[8 + pos % max(1, len(data) - 8)] = value
    _same(bytes(data))
    _same(bytes(data[: 8 + cut % max(1, len(data) - 7)]))
