"""Bounds-checked cursor over GSYM bytes: fixed-width integers and (S|U)LEB128.

Every read checks the end of the chunk it belongs to, so a corrupt length or varint can never read past
the data or loop forever (a varint longer than 10 bytes is an error).
"""

from __future__ import annotations

import struct

from fxscope.formats.leb128 import encode_sleb, encode_uleb  # noqa: F401 - re-exported for the GSYM writer


class Cursor:
    def __init__(self, buf: memoryview | bytes, pos: int, end: int, byte_order: str = "<") -> None:
        self.buf = buf
        self.pos = pos
        self.end = min(end, len(buf))
        self.bo = byte_order

    def at_end(self) -> bool:
        return self.pos >= self.end

    def remaining(self) -> int:
        return self.end - self.pos

    def _need(self, n: int, what: str) -> None:
        if self.pos + n > self.end:
            raise _truncated(what, self.pos)

    def u8(self) -> int:
        self._need(1, "uint8_t")
        v = self.buf[self.pos]
        self.pos += 1
        return v

    def u32(self) -> int:
        self._need(4, "uint32_t")
        (v,) = struct.unpack_from(self.bo + "I", self.buf, self.pos)
        self.pos += 4
        return v

    def u64(self) -> int:
        self._need(8, "uint64_t")
        (v,) = struct.unpack_from(self.bo + "Q", self.buf, self.pos)
        self.pos += 8
        return v

    def uleb(self) -> int:
        result = shift = 0
        for _ in range(10):
            if self.pos >= self.end:
                raise _truncated("ULEB128", self.pos)
            byte = self.buf[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return result
        raise _truncated("ULEB128 (longer than 10 bytes)", self.pos)

    def sleb(self) -> int:
        result = shift = 0
        for _ in range(10):
            if self.pos >= self.end:
                raise _truncated("SLEB128", self.pos)
            byte = self.buf[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                if byte & 0x40:
                    result -= 1 << shift
                return result
        raise _truncated("SLEB128 (longer than 10 bytes)", self.pos)


def _truncated(what: str, pos: int) -> Exception:
    # Imported lazily to keep this module free of the reader's exception class at import time.
    from fxscope.formats.gsym.reader import LookupError_

    return LookupError_(f"0x{pos:08x}: data is truncated (missing {what})")
