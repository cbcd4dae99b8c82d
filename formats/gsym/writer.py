"""GSYM writer: encodes :class:`~fxscope.formats.gsym.model.FunctionInfo` lists as LLVM version-1 files.

The encoders follow LLVM's ``GsymCreator``/``FunctionInfo``/``LineTable``/``InlineInfo`` byte for byte
(``../shared/specs/gsym.md`` 2.2-2.10 and 2.13): the same alignment, the same choice of the special-opcode
line window, the same relative range bases. Only the order of strings and files in their tables is ours
(LLVM's follows its DWARF walk), which readers do not depend on.
"""

from __future__ import annotations

import itertools
import struct
from collections import Counter
from collections.abc import Sequence

from fxscope.formats.errors import FormatError
from fxscope.formats.gsym.model import FunctionInfo, InlineNode, LineRow, SourceFile
from fxscope.formats.gsym.reader import GSYM_MAGIC, HEADER_SIZE
from fxscope.formats.leb128 import encode_sleb, encode_uleb

MAX_LINE_RANGE = 14
OPCODE_BASE = 4
UINT32_MAX = 0xFFFFFFFF
UINT64_MAX = (1 << 64) - 1
_ONE_BYTE = [bytes((i,)) for i in range(128)]


def _uleb(value: int) -> bytes:
    return _ONE_BYTE[value] if 0 <= value < 128 else encode_uleb(value)


class GsymEncodeError(FormatError):
    """The model cannot be encoded (unsorted line rows, a child range outside its parent, a value wider than
    its field, ...). A format error: the model comes from an input file, and a corrupt one gets this far."""


class _Tables:
    def __init__(self) -> None:
        self.strtab = bytearray(b"\0")
        self.strings: dict[str, int] = {"": 0}
        self.files: list[tuple[int, int]] = [(0, 0)]
        self.file_index: dict[tuple[int, int], int] = {(0, 0): 0}
        self.by_source: dict[SourceFile, int] = {}

    def string(self, text: str) -> int:
        offset = self.strings.get(text)
        if offset is None:
            # (the table holds NUL-terminated strings: a NUL inside a name would read back as a shorter name)
            if "\0" in text:
                raise GsymEncodeError(f"the name or path {text!r} holds a NUL byte, which GSYM's string table cannot")
            try:
                data = text.encode("utf-8", "surrogateescape")  # (bytes a reader decoded that way: as they were)
            except UnicodeEncodeError as e:
                raise GsymEncodeError(f"the name or path {text!r} is not encodable as UTF-8: {e.reason}") from None
            offset = self.strings[text] = len(self.strtab)
            self.strtab += data + b"\0"
        return offset

    def file(self, source: SourceFile | None) -> int:
        if source is None:
            return 0
        index = self.by_source.get(source)
        if index is None:
            index = self.by_source[source] = self._file(source)
        return index

    def _file(self, source: SourceFile) -> int:
        key = (self.string(source.directory), self.string(source.base))
        index = self.file_index.get(key)
        if index is None:
            index = self.file_index[key] = len(self.files)
            self.files.append(key)
        return index


def encode_line_table(rows: Sequence[LineRow], func_start: int, tables: _Tables, bo: str = "<") -> bytes:
    if not rows:
        raise GsymEncodeError("attempted to encode invalid LineTable object")
    lines = [r.line for r in rows]
    if min(lines) < 0 or max(lines) > UINT32_MAX:
        bad = next(r for r in rows if not 0 <= r.line <= UINT32_MAX)
        raise GsymEncodeError(f"line {bad.line} at 0x{bad.address:x} does not fit GSYM's 32-bit line numbers")
    if len(rows) == 1:
        min_d = max_d = 0
    else:
        deltas = [b - a for a, b in itertools.pairwise(lines)]
        min_d, max_d = min(deltas), max(deltas)
        if max_d - min_d > MAX_LINE_RANGE:
            counts = Counter(deltas)
            distinct = sorted(counts)
            best = (0, 0, 0)  # count, first index, last index
            for i, first in enumerate(distinct):
                count, j = 0, i
                while j < len(distinct) and distinct[j] - first <= MAX_LINE_RANGE:
                    count += counts[distinct[j]]
                    j += 1
                if count > best[0]:
                    best = (count, i, j - 1)
            min_d, max_d = distinct[best[1]], distinct[best[2]]
    if min_d == max_d and 0 < min_d < MAX_LINE_RANGE:
        min_d = 0
    line_range = max_d - min_d + 1
    out = bytearray(encode_sleb(min_d) + encode_sleb(max_d) + encode_uleb(lines[0]))
    prev_addr, prev_file, prev_line = func_start, 1, lines[0]
    file_of = tables.by_source.get
    append = out.append
    last_source = None
    for address, source, line in rows:
        if address < prev_addr:
            if address < func_start:
                raise GsymEncodeError(
                    f"LineEntry has address 0x{address:x} which is less than the function start address "
                    f"0x{func_start:x}"
                )
            raise GsymEncodeError("LineEntry in LineTable not in ascending order")
        if source is not last_source:
            file_index = file_of(source) if source is not None else 0
            if file_index is None:
                file_index = tables.file(source)
            last_source = source
        addr_delta = address - prev_addr
        line_delta = line - prev_line
        if file_index != prev_file:
            append(1)
            out += _uleb(file_index)
        if min_d <= line_delta <= max_d:
            special = (line_delta - min_d) + line_range * addr_delta + OPCODE_BASE
            if special <= 255:
                append(special)
                prev_addr, prev_file, prev_line = address, file_index, line
                continue
        if line_delta:
            append(3)
            out += encode_sleb(line_delta)
        append(2)
        out += _uleb(addr_delta)
        prev_addr, prev_file, prev_line = address, file_index, line
    append(0)
    return bytes(out)


