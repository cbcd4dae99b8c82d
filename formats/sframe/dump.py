"""Text dump of an SFrame section in the layout of ``objdump --sframe`` (binutils 2.40 for version 1).

The format strings are libsframe's ``dump_sframe`` (spec Part 6), so the output can be diffed against
objdump's; version 2 and 3 sections use the later dumper's header lines (fixed FP/RA offsets, ``f`` for a
fixed RA).
"""

from __future__ import annotations

from collections.abc import Iterator

from fxscope.formats.sframe.section import (
    ABI_AARCH64_BE,
    ABI_AARCH64_LE,
    F_FDE_FUNC_START_PCREL,
    F_FDE_SORTED,
    F_FRAME_POINTER,
    FDE_PCMASK,
    SFrameSection,
)

_VERSIONS = {1: "SFRAME_VERSION_1", 2: "SFRAME_VERSION_2", 3: "SFRAME_VERSION_3"}


def _flags(version: int, flags: int) -> str:
    names = []
    if flags & F_FDE_SORTED:
        names.append("SFRAME_F_FDE_SORTED")
    if flags & F_FRAME_POINTER:
        names.append("SFRAME_F_FRAME_POINTER")
    if version >= 2 and flags & F_FDE_FUNC_START_PCREL:
        names.append("SFRAME_F_FDE_FUNC_START_PCREL")
    if not names:
        return "NONE"
    if version == 1:
        return names[-1]  # binutils 2.40 strcpy()s each name over the previous one
    return ",\n           ".join(names)


def dump_lines(section: SFrameSection) -> Iterator[str]:
    """The dump after objdump's ``Contents of the SFrame section .sframe:`` line, as text chunks."""
    h = section.header
    yield "\n  Header :\n\n"
    yield f"    Version: {_VERSIONS.get(h.version, 'NULL')}\n"
    yield f"    Flags: {_flags(h.version, h.flags)}\n"
    if h.version >= 2:
        if h.fixed_fp_offset:
            yield f"    CFA fixed FP offset: {h.fixed_fp_offset}\n"
        if h.fixed_ra_offset:
            yield f"    CFA fixed RA offset: {h.fixed_ra_offset}\n"
    yield f"    Num FDEs: {len(section)}\n"
    yield f"    Num FREs: {h.num_fres}\n"
    yield "\n  Function Index :\n"
    aarch64 = h.abi in (ABI_AARCH64_BE, ABI_AARCH64_LE)
    for i in range(len(section)):
        start = int(section.fde_start[i])
        pcmask = section.fde_type(i) == FDE_PCMASK
        line = f"\n    func idx [{i}]: pc = 0x{start & 0xFFFFFFFFFFFFFFFF:x}, size = {int(section.fde_size[i])} bytes"
        if aarch64 and section.pauth_key_b(i):
            line += ", pauth = B key"
        yield line
        yield "\n    {:<7}{:<8} {:<10}{:<10}{:<13}".format("STARTPC", "[m]" if pcmask else "   ", "CFA", "FP", "RA")
        for fre in section.fres(i):
            pc = fre.start if pcmask else start + fre.start
            offsets = list(fre.offsets)
            cfa = f"{'sp' if fre.base_reg == 1 else 'fp'}+{offsets[0]}" if offsets else "u"
            rest = offsets[1:]
            if h.fixed_ra_offset:
                ra = "f" if h.version >= 2 else "u"
            else:
                ra = f"c{rest.pop(0):+d}" if rest else "u"
            if h.fixed_fp_offset:
                fp = f"c{h.fixed_fp_offset:+d}"
            else:
                fp = f"c{rest.pop(0):+d}" if rest else "u"
            ra += "[s]" if fre.mangled_ra else "   "
            yield f"\n    {pc & 0xFFFFFFFFFFFFFFFF:016x}  {cfa:<10}{fp:<10}{ra:<13}"
        yield "\n"


def objdump_text(section: SFrameSection, display_name: str, file_format: str) -> str:
    """The whole ``objdump --sframe FILE`` output."""
    return (
        f"\n{display_name}:     file format {file_format}\n\n"
        "Contents of the SFrame section .sframe:" + "".join(dump_lines(section))
    )
