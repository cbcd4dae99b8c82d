"""DWARF (4 and 5) to the function model (:mod:`fxscope.formats.dwarf.model`): :func:`read_dwarf`, and the
pyelftools walk it falls back to.

:func:`read_dwarf` takes the hand-written decoder (:mod:`fxscope.formats.dwarf.fast`) and, where that one does
not handle a file (or meets malformed data), this module's walk through pyelftools, which also words the
errors; the fallback's reason is the model's first warning. Both walk compile units the way LLVM's
``DwarfTransformer`` does (``../shared/specs/gsym.md``), because a GSYM made from the result must answer
lookups as llvm-gsymutil's does: one function per address range (gcc's hot/cold split gives two), names from
the linkage name or the short name through ``abstract_origin``/``specification``, inlined calls with their call
file, line and column. The model's line rows are then restricted to each range with runs of the same file
and line collapsed (:meth:`~fxscope.formats.dwarf.model.DwarfModel.line_rows`).

The model is independent of GSYM (paths and names are strings), so symbfile export uses it too.
"""

from __future__ import annotations

import os

from fxscope.formats.dwarf.model import (
    DwarfFunction,
    DwarfModel,
    LineSequence,
    bad_line_rows,
    line_number,
    source_file,
)
from fxscope.formats.errors import FormatError
from fxscope.formats.gsym.model import InlineNode, SourceFile


def _attr_str(die, name: str) -> str | None:
    attr = die.attributes.get(name)
    if attr is None:
        return None
    value = attr.value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _follow(die, getter, depth: int = 0):
    """Value of ``getter(die)``, following abstract_origin and specification as LLVM's getName does."""
    value = getter(die)
    if value or depth > 8:
        return value
    for ref in ("DW_AT_abstract_origin", "DW_AT_specification"):
        if ref in die.attributes:
            try:
                target = die.get_DIE_from_attribute(ref)
            except Exception:  # noqa: BLE001 - a dangling reference: no name from there
                continue
            value = _follow(target, getter, depth + 1)
            if value:
                return value
    return None


def die_name(die) -> str | None:
    linkage = _follow(die, lambda d: _attr_str(d, "DW_AT_linkage_name") or _attr_str(d, "DW_AT_MIPS_linkage_name"))
    if linkage:
        return linkage
    return _follow(die, lambda d: _attr_str(d, "DW_AT_name"))


class _CU:
    def __init__(self, dwarf, cu) -> None:
        self.cu = cu
        self.dwarf = dwarf
        top = cu.get_top_DIE()
        self.top = top
        self.comp_dir = _attr_str(top, "DW_AT_comp_dir") or ""
        self.version = cu["version"]
        self.lineprog = dwarf.line_program_for_CU(cu)
        self.base = top.attributes["DW_AT_low_pc"].value if "DW_AT_low_pc" in top.attributes else 0
        self._files: dict[int, SourceFile | None] = {}

    def file(self, index: int) -> SourceFile | None:
        """DWARF file index -> (directory, base name) of the absolute path, as LLVM's AbsoluteFilePath."""
        if index in self._files:
            return self._files[index]
        result = None
        lp = self.lineprog
        if lp is not None:
            entries = lp["file_entry"]
            dirs = lp["include_directory"]
            i = index if self.version >= 5 else index - 1
            if 0 <= i < len(entries):
                entry = entries[i]
                result = source_file(self.version, entry.name, entry.dir_index, dirs, self.comp_dir)
        self._files[index] = result
        return result

    def ranges(self, die) -> list[tuple[int, int]]:
        attrs = die.attributes
        if "DW_AT_low_pc" in attrs and "DW_AT_high_pc" in attrs:
            lo = attrs["DW_AT_low_pc"].value
            hi_attr = attrs["DW_AT_high_pc"]
            hi = hi_attr.value if hi_attr.form == "DW_FORM_addr" else lo + hi_attr.value
            return [(lo, hi)]
        if "DW_AT_ranges" in attrs:
            rl = self.dwarf.range_lists()
            if rl is None:
                return []
            try:
                entries = rl.get_range_list_at_offset(attrs["DW_AT_ranges"].value, cu=self.cu)
            except Exception:  # noqa: BLE001 - corrupt range list: the function is skipped with its ranges
                return []
            out = []
            base = self.base
            for e in entries:
                if hasattr(e, "base_address"):
                    base = e.base_address
                    continue
                lo, hi = (e.begin_offset, e.end_offset) if e.is_absolute else (base + e.begin_offset, base + e.end_offset)
                out.append((lo, hi))
            return out
        return []

    def sequences(self, warnings: list[str]) -> list[LineSequence]:
        if self.lineprog is None:
            return []
        seqs: list[LineSequence] = []
        cur = LineSequence([], [], [], [], [])
        for entry in self.lineprog.get_entries():
            st = entry.state
            if st is None:
                continue
            cur.addresses.append(st.address)
            cur.files.append(self.file(st.file))
            cur.lines.append(st.line)
            cur.end.append(bool(st.end_sequence))
            cur.columns.append(st.column)
            if st.end_sequence:
                bad = bad_line_rows(cur.lines) if len(cur.addresses) > 1 and cur.high > cur.low else None
                if bad is not None:
                    warnings.append(f"compile unit at 0x{self.cu.cu_offset:x}: a line sequence at "
                                    f"0x{min(cur.addresses):x} has line {bad}: sequence ignored")
                elif len(cur.addresses) > 1 and cur.high > cur.low:
                    order = sorted(range(len(cur.addresses)), key=lambda k: cur.addresses[k])
                    seqs.append(LineSequence(
                        [cur.addresses[k] for k in order], [cur.files[k] for k in order],
                        [cur.lines[k] for k in order], [cur.end[k] for k in order],
                        [cur.columns[k] for k in order],
                    ))
                cur = LineSequence([], [], [], [], [])
        seqs.sort(key=lambda s: s.low)
        return seqs


