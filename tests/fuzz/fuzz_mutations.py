"""Hypothesis strategies that mutate a seed file the way the issue 13 fuzzing did: byte flips, interesting
integers written over 1/2/4/8-byte fields, chunk deletions and duplications, truncation."""

from __future__ import annotations

from hypothesis import strategies as st

INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 40,
               0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF]


@st.composite
def mutated(draw, seed: bytes, max_ops: int = 6, regions: list[tuple[int, int]] | None = None) -> bytes:
    """``seed`` with 1 to ``max_ops`` mutations; with ``regions`` ([start, end) byte ranges: headers, tables)
    most land inside them, where a file's structure is, rather than in code bytes."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, max_ops))):
        if not data:
            break
        op = draw(st.sampled_from(["byte"] * 6 + ["field"] * 3 + ["delete", "duplicate", "truncate"]))
        if regions and draw(st.integers(0, 9)) < 9:
            lo, hi = draw(st.sampled_from(regions))
            at = min(draw(st.integers(lo, max(lo, hi - 1))), len(data) - 1)
        else:
            at = draw(st.integers(0, len(data) - 1))
        if op == "byte":
            data[at] = draw(st.integers(0, 255))
        elif op == "field":
            width = draw(st.sampled_from([1, 2, 4, 8]))
            value = draw(st.sampled_from(INTERESTING)) & ((1 << (8 * width)) - 1)
            data[at:at + width] = value.to_bytes(width, draw(st.sampled_from(["little", "big"])))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 64))]
        elif op == "duplicate":
            chunk = data[at:at + draw(st.integers(1, 64))]
            data[at:at] = chunk
        else:
            del data[at:]
    return bytes(data)


def elf_regions(path) -> list[tuple[int, int]]:
    """The structural byte ranges of an ELF file: its header, program and section headers, and the sections
    the parsers read (notes, symbol and string tables, DWARF, .sframe, .gnu_debuglink)."""
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        out = [(0, elf["e_ehsize"]),
               (elf["e_phoff"], elf["e_phoff"] + elf["e_phnum"] * elf["e_phentsize"]),
               (elf["e_shoff"], elf["e_shoff"] + elf["e_shnum"] * elf["e_shentsize"])]
        for section in elf.iter_sections():
            if section["sh_type"] != "SHT_NOBITS" and section["sh_size"] and (
                    section.name.startswith((".debug", ".note", ".sym", ".str", ".sframe", ".gnu_debuglink"))
                    or section["sh_type"] in ("SHT_SYMTAB", "SHT_STRTAB", "SHT_NOTE")):
                out.append((section["sh_offset"], section["sh_offset"] + section["sh_size"]))
    return out
