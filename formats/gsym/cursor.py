"""Bounds-checked cursor over GSYM bytes: fixed-width integers and (S|U)LEB128.

Every read checks the end of the chunk it belongs to, so a corrupt length or varint can never read past the
data or loop forever; LEB128s follow the one bound rule of :mod:`fxscope.formats.leb128` (at most 10 bytes,
a value that fits in 64 bits). Errors are :class:`GsymLookupError`, worded as LLVM words them.
"""

from __future__ import annotations

import struct

from fxscope.formats.gsym.errors import GsymLookupError
from fxscope.formats.leb128 import LebTooBigError, LebTruncatedError, decode_sleb, decode_uleb


class Cursor:
    """A read position in ``buf`` that may not pass ``end`` (the chunk's end), in the file's byte order."""

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
        return self._leb(decode_uleb, "ULEB128")

    def sleb(self) -> int:
        return self._leb(decode_sleb, "SLEB128")

    def _leb(self, decode, what: str) -> int:
        try:
            value, self.pos = decode(self.buf, self.pos, self.end)
        except LebTruncatedError:
            raise _truncated(what, self.end) from None
        except LebTooBigError as exc:
            raise GsymLookupError(f"0x{self.pos:08x}: {exc.message}") from None
        return value


def _truncated(what: str, pos: int) -> GsymLookupError:
    return GsymLookupError(f"0x{pos:08x}: data is truncated (missing {what})")
