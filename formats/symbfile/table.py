"""Columnar symbfile reader: every ``RangeV1`` of a file decoded into numpy columns at once.

:func:`fxscope.formats.symbfile.codec.read_symbfile` builds one Python object per record through the protobuf
runtime, about 8 microseconds a record. Symbolization needs the ranges of a whole binary (70,000+ records
for libpython) before its first lookup, so this reader decodes the protobuf wire format itself, for all
records together: the framing is walked once in Python (two varints per message), then the fields of all
message bodies are decoded in lock step with numpy (one vectorized step per field position), the line
tables' packed varints in one pass, and delta addresses by a cumulative sum per run after each absolute
address. Encodings the fast path does not expect (a repeated scalar sent unpacked, a field sent twice,
group wire types) send that one message through the protobuf runtime instead, so the result equals
``read_symbfile`` on every input: the same records, and the same first error with the records before it.
That equality is what the tests check, on real files and on fuzzed bytes.

This module walks the framing and assembles the columns; the vectorized wire decoding is
:mod:`fxscope.formats.symbfile.wire_columns`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from google.protobuf.message import DecodeError

from fxscope.formats.errors import FormatError
from fxscope.formats.symbfile import symbfile_pb2 as pb
from fxscope.formats.symbfile.codec import (
    MAGIC,
    MT_HEADER,
    MT_RANGE_V1,
    MT_RETURN_PAD_V1,
    MT_STRING_TABLE_V1,
    Range,
    message_header,
)
from fxscope.formats.symbfile.wire_columns import line_tables, message_fields, ragged

_NONE = -1  # "field absent" in the string columns
_U64 = np.uint64


@dataclass
class RangeTable:
    """All ranges of a symbfile, one row per ``RangeV1`` in file order.

    Strings are ids into :attr:`strings` (string-table entries and inline strings, deduplicated);
    ``file``/``call_file`` are -1 when absent, ``call_line`` 0 when absent. Row ``i``'s line table is
    ``lt_offset``/``lt_line`` ``[lt_start[i] : lt_start[i + 1]]`` with cumulative offsets.
    """

    elf_va: np.ndarray  # uint64
    length: np.ndarray  # uint64
    depth: np.ndarray  # uint32
    func: np.ndarray  # int32 -> strings
    file: np.ndarray  # int32 -> strings, -1 absent
    call_file: np.ndarray  # int32 -> strings, -1 absent
    call_line: np.ndarray  # uint32, 0 absent
    lt_start: np.ndarray  # int64, len(rows) + 1
    lt_offset: np.ndarray  # uint64, cumulative offset from elf_va
    lt_line: np.ndarray  # uint32
    strings: list[str]
    #: why reading stopped early (the same text as ``read_symbfile``), or None
    error: str | None = None
    _order: np.ndarray | None = field(default=None, repr=False)  # lookup index, built on first use
    _sorted_va: np.ndarray | None = field(default=None, repr=False)
    _reach: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.elf_va)

    def lookup(self, address: int) -> list[tuple[str, str | None, int | None]]:
        """Inline stack (function, file, line) at ``address``, innermost first (spec 4.5), as
        :func:`fxscope.formats.symbfile.codec.lookup` gives it; ``[]`` outside every range.

        Ranges are searched by start address: a containing range starts at or before ``address``, and
        ranges nest, so the candidates are the rows sorted by start up to ``address`` whose end lies
        beyond it, found among the rows that start no earlier than the outermost containing range.
        """
        if self._order is None:
            self._order = np.lexsort((self.depth, self.elf_va))
            self._sorted_va = self.elf_va[self._order]
            ends = self.elf_va[self._order] + self.length[self._order]
            # the furthest end of any range starting at or before each sorted row: a search bound
            self._reach = np.maximum.accumulate(ends) if len(ends) else ends
        addr = _U64(address & 0xFFFFFFFFFFFFFFFF)
        hi = int(np.searchsorted(self._sorted_va, addr, side="right"))
        if hi == 0:
            return []
        # rows before ``lo`` all end at or before ``address``: none of them contains it
        lo = int(np.searchsorted(self._reach[:hi], addr, side="right"))
        rows = self._order[lo:hi]
        inside = rows[self.elf_va[rows] + self.length[rows] > addr]
        if not len(inside):
            return []
        hits = sorted(inside.tolist(), key=lambda r: (int(self.depth[r]), r))
        s = self.strings

        def name(i: int) -> str | None:
            return None if i < 0 else s[i]

        inner = hits[-1]
        a, b = int(self.lt_start[inner]), int(self.lt_start[inner + 1])
        line = None
        for off, ln in zip(self.lt_offset[a:b].tolist(), self.lt_line[a:b].tolist(), strict=True):
            if int(self.elf_va[inner]) + off <= address:
                line = ln
            else:
                break
        frames = [(s[int(self.func[inner])], name(int(self.file[inner])), line)]
        for depth in range(len(hits) - 2, -1, -1):
            outer, child = hits[depth], hits[depth + 1]
            frames.append((
                s[int(self.func[outer])],
                name(int(self.call_file[child])) or name(int(self.file[outer])),
                int(self.call_line[child]) or None,
            ))  # fmt: skip
        return frames

    def record(self, i: int) -> Range:
        """Row ``i`` as the :class:`~fxscope.formats.symbfile.codec.Range` that ``read_symbfile`` returns."""
        s = self.strings
        a, b = int(self.lt_start[i]), int(self.lt_start[i + 1])
        f, cf = int(self.file[i]), int(self.call_file[i])
        return Range(
            int(self.elf_va[i]), int(self.length[i]), s[int(self.func[i])], None if f < 0 else s[f],
            None if cf < 0 else s[cf], int(self.call_line[i]) or None, int(self.depth[i]),
            list(zip(self.lt_offset[a:b].tolist(), self.lt_line[a:b].tolist(), strict=True)),
        )  # fmt: skip


# --------------------------------------------------------------------------- framing
def _frames(data: bytes, path: str) -> tuple[list[int], list[int], list[int], list[int], FormatError | None]:
    """(message offset, body start, body length, type) of each message, and the framing error that ended
    the walk (``iter_messages``' checks, in its order)."""
    if not data.startswith(MAGIC):
        raise FormatError("not a symbfile (missing 'symbfile' magic)", path=path, offset=0)
    offs: list[int] = []
    body: list[int] = []
    lens: list[int] = []
    types: list[int] = []
    n = len(data)
    b = np.frombuffer(data, np.uint8)
    pos = len(MAGIC)
    err: FormatError | None = None
    while pos < n:
        # A run of messages with a 1- or 2-byte length and a 1-byte type: only the chain is walked here
        # (a few byte reads a message); their fields and type rules are checked after it, vectorized.
        # (Varints this short are always within the LEB128 rule; longer ones take message_header below.)
        run: list[int] = []
        push = run.append
        while pos + 2 < n:
            x = data[pos]
            if x < 0x80:
                q = pos + 2 + x
                if data[pos + 1] >= 0x80 or q > n:
                    break
            else:
                y = data[pos + 1]
                q = pos + 3 + ((x & 0x7F) | (y << 7))
                if y >= 0x80 or data[pos + 2] >= 0x80 or q > n:
                    break
            push(pos)
            pos = q
        if run:
            at = np.asarray(run, np.int64)
            hdr = 2 + (b[at] >= 0x80)
            mt = b[at + hdr - 1]
            legal = (mt != 0) & (mt != MT_HEADER)
            if not offs:
                legal[0] = mt[0] == MT_HEADER
            cut = int(np.argmin(legal)) if not legal.all() else len(run)
            nxt = np.r_[at[1:], pos]
            offs.extend(run[:cut])
            body.extend((at[:cut] + hdr[:cut]).tolist())
            lens.extend((nxt[:cut] - at[:cut] - hdr[:cut]).tolist())
            types.extend(mt[:cut].tolist())
            if cut < len(run):
                pos = run[cut]  # the general path below reports it
        if pos >= n:
            break
        start = pos
        try:  # the general case, and the checks that end the walk with an error
            length, mtype, pos = message_header(data, pos, not offs, path)
        except FormatError as exc:
            err = exc
            break
        offs.append(start)
        body.append(pos)
        lens.append(length)
        types.append(mtype)
        pos += length
    if not offs:
        raise err or FormatError("Expected message type MtHeader but got end of file", path=path, offset=pos)
    return offs, body, lens, types, err


def read_range_table(data: bytes, path: str = "<bytes>") -> RangeTable:
    """Every ``RangeV1`` of a symbfile as columns; return pads advance the address chain only.

    Raises :class:`FormatError` for a file that is not a symbfile, like ``read_symbfile``; later problems
    end the table with :attr:`RangeTable.error` and the rows before them.
    """
    offs_l, body_l, lens_l, types_l, frame_err = _frames(data, path)
    b = np.frombuffer(data, np.uint8)
    body = np.asarray(body_l, np.int64)
    types = np.asarray(types_l, np.int64)
    end = body + np.asarray(lens_l, np.int64)
    msg = np.flatnonzero((types == MT_RANGE_V1) | (types == MT_RETURN_PAD_V1))
    is_range = types[msg] == MT_RANGE_V1
    n_msg = len(msg)
    f = message_fields(b, body[msg], end[msg], is_range)
    lt_offs, lt_lines, lt_n, lt_slow, lt_mismatch = line_tables(b, f.lt_pos, f.lt_len)
    # (message index, check order, text): the first in file order ends the read, as in read_symbfile
    errors: list[tuple[int, int, str]] = []

    def body_of(k: int) -> bytes:
        return data[body_l[k] : body_l[k] + lens_l[k]]

    def decode_error(k: int, exc: Exception) -> None:
        errors.append((k, 0, f"offset 0x{offs_l[k]:x}: invalid protobuf message ({exc})"))

    # String tables: few, decoded by the runtime; each replaces the table for the messages after it.
    strings: list[str] = []
    index: dict[str, int] = {}

    def intern(text: str) -> int:
        got = index.get(text)
        if got is None:
            got = index[text] = len(strings)
            strings.append(text)
        return got

    tables_at = np.flatnonzero(types == MT_STRING_TABLE_V1)
    table_ids: list[np.ndarray] = [np.zeros(0, np.int64)]  # before any string table: empty
    for k in tables_at.tolist():
        try:
            st = pb.StringTableV1.FromString(body_of(k))
        except DecodeError as exc:
            decode_error(k, exc)
            break
        table_ids.append(np.asarray([intern(t) for t in st.strings], np.int64))
    gen = np.searchsorted(tables_at, msg, side="left")  # string table in force for each message

    # Return pads and rare encodings go through the protobuf runtime, whose fields override the fast ones.
    overrides: dict[int, object] = {}
    for r in np.flatnonzero(f.slow | lt_slow | ~is_range).tolist():
        k = int(msg[r])
        try:
            overrides[r] = (pb.RangeV1 if is_range[r] else pb.ReturnPadV1).FromString(body_of(k))
        except DecodeError as exc:
            decode_error(k, exc)
    fast = np.ones(n_msg, bool)
    fast[list(overrides)] = False

    va_kind, va_val, func_kind = f.va_kind, f.va, f.ref["func"]
    length, depth, call_line = f.length, f.depth & _U64(0xFFFFFFFF), f.call_line & _U64(0xFFFFFFFF)
    lt_bad = lt_mismatch & fast
    for r, o in overrides.items():
        which = o.WhichOneof("elfVA")
        va_kind[r] = 0 if which is None else 1 if which == "deltaElfVA" else 2
        va_val[r] = (o.deltaElfVA & 0xFFFFFFFFFFFFFFFF) if which == "deltaElfVA" else o.setElfVA if which else 0
        if is_range[r]:
            func_kind[r] = {None: 0, "funcStr": 1, "funcRef": 2}[o.WhichOneof("func")]
            length[r], depth[r], call_line[r] = o.length, o.depth, o.callLine
            lt_bad[r] = len(o.lineTable.offset) != len(o.lineTable.lineNumber)
        else:
            lt_bad[r] = not len(o.func) == len(o.file) == len(o.line)

    # String references -> global ids; check codes follow read_symbfile's order within a message.
    check = np.zeros(n_msg, np.int8)  # 1 no address, 2 relative first, 3 no func, 4 bad ref, 5 lengths
    check[va_kind == 0] = 1
    first_set = np.flatnonzero(va_kind == 2)
    before_set = np.arange(n_msg) < (first_set[0] if len(first_set) else n_msg)
    check[(check == 0) & (va_kind == 1) & before_set] = 2
    check[(check == 0) & is_range & (func_kind == 0)] = 3
    sid: dict[str, np.ndarray] = {}
    for name in ("func", "file", "callFile"):
        kind, val = f.ref[name], f.val[name]
        val[kind == 2] &= 0xFFFFFFFF  # uint32 fields keep their low 32 bits, as the runtime does
        out = np.full(n_msg, _NONE, np.int64)
        for r, o in overrides.items():
            if is_range[r]:
                which = o.WhichOneof(name)
                kind[r] = 0 if which is None else 1 if which.endswith("Str") else 2
                if kind[r] == 1:
                    out[r] = intern(getattr(o, which))
                elif kind[r] == 2:
                    val[r] = getattr(o, which)
        refs = np.flatnonzero((kind == 2) & is_range)
        for g in np.flatnonzero(np.bincount(gen[refs])).tolist() if len(refs) else []:
            rows = refs[gen[refs] == g]
            ids = table_ids[g] if g < len(table_ids) else np.zeros(0, np.int64)
            v = val[rows]
            good = v < len(ids)
            out[rows[good]] = ids[v[good]]
            bad = rows[~good]
            check[bad[check[bad] == 0]] = 4
        inline = np.flatnonzero((kind == 1) & is_range & fast)
        for r, a, n in zip(inline.tolist(), val[inline].tolist(), f.slen[name][inline].tolist(), strict=True):
            try:
                out[r] = intern(data[a : a + n].decode("utf-8"))
            except UnicodeDecodeError:  # the runtime rejects the message: take its own words for it
                k = int(msg[r])
                try:
                    pb.RangeV1.FromString(body_of(k))
                except DecodeError as exc:
                    decode_error(k, exc)
        sid[name] = out
    check[(check == 0) & lt_bad & ~is_range] = 5  # a return pad's arrays are checked before its refs
    for r, o in overrides.items():  # return pads reference the string table too
        if not is_range[r] and check[r] == 0:
            ids = table_ids[gen[r]] if gen[r] < len(table_ids) else ()
            if any(i >= len(ids) for i in list(o.func) + list(o.file)):
                check[r] = 4
    check[(check == 0) & lt_bad] = 5
    texts = {
        1: "Message is missing a required field",
        2: "Encountered relative value without an absolute value preceding it",
        3: "Message is missing a required field",
        4: "Message contains an invalid string table reference",
        5: "Not all arrays in a columnar struct-of-arrays have the same length",
    }
    bad_rows = np.flatnonzero(check)
    if len(bad_rows):
        r = int(bad_rows[0])
        k = int(msg[r])
        errors.append((k, 1, f"offset 0x{offs_l[k]:x}: {texts[int(check[r])]}"))
    if errors:
        stop, _order, error = min(errors)
    else:
        stop, error = len(types), (str(frame_err) if frame_err is not None else None)
    n = int(np.searchsorted(msg, stop, side="left"))

    # Addresses: absolute at each set row, then cumulative deltas (mod 2**64) until the next one.
    if n:
        kinds, vals = va_kind[:n], va_val[:n]
        set_rows = np.flatnonzero(kinds == 2)
        run = np.searchsorted(set_rows, np.arange(n), side="right") - 1
        csum = np.cumsum(np.where(kinds == 2, _U64(0), vals), dtype=_U64)
        base = vals[set_rows] - csum[set_rows]  # wraps like the reference reader's wrapping_add
        elf_va = base[np.maximum(run, 0)] + csum
    else:
        elf_va = np.zeros(0, _U64)
    rows = np.flatnonzero(is_range[:n])

    # Line tables: fast rows from the packed decode, overridden rows from the runtime; offsets cumulative.
    counts = lt_n[rows].copy()
    slow_rows = np.flatnonzero(np.isin(rows, list(overrides))).tolist() if overrides else []
    for i in slow_rows:
        counts[i] = len(overrides[int(rows[i])].lineTable.offset)
    lt_start = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(counts, out=lt_start[1:])
    lt_first = np.cumsum(lt_n) - lt_n
    is_fast = fast[rows]
    src = ragged(lt_first[rows[is_fast]], counts[is_fast])
    dst = ragged(lt_start[:-1][is_fast], counts[is_fast])
    lt_off = np.zeros(int(lt_start[-1]), _U64)
    lt_line = np.zeros(int(lt_start[-1]), np.uint32)
    lt_off[dst] = lt_offs[src] & _U64(0xFFFFFFFF)
    lt_line[dst] = (lt_lines[src] & _U64(0xFFFFFFFF)).astype(np.uint32)
    for i in slow_rows:
        t = overrides[int(rows[i])].lineTable
        a = int(lt_start[i])
        lt_off[a : a + len(t.offset)] = list(t.offset)
        lt_line[a : a + len(t.offset)] = list(t.lineNumber)
    if len(lt_off):
        csum = np.cumsum(lt_off, dtype=_U64)
        before = np.r_[_U64(0), csum][lt_start[:-1]]
        lt_off = csum - np.repeat(before, counts)

    return RangeTable(
        elf_va=elf_va[rows],
        length=length[rows],
        depth=depth[rows].astype(np.uint32),
        func=sid["func"][rows].astype(np.int32),
        file=sid["file"][rows].astype(np.int32),
        call_file=sid["callFile"][rows].astype(np.int32),
        call_line=call_line[rows].astype(np.uint32),
        lt_start=lt_start,
        lt_offset=lt_off,
        lt_line=lt_line,
        strings=strings,
        error=error,
    )
