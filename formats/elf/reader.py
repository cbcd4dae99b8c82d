"""What fxscope needs from an ELF file, read once: :func:`read_elf` and :func:`find_section`.

Build ID (``NT_GNU_BUILD_ID``), load segments (for module-relative addresses), executable ranges, the
``.symtab`` function symbols in them (GSYM conversion), llvm-symbolizer's symbol list (``.symtab``, or
``.dynsym`` when a stripped file has no ``.symtab``), ``.gnu_debuglink``, whether DWARF is present, and raw
sections by name or type (SFrame). The section, note and segment tables are read through pyelftools, after
:mod:`fxscope.formats.elf.layout` has checked every size against the file; the two paths that must be fast
read the bytes themselves: the symbol list (:mod:`fxscope.formats.elf.symtab`, which data symbolization
calls directly) and the fast DWARF decoder's section table (:mod:`fxscope.formats.elf.sections`). Whichever
path, an unreadable file is one kind of error: :class:`fxscope.formats.errors.FormatError`.
"""

from __future__ import annotations

import bisect
import os
import struct
import zlib
from dataclasses import dataclass, field

from fxscope.formats.elf.layout import check_sections, check_segment, corrupt_elf_errors, gnu_build_id
from fxscope.formats.elf.symtab import read_symbol_table
from fxscope.formats.errors import FormatError

#: symbol types llvm-symbolizer keeps for name lookups (assembly often leaves symbols untyped)
KEPT_SYMBOL_TYPES = ("STT_NOTYPE", "STT_FUNC", "STT_OBJECT", "STT_GNU_IFUNC", "STT_LOOS")


@dataclass(frozen=True)
class Segment:
    vaddr: int
    memsz: int
    offset: int
    filesz: int
    flags: int  # PF_X = 1, PF_W = 2, PF_R = 4


@dataclass
class ElfInfo:
    path: str
    machine: str
    elfclass: int
    little_endian: bool
    elf_type: str
    build_id: bytes
    load_segments: list[Segment]
    text_ranges: list[tuple[int, int]]  # merged [start, end) of executable sections
    functions: list[tuple[int, int, str]]  # (address, size, name) of STT_FUNC symbols in text, .symtab
    #: llvm-symbolizer's symbol list: (address, size, name) of the named symbols in allocated sections of
    #: ``.symtab``, or of ``.dynsym`` when there is no ``.symtab`` (a distribution's stripped library); one
    #: per address (the largest, the last in table order among equals), sorted by address
    symbols: list[tuple[int, int, str]]
    debuglink: tuple[str, int] | None  # (file name, CRC32) from .gnu_debuglink
    has_dwarf: bool
    section_names: list[str] = field(default_factory=list)
    #: per entry of ``symbols``: the STT_FILE name before a local symbol in its table ("" for globals)
    symbol_files: list[str] = field(default_factory=list)

    @property
    def base_address(self) -> int | None:
        """The lowest load address (what llvm-gsymutil uses as a GSYM's base), None for objects."""
        return min((s.vaddr for s in self.load_segments), default=None)

    def symbol_at(self, address: int) -> str | None:
        """llvm-symbolizer's data lookup: the last symbol at or before the address that contains it (a
        zero-size symbol covers everything up to the next one)."""
        found = self.symbol_lookup(address)
        return None if found is None else found[0]

    def symbol_lookup(self, address: int) -> tuple[str, str] | None:
        """(name, file) of the symbol containing ``address`` as ``getNameFromSymbolTable`` finds it; the file
        is the STT_FILE name of a local symbol (LLVM prints it when DWARF has no line), else ""."""
        i = bisect.bisect_right(self.symbols, (address, float("inf"), "")) - 1
        if i < 0:
            return None
        start, size, name = self.symbols[i]
        if size and start + size <= address:
            return None
        return name, self.symbol_files[i] if self.symbol_files else ""


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


#: the numeric st_info types of KEPT_SYMBOL_TYPES (pyelftools names 10 STT_LOOS, GNU_IFUNC's value)
_KEPT_TYPE_CODES = (0, 1, 2, 10)
_STT_FILE = 4


