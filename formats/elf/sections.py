"""An ELF file's section table read straight from its bytes (no pyelftools): headers, names and bytes.

The paths that must be fast (llvm-symbolizer's symbol list in :mod:`fxscope.formats.elf.symtab`, the
hand-written DWARF decoder in :mod:`fxscope.formats.dwarf.fast`) need only the section table; pyelftools'
import alone costs ~0.2 s. One parser for both: every offset and size is checked against the file, so a
hostile file is a :class:`FormatError`, never an out-of-bounds read or a huge allocation.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fxscope.formats.errors import FormatError

if TYPE_CHECKING:
    import numpy as np

SHT_NOBITS = 8
SHN_XINDEX = 0xFFFF


@dataclass
class SectionTable:
    """The section headers of one ELF file (a numpy record per section: name, type, flags, addr, offset,
    size, link, info, align, entsize) over the file's bytes ``data``."""

    data: bytes | memoryview
    path: str
    is64: bool
    byte_order: str  # "<" or ">"
    e_type: int
    headers: np.ndarray
    shstrndx: int

    def __len__(self) -> int:
        return len(self.headers)

    def section_bytes(self, index: int) -> bytes:
        """The bytes of section ``index`` (empty for SHT_NOBITS); a FormatError when they run past the file."""
        sec = self.headers[index]
        offset, size = int(sec["offset"]), int(sec["size"])
        if int(sec["type"]) == SHT_NOBITS:
            return b""
        if offset + size > len(self.data):
            raise FormatError(f"section {index} (offset 0x{offset:x}, size 0x{size:x}) runs past the end of the "
                              "file", path=self.path, offset=offset)
        return self.data[offset:offset + size]

    def names(self) -> list[str]:
        """Every section's name (from the section-name string table; "" where it has none)."""
        if not 0 < self.shstrndx < len(self.headers):
            return [""] * len(self.headers)
        table = bytes(self.section_bytes(self.shstrndx))
        out = []
        for offset in self.headers["name"].tolist():
            end = table.find(b"\0", offset)
            out.append(table[offset:end if end >= 0 else len(table)].decode("latin-1") if offset < len(table) else "")
        return out


def read_section_table(data: bytes | memoryview, path: str) -> SectionTable | None:
    """The section table of the ELF file in ``data``; None when the file has none (``e_shoff`` 0)."""
    import numpy as np  # here, not at import: the modules that import this one are on fxscope's start path

    if len(data) < 0x34 or data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        raise FormatError("not an ELF file", path=path, offset=0)
    is64, bo = data[4] == 2, "<" if data[5] == 1 else ">"
    if is64 and len(data) < 0x40:
        raise FormatError("truncated ELF header", path=path, offset=0)
    (e_type,) = struct.unpack_from(bo + "H", data, 16)
    shoff = struct.unpack_from(bo + ("Q" if is64 else "I"), data, 0x28 if is64 else 0x20)[0]
    shentsize, shnum, shstrndx = struct.unpack_from(bo + "HHH", data, 0x3A if is64 else 0x2E)
    if shoff == 0:
        return None
    header = np.dtype([("name", bo + "u4"), ("type", bo + "u4"), ("flags", bo + "u8"), ("addr", bo + "u8"),
                       ("offset", bo + "u8"), ("size", bo + "u8"), ("link", bo + "u4"), ("info", bo + "u4"),
                       ("align", bo + "u8"), ("entsize", bo + "u8")]) if is64 else \
        np.dtype([("name", bo + "u4"), ("type", bo + "u4"), ("flags", bo + "u4"), ("addr", bo + "u4"),
                  ("offset", bo + "u4"), ("size", bo + "u4"), ("link", bo + "u4"), ("info", bo + "u4"),
                  ("align", bo + "u4"), ("entsize", bo + "u4")])
    if shentsize < header.itemsize:
        raise FormatError(f"section header size {shentsize} is too small", path=path, offset=shoff)
    if shnum == 0 or shstrndx == SHN_XINDEX:  # extended numbering: section 0's sh_size and sh_link hold them
        if shoff + header.itemsize > len(data):
            raise FormatError("section table runs past the end of the file", path=path, offset=shoff)
        first = np.frombuffer(data, header, count=1, offset=shoff)[0]
        shnum = int(first["size"]) if shnum == 0 else shnum
        shstrndx = int(first["link"]) if shstrndx == SHN_XINDEX else shstrndx
    if shnum > (len(data) - shoff) // shentsize if shoff <= len(data) else True:
        raise FormatError(f"section table of {shnum} entries runs past the end of the file", path=path, offset=shoff)
    raw = data[shoff:shoff + shnum * shentsize]
    headers = np.ndarray((shnum,), header, buffer=raw, strides=(shentsize,))
    return SectionTable(data, path, is64, bo, e_type, headers, shstrndx)
