"""The bit fields of FXT record headers, named once (spec Part 1), and the one way to extract them.

Every decoder in :mod:`fxscope.formats.fxt` reads header bits through :func:`field` (one Python ``int``, for the
rare control records) or :func:`column` (a numpy ``uint64`` array, for the vectorised bulk records), so a
field's position is written in exactly one place: this table. ``column`` does the same two numpy
operations the inline ``(h >> shift) & mask`` did, with the shift and mask prebuilt as ``uint64``
scalars, so the vectorised paths cost nothing extra.
"""

from __future__ import annotations

import numpy as np


class Field:
    """A bit field ``width`` bits wide at bit ``shift`` of a 64-bit word."""

    __slots__ = ("mask", "name", "shift", "u_mask", "u_shift", "width")

    def __init__(self, name: str, shift: int, width: int) -> None:
        self.name = name
        self.shift = shift
        self.width = width
        self.mask = (1 << width) - 1
        self.u_shift = np.uint64(shift)
        self.u_mask = np.uint64(self.mask)

    def __repr__(self) -> str:
        return f"Field({self.name!r}, shift={self.shift}, width={self.width})"


def field(word: int, f: Field) -> int:
    """The value of ``f`` in one header word (a Python int)."""
    return (word >> f.shift) & f.mask


def column(words: np.ndarray, f: Field) -> np.ndarray:
    """The value of ``f`` in every word of a ``uint64`` array (a ``uint64`` array)."""
    return (words >> f.u_shift) & f.u_mask


def record_size(header: int) -> int:
    """A record's size in words: the 12-bit size field, or the 32-bit one of a large record (type 15)."""
    if field(header, RECORD_TYPE) == LARGE_RECORD:
        return field(header, LARGE_RECORD_SIZE)
    return field(header, RECORD_SIZE)


#: record type codes (the low 4 bits of every header)
RECORD_TYPE_NAMES = {
    0: "metadata",
    1: "initialization",
    2: "string",
    3: "thread",
    4: "event",
    5: "blob",
    6: "userspace_object",
    7: "kernel_object",
    8: "scheduling",
    9: "log",
    15: "large",
}
EVENT_RECORD, SCHED_RECORD, LOG_RECORD, LARGE_RECORD = 4, 8, 9, 15

#: string refs (16 bits): 0 empty, 1..0x7FFF an index, or the inline flag with the stream's byte length
INLINE_STRING = 0x8000
INLINE_LENGTH_MASK = 0x7FFF

# -- every record
RECORD_TYPE = Field("record type", 0, 4)
RECORD_SIZE = Field("record size", 4, 12)
LARGE_RECORD_SIZE = Field("large record size", 4, 32)
# -- metadata (type 0)
METADATA_TYPE = Field("metadata type", 16, 4)
PROVIDER_ID = Field("provider id", 20, 32)
PROVIDER_NAME_LENGTH = Field("provider name length", 52, 8)
PROVIDER_EVENT_TYPE = Field("provider event type", 52, 4)
TRACE_INFO_TYPE = Field("trace info type", 20, 4)
# -- string (type 2) and thread (type 3)
STRING_INDEX = Field("string index", 16, 15)
STRING_LENGTH = Field("string length", 32, 15)
THREAD_INDEX = Field("thread index", 16, 8)
# -- event (type 4)
EVENT_TYPE = Field("event type", 16, 4)
EVENT_NARGS = Field("event argument count", 20, 4)
EVENT_THREAD_REF = Field("event thread ref", 24, 8)
EVENT_CATEGORY_REF = Field("event category ref", 32, 16)
EVENT_NAME_REF = Field("event name ref", 48, 16)
# -- blob (type 5)
BLOB_NAME_REF = Field("blob name ref", 16, 16)
BLOB_LENGTH = Field("blob length", 32, 15)
BLOB_TYPE = Field("blob type", 48, 8)
# -- userspace object (type 6) and kernel object (type 7)
USERSPACE_PROCESS_REF = Field("userspace object process ref", 16, 8)
KERNEL_OBJECT_TYPE = Field("kernel object type", 16, 8)
OBJECT_NAME_REF = Field("object name ref", 24, 16)
OBJECT_NARGS = Field("object argument count", 40, 4)
# -- scheduling (type 8): the subtype, then legacy context switch (0), context switch (1), wakeup (2)
SCHED_TYPE = Field("scheduling record type", 60, 4)
LEGACY_CPU = Field("legacy context switch cpu", 16, 8)
LEGACY_OUT_STATE = Field("legacy context switch outgoing state", 24, 4)
LEGACY_OUT_THREAD_REF = Field("legacy context switch outgoing thread ref", 28, 8)
LEGACY_IN_THREAD_REF = Field("legacy context switch incoming thread ref", 36, 8)
LEGACY_OUT_PRIO = Field("legacy context switch outgoing priority", 44, 8)
LEGACY_IN_PRIO = Field("legacy context switch incoming priority", 52, 8)
SCHED_NARGS = Field("scheduling argument count", 16, 4)
SCHED_CPU = Field("scheduling cpu", 20, 16)
SWITCH_OUT_STATE = Field("context switch outgoing state", 36, 4)
# -- log (type 9)
LOG_MESSAGE_LENGTH = Field("log message length", 16, 15)
LOG_THREAD_REF = Field("log thread ref", 32, 8)
# -- large (type 15), and the format header word of a large blob record
LARGE_TYPE = Field("large record type", 36, 4)
LARGE_FORMAT = Field("large blob format", 40, 4)
LARGE_CATEGORY_REF = Field("large blob category ref", 0, 16)
LARGE_NAME_REF = Field("large blob name ref", 16, 16)
LARGE_NARGS = Field("large blob argument count", 32, 4)
LARGE_THREAD_REF = Field("large blob thread ref", 36, 8)
# -- argument headers
ARG_TYPE = Field("argument type", 0, 4)
ARG_SIZE = Field("argument size", 4, 12)
ARG_NAME_REF = Field("argument name ref", 16, 16)
