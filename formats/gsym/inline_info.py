"""GSYM InlineInfo decoding: one FunctionInfo's tree of inlined calls, as stored (names and call files as
string-table offsets and file indexes; the reader resolves them when a lookup needs them).

Two decoders give the same tree: an unchecked one over plain bytes (the hot path of batch lookups; its
LEB128 reader is :func:`fxscope.formats.leb128.uleb_unbounded`), and a checked one through :class:`Cursor` that runs when the first meets
anything irregular, so that malformed data gets LLVM's error message.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxscope.formats.gsym.cursor import Cursor
from fxscope.formats.gsym.errors import GsymLookupError
from fxscope.formats.leb128 import LebTooBigError
from fxscope.formats.leb128 import uleb_unbounded as _uleb

#: deeper nesting is corrupt data (and would exhaust Python's stack)
MAX_INLINE_DEPTH = 512


@dataclass
class RawInlineNode:
    """One InlineInfo node as stored: absolute [start, end) ranges, name as a string-table offset, call file
    as a file-table index."""

    ranges: list[tuple[int, int]]
    name: int
    call_file: int
    call_line: int
    children: list[RawInlineNode]


def decode_inline_tree(buf: memoryview | bytes, data_off: int, length: int, func_start: int,
                       byte_order: str) -> RawInlineNode | None:
    """The InlineInfo chunk at ``data_off`` (None for an empty tree); raises :class:`GsymLookupError`."""
    data = bytes(buf[data_off : data_off + length])
    try:
        return _fast_inline(data, 0, func_start, 0, "little" if byte_order == "<" else "big")[0]
    except (IndexError, _Irregular, LebTooBigError):  # malformed: the checked decoder says what is wrong, as LLVM does
        return _decode_inline(Cursor(buf, data_off, data_off + length, byte_order), func_start, depth=0)


def _decode_inline(cur: Cursor, base: int, depth: int) -> RawInlineNode | None:
    """One inline node and its subtree; ``None`` for the ``NumRanges == 0`` terminator."""
    if depth > MAX_INLINE_DEPTH:
        raise GsymLookupError(f"InlineInfo nesting is deeper than {MAX_INLINE_DEPTH} levels: corrupt")
    count = cur.uleb()
    if count == 0:
        return None
    if count > cur.remaining():
        raise GsymLookupError(f"0x{cur.pos:08x}: missing InlineInfo address ranges data")
    ranges = []
    for _ in range(count):
        start = base + cur.uleb()
        size = cur.uleb()
        if size:
            ranges.append((start, start + size))
    ranges = _normalise(ranges)
    has_children = cur.u8()
    name = cur.u32()
    call_file = cur.uleb()
    call_line = cur.uleb()
    children: list[RawInlineNode] = []
    if has_children:
        child_base = ranges[0][0] if ranges else base
        while True:
            child = _decode_inline(cur, child_base, depth + 1)
            if child is None:
                break
            children.append(child)
    return RawInlineNode(ranges, name, call_file, call_line, children)


class _Irregular(Exception):
    """The fast inline decoder met something only the checked decoder words correctly."""


def _fast_inline(data: bytes, pos: int, base: int, depth: int, order: str) -> tuple[RawInlineNode | None, int]:
    """:func:`_decode_inline` over plain bytes without per-read checks; IndexError, _Irregular or LebTooBigError
    where the data is not well formed (the checked decoder then runs)."""
    if depth > MAX_INLINE_DEPTH:
        raise _Irregular
    count, pos = _uleb(data, pos)
    if count == 0:
        return None, pos
    if count > len(data) - pos:
        raise _Irregular
    ranges = []
    for _ in range(count):
        start, pos = _uleb(data, pos)
        size, pos = _uleb(data, pos)
        if size:
            start += base
            ranges.append((start, start + size))
    if len(ranges) > 1:
        ranges = _normalise(ranges)
    has_children = data[pos]
    if pos + 5 > len(data):
        raise _Irregular
    name = int.from_bytes(data[pos + 1 : pos + 5], order)
    call_file, pos = _uleb(data, pos + 5)
    call_line, pos = _uleb(data, pos)
    children: list[RawInlineNode] = []
    if has_children:
        child_base = ranges[0][0] if ranges else base
        while True:
            child, pos = _fast_inline(data, pos, child_base, depth + 1, order)
            if child is None:
                break
            children.append(child)
    return RawInlineNode(ranges, name, call_file, call_line, children), pos


def _normalise(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted ranges with overlapping and touching ones merged."""
    ranges.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged
