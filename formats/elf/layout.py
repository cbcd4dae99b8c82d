"""Checks an ELF file's section and segment table against the file before pyelftools reads anything.

pyelftools reads whatever size a header claims (``stream.read(sh_size)`` allocates the claimed size first), so a
corrupt header meant a ``MemoryError`` or gigabytes of memory for a 40 KB file. Every reader of ELF bytes
(:mod:`fxscope.formats.elf.reader`, the DWARF walk) calls :func:`check_sections` first; notes are parsed here with
bounds checks instead of pyelftools' note iterator (which trusts ``n_descsz`` and raises ``ArrayError``).
"""

from __future__ import annotations

import struct

from fxscope.formats.errors import FormatError

#: a compressed section may claim at most this much per compressed byte: DWARF compresses 3-10x, zlib's
#: ceiling is about 1032x, so a larger claim is a decompression bomb (pyelftools inflates it whole)
MAX_COMPRESSION_RATIO = 64
NT_GNU_BUILD_ID = 3


def corrupt_elf_errors() -> tuple[type[BaseException], ...]:
    """The exception types pyelftools raises on malformed bytes (its own, construct's, and the plain
    struct/index/value errors of its parsers): each is turned into a FormatError naming the file."""
    import zlib

    from elftools.common.exceptions import DWARFError, ELFError, ELFParseError
    from elftools.construct import ConstructError

    return (ELFError, ELFParseError, DWARFError, ConstructError, struct.error, ValueError, KeyError, IndexError,
            ZeroDivisionError, EOFError, zlib.error)


def check_sections(elf, file_size: int, path: str) -> None:
    """Raise a FormatError naming the section when one's bytes (or claimed decompressed size) do not fit the
    file: checked before any section's data is read."""
    for index in range(elf.num_sections()):
        try:
            header = elf._get_section_header(index)
        except corrupt_elf_errors() as exc:
            raise FormatError(f"section header [{index}] is unreadable ({exc})", path=path,
                              offset=elf["e_shoff"] + index * elf["e_shentsize"]) from None
        if header["sh_type"] in ("SHT_NOBITS", "SHT_NULL") or not header["sh_size"]:
            continue
        offset, size = header["sh_offset"], header["sh_size"]
        if offset + size > file_size:
            raise FormatError(f"section [{index}] (type {header['sh_type']}) claims 0x{size:x} bytes at offset "
                              f"0x{offset:x}, past the end of the file (0x{file_size:x} bytes)",
                              path=path, offset=offset)
        if header["sh_flags"] & 0x800:  # SHF_COMPRESSED: the Elf_Chdr's ch_size is what pyelftools allocates
            chdr = elf.structs.Elf_Chdr
            if size < chdr.sizeof():
                raise FormatError(f"compressed section [{index}] is shorter than its compression header",
                                  path=path, offset=offset)
            elf.stream.seek(offset)
            claimed = chdr.parse(elf.stream.read(chdr.sizeof()))["ch_size"]
        elif size >= 12 and _name(elf, header).startswith(".zdebug"):  # GNU: "ZLIB", big-endian size, zlib data
            elf.stream.seek(offset)
            magic, claimed = struct.unpack(">4sQ", elf.stream.read(12))
            if magic != b"ZLIB":
                continue
        else:
            continue
        if claimed > MAX_COMPRESSION_RATIO * size + (1 << 20):
            raise FormatError(f"compressed section [{index}] claims 0x{claimed:x} bytes from 0x{size:x} compressed "
                              f"bytes (more than {MAX_COMPRESSION_RATIO}x: a decompression bomb)", path=path,
                              offset=offset)


def _name(elf, header) -> str:
    """A section's name, "" when the section-name string table cannot give it."""
    try:
        return elf._get_section_name(header)
    except corrupt_elf_errors():
        return ""


def check_segment(segment, file_size: int, path: str) -> None:
    """A FormatError when a segment's file bytes do not fit the file (checked before ``segment.data()``)."""
    offset, size = segment["p_offset"], segment["p_filesz"]
    if size and offset + size > file_size:
        raise FormatError(f"segment {segment['p_type']} claims 0x{size:x} bytes at offset 0x{offset:x}, past the "
                          f"end of the file (0x{file_size:x} bytes)", path=path, offset=offset)


def gnu_build_id(data: bytes, little_endian: bool, section_offset: int, path: str) -> bytes | None:
    """The ``NT_GNU_BUILD_ID`` descriptor among a note section's notes, None without one. A note whose sizes
    run past the section is a FormatError with its file offset (pyelftools read the claimed size)."""
    bo = "<" if little_endian else ">"
    pos = 0
    while pos + 12 <= len(data):
        namesz, descsz, ntype = struct.unpack_from(bo + "III", data, pos)
        name_at = pos + 12
        desc_at = name_at + ((namesz + 3) & ~3)
        end = desc_at + ((descsz + 3) & ~3)
        if desc_at + descsz > len(data):
            raise FormatError(f"note at section offset 0x{pos:x} (name size {namesz}, descriptor size {descsz}) "
                              "runs past its section", path=path, offset=section_offset + pos)
        if ntype == NT_GNU_BUILD_ID and data[name_at:name_at + namesz].rstrip(b"\0") == b"GNU":
            return bytes(data[desc_at:desc_at + descsz])
        pos = end
    return None
