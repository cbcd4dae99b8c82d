"""LEB128 encoders shared by the formats that use them (GSYM line tables and inline info; protobuf
varints, which are unsigned LEB128, in symbfile framing).

The encoders take values derived from input files (a corrupt line program can drive a line number
negative), so they check their range: a negative value never shifts down to 0 and would loop forever.
"""

from __future__ import annotations

from fxscope.formats.errors import FormatError

#: the widest value either format stores in a LEB128 field (64 bits)
MAX_BITS = 64


class LebRangeError(FormatError):
    """A value that the LEB128 field cannot hold (negative for ULEB128, wider than 64 bits)."""


def encode_uleb(value: int) -> bytes:
    if value < 0 or value >> MAX_BITS:
        raise LebRangeError(f"value {value} out of range for an unsigned LEB128 (0 to 2**{MAX_BITS}-1)")
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_sleb(value: int) -> bytes:
    if not -(1 << (MAX_BITS - 1)) <= value < 1 << (MAX_BITS - 1):
        raise LebRangeError(f"value {value} out of range for a signed LEB128 ({MAX_BITS} bits)")
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40):
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)
