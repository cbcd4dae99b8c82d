"""Hand-written DWARF 4/5 decoding for :func:`fxscope.formats.dwarf.functions.read_dwarf`: the same model as
the pyelftools walk, ~20x faster (``tests/bench/bench_dwarf.py``: libpython 19x).

pyelftools builds a Python object per DIE, attribute and line-program entry; a large library (libpython:
680,000 DIEs, 620,000 line rows) then takes half a minute. This decoder reads the sections straight from
the file (their offsets through :mod:`fxscope.formats.elf.sections`) and produces the model the pyelftools walk
produces, DIE for DIE:

- ``.debug_info`` is walked with per-abbreviation plans (:mod:`~fxscope.formats.dwarf.fast_forms`): a DIE that
  is not a subprogram, inlined subroutine or lexical block is skipped by its precomputed fixed size (or a
  short per-form skip), and its whole subtree through ``DW_AT_sibling`` when it is a type or a call site
  (their children are members, enumerators, parameters: never code), except a class defined inside a
  function, whose member functions GCC nests in it. Only the attributes the model uses are
  decoded (names through ``.debug_str``/``.debug_str_offsets``/``.debug_line_str``, ``low_pc``/``high_pc``,
  ranges through ``.debug_ranges``/``.debug_rnglists``/``.debug_addr``, call and declaration sites, origin
  references).
- names follow ``abstract_origin``/``specification`` as the pyelftools walk does; a referenced DIE that the
  walk did not record (another unit, a skipped subtree) is decoded on its own at its offset.
- ``.debug_line`` programs are run by a small state machine (:mod:`~fxscope.formats.dwarf.fast_lines`).

Anything it does not handle raises :class:`Unsupported` (relocatable objects, compressed sections, big-endian
files, type units, supplementary-file forms, ``DW_FORM_indirect``, VLIW line programs, ``DW_LNE_define_file``),
and so does any malformed data: the caller then takes the pyelftools path, which keeps its behaviour and its
error messages for those files, and records why in the model's first warning.
"""

from __future__ import annotations

import mmap
import os

from elftools.elf.constants import SH_FLAGS

from fxscope.formats.dwarf.fast_forms import (
    ADDRX,
    AT_ABSTRACT_ORIGIN,
    AT_ADDR_BASE,
    AT_CALL_COLUMN,
    AT_CALL_FILE,
    AT_CALL_LINE,
    AT_COMP_DIR,
    AT_DECL_FILE,
    AT_DECL_LINE,
    AT_DWO_NAME,
    AT_GNU_DWO_NAME,
    AT_HIGH_PC,
    AT_LINKAGE_NAME,
    AT_LOW_PC,
    AT_MIPS_LINKAGE_NAME,
    AT_NAME,
    AT_RANGES,
    AT_RNGLISTS_BASE,
    AT_SPECIFICATION,
    AT_STMT_LIST,
    AT_STR_OFFSETS_BASE,
    F_ADDR,
    F_LINE_STRP,
    F_REF_ADDR,
    F_RNGLISTX,
    F_STRP,
    KEPT,
    LOCAL_REFS,
    STRX,
    TAG_INLINED,
    TAG_SKELETON,
    TAG_SUBPROGRAM,
    TOP_KEPT,
    Unsupported,
    initial_length,
    parse_abbrevs,
    read_attrs,
    skip_plan,
    uleb,
)
from fxscope.formats.dwarf.fast_lines import read_line_header, run_line_program
from fxscope.formats.dwarf.model import (
    DwarfFunction,
    DwarfModel,
    LineSequence,
    bad_line_rows,
    line_number,
    source_file,
)
from fxscope.formats.elf.sections import SHT_NOBITS, read_section_table
from fxscope.formats.errors import FormatError
from fxscope.formats.gc_pause import paused_gc
from fxscope.formats.gsym.model import InlineNode, SourceFile


