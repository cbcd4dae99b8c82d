"""The symbol list llvm-symbolizer builds from an ELF file, read straight from the section table.

LLVM names the outermost frame of every symbolized address after the symbol table and resolves data
addresses through it, so the filter reads a module's symbols on its first frame. Through pyelftools that
cost more (its import alone ~0.2 s) than symbolizing a 100,000-line log, so the table is decoded here with
``struct`` and one numpy array per table (the section table through :mod:`fxscope.formats.elf.sections`): ``.symtab``, or ``.dynsym`` when the file has no ``.symtab``
symbols (a distribution's stripped library), as LLVM's ``computeSymbolSizes`` does; function, data, untyped
and IFUNC symbols of allocated sections; one per address (``SymbolizableObjectFile``: stable-sorted by
address and size, the last of each address kept); and for a local symbol the STT_FILE name before it.

Every offset and size is checked against the file: a hostile file is a :class:`FormatError`.
"""

from __future__ import annotations

import bisect
import mmap
import os
from dataclasses import dataclass, field

from fxscope.formats.elf.sections import SectionTable, read_section_table
from fxscope.formats.errors import FormatError

_SHT_SYMTAB, _SHT_DYNSYM = 2, 11
_SHF_ALLOC = 0x2
_STT_FILE = 4
#: st_info types llvm-symbolizer keeps: NOTYPE (assembly), OBJECT, FUNC, GNU_IFUNC
_KEPT_TYPES = (0, 1, 2, 10)
_SPECIAL_SHNDX = (0, 0xFFF1, 0xFFF2)  # undefined, absolute, common


@dataclass
class SymbolTable:
    """Sorted (address, size, name) with one entry per address, and the STT_FILE name of each ("" for globals)."""

    symbols: list[tuple[int, int, str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def lookup(self, address: int) -> tuple[str, str] | None:
        """(name, file) as ``getNameFromSymbolTable`` finds it: the last symbol at or before ``address``,
        unless its nonzero size ends before it (a zero-size symbol covers everything up to the next one)."""
        i = bisect.bisect_right(self.symbols, (address, float("inf"), "")) - 1
        if i < 0:
            return None
        start, size, name = self.symbols[i]
        if size and start + size <= address:
            return None
        return name, self.files[i]


def read_symbol_table(path: str | os.PathLike[str]) -> SymbolTable:
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                raise FormatError("empty file, not ELF", path=path, offset=0)
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return _read(mm, path)
    except FileNotFoundError:
        raise FormatError("no such file", path=path) from None
    except IsADirectoryError:
        raise FormatError("is a directory", path=path) from None
    except OSError as exc:
        raise FormatError(exc.strerror or "cannot read", path=path) from None


def _read(mm: mmap.mmap, path: str) -> SymbolTable:
    import numpy as np

    table = read_section_table(mm, path)
    if table is None:
        return SymbolTable()  # no section table: no symbols
    sections = table.headers
    alloc = (sections["flags"] & _SHF_ALLOC) != 0
    tables: dict[bool, list[tuple[int, int, str, str]]] = {True: [], False: []}
    present = {True: False, False: False}
    for index in np.flatnonzero(np.isin(sections["type"], (_SHT_SYMTAB, _SHT_DYNSYM))).tolist():
        sec = sections[index]
        is_symtab = int(sec["type"]) == _SHT_SYMTAB
        entsize, size = int(sec["entsize"]), int(sec["size"])
        present[is_symtab] = present[is_symtab] or (entsize > 0 and size >= 2 * entsize)
        tables[is_symtab].extend(_decode(table, index, alloc))
    symbols, files = _one_per_address(tables[True] if present[True] else tables[False])
    return SymbolTable(symbols, files)


def _decode(table: SectionTable, index: int, alloc) -> list[tuple[int, int, str, str]]:
    """(address, size, name, file) of the kept symbols of one table, in table order."""
    import numpy as np

    sections, path, bo = table.headers, table.path, table.byte_order
    if table.is64:
        entry = np.dtype([("name", bo + "u4"), ("info", "u1"), ("other", "u1"), ("shndx", bo + "u2"),
                          ("value", bo + "u8"), ("size", bo + "u8")])
    else:
        entry = np.dtype([("name", bo + "u4"), ("value", bo + "u4"), ("size", bo + "u4"), ("info", "u1"),
                          ("other", "u1"), ("shndx", bo + "u2")])
    sec = sections[index]
    entsize = int(sec["entsize"])
    if entsize < entry.itemsize:
        return []  # not a table of symbols this reader can stride through
    data = table.section_bytes(index)
    link = int(sec["link"])
    if link >= len(sections):
        raise FormatError(f"symbol table (section {index}) links to section {link}, past the section table",
                          path=path, offset=int(sec["offset"]))
    strtab = table.section_bytes(link)
    count = len(data) // entsize
    if count == 0:
        return []
    entries = np.ndarray((count,), entry, buffer=data, strides=(entsize,))
    kinds = entries["info"] & 0xF
    shndx = entries["shndx"].astype(np.int64)
    in_alloc = np.zeros(count, dtype=bool)
    valid = ~np.isin(shndx, _SPECIAL_SHNDX) & (shndx < len(alloc))
    in_alloc[valid] = alloc[shndx[valid]]
    picked = np.flatnonzero(((np.isin(kinds, _KEPT_TYPES) & in_alloc) | (kinds == _STT_FILE)) & (entries["name"] != 0))
    out = []
    file = ""
    for name_off, value, size, kind, bind in zip(
        entries["name"][picked].tolist(), entries["value"][picked].tolist(), entries["size"][picked].tolist(),
        kinds[picked].tolist(), (entries["info"][picked] >> 4).tolist(), strict=True,
    ):
        end = strtab.find(b"\0", name_off)
        name = strtab[name_off:end if end >= 0 else len(strtab)].decode("utf-8", errors="replace")
        if kind == _STT_FILE:
            file = name
        elif name:
            out.append((value, size, name, file if bind == 0 else ""))
    return out


def _one_per_address(entries: list[tuple[int, int, str, str]]) -> tuple[list[tuple[int, int, str]], list[str]]:
    """LLVM's list: stable-sorted by (address, size), one per address (the last: the largest, and the last
    in table order among equal sizes)."""
    entries = sorted(entries, key=lambda e: (e[0], e[1]))  # stable: table order kept among equals
    kept = [e for i, e in enumerate(entries) if i + 1 == len(entries) or entries[i + 1][0] != e[0]]
    return [(a, s, n) for a, s, n, _f in kept], [f for _a, _s, _n, f in kept]