def _kept_symbols(elf, table) -> list[tuple[int, int, str, int, int, str]]:
    """(address, size, name, type, section index, file) of the named symbols of KEPT_SYMBOL_TYPES in a
    symbol table, in table order; ``file`` is the name of the STT_FILE symbol before a local symbol ("" for
    a global one). The entries are decoded as one numpy array, names only for the symbols kept."""
    import numpy as np

    bo = "<" if elf.little_endian else ">"
    if elf.elfclass == 64:
        dtype = np.dtype([("name", bo + "u4"), ("info", "u1"), ("other", "u1"), ("shndx", bo + "u2"),
                          ("value", bo + "u8"), ("size", bo + "u8")])
    else:
        dtype = np.dtype([("name", bo + "u4"), ("value", bo + "u4"), ("size", bo + "u4"), ("info", "u1"),
                          ("other", "u1"), ("shndx", bo + "u2")])
    if table["sh_entsize"] != dtype.itemsize:
        out, file = [], ""
        for sym in table.iter_symbols():
            if sym["st_info"]["type"] == "STT_FILE":
                file = sym.name
            elif sym.name and sym["st_info"]["type"] in KEPT_SYMBOL_TYPES:
                local = sym["st_info"]["bind"] == "STB_LOCAL"
                out.append((sym["st_value"], sym["st_size"], sym.name, _type_code(sym["st_info"]["type"]),
                            _shndx_code(sym["st_shndx"]), file if local else ""))
        return out
    data = table.data()
    entries = np.frombuffer(data, dtype, count=len(data) // dtype.itemsize)
    kinds = entries["info"] & 0xF
    files = kinds == _STT_FILE
    picked = np.flatnonzero((np.isin(kinds, _KEPT_TYPE_CODES) | files) & (entries["name"] != 0))
    strtab = elf.get_section(table["sh_link"]).data()
    out = []
    file = ""
    for name_off, value, size, kind, shndx, bind in zip(
        entries["name"][picked].tolist(), entries["value"][picked].tolist(),
        entries["size"][picked].tolist(), kinds[picked].tolist(), entries["shndx"][picked].tolist(),
        (entries["info"][picked] >> 4).tolist(), strict=True,
    ):
        end = strtab.find(b"\0", name_off)
        raw = strtab[name_off:end if end >= 0 else len(strtab)]
        if kind == _STT_FILE:
            file = raw.decode("utf-8", errors="replace")
        elif raw:
            out.append((value, size, raw.decode("utf-8", errors="replace"), kind, shndx, file if bind == 0 else ""))
    return out


def _type_code(name: str) -> int:
    return {"STT_NOTYPE": 0, "STT_OBJECT": 1, "STT_FUNC": 2}.get(name, 10)


def _shndx_code(shndx: int | str) -> int:
    return shndx if isinstance(shndx, int) else 0


def read_elf(path: str | os.PathLike[str]) -> ElfInfo:
    from elftools.elf.constants import SH_FLAGS
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    path = os.fspath(path)
    where = "the ELF header"
    try:
        with open(path, "rb") as fh:
            elf = ELFFile(fh)
            where = "the section headers"
            check_sections(elf, os.fstat(fh.fileno()).st_size, path)
            build_id = b""
            text: list[tuple[int, int]] = []
            names = []
            debuglink = None
            symtabs = []
            for index, section in enumerate(elf.iter_sections()):
                where = f"section [{index}] {section.name!r}"
                names.append(section.name)
                if section["sh_type"] == "SHT_NOTE" and not build_id:
                    # the first GNU build-ID note; SystemTap's probe notes (owner "stapsdt") share its number, 3
                    found = gnu_build_id(section.data(), elf.little_endian, section["sh_offset"], path)
                    if found is not None:
                        build_id = found
                elif isinstance(section, SymbolTableSection):
                    symtabs.append(section)
                if section["sh_flags"] & SH_FLAGS.SHF_EXECINSTR and section["sh_size"]:
                    text.append((section["sh_addr"], section["sh_addr"] + section["sh_size"]))
                if section.name == ".gnu_debuglink":
                    data = section.data()
                    end = data.find(b"\0")
                    if end > 0 and len(data) >= ((end + 4) & ~3) + 4:
                        crc_at = (end + 4) & ~3
                        (crc,) = struct.unpack_from("<I" if elf.little_endian else ">I", data, crc_at)
                        debuglink = (data[:end].decode("utf-8", "replace"), crc)
            text = _merge(text)
            functions: list[tuple[int, int, str]] = []
            for table in symtabs:
                if table["sh_type"] != "SHT_SYMTAB":
                    continue
                where = f"symbol table {table.name!r}"
                for addr, size, name, kind, _shndx, _file in _kept_symbols(elf, table):
                    if kind == 2 and any(lo <= addr < hi for lo, hi in text):
                        functions.append((addr, size, name))
            # llvm-symbolizer's list (.symtab, or .dynsym when .symtab has no symbols), read without pyelftools
            where = "the symbol tables"
            table_of_symbols = read_symbol_table(path)
            symbols, symbol_files = table_of_symbols.symbols, table_of_symbols.files
            where = "the program headers"
            segments = [
                Segment(s["p_vaddr"], s["p_memsz"], s["p_offset"], s["p_filesz"], s["p_flags"])
                for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"
            ]
            return ElfInfo(
                path, str(elf["e_machine"]), elf.elfclass, elf.little_endian, str(elf["e_type"]), build_id,
                segments, text, functions, symbols, debuglink,
                any(n in (".debug_info", ".zdebug_info") for n in names), names, symbol_files,
            )
    except FileNotFoundError:
        raise FormatError("no such file", path=path) from None
    except IsADirectoryError:
        raise FormatError("is a directory", path=path) from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path=path) from None
    except corrupt_elf_errors() as exc:
        raise FormatError(f"not a readable ELF file: {where}: {type(exc).__name__}: {exc}", path=path) from None


def find_section(path: str | os.PathLike[str], names: tuple[str, ...] = (), types: tuple = (),
                 segment_types: tuple = ()) -> tuple[bytes, int] | None:
    """Bytes and address of the first section matching a name or type, else of a matching segment."""
    from elftools.elf.elffile import ELFFile

    path = os.fspath(path)
    where = "the ELF header"
    try:
        with open(path, "rb") as fh:
            elf = ELFFile(fh)
            size = os.fstat(fh.fileno()).st_size
            where = "the section headers"
            check_sections(elf, size, path)
            for index, section in enumerate(elf.iter_sections()):
                where = f"section [{index}] {section.name!r}"
                if section.name in names or section["sh_type"] in types:
                    return section.data(), section["sh_addr"]
            where = "the program headers"
            for seg in elf.iter_segments():
                if seg["p_type"] in segment_types:
                    check_segment(seg, size, path)
                    return seg.data(), seg["p_vaddr"]
    except FileNotFoundError:
        raise FormatError("no such file", path=path) from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path=path) from None
    except corrupt_elf_errors() as exc:
        raise FormatError(f"not a readable ELF file: {where}: {type(exc).__name__}: {exc}", path=path) from None
    return None


def file_crc32(path: str | os.PathLike[str]) -> int:
    """CRC32 of a whole file, as ``.gnu_debuglink`` records it for the separate debug file."""
    crc = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc & 0xFFFFFFFF
