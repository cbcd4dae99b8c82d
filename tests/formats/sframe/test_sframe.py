"""SFrame decoding against binutils 2.40 (objdump --sframe) on real binaries, plus hand-built sections."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxscope.formats.errors import FormatError
from fxscope.formats.sframe.dump import objdump_text
from fxscope.formats.sframe.section import Rule, find_sframe_section, parse_sframe

CASES = ["crashdemo", "crashdemo-fp", "fp-O0", "libdemo", "t-O2", "textstats", "textstats-fp"]


def _case(testdata: Path, name: str) -> tuple[Path, str]:
    folder = testdata / "sframe" / name
    meta = json.loads((folder / "sframe-section.json").read_text())
    return folder, meta["from"]


@pytest.mark.parametrize("name", CASES)
def test_dump_equals_objdump(testdata: Path, name: str) -> None:
    folder, elf = _case(testdata, name)
    data, address = find_sframe_section(str(folder / elf))
    assert data == (folder / "sframe.bin").read_bytes()
    section = parse_sframe(data, address)
    assert section.warnings == []
    assert objdump_text(section, elf, "elf64-x86-64") == (folder / "objdump-sframe.txt").read_text()


def test_relocatable_object_dump(testdata: Path) -> None:
    folder = testdata / "sframe" / "fp-O0"
    data, address = find_sframe_section(str(folder / "fp_sframe_v1.o"))
    text = objdump_text(parse_sframe(data, address), "fp_sframe_v1.o", "elf64-x86-64")
    assert text == (folder / "objdump-sframe.fp_sframe_v1.o.txt").read_text()


def test_lookup_agrees_with_the_dump_rows(testdata: Path) -> None:
    """Every FRE row objdump printed for a PCINC function is the rule our lookup returns at that PC."""
    folder, elf = _case(testdata, "textstats-fp")
    section = parse_sframe(*find_sframe_section(str(folder / elf)))
    checked = 0
    for line in (folder / "objdump-sframe.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4 and len(parts[0]) == 16 and parts[0] != "0" * 16 and "+" in parts[1]:
            pc = int(parts[0], 16)
            rule = section.rule(pc)
            if rule is None or section.fde_type(section.find_fde(pc)) == 1:
                continue
            assert f"{rule.cfa_base}+{rule.cfa_offset}" == parts[1]
            assert (f"c{rule.fp_offset:+d}" if rule.fp_offset is not None else "u") == parts[2]
            assert rule.ra_offset == -8  # AMD64: the header's fixed RA offset
            checked += 1
    assert checked > 40


def test_pcmask_plt_lookup(testdata: Path) -> None:
    folder, elf = _case(testdata, "t-O2")
    section = parse_sframe(*find_sframe_section(str(folder / elf)))
    # pltN entries at 0x1030: 16-byte blocks, CFA sp+8 up to offset 0xb, then sp+16
    assert section.rule(0x1030).cfa_offset == 8
    assert section.rule(0x103B).cfa_offset == 16
    assert section.rule(0x1036).cfa_offset == 8
    assert section.rule(0x1000) is None  # below every function


def _v2_big_endian() -> bytes:
    """One function at 0x1000 (PC-relative start), 3 FREs with 2-byte starts and offsets, AArch64 BE."""
    fres = b"".join([
        struct.pack(">HB", 0, (1 << 5) | (1 << 1) | 1) + struct.pack(">h", 0),            # CFA = SP + 0
        struct.pack(">HB", 4, (1 << 5) | (3 << 1) | 1) + struct.pack(">hhh", 16, -8, -16),  # + RA, FP
        struct.pack(">HB", 0x20, (1 << 5) | (3 << 1) | 0) + struct.pack(">hhh", 16, -8, -16),
    ])
    fde_pos = 28
    start_field = 0x1000 - fde_pos  # relative to the field itself (errata 1 flag)
    fde = struct.pack(">iIIIBBH", start_field, 0x40, 0, 3, 1, 0, 0)  # FRE type ADDR2, PCINC
    header = struct.pack(">HBBBbbBIIIII", 0xDEE2, 2, 0x1 | 0x4, 1, 0, 0, 0, 1, 3, len(fres), 0, len(fde))
    return header + fde + fres


def test_hand_built_v2_big_endian_aarch64() -> None:
    section = parse_sframe(_v2_big_endian())
    assert section.byte_order == ">" and section.header.version == 2
    assert int(section.fde_start[0]) == 0x1000
    assert section.rule(0x1002).cfa_offset == 0
    rule = section.rule(0x1010)
    assert (rule.cfa_base, rule.cfa_offset, rule.ra_offset, rule.fp_offset) == ("sp", 16, -8, -16)
    assert section.rule(0x1030).cfa_base == "fp"
    assert section.rule(0x1040) is None


def test_every_truncation_is_an_error_or_a_partial_result(testdata: Path) -> None:
    folder, _ = _case(testdata, "t-O2")
    data = (folder / "sframe.bin").read_bytes()
    for cut in range(len(data)):
        try:
            section = parse_sframe(data[:cut], 0x2100)
        except FormatError:
            continue
        for i in range(len(section)):
            section.fres(i)
        section.rule(0x1151)


def test_not_sframe() -> None:
    with pytest.raises(FormatError, match="magic"):
        parse_sframe(b"\x7fELF" + bytes(40))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_fuzz_corrupt_sections(testdata: Path, data: st.DataObject) -> None:
    blob = bytearray((testdata / "sframe" / "textstats" / "sframe.bin").read_bytes())
    for _ in range(data.draw(st.integers(1, 6))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    try:
        section = parse_sframe(bytes(blob), 0)
    except FormatError:
        return
    for i in range(min(len(section), 50)):
        section.fres(i)
        section.rule(int(section.fde_start[i]) + 1)
    objdump_text(section, "x", "elf64-x86-64")


def test_vectorized_rules_equal_single_lookups(testdata: Path) -> None:
    import numpy as np

    from fxscope.formats.sframe.section import NOT_TRACKED

    folder, elf = _case(testdata, "textstats-fp")
    section = parse_sframe(*find_sframe_section(str(folder / elf)))
    lo = int(section.fde_start.min()) - 8
    hi = int((section.fde_start + section.fde_size).max()) + 8
    pcs = np.arange(lo, hi)
    batch = section.rules(pcs)
    for n, pc in enumerate(pcs.tolist()):
        single = section.rule(pc)  # PCINC and PCMASK alike
        assert bool(batch["found"][n]) == (single is not None), hex(pc)
        if single is not None:
            assert ("sp" if batch["base"][n] == 1 else "fp") == single.cfa_base
            assert batch["cfa"][n] == single.cfa_offset
            assert batch["ra"][n] == (single.ra_offset if single.ra_offset is not None else NOT_TRACKED)
            assert batch["fp"][n] == (single.fp_offset if single.fp_offset is not None else NOT_TRACKED)


def _v3_little_endian_amd64() -> bytes:
    """Two v3 FDEs (16-byte index entries, 5-byte attributes before the FREs), PC-relative starts: one
    signal-frame function with two FREs, one DEFAULT function without FREs (an outermost frame)."""
    fres0 = struct.pack("<HBBB", 2, 0x80, 0, 0)  # attribute: 2 FREs, signal frame, ADDR1, PCINC; DEFAULT
    fres0 += struct.pack("<BBb", 0, (1 << 1) | 1, 8)  # at +0: CFA = SP + 8
    fres0 += struct.pack("<BBbb", 4, (2 << 1) | 1, 16, -16)  # at +4: CFA = SP + 16, FP at CFA - 16
    fres1 = struct.pack("<HBBB", 0, 0, 0, 0)
    fres = fres0 + fres1
    fde_pos = 28
    fdes = b""
    for k, (target, size, fre_off) in enumerate([(0x1000, 0x20, 0), (0x2000, 0x10, len(fres0))]):
        fdes += struct.pack("<qII", target - (fde_pos + 16 * k), size, fre_off)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 3, 0x1 | 0x4, 3, 0, -8, 0, 2, 2, len(fres), 0, len(fdes))
    return header + fdes + fres


def test_hand_built_v3_little_endian_amd64() -> None:
    section = parse_sframe(_v3_little_endian_amd64())
    assert section.header.version == 3 and section.byte_order == "<" and not section.warnings
    assert section.fde_start.tolist() == [0x1000, 0x2000]
    assert section.fde_num_fres.tolist() == [2, 0]
    assert section.rule(0x1002) == Rule("sp", 8, -8, None)
    assert section.rule(0x101F) == Rule("sp", 16, -8, -16)
    assert section.rule(0x2004) == Rule("sp", 0, None, None, ra_undefined=True)
    assert section.rule(0x1020) is None and section.rule(0x0FFF) is None
    truncated = parse_sframe(_v3_little_endian_amd64()[:-3])
    assert truncated.warnings and truncated.rule(0x1002) == Rule("sp", 8, -8, None)


def test_section_without_fdes_answers_not_found_in_batch_and_alone(testdata: Path) -> None:
    """Issue 13 finding 3: rules() on a section with no FDEs raised IndexError in find_fdes while rule() said
    "not found"; both now say not found."""
    import numpy as np

    header = bytearray((testdata / "sframe" / "textstats" / "sframe.bin").read_bytes()[:28])
    header[8:12] = bytes(4)  # num_fdes = 0
    section = parse_sframe(bytes(header), 0x1000)
    assert len(section) == 0
    pcs = np.array([0, 0x1000, 0x1234], np.int64)
    assert section.find_fdes(pcs).tolist() == [-1, -1, -1]
    assert not section.rules(pcs)["found"].any()
    assert [section.rule(int(pc)) for pc in pcs] == [None, None, None]


def test_batch_rules_cover_pcmask_functions_like_rule(testdata: Path) -> None:
    """PCMASK FDEs (PLT stubs) were left to the scalar rule(); the batch now answers them the same way."""
    import numpy as np

    folder, elf = _case(testdata, "textstats")
    section = parse_sframe(*find_sframe_section(str(folder / elf)))
    masked = [i for i in range(len(section)) if section.fde_type(i) == 1]
    assert masked
    pcs = np.array([int(section.fde_start[i]) + k for i in masked for k in range(int(section.fde_size[i]))])
    batch = section.rules(pcs)
    assert batch["found"].all()
    assert batch["cfa"].tolist() == [section.rule(int(pc)).cfa_offset for pc in pcs]