class _Unit:
    __slots__ = (
        "abbrevs",
        "addr_base",
        "addr_size",
        "base",
        "comp_dir",
        "die_start",
        "end",
        "file_cache",
        "files",
        "lineprog",
        "nodes",
        "off_size",
        "offset",
        "rnglists_base",
        "str_offsets_base",
        "top",
        "version",
    )


class FastDwarf:
    """The sections of one ELF file and the decoders over them."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                raise Unsupported("empty file")
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self.sections = self._sections(mm, path)
        finally:
            mm.close()
        self.info = self.sections.get(".debug_info", b"")
        self.abbrev = self.sections.get(".debug_abbrev", b"")
        self.line = self.sections.get(".debug_line", b"")
        self.str = self.sections.get(".debug_str", b"")
        self.line_str = self.sections.get(".debug_line_str", b"")
        self.str_offsets = self.sections.get(".debug_str_offsets", b"")
        self.addr = self.sections.get(".debug_addr", b"")
        self.ranges_v4 = self.sections.get(".debug_ranges", b"")
        self.rnglists = self.sections.get(".debug_rnglists", b"")
        self._abbrev_cache: dict = {}
        self._str_cache: dict[int, bytes] = {}
        self.units: list[_Unit] = []
        self._names: dict[int, tuple] = {}

    # ------------------------------------------------------------------------------------------ ELF
    @staticmethod
    def _sections(mm: mmap.mmap, path: str) -> dict[str, bytes]:
        """The ``.debug_*`` sections' bytes by name, through :mod:`fxscope.formats.elf.sections`."""
        if mm[:4] != b"\x7fELF":
            raise Unsupported("not ELF")
        if mm[5] != 1:
            raise Unsupported("big-endian ELF")
        try:
            table = read_section_table(mm, path)
        except FormatError as exc:
            raise Unsupported(f"section table: {exc.message}") from None
        if table is None or len(table) == 0 or not 0 < table.shstrndx < len(table):
            raise Unsupported("no usable section table")
        if table.e_type == 1:
            raise Unsupported("relocatable object: DWARF needs relocations")
        out: dict[str, bytes] = {}
        headers = table.headers
        for index, name in enumerate(table.names()):
            if name.startswith((".zdebug", ".rela.debug", ".rel.debug")):
                raise Unsupported(f"section {name}")
            if not name.startswith(".debug_") or name in out:
                continue
            if int(headers[index]["flags"]) & SH_FLAGS.SHF_COMPRESSED:
                raise Unsupported(f"compressed section {name}")
            if int(headers[index]["type"]) == SHT_NOBITS:
                raise Unsupported(f"{name} has no bytes in the file")
            try:
                out[name] = bytes(table.section_bytes(index))
            except FormatError:
                raise Unsupported(f"{name} runs past the end of the file") from None
        return out

    # ------------------------------------------------------------------------------------------ strings
    def _str_at(self, section: bytes, offset: int) -> bytes:
        end = section.index(b"\0", offset)
        return section[offset:end]

    def _string(self, unit: _Unit, form: int, value) -> bytes | int | bool:
        """An attribute's value as pyelftools gives it: strings as bytes, addresses resolved."""
        if form == F_STRP:
            s = self._str_cache.get(value)
            if s is None:
                s = self._str_cache[value] = self._str_at(self.str, value)
            return s
        if form == F_LINE_STRP:
            return self._str_at(self.line_str, value)
        if form in STRX:
            if unit.str_offsets_base is None:
                raise Unsupported("strx without DW_AT_str_offsets_base")
            at = unit.str_offsets_base + value * unit.off_size
            off = int.from_bytes(self.str_offsets[at:at + unit.off_size], "little")
            return self._string(unit, F_STRP, off)
        if form in ADDRX:
            return self._address(unit, value)
        if form == F_RNGLISTX:
            if unit.rnglists_base is None:
                raise Unsupported("rnglistx without DW_AT_rnglists_base")
            at = unit.rnglists_base + value * unit.off_size
            return unit.rnglists_base + int.from_bytes(self.rnglists[at:at + unit.off_size], "little")
        return value

    def _address(self, unit: _Unit, index: int) -> int:
        if unit.addr_base is None or not self.addr:
            raise Unsupported("addrx without DW_AT_addr_base")
        at = unit.addr_base + index * unit.addr_size
        if at + unit.addr_size > len(self.addr):
            raise Unsupported("addrx past .debug_addr")
        return int.from_bytes(self.addr[at:at + unit.addr_size], "little")

    # ------------------------------------------------------------------------------------------ units
    def read_units(self) -> None:
        data = self.info
        pos = 0
        while pos < len(data):
            unit = _Unit()
            unit.offset = pos
            length, off_size, pos = initial_length(data, pos)
            end = pos + length
            if end > len(data) or length < 2:
                raise Unsupported("unit runs past .debug_info")
            version = int.from_bytes(data[pos:pos + 2], "little")
            pos += 2
            if version >= 5:
                unit_type, addr_size = data[pos], data[pos + 1]
                abbrev_off = int.from_bytes(data[pos + 2:pos + 2 + off_size], "little")
                pos += 2 + off_size
                if unit_type in (4, 5):  # skeleton / split_compile: dwo id
                    pos += 8
                elif unit_type not in (1, 3):
                    raise Unsupported(f"unit type {unit_type}")
            elif version >= 2:
                abbrev_off = int.from_bytes(data[pos:pos + off_size], "little")
                addr_size = data[pos + off_size]
                pos += off_size + 1
            else:
                raise Unsupported(f"DWARF version {version}")
            if version > 5 or addr_size not in (4, 8):
                raise Unsupported(f"DWARF version {version}, address size {addr_size}")
            unit.end, unit.version, unit.addr_size, unit.off_size = end, version, addr_size, off_size
            key = (abbrev_off, addr_size, off_size, version)
            abbrevs = self._abbrev_cache.get(key)
            if abbrevs is None:
                abbrevs = self._abbrev_cache[key] = parse_abbrevs(self.abbrev, abbrev_off, addr_size, off_size,
                                                                   version)
            unit.abbrevs = abbrevs
            unit.die_start = pos
            self.units.append(unit)
            pos = end

    def unit_top(self, unit: _Unit) -> None:
        data = self.info
        code, pos = uleb(data, unit.die_start)
        ab = unit.abbrevs[code]
        attrs, pos = read_attrs(data, pos, ab.plan, TOP_KEPT)
        unit.top = (ab, attrs, pos)

        def raw(at):
            got = attrs.get(at)
            return got[1] if got is not None else None

        unit.str_offsets_base = raw(AT_STR_OFFSETS_BASE)
        unit.addr_base = raw(AT_ADDR_BASE)
        unit.rnglists_base = raw(AT_RNGLISTS_BASE)
        low = attrs.get(AT_LOW_PC)
        unit.base = self._string(unit, *low) if low is not None else 0
        comp = attrs.get(AT_COMP_DIR)
        unit.comp_dir = _text(self._string(unit, *comp)) if comp is not None else ""
        unit.file_cache = {}
        unit.files = None
        unit.lineprog = raw(AT_STMT_LIST)

    def is_split_skeleton(self, unit: _Unit) -> bool:
        ab, attrs, _ = unit.top
        return ab.tag == TAG_SKELETON or AT_DWO_NAME in attrs or AT_GNU_DWO_NAME in attrs

    def walk(self, unit: _Unit) -> list:
        """The subprogram / inlined / lexical-block DIEs of a unit: (offset, tag, parent index, attrs); the parent
        index is negative where the DIE's parent is not one of them."""
        data = self.info
        abbrevs = unit.abbrevs
        ab, _, pos = unit.top
        end = unit.end
        base = unit.offset
        nodes: list = []
        names = self._names
        stack = [-1] if ab.children else []
        if not ab.children:
            return nodes
        kept = KEPT
        while pos < end:
            die_off = pos
            code = data[pos]
            if code < 0x80:
                pos += 1
            else:
                code, pos = uleb(data, pos)
            if code == 0:
                stack.pop()
                if not stack:
                    break
                continue
            ab = abbrevs[code]
            if ab.kind == 0:
                # the stack's top is -1 outside any subprogram, a node index or -2 inside one
                if ab.skip_subtree and not (ab.local_class and stack[-1] != -1):
                    at = pos + ab.sib_at
                    target = base + int.from_bytes(data[at:at + ab.sib_size], "little")
                    if target <= pos or target > end:
                        raise Unsupported("bad DW_AT_sibling")
                    pos = target
                    continue
                fixed = ab.fixed
                pos = pos + fixed if fixed is not None else skip_plan(data, pos, ab.plan)
                if ab.children:
                    stack.append(-1 if stack[-1] == -1 else -2)
                continue
            attrs, pos = read_attrs(data, pos, ab.plan, kept)
            index = len(nodes)
            nodes.append((die_off, ab.kind, stack[-1], attrs))
            names[die_off] = (unit, attrs)
            if ab.children:
                stack.append(index)
        if pos > end:
            raise Unsupported("DIE runs past its unit")
        return nodes

    # ------------------------------------------------------------------------------------------ names
    def _die_attrs(self, offset: int) -> tuple[_Unit, dict] | None:
        """Unit and kept attributes of the DIE at a .debug_info offset (None where there is none)."""
        got = self._names.get(offset)
        if got is not None:
            return got
        lo, hi = 0, len(self.units)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.units[mid].offset <= offset:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0:
            return None
        unit = self.units[lo - 1]
        if not unit.die_start <= offset < unit.end:
            return None
        code, pos = uleb(self.info, offset)
        if code == 0 or code >= len(unit.abbrevs) or unit.abbrevs[code] is None:
            return None
        attrs, _ = read_attrs(self.info, pos, unit.abbrevs[code].plan, KEPT)
        got = self._names[offset] = (unit, attrs)
        return got

    def _ref(self, unit: _Unit, attrs: dict, at: int) -> int | None:
        form, value = attrs[at]
        if form in LOCAL_REFS:
            return unit.offset + value
        if form == F_REF_ADDR:
            return value
        raise Unsupported(f"reference form 0x{form:x}")

    def _attr_str(self, unit: _Unit, attrs: dict, at: int) -> str | None:
        got = attrs.get(at)
        if got is None:
            return None
        value = self._string(unit, *got)
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        return str(value)

    def _follow(self, unit: _Unit, attrs: dict, ats: tuple[int, ...], depth: int = 0) -> str | None:
        value = None
        for at in ats:
            value = self._attr_str(unit, attrs, at)
            if value:
                break
        if value or depth > 8:
            return value
        for ref in (AT_ABSTRACT_ORIGIN, AT_SPECIFICATION):
            if ref in attrs:
                target = self._die_attrs(self._ref(unit, attrs, ref))
                if target is None:
                    continue
                value = self._follow(target[0], target[1], ats, depth + 1)
                if value:
                    return value
        return None

    def die_name(self, unit: _Unit, attrs: dict) -> str | None:
        linkage = self._follow(unit, attrs, (AT_LINKAGE_NAME, AT_MIPS_LINKAGE_NAME))
        if linkage:
            return linkage
        return self._follow(unit, attrs, (AT_NAME,))

    # ------------------------------------------------------------------------------------------ ranges
    def ranges(self, unit: _Unit, attrs: dict) -> list[tuple[int, int]]:
        low = attrs.get(AT_LOW_PC)
        high = attrs.get(AT_HIGH_PC)
        if low is not None and high is not None:
            lo = self._string(unit, *low)
            hi = self._string(unit, *high)
            return [(lo, hi if high[0] == F_ADDR else lo + hi)]
        rng = attrs.get(AT_RANGES)
        if rng is None:
            return []
        offset = self._string(unit, *rng)
        try:
            if unit.version >= 5:
                return self._rnglist(unit, offset)
            return self._rangelist_v4(unit, offset)
        except (IndexError, ValueError):
            return []

    def _rangelist_v4(self, unit: _Unit, offset: int) -> list[tuple[int, int]]:
        data, size = self.ranges_v4, unit.addr_size
        max_addr = (1 << (8 * size)) - 1
        base = unit.base
        out = []
        pos = offset
        while True:
            if pos + 2 * size > len(data):
                raise IndexError("range list past the end")
            begin = int.from_bytes(data[pos:pos + size], "little")
            end = int.from_bytes(data[pos + size:pos + 2 * size], "little")
            pos += 2 * size
            if begin == 0 and end == 0:
                return out
            if begin == max_addr:
                base = end
            else:
                out.append((base + begin, base + end))

    def _rnglist(self, unit: _Unit, offset: int) -> list[tuple[int, int]]:
        data, size = self.rnglists, unit.addr_size
        base = unit.base
        out = []
        pos = offset
        while True:
            kind = data[pos]
            pos += 1
            if kind == 0:
                return out
            if kind == 1:
                index, pos = uleb(data, pos)
                base = self._address(unit, index)
            elif kind == 2:
                a, pos = uleb(data, pos)
                b, pos = uleb(data, pos)
                out.append((self._address(unit, a), self._address(unit, b)))
            elif kind == 3:
                a, pos = uleb(data, pos)
                n, pos = uleb(data, pos)
                start = self._address(unit, a)
                out.append((start, start + n))
            elif kind == 4:
                a, pos = uleb(data, pos)
                b, pos = uleb(data, pos)
                out.append((base + a, base + b))
            elif kind == 5:
                base = int.from_bytes(data[pos:pos + size], "little")
                pos += size
            elif kind == 6:
                a = int.from_bytes(data[pos:pos + size], "little")
                b = int.from_bytes(data[pos + size:pos + 2 * size], "little")
                pos += 2 * size
                out.append((a, b))
            elif kind == 7:
                a = int.from_bytes(data[pos:pos + size], "little")
                n, pos = uleb(data, pos + size)
                out.append((a, a + n))
            else:
                raise ValueError(f"range list entry kind {kind}")

    # ------------------------------------------------------------------------------------------ lines
    def line_header(self, unit: _Unit) -> dict | None:
        """Header fields, directories and file entries of the unit's line program (None without one)."""
        if unit.lineprog is None:
            return None
        return read_line_header(self.line, unit.lineprog, self.line_str, self.str)

    def file(self, unit: _Unit, index: int) -> SourceFile | None:
        """DWARF file index -> (directory, base name), as the pyelftools walk computes it."""
        cache = unit.file_cache
        if index in cache:
            return cache[index]
        result = None
        hdr = unit.files
        if hdr is None:
            hdr = unit.files = self.line_header(unit) or {}
        if hdr:
            entries, dirs = hdr["files"], hdr["dirs"]
            version = unit.version
            i = index if version >= 5 else index - 1
            if 0 <= i < len(entries):
                name, d_index = entries[i]
                result = source_file(version, name, d_index, dirs, unit.comp_dir)
        cache[index] = result
        return result

    def line_rows(self, unit: _Unit) -> list[tuple[list, list, list, list]]:
        """Every complete sequence's rows as (addresses, file indexes, lines, columns), in program order;
        the last row of each is its end_sequence row."""
        hdr = unit.files
        if hdr is None:
            hdr = unit.files = self.line_header(unit) or {}
        return run_line_program(self.line, hdr, unit.addr_size) if hdr else []

    # ------------------------------------------------------------------------------------------ inlines
    def inline_children(self, unit: _Unit, nodes: list, children: list, index: int, depth: int = 0) -> list:
        out: list[InlineNode] = []
        if depth > 256:
            return out
        for child in children[index]:
            _, tag, _, attrs = nodes[child]
            if tag == TAG_INLINED:
                ranges = [(lo, hi) for lo, hi in self.ranges(unit, attrs) if hi > lo]
                if not ranges:
                    continue
                cf = attrs.get(AT_CALL_FILE)
                call_file = self.file(unit, self._string(unit, *cf)) if cf is not None else None
                if call_file is None:
                    continue
                cl = attrs.get(AT_CALL_LINE)
                cc = attrs.get(AT_CALL_COLUMN)
                out.append(InlineNode(
                    self.die_name(unit, attrs) or "", ranges, call_file,
                    line_number(self._string(unit, *cl)) if cl is not None else 0,
                    self.inline_children(unit, nodes, children, child, depth + 1),
                    line_number(self._string(unit, *cc)) if cc is not None else 0,
                ))
            else:
                out.extend(self.inline_children(unit, nodes, children, child, depth + 1))
        return out


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def read_dwarf_fast(path: str | os.PathLike[str]):
    """The :class:`~fxscope.formats.dwarf.functions.DwarfModel` of an ELF file; raises :class:`Unsupported` (or any
    decoding error on malformed data) where the pyelftools path must be taken instead."""
    with paused_gc():
        return _read_dwarf_fast(path)


