"""The section-table symbol reader against pyelftools' view of the same files, and on hostile files."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from fxscope.formats.elf.symtab import read_symbol_table
from fxscope.formats.errors import FormatError

FILES = ["gsym/crashdemo/binary", "gsym/libdemo/binary", "gsym/tiny/binary", "gsym/textstats/binary",
         "symbfile/inline-no-tco", "markup/cpython-crash/pycrash", "markup/cpython-crash/libc.so.6.xz",
         "markup/cpython-crash/libpython3.11.so.1.0.xz", "sframe/fp-O0/fp_sframe_v1.o"]


def _pyelftools_list(path: Path) -> tuple[list[tuple[int, int, str]], list[str]]:
    """LLVM's rules applied to pyelftools' symbols: the reference the fast reader must equal."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    kept = {"STT_NOTYPE", "STT_OBJECT", "STT_FUNC", "STT_LOOS"}
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        tables: dict[bool, list] = {True: [], False: []}
        present = {True: False, False: False}
        for section in elf.iter_sections():
            if not isinstance(section, SymbolTableSection):
                continue
            is_symtab = section["sh_type"] == "SHT_SYMTAB"
            present[is_symtab] |= section.num_symbols() > 1
            file = ""
            for sym in section.iter_symbols():
                kind, shndx = sym["st_info"]["type"], sym["st_shndx"]
                if kind == "STT_FILE" and sym.name:
                    file = sym.name
                elif sym.name and kind in kept and isinstance(shndx, int) and shndx \
                        and elf.get_section(shndx)["sh_flags"] & 2:
                    local = sym["st_info"]["bind"] == "STB_LOCAL"
                    tables[is_symtab].append((sym["st_value"], sym["st_size"], sym.name, file if local else ""))
    entries = sorted(tables[True] if present[True] else tables[False], key=lambda e: (e[0], e[1]))
    kept_entries = [e for i, e in enumerate(entries) if i + 1 == len(entries) or entries[i + 1][0] != e[0]]
    return [(a, s, n) for a, s, n, _f in kept_entries], [f for *_rest, f in kept_entries]


@pytest.mark.parametrize("rel", FILES)
def test_same_list_as_pyelftools(testdata: Path, tmp_path: Path, rel: str) -> None:
    path = testdata / rel
    if rel.endswith(".xz"):
        path = tmp_path / path.name.removesuffix(".xz")
        path.write_bytes(lzma.decompress((testdata / rel).read_bytes()))
    table = read_symbol_table(path)
    assert (table.symbols, table.files) == _pyelftools_list(path)
    assert table.symbols  # every file here has symbols


def test_hostile_files_are_format_errors(testdata: Path, tmp_path: Path) -> None:
    data = bytearray((testdata / "gsym" / "tiny" / "binary").read_bytes())
    shoff = int.from_bytes(data[0x28:0x30], "little")
    cases = {
        "empty": b"",
        "not-elf": b"hello world, this is not an ELF file at all........................",
        "truncated": bytes(data[:shoff + 10]),
    }
    big = bytearray(data)
    big[0x3C:0x3E] = (0xFFFF).to_bytes(2, "little")  # more sections than the file holds
    cases["shnum"] = bytes(big)
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(FormatError):
            read_symbol_table(path)
    # every section's offset pointing past the end: the symbol tables cannot be read
    shnum = int.from_bytes(data[0x3C:0x3E], "little")
    for i in range(shnum):
        at = shoff + i * 64 + 0x18
        data[at:at + 8] = (len(data) + 4096).to_bytes(8, "little")
    path = tmp_path / "offsets"
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="runs past the end"):
        read_symbol_table(path)
