"""The DWARF function model: what :func:`fxscope.formats.dwarf.functions.read_dwarf` returns, whichever decoder
built it (the hand-written one in :mod:`fxscope.formats.dwarf.fast`, or the pyelftools walk).

Concrete functions with their ranges and inline trees, and every compile unit's line sequences, with the
lookups the symbolizer and the GSYM and symbfile converters make on them. Paths and names are strings, so
the model is independent of GSYM's tables. The rules both decoders share (line numbers in 32 bits, LLVM's
absolute file paths) are here too, so they cannot drift apart.
"""

from __future__ import annotations

import bisect
import posixpath
from dataclasses import dataclass, field

from fxscope.formats.gsym.model import InlineNode, LineRow, SourceFile

#: DWARF line and column numbers are unsigned; LLVM keeps them in 32 bits (and so does GSYM)
LINE_MAX = 0xFFFFFFFF


def line_number(value: object) -> int:
    """A line or column attribute as a number: a corrupt form (negative ``sdata``, a string, a flag) or one
    wider than 32 bits is 0, "no line", so no encoder downstream sees a value its field cannot hold."""
    return value if type(value) is int and 0 <= value <= LINE_MAX else 0


def bad_line_rows(lines: list[int]) -> int | None:
    """The first line number of a line sequence outside 0..LINE_MAX (a corrupt line program drives it
    below 0 with DW_LNS_advance_line), or None when all are valid."""
    if lines and (min(lines) < 0 or max(lines) > LINE_MAX):
        return next(v for v in lines if not 0 <= v <= LINE_MAX)
    return None


@dataclass
class DwarfFunction:
    name: str
    ranges: list[tuple[int, int]]
    decl_file: SourceFile | None
    decl_line: int
    cu_index: int
    #: the inline tree of the whole function (all ranges); each node's ranges are absolute
    inlines: list[InlineNode] = field(default_factory=list)
    has_inline_children: bool = False


@dataclass
class LineSequence:
    """One DWARF line sequence: rows sorted by address, the last one the end_sequence marker."""

    addresses: list[int]
    files: list[SourceFile | None]
    lines: list[int]
    end: list[bool]
    columns: list[int] = field(default_factory=list)

    @property
    def low(self) -> int:
        return self.addresses[0]

    @property
    def high(self) -> int:
        return self.addresses[-1]