def _read_dwarf_fast(path: str | os.PathLike[str]):
    fd = FastDwarf(os.fspath(path))
    if ".debug_info" not in fd.sections:
        raise Unsupported("no .debug_info")
    fd.read_units()
    functions: list = []
    sequences: list = []
    warnings: list[str] = []
    for cu_index, unit in enumerate(fd.units):
        fd.unit_top(unit)
        if fd.is_split_skeleton(unit):
            warnings.append(f"compile unit at 0x{unit.offset:x} is a split-DWARF skeleton "
                            "(its .dwo file is not read): only the symbol table covers it")
            sequences.append([])
            continue
        seqs = []
        fmap: dict[int, SourceFile | None] = {}
        for addrs, file_ids, lines, cols in fd.line_rows(unit):
            n = len(addrs)
            if n <= 1 or addrs[-1] <= addrs[0]:
                continue
            bad = bad_line_rows(lines)
            if bad is not None:
                warnings.append(f"compile unit at 0x{unit.offset:x}: a line sequence at 0x{min(addrs):x} has line "
                                f"{bad}: sequence ignored")
                continue
            for f in set(file_ids):
                if f not in fmap:
                    fmap[f] = fd.file(unit, f)
            end = [False] * n
            end[-1] = True
            if sorted(addrs) != addrs:
                order = sorted(range(n), key=addrs.__getitem__)
                addrs, file_ids, lines, cols, end = ([seq[k] for k in order] for seq in (addrs, file_ids, lines, cols, end))
            seqs.append(LineSequence(addrs, list(map(fmap.__getitem__, file_ids)), lines, end, cols))
        seqs.sort(key=lambda s: s.low)
        sequences.append(seqs)
        nodes = fd.walk(unit)
        children: list[list[int]] = [[] for _ in nodes]
        for i, node in enumerate(nodes):
            if node[2] >= 0:
                children[node[2]].append(i)
        for i, (_, tag, _, attrs) in enumerate(nodes):
            if tag != TAG_SUBPROGRAM:
                continue
            ranges = [(lo, hi) for lo, hi in fd.ranges(unit, attrs) if hi > lo]
            if not ranges:
                continue
            name = fd.die_name(unit, attrs)
            if not name:
                continue
            decl = attrs.get(AT_DECL_FILE)
            decl_line = attrs.get(AT_DECL_LINE)
            inlines = fd.inline_children(unit, nodes, children, i)
            functions.append(DwarfFunction(
                name, ranges, fd.file(unit, fd._string(unit, *decl)) if decl is not None else None,
                line_number(fd._string(unit, *decl_line)) if decl_line is not None else 0, cu_index, inlines,
                bool(inlines),
            ))
    return DwarfModel(functions, sequences, warnings)
