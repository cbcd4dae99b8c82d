"""Our GSYM reader on files written by llvm-gsymutil (LLVM 19 and 14) against its recorded lookups."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxscope.formats.errors import FormatError
from fxscope.formats.gsym.reader import GsymReader, format_lookup

CASES = [
    ("crashdemo", "binary.gsym", "lookup.llvm19.txt"),
    ("libdemo", "binary.gsym", "lookup.llvm19.txt"),
    ("textstats", "binary.gsym", "lookup.llvm19.txt"),
    ("textstats-dwarf4", "binary.gsym", "lookup.llvm19.txt"),
    # LLVM 14's writer, LLVM 19's reader semantics (last line row at an address wins)
    ("textstats-dwarf4", "binary.llvm14.gsym", "lookup.llvm19-of-llvm14-gsym.txt"),
    ("tiny", "binary.gsym", "lookup.llvm19.txt"),
    ("tiny", "binary.llvm14.gsym", "lookup.llvm19-of-llvm14-gsym.txt"),
]


def _addresses(case_dir: Path) -> list[int]:
    return [int(word, 16) for word in (case_dir / "addresses.txt").read_text().split()]


@pytest.mark.parametrize(("case", "gsym", "expected"), CASES)
def test_lookups_equal_llvm_gsymutil(testdata: Path, case: str, gsym: str, expected: str) -> None:
    case_dir = testdata / "gsym" / case
    with GsymReader(case_dir / gsym) as reader:
        results = reader.lookup_many(_addresses(case_dir))
        single = [reader.lookup(a) for a in _addresses(case_dir)]
    out = f'Looking up addresses in "{gsym}":\n' + "".join(format_lookup(r) for r in results)
    assert out == (case_dir / expected).read_text()
    assert [format_lookup(r) for r in single] == [format_lookup(r) for r in results]


def test_header_uuid_is_the_build_id(testdata: Path) -> None:
    dump = (testdata / "gsym" / "tiny" / "dump.llvm19.txt").read_text()
    uuid_line = next(line for line in dump.splitlines() if line.split("=")[0].strip() == "UUID")
    with GsymReader(testdata / "gsym" / "tiny" / "binary.gsym") as reader:
        assert reader.uuid.hex() == uuid_line.split("=")[1].strip()


def test_not_a_gsym_file(tmp_path: Path) -> None:
    path = tmp_path / "x.gsym"
    path.write_bytes(b"\x7fELF" + bytes(60))
    with pytest.raises(FormatError, match="invalid GSYM magic"):
        GsymReader(path)


def test_every_truncation_gives_error_or_answers(testdata: Path) -> None:
    """Each prefix of a real file either fails to open with FormatError or answers every lookup."""
    case_dir = testdata / "gsym" / "tiny"
    data = (case_dir / "binary.gsym").read_bytes()
    addresses = _addresses(case_dir)
    full = GsymReader.from_bytes(data).lookup_many(addresses)
    opened = 0
    for cut in range(len(data)):
        try:
            reader = GsymReader.from_bytes(data[:cut])
        except FormatError:
            continue
        opened += 1
        for result, whole in zip(reader.lookup_many(addresses), full, strict=True):
            # a prefix answers as the whole file does, or says what is missing; never a wrong answer
            if result.ok:
                assert result == whole, (cut, result, whole)
            else:
                assert isinstance(result.error, str) and result.error, (cut, result)
    assert opened < len(data)  # the header alone is checked: most short prefixes do not even open


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_corrupted_bytes_never_crash(testdata: Path, data: st.DataObject) -> None:
    case_dir = testdata / "gsym" / "textstats"
    blob = bytearray((case_dir / "binary.gsym").read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] = data.draw(st.integers(0, 255))
    try:
        reader = GsymReader.from_bytes(bytes(blob))
    except FormatError:
        return
    for result in reader.lookup_many(_addresses(case_dir)):
        assert isinstance(format_lookup(result), str)


DUMPS = [
    ("crashdemo", "binary.gsym", "dump.llvm19.txt"),
    ("libdemo", "binary.gsym", "dump.llvm19.txt"),
    ("textstats", "binary.gsym", "dump.llvm19.txt"),
    ("textstats-dwarf4", "binary.llvm14.gsym", "dump.llvm14.txt"),
    ("tiny", "binary.gsym", "dump.llvm19.txt"),
]


@pytest.mark.parametrize(("case", "gsym", "expected"), DUMPS)
def test_dump_equals_llvm_gsymutil(testdata: Path, case: str, gsym: str, expected: str) -> None:
    from fxscope.formats.gsym.dump import dump_text

    case_dir = testdata / "gsym" / case
    with GsymReader(case_dir / gsym) as reader:
        assert dump_text(reader) == (case_dir / expected).read_text()


def test_batch_and_single_lookups_agree_on_a_corrupt_line_table(testdata: Path) -> None:
    """Found by the GSYM reader fuzz harness: one byte of main's line table in textstats (0x56 at 0x55e set
    to 0x01, a SetFile opcode that swallows what follows) makes the opcode stream run off its end. A single
    lookup stops decoding at the first row past its address (as LLVM's LineTable::lookup), so main's first
    addresses still resolve; the batch decoded the table once to its highest address and gave every address
    of main the EOF error. Now each address gets what its single lookup gives."""
    data = bytearray((testdata / "gsym" / "textstats" / "binary.gsym").read_bytes())
    assert data[0x55E] == 0x56
    data[0x55E] = 0x01
    addresses = [int(w, 16) for w in (testdata / "gsym" / "textstats" / "addresses.txt").read_text().split()]
    with GsymReader.from_bytes(bytes(data)) as reader:
        batch = reader.lookup_many(addresses)
        single = [reader.lookup(a) for a in addresses]
    assert [(r.error, r.locations if r.ok else None) for r in batch] == \
        [(r.error, r.locations if r.ok else None) for r in single]
    errors = {r.error for r in single if not r.ok}
    assert "0x00000089: EOF found before EndSequence" in errors  # later addresses of main
    assert single[addresses.index(0x12C0)].locations[0].name == "main"  # its first row, before the damage


def test_entries_sharing_a_start_address_answer_from_the_covering_one(testdata: Path) -> None:
    """Two address-table entries with one start (the fuzz test's finding: the batch lookup's helper for a
    shared start returned nothing, a TypeError): an address is answered by the first entry that covers it,
    as the intact file answers it, in the batch and the single lookup alike."""
    case_dir = testdata / "gsym" / "textstats"
    data = (case_dir / "binary.gsym").read_bytes()
    intact = GsymReader.from_bytes(data)
    width = intact.header.addr_off_size
    k = len(intact.addr_offsets) // 2
    blob = bytearray(data)
    at = 48 + width * k  # the address table follows the 48-byte header
    blob[at + width : at + 2 * width] = blob[at : at + width]  # entry k + 1 starts where entry k starts
    reader = GsymReader.from_bytes(bytes(blob))
    assert int(reader.addr_offsets[k]) == int(reader.addr_offsets[k + 1])
    start = int(intact.addr_offsets[k]) + intact.header.base_address
    addresses = [start, start + 1, start + 2]
    batch = reader.lookup_many(addresses)
    assert [r.ok for r in batch] == [True] * 3
    assert batch == intact.lookup_many(addresses)
    assert batch == [reader.lookup(a) for a in addresses]
