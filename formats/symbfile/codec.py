"""Elastic symbfile reader and writer: framing, string tables, delta addresses, line tables.

Framing (``../shared/specs/symbfile.md`` Part 2): the magic ``symbfile``, then messages of
``varint length, varint type, protobuf body``; the first is an empty ``Header``. Bodies are decoded with the
``protobuf`` runtime from ``symbfile.proto`` (generated ``symbfile_pb2.py``). Records come out with
absolute ELF addresses, resolved strings and cumulative line-table offsets, as the upstream Rust reader
returns them.

Reading is strict where the format is (a file that does not start like a symbfile is a
:class:`FormatError`) and forgiving after that: a broken message ends the read with an error message and
the records decoded so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError

from fxscope.formats.errors import FormatError
from fxscope.formats.leb128 import LebTooBigError, LebTruncatedError, decode_uleb, encode_uleb
from fxscope.formats.symbfile import symbfile_pb2 as pb

MAGIC = b"symbfile"
MAX_MESSAGE = 16 * 1024 * 1024
MT_HEADER, MT_RANGE_V1, MT_RETURN_PAD_V1, MT_STRING_TABLE_V1 = 1, 2, 3, 4


@dataclass
class Range:
    elf_va: int
    length: int
    func: str
    file: str | None
    call_file: str | None
    call_line: int | None
    depth: int
    line_table: list[tuple[int, int]] = field(default_factory=list)  # (cumulative offset, line)


@dataclass
class ReturnPad:
    elf_va: int
    entries: list[tuple[str, str, int]]  # (func, file, line), outermost first


@dataclass
class Symbfile:
    records: list[Range | ReturnPad]
    error: str | None = None  # why reading stopped early, with the byte offset

    @property
    def ranges(self) -> list[Range]:
        return [r for r in self.records if isinstance(r, Range)]


PREMATURE = "File ended prematurely in the middle of a message"


def message_header(data: bytes, pos: int, first: bool, path: str) -> tuple[int, int, int]:
    """(body length, message type, body start) of the message at ``pos``, checked as the upstream reader
    checks it (its wording, in its order); ``first``: the file's first message, which must be the header.

    The two varints follow :mod:`fxscope.formats.leb128`'s rule (10 bytes, 64-bit values)."""
    try:
        length, at = decode_uleb(data, pos)
        mtype, at = decode_uleb(data, at)
    except LebTruncatedError:
        raise FormatError(PREMATURE, path=path, offset=pos) from None
    except LebTooBigError:
        raise FormatError("Variable-length integer is too big", path=path, offset=pos) from None
    if length > MAX_MESSAGE:
        raise FormatError(f"Message of size {length} exceeds maximum of {MAX_MESSAGE}", path=path, offset=pos)
    if mtype >= 1 << 31:
        raise FormatError("Message type value is invalid", path=path, offset=pos)
    if at + length > len(data):
        raise FormatError(PREMATURE, path=path, offset=pos)
    if first and mtype != MT_HEADER:
        raise FormatError(f"Expected message type MtHeader but got {mtype}", path=path, offset=pos)
    if not first and mtype in (0, MT_HEADER):
        raise FormatError("Message type value is invalid", path=path, offset=pos)
    return length, mtype, at


def iter_messages(data: bytes, path: str = "<bytes>") -> Iterator[tuple[int, int, bytes]]:
    """(offset, message type, body) of every message; raises FormatError for a broken framing."""
    if not data.startswith(MAGIC):
        raise FormatError("not a symbfile (missing 'symbfile' magic)", path=path, offset=0)
    pos = len(MAGIC)
    first = True
    while pos < len(data):
        start = pos
        length, mtype, pos = message_header(data, pos, first, path)
        first = False
        yield start, mtype, data[pos : pos + length]
        pos += length
    if first:
        raise FormatError("Expected message type MtHeader but got end of file", path=path, offset=pos)


