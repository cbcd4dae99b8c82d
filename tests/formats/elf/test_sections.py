"""The section table read straight from the bytes (formats/elf/sections.py) against pyelftools' view."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from fxscope.formats.elf.sections import SHN_XINDEX, read_section_table
from fxscope.formats.errors import FormatError

FILES = ["gsym/crashdemo/binary", "gsym/libdemo/binary", "gsym/textstats-dwarf4/binary",
         "markup/cpython-crash/libc.so.6.xz", "sframe/fp-O0/fp_sframe_v1.o"]


def _bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return lzma.decompress(data) if path.suffix == ".xz" else data


def _pyelftools(data: bytes) -> list[tuple[str, int, int, bytes]]:
    import io

    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(data))
    return [(s.name, s["sh_offset"], s["sh_size"], b"" if s["sh_type"] == "SHT_NOBITS" else data[
        s["sh_offset"]:s["sh_offset"] + s["sh_size"]]) for s in elf.iter_sections()]


def _ours(data: bytes) -> list[tuple[str, int, int, bytes]]:
    table = read_section_table(data, "<test>")
    assert table is not None
    return [(name, int(h["offset"]), int(h["size"]), bytes(table.section_bytes(i)))
            for i, (name, h) in enumerate(zip(table.names(), table.headers, strict=True))]


@pytest.mark.parametrize("rel", FILES)
def test_names_offsets_and_bytes_as_pyelftools(testdata: Path, rel: str) -> None:
    data = _bytes(testdata / rel)
    assert _ours(data) == _pyelftools(data)


def test_extended_section_name_index(testdata: Path) -> None:
    """e_shstrndx SHN_XINDEX: the name table's index is section 0's sh_link (files with 65,280+ sections)."""
    data = bytearray(_bytes(testdata / "gsym" / "crashdemo" / "binary"))
    expected = _ours(bytes(data))
    shoff = int.from_bytes(data[0x28:0x30], "little")
    shstrndx = int.from_bytes(data[0x3E:0x40], "little")
    data[0x3E:0x40] = SHN_XINDEX.to_bytes(2, "little")
    data[shoff + 0x28:shoff + 0x2C] = shstrndx.to_bytes(4, "little")  # section 0's sh_link
    assert [n for n, *_ in _ours(bytes(data))] == [n for n, *_ in expected]


def test_hostile_tables_are_format_errors(testdata: Path) -> None:
    data = bytearray(_bytes(testdata / "gsym" / "crashdemo" / "binary"))
    with pytest.raises(FormatError, match="not an ELF file"):
        read_section_table(b"\x7fELF", "<test>")
    big = bytearray(data)
    big[0x3C:0x3E] = (0xFFFF).to_bytes(2, "little")
    with pytest.raises(FormatError, match="runs past the end"):
        read_section_table(bytes(big), "<test>")
    with pytest.raises(FormatError, match="runs past the end"):
        read_section_table(bytes(data[: len(data) - 1]), "<test>")  # the table is at the end: truncated
    shoff = int.from_bytes(data[0x28:0x30], "little")
    data[shoff + 64 + 0x18:shoff + 64 + 0x20] = (len(data) + 4096).to_bytes(8, "little")  # section 1's offset
    table = read_section_table(bytes(data), "<test>")
    with pytest.raises(FormatError, match=r"section 1 .* runs past the end"):
        table.section_bytes(1)


def test_a_32_bit_object(tmp_path: Path) -> None:
    """ELF32 headers (the corpus has none): built here by gcc -m32."""
    import shutil
    import subprocess

    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("needs gcc")
    (tmp_path / "a.c").write_text("int f(int x) { return x + 1; }\n")
    built = subprocess.run([gcc, "-m32", "-g", "-c", str(tmp_path / "a.c"), "-o", str(tmp_path / "a.o")],
                           capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"gcc cannot build 32-bit code here: {built.stderr[:120]}")
    data = (tmp_path / "a.o").read_bytes()
    assert data[4] == 1  # ELFCLASS32
    assert _ours(data) == _pyelftools(data)