def _normalise(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    if len(ranges) == 1:
        return list(ranges) if ranges[0][1] > ranges[0][0] else []
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(r for r in ranges if r[1] > r[0]):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def encode_inline(node: InlineNode, base: int, tables: _Tables, bo: str = "<", depth: int = 0) -> bytes:
    ranges = _normalise(node.ranges)
    if not ranges:
        raise GsymEncodeError("attempted to encode invalid InlineInfo object")
    out = bytearray()
    _encode_inline_into(out, node, ranges, base, tables, bo)
    return bytes(out)


def _encode_inline_into(out: bytearray, node: InlineNode, ranges: list[tuple[int, int]], base: int,
                        tables: _Tables, bo: str) -> None:
    """One node (its ranges already normalised and non-empty) and its subtree, appended to ``out``."""
    out += _uleb(len(ranges))
    for lo, hi in ranges:
        if lo < base:
            raise GsymEncodeError(f"inline range 0x{lo:x} starts before its base 0x{base:x}")
        out += _uleb(lo - base)
        out += _uleb(hi - lo)
    children = node.children
    out.append(1 if children else 0)
    if not 0 <= node.call_line <= UINT32_MAX:
        raise GsymEncodeError(f"inline call line {node.call_line} of {node.name!r} does not fit 32 bits")
    out += struct.pack(bo + "I", tables.string(node.name))
    out += _uleb(tables.file(node.call_file))
    out += _uleb(node.call_line)
    if children:
        for child in children:
            child_ranges = _normalise(child.ranges)
            for lo, hi in child_ranges:
                if not any(plo <= lo and hi <= phi for plo, phi in ranges):
                    raise GsymEncodeError("child range not contained in parent")
            if not child_ranges:
                raise GsymEncodeError("attempted to encode invalid InlineInfo object")
            _encode_inline_into(out, child, child_ranges, ranges[0][0], tables, bo)
        out.append(0)


def encode_function(info: FunctionInfo, tables: _Tables, bo: str = "<") -> bytes:
    if not info.name:
        raise GsymEncodeError(f"function at 0x{info.start:x} has no name")
    if not 0 <= info.size <= UINT32_MAX:
        raise GsymEncodeError(f"function {info.name!r} at 0x{info.start:x}: size 0x{info.size:x} does not fit "
                              "GSYM's 32-bit function sizes")
    out = bytearray(struct.pack(bo + "II", info.size, tables.string(info.name)))
    if info.lines:
        chunk = encode_line_table(info.lines, info.start, tables, bo)
        out += struct.pack(bo + "II", 1, len(chunk)) + chunk
    if info.inline is not None and _normalise(info.inline.ranges):
        chunk = encode_inline(info.inline, info.start, tables, bo)
        out += struct.pack(bo + "II", 2, len(chunk)) + chunk
    out += struct.pack(bo + "II", 0, 0)
    return bytes(out)


def write_gsym(
    functions: Sequence[FunctionInfo],
    uuid: bytes = b"",
    base_address: int | None = None,
    big_endian: bool = False,
) -> bytes:
    """A complete GSYM file. ``base_address`` defaults to the first function's start (as LLVM's)."""
    if len(uuid) > 20:
        raise GsymEncodeError(f"invalid UUID size {len(uuid)}")
    bo = ">" if big_endian else "<"
    funcs = sorted(functions, key=lambda f: f.start)
    if base_address is None:
        base_address = funcs[0].start if funcs else 0
    if not 0 <= base_address <= UINT64_MAX:
        raise GsymEncodeError(f"base address {base_address:#x} does not fit 64 bits")
    if funcs and funcs[0].start < base_address:
        raise GsymEncodeError(f"function {funcs[0].name!r} at 0x{funcs[0].start:x} starts below the base address "
                              f"0x{base_address:x}")
    if funcs and funcs[-1].start - base_address > UINT64_MAX:
        raise GsymEncodeError(f"function {funcs[-1].name!r} at 0x{funcs[-1].start:x} is more than 64 bits above "
                              f"the base address")
    max_off = (funcs[-1].start - base_address) if funcs else 0
    aos = 1 if max_off <= 0xFF else 2 if max_off <= 0xFFFF else 4 if max_off <= 0xFFFFFFFF else 8
    tables = _Tables()
    encoded = [encode_function(f, tables, bo) for f in funcs]

    n = len(funcs)
    addr_table = b"".join(
        struct.pack(bo + {1: "B", 2: "H", 4: "I", 8: "Q"}[aos], f.start - base_address) for f in funcs
    )
    pos = HEADER_SIZE + len(addr_table)
    pad_addr = (-pos) % 4
    pos += pad_addr
    info_table_pos = pos
    pos += 4 * n
    file_table = struct.pack(bo + "I", len(tables.files)) + b"".join(
        struct.pack(bo + "II", d, b) for d, b in tables.files
    )
    pos += len(file_table)
    strtab_offset = pos
    pos += len(tables.strtab)
    offsets = []
    body = bytearray()
    for chunk in encoded:
        pad = (-(pos + len(body))) % 4
        body += b"\0" * pad
        offsets.append(pos + len(body))
        body += chunk
    header = struct.pack(
        bo + "IHBBQIII", GSYM_MAGIC, 1, aos, len(uuid), base_address, n, strtab_offset, len(tables.strtab)
    ) + uuid.ljust(20, b"\0")
    out = bytearray(header)
    out += addr_table + b"\0" * pad_addr
    assert len(out) == info_table_pos
    out += b"".join(struct.pack(bo + "I", o) for o in offsets)
    out += file_table + tables.strtab + body
    return bytes(out)
