"""Ranges and return pads for an executable, as the profiler's symbfile tooling writes them.

Ranges: one ``RangeV1`` per address range of every DWARF function (depth 0) and of every inlined call in it
(depth = nesting), each with the source file and line rows of the instructions that its inlined children do
not cover, and the call file/line of inline instances. Return pads: for every call instruction found by
disassembling the function ranges (capstone), the address after it minus 1 with the full inline stack
there, outermost first (the call line for outer entries, the pad's own line for the last).
"""

from __future__ import annotations

import bisect
import os

from fxscope.core.symbols.demangle import demangle
from fxscope.formats.dwarf.functions import read_dwarf
from fxscope.formats.dwarf.model import DwarfModel
from fxscope.formats.elf.reader import read_elf
from fxscope.formats.errors import FormatError
from fxscope.formats.gsym.model import InlineNode, LineRow, SourceFile
from fxscope.formats.symbfile.codec import Range, ReturnPad, lookup


def _path(source: SourceFile | None) -> str | None:
    if source is None:
        return None
    return f"{source.directory}/{source.base}" if source.directory else source.base


def _own_rows(rows: list[LineRow], lo: int, hi: int, children: list[InlineNode]) -> list[LineRow]:
    covered = [(clo, chi) for child in children for clo, chi in child.ranges]
    addresses = [r.address for r in rows]  # rows are sorted by address
    first, last = bisect.bisect_left(addresses, lo), bisect.bisect_left(addresses, hi)
    inside = rows[first:last]
    if first > 0 and not (inside and inside[0].address == lo):
        # the row in force at the range start began earlier (mid-statement inlining): it covers lo too
        inside.insert(0, LineRow(lo, rows[first - 1].file, rows[first - 1].line))
    own = [r for r in inside if not any(clo <= r.address < chi for clo, chi in covered)]
    # several rows at one address (a statement boundary the compiler emitted twice): the last one holds
    return [r for i, r in enumerate(own) if i + 1 == len(own) or own[i + 1].address != r.address]


def _range(func: str, lo: int, hi: int, rows: list[LineRow], children: list[InlineNode], depth: int,
           call_file: str | None, call_line: int | None) -> Range:
    own = _own_rows(rows, lo, hi, children)
    return Range(lo, hi - lo, demangle(func), _path(own[0].file) if own else None, call_file, call_line, depth,
                 [(r.address - lo, r.line) for r in own])


def build_ranges(model: DwarfModel) -> list[Range]:
    out: list[Range] = []

    def inline(nodes: list[InlineNode], rows: list[LineRow], depth: int) -> None:
        for node in nodes:
            for lo, hi in node.ranges:
                out.append(_range(node.name, lo, hi, rows, node.children, depth, _path(node.call_file),
                                  node.call_line or None))
            inline(node.children, rows, depth + 1)

    for fn in model.functions:
        rows = sorted((r for lo, hi in fn.ranges for r in model.all_rows(fn.cu_index, lo, hi)),
                      key=lambda r: r.address)
        for lo, hi in fn.ranges:
            out.append(_range(fn.name, lo, hi, rows, fn.inlines, 0, None, None))
        inline(fn.inlines, rows, 1)  # once per function: an inlined call may span its hot and cold parts
    return out


def build_return_pads(path: str, ranges: list[Range]) -> list[ReturnPad]:
    import capstone

    info = read_elf(path)
    arch = {
        "EM_X86_64": (capstone.CS_ARCH_X86, capstone.CS_MODE_64),
        "EM_AARCH64": (capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM),
    }.get(info.machine)
    if arch is None:
        raise FormatError(f"return pads: no disassembler set up for {info.machine}", path=path)
    md = capstone.Cs(*arch)
    md.detail = True
    with open(path, "rb") as fh:
        image = fh.read()

    def file_bytes(va: int, size: int) -> bytes | None:
        for seg in info.load_segments:
            if seg.vaddr <= va and va + size <= seg.vaddr + seg.filesz:
                off = seg.offset + va - seg.vaddr
                return image[off : off + size]
        return None

    by_start = sorted(ranges, key=lambda x: x.elf_va)
    starts = [x.elf_va for x in by_start]
    pads: dict[int, ReturnPad] = {}
    for r in ranges:
        if r.depth != 0:
            continue
        code = file_bytes(r.elf_va, r.length)
        if code is None:
            continue
        # inline ranges lie inside their function's ranges: only those starting in r can contain a pad in r
        local = by_start[bisect.bisect_left(starts, r.elf_va) : bisect.bisect_left(starts, r.elf_va + r.length)]
        for insn in md.disasm(code, r.elf_va):
            if capstone.CS_GRP_CALL in insn.groups:
                va = insn.address + insn.size - 1
                frames = lookup(local, va)
                if frames:
                    pads[va] = ReturnPad(va, [(f, fi or "", ln or 0) for f, fi, ln in reversed(frames)])
    return [pads[va] for va in sorted(pads)]


def create_symbfiles(elf_path: str | os.PathLike[str]) -> tuple[list[Range], list[ReturnPad]]:
    path = os.fspath(elf_path)
    model = read_dwarf(path)
    if not model.functions:
        raise FormatError("no DWARF functions: nothing to export (a stripped binary? use its debug file)", path=path)
    ranges = build_ranges(model)
    return ranges, build_return_pads(path, ranges)