def read_symbfile(data: bytes, path: str = "<bytes>") -> Symbfile:
    records: list[Range | ReturnPad] = []
    strings: list[str] = []
    prev_va: int | None = None
    header_seen = False
    messages = iter_messages(data, path)
    try:
        for offset, mtype, body in messages:
            if mtype == MT_HEADER:
                header_seen = True
                continue
            try:
                if mtype == MT_STRING_TABLE_V1:
                    msg = pb.StringTableV1.FromString(body)
                    strings = list(msg.strings)
                    continue
                if mtype == MT_RANGE_V1:
                    msg = pb.RangeV1.FromString(body)
                elif mtype == MT_RETURN_PAD_V1:
                    msg = pb.ReturnPadV1.FromString(body)
                else:
                    continue  # unknown types are skipped by length
            except DecodeError as exc:
                return Symbfile(records, f"offset 0x{offset:x}: invalid protobuf message ({exc})")
            which = msg.WhichOneof("elfVA")
            if which == "setElfVA":
                va = msg.setElfVA
            elif which == "deltaElfVA":
                if prev_va is None:
                    return Symbfile(records, f"offset 0x{offset:x}: Encountered relative value without an "
                                             "absolute value preceding it")
                va = (prev_va + msg.deltaElfVA) & 0xFFFFFFFFFFFFFFFF
            else:
                return Symbfile(records, f"offset 0x{offset:x}: Message is missing a required field")
            prev_va = va

            def ref(index: int, table: list[str] = strings) -> str:
                if index >= len(table):
                    raise IndexError(index)
                return table[index]

            try:
                if mtype == MT_RANGE_V1:
                    func_kind = msg.WhichOneof("func")
                    if func_kind is None:
                        return Symbfile(records, f"offset 0x{offset:x}: Message is missing a required field")
                    func = msg.funcStr if func_kind == "funcStr" else ref(msg.funcRef)
                    file_kind = msg.WhichOneof("file")
                    file = None if file_kind is None else msg.fileStr if file_kind == "fileStr" else ref(msg.fileRef)
                    cf_kind = msg.WhichOneof("callFile")
                    call_file = (None if cf_kind is None else msg.callFileStr if cf_kind == "callFileStr"
                                 else ref(msg.callFileRef))
                    offsets, lines = list(msg.lineTable.offset), list(msg.lineTable.lineNumber)
                    if len(offsets) != len(lines):
                        return Symbfile(records, f"offset 0x{offset:x}: Not all arrays in a columnar "
                                                 "struct-of-arrays have the same length")
                    table, total = [], 0
                    for delta, line in zip(offsets, lines, strict=True):
                        total += delta
                        table.append((total, line))
                    records.append(Range(va, msg.length, func, file, call_file, msg.callLine or None, msg.depth, table))
                else:
                    if not len(msg.func) == len(msg.file) == len(msg.line):
                        return Symbfile(records, f"offset 0x{offset:x}: Not all arrays in a columnar "
                                                 "struct-of-arrays have the same length")
                    entries = [(ref(f), ref(fi), ln) for f, fi, ln in zip(msg.func, msg.file, msg.line, strict=True)]
                    records.append(ReturnPad(va, entries))
            except IndexError:
                return Symbfile(records, f"offset 0x{offset:x}: Message contains an invalid string table reference")
    except FormatError as exc:
        if not header_seen:
            raise  # not a symbfile at all
        return Symbfile(records, str(exc))
    return Symbfile(records)


def frame(mtype: int, body: bytes) -> bytes:
    """One message with its length and type prefix."""
    return encode_uleb(len(body)) + encode_uleb(mtype) + body


def write_symbfile(records: Iterable[Range | ReturnPad]) -> bytes:
    """Encode records like the reference writer: one string table (strings used more than once, and every
    return-pad string), ranges with single-use strings inline, setElfVA first and deltas after."""
    records = list(records)
    counts: dict[str, int] = {}
    for r in records:
        names = [r.func, r.file, r.call_file] if isinstance(r, Range) else [s for e in r.entries for s in e[:2]]
        for s in names:
            if s is not None:
                counts[s] = counts.get(s, 0) + (1 if isinstance(r, Range) else 2)
    table = [s for s, n in counts.items() if n > 1]
    index = {s: i for i, s in enumerate(table)}
    out = bytearray(MAGIC) + frame(MT_HEADER, b"")
    if table:
        out += frame(MT_STRING_TABLE_V1, pb.StringTableV1(strings=table).SerializeToString())
    prev: int | None = None
    for r in records:
        try:
            msg, mtype = _message(r, index)
        except (ValueError, TypeError) as exc:  # protobuf's range checks: a value its field cannot hold
            raise FormatError(f"cannot encode the record at 0x{r.elf_va:x}: {exc}") from None
        delta = r.elf_va - prev if prev is not None else None
        if delta is not None and -(1 << 63) <= delta < (1 << 63):
            msg.deltaElfVA = delta
        elif 0 <= r.elf_va < 1 << 64:
            msg.setElfVA = r.elf_va
        else:
            raise FormatError(f"cannot encode the record at 0x{r.elf_va:x}: address out of 64-bit range")
        prev = r.elf_va
        out += frame(mtype, msg.SerializeToString())
    return bytes(out)


def _message(r: Range | ReturnPad, index: dict[str, int]):
    """The protobuf message of one record (without its address) and its message type."""
    if isinstance(r, Range):
        msg = pb.RangeV1(length=r.length, depth=r.depth, callLine=r.call_line or 0)
        if r.func in index:
            msg.funcRef = index[r.func]
        else:
            msg.funcStr = r.func
        if r.file is not None:
            if r.file in index:
                msg.fileRef = index[r.file]
            else:
                msg.fileStr = r.file
        if r.call_file is not None:
            if r.call_file in index:
                msg.callFileRef = index[r.call_file]
            else:
                msg.callFileStr = r.call_file
        last = 0
        for off, line in r.line_table:
            msg.lineTable.offset.append(off - last)
            msg.lineTable.lineNumber.append(line)
            last = off
        mtype = MT_RANGE_V1
    else:
        msg = pb.ReturnPadV1(
            func=[index[f] for f, _, _ in r.entries],
            file=[index[fi] for _, fi, _ in r.entries],
            line=[ln for _, _, ln in r.entries],
        )
        mtype = MT_RETURN_PAD_V1
    return msg, mtype


def lookup(ranges: list[Range], address: int) -> list[tuple[str, str | None, int | None]]:
    """Inline stack (function, file, line) at ``address``, innermost first (spec 4.5)."""
    hits = sorted((r for r in ranges if r.elf_va <= address < r.elf_va + r.length), key=lambda r: r.depth)
    if not hits:
        return []
    frames = []
    inner = hits[-1]
    line = None
    for off, ln in inner.line_table:
        if inner.elf_va + off <= address:
            line = ln
        else:
            break
    frames.append((inner.func, inner.file, line))
    for depth in range(len(hits) - 2, -1, -1):
        outer, child = hits[depth], hits[depth + 1]
        frames.append((outer.func, child.call_file or outer.file, child.call_line))
    return frames
