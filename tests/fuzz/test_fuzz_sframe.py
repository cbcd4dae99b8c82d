"""SFrame sections, mutated and hand-built: parsing, the dump, and a differential check that the vectorized
``rules()`` and the scalar ``rule()`` agree at every PC around every FDE (issue 13 finding 3)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from fuzz_bounds import fuzz_settings
from fuzz_mutations import mutated
from hypothesis import given
from hypothesis import strategies as st

from fxscope.formats.sframe.dump import objdump_text
from fxscope.formats.sframe.section import (
    ABI_S390X_BE,
    FDE_TYPE_FLEX,
    NOT_TRACKED,
    SFrameSection,
    parse_sframe,
)

SEEDS = ["textstats", "libdemo", "t-O2", "fp-O0", "crashdemo-fp"]


def assert_rules_agree(section: SFrameSection, pcs: np.ndarray) -> int:
    """rules() answers exactly where rule() does, with the same rule, except for what rules() leaves to rule()
    (FLEX FDEs, s390x); returns how many PCs had a rule."""
    batch = section.rules(pcs)
    assert section.find_fdes(pcs).tolist() == [section.find_fde(int(pc)) for pc in pcs]
    found = 0
    for n, pc in enumerate(pcs.tolist()):
        single = section.rule(pc)
        if not batch["found"][n]:
            if single is not None:
                i = section.find_fde(pc)
                scalar_only = section.header.abi == ABI_S390X_BE or (
                    section.header.version >= 3 and int(section.fde_info2[i]) & 0x1F == FDE_TYPE_FLEX)
                assert scalar_only, f"rule() has a rule at 0x{pc:x}, rules() has none"
            continue
        found += 1
        assert single is not None, f"rules() has a rule at 0x{pc:x}, rule() has none"
        assert ("sp" if batch["base"][n] == 1 else "fp") == single.cfa_base, hex(pc)
        if batch["count"][n] == 0:
            assert single.ra_undefined and single.cfa_offset == 0, hex(pc)
            continue
        assert batch["cfa"][n] == single.cfa_offset, hex(pc)
        assert batch["ra"][n] == (NOT_TRACKED if single.ra_offset is None else single.ra_offset), hex(pc)
        assert batch["fp"][n] == (NOT_TRACKED if single.fp_offset is None else single.fp_offset), hex(pc)
    return found


def _pcs(section: SFrameSection, limit: int = 40) -> np.ndarray:
    """PCs at, around and inside the first FDEs (every FRE boundary is within a few bytes of a start)."""
    out = [0, -1, 1 << 62]
    for i in range(min(len(section), limit)):
        start, size = int(section.fde_start[i]), int(section.fde_size[i])
        out += [start - 1, start, start + 1, start + min(size, 64) // 2, start + size - 1, start + size]
        out += [start + fre.start for fre in section.fres(i)[:8]]
    return np.array([p for p in out if -(1 << 63) <= p < 1 << 63], np.int64)


@pytest.fixture(scope="module")
def sections(testdata: Path) -> list[bytes]:
    return [(testdata / "sframe" / name / "sframe.bin").read_bytes() for name in SEEDS]


@fuzz_settings(60)
@given(st.data())
def test_mutated_sections(sections, campaign, data: st.DataObject) -> None:
    blob = data.draw(mutated(data.draw(st.sampled_from(sections))))
    address = data.draw(st.sampled_from([0, 0x1000, 0x7FFFFFFFFFFF0000]))

    def case():
        section = parse_sframe(blob, address)
        objdump_text(section, "case", "elf64-x86-64")
        return assert_rules_agree(section, _pcs(section))

    campaign.run(len(blob), case)


@st.composite
def built_sections(draw) -> bytes:
    """A well-formed header (any version, ABI and flags) over random FDEs and FREs, including sections with no
    FDEs, unsorted and overlapping FDEs, out-of-order FREs, PCMASK and (v3) FLEX FDEs."""
    version = draw(st.sampled_from([1, 2, 3]))
    big = draw(st.booleans())
    bo = ">" if big else "<"
    abi = draw(st.sampled_from([1, 2, 3, 4]))
    flags = draw(st.integers(0, 7))
    n = draw(st.integers(0, 5))
    fre_blob = bytearray()
    fdes = bytearray()
    nfres_total = 0
    for _ in range(n):
        start = draw(st.integers(-0x100, 0x400))
        size = draw(st.integers(0, 0x80))
        fre_type = draw(st.sampled_from([0, 1, 2]))
        fde_type = draw(st.integers(0, 1))
        info = fre_type | fde_type << 4
        count = draw(st.integers(0, 4))
        at = len(fre_blob)
        if version == 3:
            fre_blob += struct.pack(bo + "HBBB", count, info, draw(st.sampled_from([0, 0, 1])), draw(st.integers(0, 20)))
        width = {0: "B", 1: "H", 2: "I"}[fre_type]
        for _ in range(count):
            offsets = draw(st.lists(st.integers(-128, 127), min_size=0, max_size=3))
            fre_info = draw(st.integers(0, 1)) | len(offsets) << 1 | draw(st.integers(0, 1)) << 7
            fre_blob += struct.pack(bo + width, draw(st.integers(0, 0x90))) + bytes([fre_info])
            fre_blob += struct.pack(bo + "b" * len(offsets), *offsets)
        nfres_total += count
        if version == 3:
            fdes += struct.pack(bo + "qII", start, size, at)
        elif version == 2:
            fdes += struct.pack(bo + "iIIIBBH", start, size, at, count, info, draw(st.integers(0, 20)), 0)
        else:
            fdes += struct.pack(bo + "iIIIB", start, size, at, count, info)
    header = struct.pack(bo + "HBBBbbBIIIII", 0xDEE2, version, flags, abi, draw(st.sampled_from([0, -16])),
                         draw(st.sampled_from([0, -8])), 0, n, nfres_total, len(fre_blob), 0, len(fdes))
    return header + bytes(fdes) + bytes(fre_blob)


@fuzz_settings(100)
@given(built_sections(), st.sampled_from([0, 0x400000]))
def test_built_sections_batch_equals_scalar(campaign, blob: bytes, address: int) -> None:
    def case():
        return assert_rules_agree(parse_sframe(blob, address), _pcs(parse_sframe(blob, address)))

    campaign.run(len(blob), case)
