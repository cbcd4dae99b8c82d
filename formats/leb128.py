"""LEB128 (DWARF, GSYM) and protobuf varints (unsigned LEB128, symbfile framing): the reference decoder and
encoder every format uses.

The bound rule, one for all formats: **a LEB128 holds a 64-bit value in at most 10 bytes.**

- more than :data:`MAX_BYTES` (10) bytes is an error, even when the extra bytes only pad with zeros: 10 is
  the longest encoding of a 64-bit value (ceil(64 / 7)), protobuf rejects longer varints, and the bound
  keeps the work per value constant on hostile input;
- a value that does not fit in 64 bits (unsigned: 0 to 2**64-1, signed: -2**63 to 2**63-1) is an error, as
  LLVM's ``decodeULEB128``/``decodeSLEB128`` say ("uleb128 too big for uint64"): every field the formats
  read is at most 64 bits wide, so a larger value can only come from corrupt data, and a consumer (numpy
  uint64 columns, ``struct``) must never see it;
- input that ends inside a LEB128 (its last byte still has the continuation bit) is an error;
- overlong encodings within 10 bytes (``0x80 0x00`` for 0, as linkers pad for relaxation) are accepted,
  as LLVM and protobuf accept them.

Errors are :class:`LebDecodeError` (a :class:`FormatError`): :class:`LebTruncatedError` or
:class:`LebTooBigError`; each format catches them and raises its own error type with its own wording.

Hot loops take :func:`uleb_unbounded`/:func:`sleb_unbounded` (the same rule without the end bound and its
check per byte: the data's end is an IndexError; the DWARF decoder's DIE walk and GSYM's inline trees), or
inline their own copy (GSYM's line-table opcode loop, the vectorized symbfile reader), with a comment
pointing here. ``tests/formats/test_leb128.py`` checks that every one agrees with :func:`decode_uleb` and
:func:`decode_sleb` (hypothesis: 10-byte values, overlong encodings, truncation, random bytes).

The encoders take values derived from input files (a corrupt line program can drive a line number
negative), so they check their range too: a negative value never shifts down to 0 and would loop forever.
"""

from __future__ import annotations

from fxscope.formats.errors import FormatError

#: the widest value any format stores in a LEB128 field (64 bits)
MAX_BITS = 64
#: the longest LEB128 accepted: ceil(MAX_BITS / 7)
MAX_BYTES = 10

_UMAX = 1 << MAX_BITS
_SMIN, _SMAX = -(1 << (MAX_BITS - 1)), 1 << (MAX_BITS - 1)


class LebRangeError(FormatError):
    """A value that the LEB128 field cannot hold (negative for ULEB128, wider than 64 bits)."""


class LebDecodeError(FormatError):
    """Bytes that are not a LEB128 under the bound rule; ``offset`` is where the LEB128 starts."""


class LebTruncatedError(LebDecodeError):
    """The input ends before the LEB128's last byte."""


class LebTooBigError(LebDecodeError):
    """Longer than 10 bytes, or a value that does not fit in 64 bits."""


def decode_uleb(data: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None) -> tuple[int, int]:
    """(value, position after it) of the unsigned LEB128 at ``pos``; ``end`` bounds the read (default: the
    end of ``data``)."""
    return _decode(data, pos, len(data) if end is None else min(end, len(data)), False)


def decode_sleb(data: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None) -> tuple[int, int]:
    """(value, position after it) of the signed LEB128 at ``pos``; ``end`` as for :func:`decode_uleb`."""
    return _decode(data, pos, len(data) if end is None else min(end, len(data)), True)


def _decode(data, pos: int, end: int, signed: bool) -> tuple[int, int]:
    what = "SLEB128" if signed else "ULEB128"
    value = shift = 0
    at = pos
    while True:
        if at - pos == MAX_BYTES:  # checked first: no more data would make it valid
            raise LebTooBigError(f"{what} longer than {MAX_BYTES} bytes", offset=pos)
        if at >= end:
            raise LebTruncatedError(f"{what} runs past the end of its data", offset=pos)
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
    if signed:
        if byte & 0x40:
            value -= 1 << shift
        if not _SMIN <= value < _SMAX:
            raise LebTooBigError(f"{what} value does not fit in {MAX_BITS} bits", offset=pos)
    elif value >= _UMAX:
        raise LebTooBigError(f"{what} value does not fit in {MAX_BITS} bits", offset=pos)
    return value, at


def uleb_unbounded(data, pos: int) -> tuple[int, int]:
    """:func:`decode_uleb` for hot loops over plain bytes: bounded by the data only, where running off the end
    raises IndexError (the caller's "truncated"); too big is :class:`LebTooBigError`."""
    byte = data[pos]
    if byte < 0x80:
        return byte, pos + 1
    value = byte & 0x7F
    shift = 7
    while True:
        pos += 1
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if shift == 63 and byte > 1:  # the 10th byte holds bit 63 only
                raise LebTooBigError(f"ULEB128 value does not fit in {MAX_BITS} bits", offset=pos - 9)
            return value, pos + 1
        shift += 7
        if shift > 63:
            raise LebTooBigError(f"ULEB128 longer than {MAX_BYTES} bytes", offset=pos - 9)


def sleb_unbounded(data, pos: int) -> tuple[int, int]:
    """:func:`decode_sleb` as :func:`uleb_unbounded` is :func:`decode_uleb`."""
    start = pos
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
        if shift > 63:
            raise LebTooBigError(f"SLEB128 longer than {MAX_BYTES} bytes", offset=start)
    if byte & 0x40:
        value -= 1 << shift
    if shift > 63 and not _SMIN <= value < _SMAX:
        raise LebTooBigError(f"SLEB128 value does not fit in {MAX_BITS} bits", offset=start)
    return value, pos


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
    if not _SMIN <= value < _SMAX:
        raise LebRangeError(f"value {value} out of range for a signed LEB128 ({MAX_BITS} bits)")
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40):
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)
