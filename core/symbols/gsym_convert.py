"""ELF + DWARF -> GSYM, the way ``llvm-gsymutil --convert`` does it.

DWARF functions (one FunctionInfo per address range, with line table and inline tree) are merged with the
symbol table's function symbols in executable sections, then finalized as LLVM's ``GsymCreator`` does:
sorted, equal ranges keep the richer entry, entries inside another are pruned, a zero-size symbol is
replaced by a function containing its address, and a zero-size last entry is extended to the end of its
text range. The result answers lookups as LLVM 19's file does (see tests).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from fxscope.core.atomic_file import write_atomic
from fxscope.formats.dwarf.functions import read_dwarf
from fxscope.formats.dwarf.model import DwarfFunction, DwarfModel
from fxscope.formats.elf.reader import read_elf
from fxscope.formats.errors import FormatError
from fxscope.formats.gc_pause import paused_gc
from fxscope.formats.gsym.model import FunctionInfo, InlineNode, LineRow
from fxscope.formats.gsym.writer import UINT32_MAX, UINT64_MAX, GsymEncodeError, write_gsym


@dataclass
class ConversionReport:
    input: str
    output: str
    dwarf_functions: int = 0
    symbol_functions: int = 0
    pruned: int = 0
    total: int = 0
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            f"Input file: {self.input}",
            f"Output file: {self.output}",
            f"Loaded {self.dwarf_functions} functions from DWARF.",
            f"Loaded {self.symbol_functions} functions from symbol table.",
            f"Pruned {self.pruned} functions, ended with {self.total} total",
            *(f"warning: {w}" for w in self.warnings),
        ]


def _clip_inline(nodes: list[InlineNode], parent: list[tuple[int, int]]) -> list[InlineNode]:
    """Children whose ranges lie inside the parent's; a child left without ranges is dropped."""
    out = []
    single = parent[0] if len(parent) == 1 else None
    for node in nodes:
        if single is not None:
            plo, phi = single
            ranges = [r for r in node.ranges if plo <= r[0] and r[1] <= phi]
        else:
            ranges = [r for r in node.ranges if any(plo <= r[0] and r[1] <= phi for plo, phi in parent)]
        if not ranges:
            continue
        out.append(InlineNode(node.name, ranges, node.call_file, node.call_line, _clip_inline(node.children, ranges)))
    return out


def dwarf_function_infos(model: DwarfModel, fn: DwarfFunction, text: list[tuple[int, int]]) -> list[FunctionInfo]:
    infos = []
    for lo, hi in fn.ranges:
        if text and not any(tlo <= lo < thi for tlo, thi in text):
            continue  # dead-stripped or not in code
        lines = model.line_rows(fn.cu_index, lo, hi)
        if lines is None and fn.decl_file is not None and fn.decl_line:
            lines = [LineRow(lo, fn.decl_file, fn.decl_line)]
        inline = None
        if fn.inlines:
            children = _clip_inline(fn.inlines, [(lo, hi)])
            if children:
                inline = InlineNode(fn.name, [(lo, hi)], None, 0, children)
        infos.append(FunctionInfo(lo, hi - lo, fn.name, lines or None, inline))
    return infos


def _sort_key(f: FunctionInfo) -> tuple:
    # LLVM sorts by range, then inline info, then line table (absent before present): rich entries last
    return (f.start, f.start + f.size, f.inline is not None, len(f.lines or ()))


def finalize(funcs: list[FunctionInfo], text: list[tuple[int, int]]) -> tuple[list[FunctionInfo], int]:
    funcs = sorted(funcs, key=_sort_key)
    if not funcs:
        return [], 0
    out = [funcs[0]]
    for cur in funcs[1:]:
        prev = out[-1]
        p_end, c_end = prev.start + prev.size, cur.start + cur.size
        if (prev.start, p_end) == (cur.start, c_end):
            out[-1] = cur  # the later one is at least as rich
        elif prev.size and cur.size and cur.start < p_end and c_end > prev.start:
            if not (prev.start <= cur.start and c_end <= p_end):
                out.append(cur)  # partial overlap: both kept, lookups in the overlap find the later one
        elif prev.size == 0 and cur.start <= prev.start < c_end:
            out[-1] = cur
        else:
            out.append(cur)
    last = out[-1]
    if last.size == 0:
        for lo, hi in text:
            if lo <= last.start < hi:
                last.size = hi - last.start
                break
    return out, len(funcs) - len(out)


def encodable(funcs: list[FunctionInfo], base: int | None, warnings: list[str]) -> list[FunctionInfo]:
    """The functions GSYM can hold: a size of 4 GiB or more, a start below the base address (the lowest load
    segment) or more than 64 bits above it come only from a corrupt symbol table or DWARF, and are dropped
    with one warning per kind instead of failing the whole conversion."""
    low = base or 0
    problems = (
        ("with a size of 4 GiB or more", lambda f: not 0 <= f.size <= UINT32_MAX),
        ("below the base address" + (f" 0x{low:x}" if base is not None else ""), lambda f: f.start < low),
        ("more than 64 bits above the base address", lambda f: f.start - low > UINT64_MAX),
    )
    kept = funcs
    for what, bad in problems:
        dropped = [f for f in kept if bad(f)]
        if dropped:
            first = dropped[0]
            warnings.append(f"{len(dropped)} function(s) {what} ignored (the first: {first.name!r} at "
                            f"0x{first.start:x}, size 0x{first.size:x})")
            kept = [f for f in kept if not bad(f)]
    return kept


def convert_elf_to_gsym(elf_path: str | os.PathLike[str], out_path: str | os.PathLike[str],
                        dwarf: DwarfModel | None = None) -> ConversionReport:
    """Convert one ELF file (with or without DWARF); the output is written atomically. ``dwarf``: the file's
    DWARF model when the caller has read it already (see :func:`build_gsym`)."""
    data, report = build_gsym(elf_path, dwarf)
    report.output = os.fspath(out_path)
    write_atomic(out_path, data)
    return report


def build_gsym(elf_path: str | os.PathLike[str], dwarf: DwarfModel | None = None) -> tuple[bytes, ConversionReport]:
    """The GSYM bytes for one ELF file, and what the conversion found. ``dwarf``: the file's DWARF model if the
    caller has it (the symbolizer keeps it for columns): decoding a large library's DWARF is the conversion's
    biggest cost, so it is decoded once."""
    with paused_gc():
        return _build_gsym(elf_path, dwarf)


def _build_gsym(elf_path: str | os.PathLike[str], dwarf: DwarfModel | None) -> tuple[bytes, ConversionReport]:
    path = os.fspath(elf_path)
    facts = read_elf(path)
    model = dwarf if dwarf is not None else read_dwarf(path)
    report = ConversionReport(path, "", warnings=list(model.warnings))
    funcs: list[FunctionInfo] = []
    for fn in model.functions:
        infos = dwarf_function_infos(model, fn, facts.text_ranges)
        funcs.extend(infos)
    report.dwarf_functions = len(funcs)
    for addr, size, name in facts.functions:
        funcs.append(FunctionInfo(addr, size, name))
    report.symbol_functions = len(facts.functions)
    funcs = encodable(funcs, facts.base_address, report.warnings)
    final, report.pruned = finalize(funcs, facts.text_ranges)
    final = encodable(final, facts.base_address, report.warnings)  # a last entry extended over a huge section
    report.total = len(final)
    try:
        return write_gsym(final, facts.build_id[:20], facts.base_address), report
    except GsymEncodeError as exc:
        raise FormatError(f"cannot convert to GSYM: {exc.message}", path=path) from None
