"""GSYM LineTable decoding: the opcode stream of one FunctionInfo's line table as row columns.

The opcode loop is the hot path of batch lookups, so it runs over plain bytes with per-window tables of what
each special opcode adds and an inlined LEB128 decoder (a copy of :mod:`fxscope.formats.leb128`'s rule:
at most 10 bytes, a value within 64 bits; ``tests/formats/test_leb128.py`` checks the two agree).
"""

from __future__ import annotations

import functools

from fxscope.formats.gsym.cursor import Cursor
from fxscope.formats.gsym.errors import GsymLookupError

_INT64_MIN, _INT64_END = -(1 << 63), 1 << 63


def decode_line_table(buf: memoryview | bytes, data_off: int, length: int, func_start: int, byte_order: str,
                      upto: int, partial: tuple | None = None) -> tuple[list, list, list]:
    """The rows (addresses, file indexes, lines) of the LineTable chunk at ``data_off`` up to address
    ``upto``, raising :class:`GsymLookupError` on a corrupt stream; ``partial`` receives the rows as they
    are decoded (what a batch keeps of a table whose tail is corrupt)."""
    cur = Cursor(buf, data_off, data_off + length, byte_order)
    min_delta = cur.sleb()
    max_delta = cur.sleb()
    line = cur.uleb()
    line_range = max_delta - min_delta + 1
    if line_range <= 0:
        raise GsymLookupError(f"0x{data_off:08x}: invalid LineTable MinDelta/MaxDelta {min_delta}/{max_delta}")
    addr, file_idx = func_start, 1
    addrs: list[int]
    files: list[int]
    lines: list[int]
    addrs, files, lines = partial if partial is not None else ([], [], [])
    add_addr, add_file, add_line = addrs.append, files.append, lines.append
    addr_step, line_step = special_opcode_tables(min_delta, line_range)
    data = bytes(buf[cur.pos : data_off + length])
    pos, end = 0, len(data)
    while True:
        try:
            op = data[pos]
        except IndexError:
            raise GsymLookupError(f"0x{cur.pos - data_off + pos:08x}: EOF found before EndSequence") from None
        pos += 1
        if op >= 4:
            line += line_step[op]
            addr += addr_step[op]
            if addr > upto:
                break
            add_addr(addr)
            add_file(file_idx)
            add_line(line)
            continue
        if op == 0:
            break
        # inlined LEB128 (the reference: fxscope.formats.leb128._decode): 10 bytes at most, then the range
        start = pos
        value = shift = 0
        while True:
            if pos >= end or shift > 63:
                raise GsymLookupError(f"0x{cur.pos - data_off + pos:08x}: EOF found before an opcode's value")
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        if op == 3:  # AdvanceLine: SLEB128
            if byte & 0x40:
                value -= 1 << shift
            if shift > 63 and not _INT64_MIN <= value < _INT64_END:
                raise GsymLookupError(f"0x{cur.pos - data_off + start:08x}: SLEB128 value does not fit in 64 bits")
            line += value
            continue
        if shift > 63 and value >> 64:
            raise GsymLookupError(f"0x{cur.pos - data_off + start:08x}: ULEB128 value does not fit in 64 bits")
        if op == 1:
            file_idx = value
        else:  # AdvanceAddress
            addr += value
            if addr > upto:
                break
            add_addr(addr)
            add_file(file_idx)
            add_line(line)
    return addrs, files, lines


@functools.lru_cache(maxsize=512)
def special_opcode_tables(min_delta: int, line_range: int) -> tuple[list[int], list[int]]:
    """Address and line advance of each special opcode (4..255) of a LineTable with this line window."""
    addr_step = [0] * 4 + [(op - 4) // line_range for op in range(4, 256)]
    line_step = [0] * 4 + [min_delta + (op - 4) % line_range for op in range(4, 256)]
    return addr_step, line_step