def _inline_children(cu: _CU, die, depth: int = 0) -> list[InlineNode]:
    out: list[InlineNode] = []
    if depth > 256:
        return out
    for child in die.iter_children():
        tag = child.tag
        if tag == "DW_TAG_inlined_subroutine":
            ranges = [(lo, hi) for lo, hi in cu.ranges(child) if hi > lo]
            if not ranges:
                continue
            call_file_idx = child.attributes.get("DW_AT_call_file")
            call_file = cu.file(call_file_idx.value) if call_file_idx is not None else None
            if call_file is None:
                continue
            call_line = line_number(child.attributes["DW_AT_call_line"].value) \
                if "DW_AT_call_line" in child.attributes else 0
            column = line_number(child.attributes["DW_AT_call_column"].value) \
                if "DW_AT_call_column" in child.attributes else 0
            out.append(InlineNode(die_name(child) or "", ranges, call_file, call_line,
                                  _inline_children(cu, child, depth + 1), column))
        elif tag in ("DW_TAG_lexical_block", "DW_TAG_subprogram"):
            out.extend(_inline_children(cu, child, depth + 1))
    return out


def read_dwarf(path: str | os.PathLike[str], fast: bool = True) -> DwarfModel:
    """Functions with DWARF ranges and line sequences of every compile unit of an ELF file.

    The hand-written decoder (:mod:`fxscope.formats.dwarf.fast`, ~20x faster on libpython) reads what it supports;
    anything else (and any malformed file) goes through pyelftools, which also words the errors. A fallback is
    never silent: its reason is the model's first warning (``fast DWARF decoder not used: ...``), so a bug in
    the fast decoder shows up as a warning rather than as a slow conversion. ``fast=False`` forces pyelftools.
    """
    reason = ""
    if fast:
        from fxscope.formats.dwarf.fast import read_dwarf_fast

        try:
            return read_dwarf_fast(path)
        except Exception as exc:  # noqa: BLE001 - Unsupported, or malformed data: the pyelftools walk decides what it is
            reason = f"fast DWARF decoder not used: {type(exc).__name__}: {exc}"
    model = read_dwarf_pyelftools(path)
    if reason:
        model.warnings.insert(0, reason)
    return model


def read_dwarf_pyelftools(path: str | os.PathLike[str]) -> DwarfModel:
    """:func:`read_dwarf` through pyelftools only (the reference for the fast decoder)."""
    from elftools.common.exceptions import DWARFError, ELFError
    from elftools.elf.elffile import ELFFile

    from fxscope.formats.elf.layout import check_sections

    warnings: list[str] = []
    functions: list[DwarfFunction] = []
    sequences: list[list[LineSequence]] = []
    try:
        fh = open(path, "rb")  # noqa: SIM115 - the with below closes it; only open's OSError is "cannot open"
    except OSError as exc:
        raise FormatError(exc.strerror or "cannot open", path=str(path)) from None
    where = "the ELF header"
    with fh:
        try:
            elf = ELFFile(fh)
            check_sections(elf, os.fstat(fh.fileno()).st_size, str(path))  # before pyelftools reads a claimed size
            if not elf.has_dwarf_info():
                return DwarfModel([], [], [])
            where = "the DWARF sections"
            dwarf = elf.get_dwarf_info(relocate_dwarf_sections=True)
            where = "the first compile unit header (.debug_info offset 0x0)"
            for cu_index, cu in enumerate(dwarf.iter_CUs()):
                where = f"the compile unit at .debug_info offset 0x{cu.cu_offset:x}"
                c = _CU(dwarf, cu)
                if c.top.tag == "DW_TAG_skeleton_unit" or "DW_AT_dwo_name" in c.top.attributes \
                        or "DW_AT_GNU_dwo_name" in c.top.attributes:
                    warnings.append(f"compile unit at 0x{cu.cu_offset:x} is a split-DWARF skeleton "
                                    "(its .dwo file is not read): only the symbol table covers it")
                    sequences.append([])
                    continue
                sequences.append(c.sequences(warnings))
                for die in cu.iter_DIEs():
                    if die.tag != "DW_TAG_subprogram":
                        continue
                    ranges = [(lo, hi) for lo, hi in c.ranges(die) if hi > lo]
                    if not ranges:
                        continue
                    name = die_name(die)
                    if not name:
                        continue
                    decl = die.attributes.get("DW_AT_decl_file")
                    decl_line = line_number(die.attributes["DW_AT_decl_line"].value) \
                        if "DW_AT_decl_line" in die.attributes else 0
                    inlines = _inline_children(c, die)
                    functions.append(DwarfFunction(
                        name, ranges, c.file(decl.value) if decl is not None else None, decl_line, cu_index,
                        inlines, bool(inlines),
                    ))
                where = f"the compile unit header after .debug_info offset 0x{cu.cu_offset:x}"
        except FormatError:
            raise
        except (ELFError, DWARFError) as exc:
            raise FormatError(f"cannot read DWARF: {where}: {exc}", path=str(path)) from None
        except Exception as exc:  # noqa: BLE001 - pyelftools raises plain errors (struct, KeyError) on corrupt sections
            raise FormatError(f"corrupt DWARF or ELF data in {where} ({type(exc).__name__}: {exc})",
                              path=str(path)) from None
    return DwarfModel(functions, sequences, warnings)
