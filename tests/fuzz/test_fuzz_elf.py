"""ELF -> GSYM, ELF -> symbfile and ELF -> SFrame on mutated real binaries: a result (partial, with warnings)
or a FormatError, within the time and memory bounds; a GSYM that was written reads back and answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_bounds import fuzz_settings
from fuzz_mutations import elf_regions, mutated
from hypothesis import given
from hypothesis import strategies as st

from fxscope.core.symbfile_export.create import create_symbfiles
from fxscope.core.symbols.gsym_convert import build_gsym
from fxscope.formats.gsym.reader import GsymReader
from fxscope.formats.sframe.dump import objdump_text
from fxscope.formats.sframe.section import find_sframe_section, parse_sframe
from fxscope.formats.symbfile.codec import read_symbfile, write_symbfile

# small real binaries: DWARF 5 (x86-64, with .sframe), DWARF 4, and the AArch64 symbfile fixture
SEEDS = ["gsym/tiny/binary", "sframe/libdemo/binary", "gsym/textstats-dwarf4/binary"]


def _seeds(testdata: Path, names: list[str]) -> list[tuple[Path, bytes, list[tuple[int, int]]]]:
    return [(testdata / n, (testdata / n).read_bytes(), elf_regions(testdata / n)) for n in names]


@pytest.fixture(scope="module")
def gsym_seeds(testdata: Path):
    return _seeds(testdata, SEEDS)


def _case_file(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "case.elf"
    path.write_bytes(data)
    return path


@fuzz_settings(30)
@given(st.data())
def test_elf_to_gsym(gsym_seeds, tmp_path: Path, campaign, data: st.DataObject) -> None:
    _, seed, regions = data.draw(st.sampled_from(gsym_seeds))
    blob = data.draw(mutated(seed, max_ops=3, regions=regions))
    path = _case_file(tmp_path, blob)

    def case():
        gsym, report = build_gsym(path)
        with GsymReader.from_bytes(gsym) as reader:
            starts = [reader.header.base_address + int(o) for o in reader.addr_offsets[:64]]
            reader.lookup_many(starts)
            for address in starts[:8]:
                reader.lookup(address + 1)
        return report

    campaign.run(len(blob), case)


@fuzz_settings(20)
@given(st.data())
def test_elf_to_symbfile(testdata: Path, tmp_path: Path, campaign, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(["symbfile/inline-no-tco", "gsym/tiny/binary"]))
    seed = (testdata / name).read_bytes()
    blob = data.draw(mutated(seed, max_ops=3, regions=elf_regions(testdata / name)))
    path = _case_file(tmp_path, blob)

    def case():
        ranges, pads = create_symbfiles(path)
        read_symbfile(write_symbfile(ranges))
        read_symbfile(write_symbfile(pads))

    campaign.run(len(blob), case)


@fuzz_settings(30)
@given(st.data())
def test_elf_to_sframe(testdata: Path, tmp_path: Path, campaign, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(["sframe/libdemo/binary", "sframe/fp-O0/fp_sframe_v1"]))
    seed = (testdata / name).read_bytes()
    blob = data.draw(mutated(seed, max_ops=3, regions=elf_regions(testdata / name)))
    path = _case_file(tmp_path, blob)

    def case():
        section = parse_sframe(*find_sframe_section(str(path)), path=str(path))
        return objdump_text(section, "case.elf", "elf64-x86-64")

    campaign.run(len(blob), case)
