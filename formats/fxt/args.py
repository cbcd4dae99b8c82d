"""FXT argument blocks: the types and a decoder for one record's arguments.

Arguments are decoded lazily (one record at a time, on request) because a trace can hold tens of
millions of them and most are never looked at; the decoder is plain Python and bounded by the record.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

import numpy as np


class ArgType(IntEnum):
    """Argument type field (bits 0..3 of an argument header)."""

    NULL = 0
    INT32 = 1
    UINT32 = 2
    INT64 = 3
    UINT64 = 4
    DOUBLE = 5
    STRING = 6
    POINTER = 7
    KOID = 8
    BOOL = 9
    BLOB = 10


@dataclass(frozen=True)
class Arg:
    """One decoded argument. ``type`` is an :class:`ArgType` or, for unknown types, the raw int."""

    name: str
    type: int
    value: object  # None / int / float / str / bool / bytes; None for unknown types


def stream_bytes(raw: np.ndarray, word: int, length: int) -> bytes:
    """``length`` bytes of the stream starting at word index ``word`` (streams are never byte-swapped)."""
    start = word * 8
    return raw[start : start + length].tobytes()


def decode_text(data: bytes) -> str:
    """UTF-8 with replacement characters: a bad byte never makes a record unreadable (A6)."""
    return data.decode("utf-8", errors="replace")


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) else value


def decode_args(
    words: np.ndarray,
    raw: np.ndarray,
    first: int,
    nargs: int,
    end: int,
    string_ref: Callable[[int, int], tuple[str, int]],
    problems: list[str] | None = None,
) -> list[Arg]:
    """Decode ``nargs`` arguments starting at word ``first`` of a record ending (exclusive) at word ``end``.

    ``string_ref(ref, word)`` resolves a string ref whose inline stream (if any) starts at ``word`` and
    returns ``(text, words_used)``. Decoding stops (keeping what was read) at an argument of size 0 or one
    that runs past the record; ``problems`` receives a message then.
    """
    out: list[Arg] = []
    pos = first
    for _ in range(nargs):
        if pos >= end:
            if problems is not None:
                problems.append("argument list runs past the record")
            break
        head = int(words[pos])
        atype = head & 0xF
        size = (head >> 4) & 0xFFF
        if size == 0 or pos + size > end:
            if problems is not None:
                problems.append("argument of size 0" if size == 0 else "argument runs past the record")
            break
        arg_end = pos + size
        name, used = string_ref((head >> 16) & 0xFFFF, pos + 1)
        cur = pos + 1 + used
        high = head >> 32
        value: object = None
        try:
            if atype == ArgType.NULL:
                value = None
            elif atype == ArgType.INT32:
                value = _signed(high, 32)
            elif atype == ArgType.UINT32:
                value = high
            elif atype in (ArgType.INT64, ArgType.UINT64, ArgType.DOUBLE, ArgType.POINTER, ArgType.KOID):
                if cur >= arg_end:
                    raise IndexError
                word = int(words[cur])
                if atype == ArgType.INT64:
                    value = _signed(word, 64)
                elif atype == ArgType.DOUBLE:
                    value = struct.unpack("<d", struct.pack("<Q", word))[0]
                else:
                    value = word
            elif atype == ArgType.STRING:
                ref = high & 0xFFFF
                if ref & 0x8000 and cur + ((ref & 0x7FFF) + 7) // 8 > arg_end:
                    raise IndexError
                value, _ = string_ref(ref, cur)
            elif atype == ArgType.BOOL:
                value = bool(high & 1)
                if high >> 1 and problems is not None:
                    problems.append("bool argument with non-zero reserved bits")
            elif atype == ArgType.BLOB:
                length = high & 0xFFFFFFFF
                if cur + (length + 7) // 8 > arg_end:
                    raise IndexError
                value = stream_bytes(raw, cur, length)
        except IndexError:
            if problems is not None:
                problems.append(f"argument {name!r} is shorter than its type needs")
            value = None
        out.append(Arg(name, ArgType(atype) if atype <= 10 else atype, value))
        pos = arg_end
    return out