@dataclass
class DwarfModel:
    functions: list[DwarfFunction]
    sequences: list[list[LineSequence]]  # per compile unit
    warnings: list[str]

    def row_column(self, address: int) -> int:
        """Column of the line row in force at ``address`` (the last row at or before it), 0 if unknown."""
        index = self._column_index()
        k = bisect.bisect_right(index[0], address) - 1
        if k < 0:
            return 0
        seq = index[1][k]
        if not seq.low <= address < seq.high or not seq.columns:
            return 0
        i = bisect.bisect_right(seq.addresses, address) - 1
        return seq.columns[i] if i >= 0 else 0

    def frame_columns(self, address: int, count: int) -> list[int]:
        """Columns of a ``count``-frame inline stack at ``address``, innermost first, as llvm-symbolizer
        prints them: the line row's column, then DW_AT_call_column of each inlined call outwards; 0s when
        the inline chain here is not ``count`` frames deep."""
        fn = self.function_at(address)
        chain = []
        nodes = fn.inlines if fn is not None else []
        while True:
            inside = next((n for n in nodes if any(lo <= address < hi for lo, hi in n.ranges)), None)
            if inside is None:
                break
            chain.append(inside)
            nodes = inside.children
        if len(chain) + 1 != count:
            return [0] * count
        return [self.row_column(address)] + [node.call_column for node in reversed(chain)]

    def row_at(self, address: int) -> tuple[SourceFile, int, int] | None:
        """(file, line, column) of the line row in force at ``address``, None when no sequence covers it.

        llvm-symbolizer prints this for an address that the line table covers but no function does (code
        from assembly, or a function whose DIE is missing): ``<invalid> file.S:17:0``."""
        index = self._column_index()
        k = bisect.bisect_right(index[0], address) - 1
        while k >= 0:  # sequences may nest in odd files: the nearest one that covers the address
            seq = index[1][k]
            if seq.low <= address < seq.high:
                i = bisect.bisect_right(seq.addresses, address) - 1
                file = seq.files[i]
                if file is None or seq.end[i]:
                    return None
                return file, seq.lines[i], seq.columns[i] if seq.columns else 0
            if address - seq.low > 1 << 24:
                break
            k -= 1
        return None

    def _column_index(self) -> tuple[list[int], list[LineSequence]]:
        cached = self.__dict__.get("_col_index")
        if cached is None:
            seqs = sorted((s for cu in self.sequences for s in cu), key=lambda s: s.low)
            cached = self.__dict__["_col_index"] = ([s.low for s in seqs], seqs)
        return cached

    def function_at(self, address: int) -> DwarfFunction | None:
        index = self.__dict__.get("_fn_index")
        if index is None:
            spans = sorted((lo, hi, i) for i, fn in enumerate(self.functions) for lo, hi in fn.ranges)
            index = self.__dict__["_fn_index"] = ([s[0] for s in spans], spans)
        k = bisect.bisect_right(index[0], address) - 1
        while k >= 0:
            lo, hi, i = index[1][k]
            if lo <= address < hi:
                return self.functions[i]
            if address - lo > 1 << 24:
                break
            k -= 1
        return None

    def all_rows(self, cu_index: int, start: int, end: int) -> list[LineRow]:
        """Every line row starting in [start, end) (end-of-sequence markers excluded, nothing collapsed)."""
        rows: list[LineRow] = []
        for seq in self.sequences[cu_index]:
            if seq.high <= start or seq.low >= end:
                continue
            i = bisect.bisect_left(seq.addresses, start)
            while i < len(seq.addresses) and seq.addresses[i] < end:
                if not seq.end[i] and seq.files[i] is not None:
                    rows.append(LineRow(seq.addresses[i], seq.files[i], seq.lines[i]))
                i += 1
        return rows

    def line_rows(self, cu_index: int, start: int, end: int) -> list[LineRow] | None:
        """LLVM's ``convertFunctionLineTable`` for the range [start, end): None when no sequence covers it."""
        for seq in self.sequences[cu_index]:
            if seq.low <= start < seq.high:
                break
        else:
            return None
        addresses, files, lines, ends = seq.addresses, seq.files, seq.lines, seq.end
        first = max(bisect.bisect_right(addresses, start) - 1, 0)
        stop = bisect.bisect_left(addresses, end, first)  # rows at or past the end are not the range's
        rows: list[LineRow] = []
        last_file = last_line = None
        for i in range(first, stop):
            file = files[i]
            if file is None:
                break
            line = lines[i]
            if line == last_line and (file is last_file or file == last_file):
                continue  # the same file and line as the row before: collapsed
            if ends[i]:
                continue
            addr = addresses[i]
            # the function starts between two rows: its first row is the earlier one
            rows.append(LineRow(addr if addr >= start else start, file, line))
            last_file, last_line = file, line
        return rows


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def source_file(version: int, name: bytes | str, d_index: int, dirs, comp_dir: str) -> SourceFile:
    """A line-table file entry as (directory, base name) of its absolute path, as LLVM's AbsoluteFilePath
    (``Prologue::getFileNameByIndex``): the entry's directory (DWARF 5 indexes from 0, DWARF 4 from 1), after
    the compilation directory unless that directory is absolute or is DWARF 5's entry 0, which already is
    the compilation directory. A relative compilation directory (``./nptl`` in Debian's libc) is therefore
    not prepended twice."""
    path = _text(name)
    if posixpath.isabs(path):
        return SourceFile(posixpath.dirname(path), posixpath.basename(path))
    if version >= 5:
        directory = _text(dirs[d_index]) if 0 <= d_index < len(dirs) else ""
        with_comp_dir = d_index != 0
    else:
        directory = _text(dirs[d_index - 1]) if 1 <= d_index <= len(dirs) else ""
        with_comp_dir = True
    parts = [comp_dir] if with_comp_dir and comp_dir and not posixpath.isabs(directory) else []
    path = posixpath.join(*parts, directory, path)
    return SourceFile(posixpath.dirname(path), posixpath.basename(path))
