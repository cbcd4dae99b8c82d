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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from google.protobuf.message import DecodeError

from fxscope.formats.errors import FormatError
from fxscope.formats.symbfile import symbfile_pb2 as pb
from fxscope.formats.symbfile.codec import (
    MAGIC,
    MAX_MESSAGE,
    MT_HEADER,
    MT_RANGE_V1,
    MT_RETURN_PAD_V1,
    MT_STRING_TABLE_V1,
    Range,
    _varint,
)

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
    premature = "File ended prematurely in the middle of a message"
    while pos < n:
        # A run of messages with a 1- or 2-byte length and a 1-byte type: only the chain is walked here
        # (a few byte reads a message); their fields and type rules are checked after it, vectorized.
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
            got = _varint(data, pos)
            if got is None:
                err = FormatError(premature, path=path, offset=start)
                break
            length, pos = got
            got = _varint(data, pos)
            if got is None:
                err = FormatError(premature, path=path, offset=start)
                break
            mtype, pos = got
        except ValueError as exc:
            err = FormatError(str(exc), path=path, offset=start)
            break
        if length > MAX_MESSAGE:
            err = FormatError(f"Message of size {length} exceeds maximum of {MAX_MESSAGE}", path=path, offset=start)
            break
        if mtype >= 1 << 31:
            err = FormatError("Message type value is invalid", path=path, offset=start)
            break
        if pos + length > n:
            err = FormatError(premature, path=path, offset=start)
            break
        if not offs and mtype != MT_HEADER:
            err = FormatError(f"Expected message type MtHeader but got {mtype}", path=path, offset=start)
            break
        if offs and mtype in (0, MT_HEADER):
            err = FormatError("Message type value is invalid", path=path, offset=start)
            break
        offs.append(start)
        body.append(pos)
        lens.append(length)
        types.append(mtype)
        pos += length
    if not offs:
        raise err or FormatError("Expected message type MtHeader but got end of file", path=path, offset=pos)
    return offs, body, lens, types, err


# --------------------------------------------------------------------------- vectorized wire decoding
def _varints(b: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Varint value, end position and validity at each position ``p`` of byte array ``b``.

    Invalid: runs past ``b`` or is longer than 10 bytes (the caller bounds by the message end)."""
    n = len(b)
    inside = p < n
    byte = b[np.where(inside, p, 0)] if n else np.zeros(len(p), np.uint8)
    val = (byte & 0x7F).astype(_U64)
    end = p + 1
    ok = inside & (byte < 0x80)
    act = np.flatnonzero(inside & (byte >= 0x80))  # the multi-byte ones, usually few
    for i in range(1, 10):
        if not len(act):
            break
        q = p[act] + i
        act, q = act[q < n], q[q < n]
        byte = b[q]
        val[act] |= (byte & 0x7F).astype(_U64) << _U64(7 * i)
        last = byte < 0x80
        ok[act[last]] = True
        end[act[last]] = q[last] + 1
        act = act[~last]
    return val, end, ok


def _ragged(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + l)`` for every (s, l) pair."""
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)


def _packed(b: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode packed varint fields (one per row): (values, count per row, row ok).

    A row is not ok when its bytes do not end a varint or a varint is over 10 bytes; its values are then
    meaningless (the caller decodes it otherwise) but never shift the other rows' values."""
    idx = _ragged(starts, lens)
    rows = len(lens)
    if not len(idx):
        return np.zeros(0, _U64), np.zeros(rows, np.int64), np.ones(rows, bool)
    byte = b[idx]
    last = byte < 0x80
    has = np.flatnonzero(lens > 0)
    first = (np.cumsum(lens) - lens)[has]  # index in ``byte`` of each non-empty row's first byte
    ok = np.ones(rows, bool)
    ok[has] = last[first + lens[has] - 1]  # the row's last byte ends a varint
    # varints start after a varint's last byte, and at every row start
    gs = np.empty(len(byte), bool)
    gs[0] = True
    gs[1:] = last[:-1]
    gs[first] = True
    gstart = np.flatnonzero(gs)
    shift = np.arange(len(byte), dtype=np.int64) - np.repeat(gstart, np.diff(np.r_[gstart, len(byte)]))
    long_ = np.flatnonzero(shift >= 10)
    if len(long_):
        ok[has[np.searchsorted(first, long_, side="right") - 1]] = False
        shift = np.minimum(shift, 9)
    # the 7-bit groups of one varint do not overlap, so their sum is their bitwise or
    contrib = (byte & 0x7F).astype(_U64) << (shift.astype(_U64) * _U64(7))
    vals = np.add.reduceat(contrib, gstart)
    counts = np.zeros(rows, np.int64)
    counts[has] = np.add.reduceat(gs.astype(np.int64), first)
    return vals, counts, ok


@dataclass
class _Fields:
    """Per-message decode of the top-level fields of RangeV1 / ReturnPadV1 bodies."""

    va_kind: np.ndarray  # 0 none, 1 delta, 2 set
    va: np.ndarray  # uint64 raw value (delta zigzag-decoded)
    length: np.ndarray
    depth: np.ndarray
    call_line: np.ndarray
    ref: dict[str, np.ndarray]  # "func"/"file"/"callFile" -> kind (0 none, 1 str, 2 ref)
    val: dict[str, np.ndarray]  # ref value, or string start
    slen: dict[str, np.ndarray]  # string length
    lt_pos: np.ndarray  # lineTable body start, -1 none
    lt_len: np.ndarray
    slow: np.ndarray  # bool: decode this message with the protobuf runtime
    bad: np.ndarray  # bool: the protobuf runtime would reject it (DecodeError)


# RangeV1 field number -> role
_STR_FIELDS = {3: ("func", 1), 9: ("func", 2), 4: ("file", 1), 10: ("file", 2), 6: ("callFile", 1), 11: ("callFile", 2)}


def _fields(b: np.ndarray, start: np.ndarray, end: np.ndarray, is_range: np.ndarray) -> _Fields:
    m = len(start)
    names = ("func", "file", "callFile")
    f = _Fields(
        np.zeros(m, np.int8), np.zeros(m, _U64), np.zeros(m, _U64), np.zeros(m, _U64), np.zeros(m, _U64),
        {k: np.zeros(m, np.int8) for k in names}, {k: np.zeros(m, np.int64) for k in names},
        {k: np.zeros(m, np.int64) for k in names}, np.full(m, -1, np.int64), np.zeros(m, np.int64),
        np.zeros(m, bool), np.zeros(m, bool),
    )  # fmt: skip
    # 1) Tokenize all bodies in lock step: step k reads the k-th field of every message still open.
    rows_l, num_l, wt_l, val_l, vend_l = [], [], [], [], []
    cur = start.copy()
    act = np.flatnonzero(cur < end)
    while len(act):
        p = cur[act]
        e = end[act]
        tag, after, ok = _varints(b, p)
        wt = (tag & _U64(7)).astype(np.int8)
        value, vend, vok = _varints(b, after)
        length = value.astype(np.int64)
        nxt = np.where(wt == 0, vend, np.where(wt == 2, vend + length, np.where(wt == 1, after + 8, after + 4)))
        ok &= (tag >= _U64(8)) & (tag < _U64(1 << 32)) & ((wt <= 2) | (wt == 5)) & (nxt <= e)
        ok &= ((wt != 0) & (wt != 2)) | (vok & (vend <= e))
        ok &= (wt != 2) | (value <= _U64(MAX_MESSAGE))
        # groups (3, 4), wire types 6 and 7, and anything running past its body: the runtime decides
        f.slow[act[~ok]] = True
        act, nxt = act[ok], nxt[ok]
        rows_l.append(act)
        num_l.append((tag[ok] >> _U64(3)).astype(np.int64))
        wt_l.append(wt[ok])
        val_l.append(value[ok])
        vend_l.append(vend[ok])
        cur[act] = nxt
        act = act[nxt < end[act]]
    if not rows_l:
        return f
    row, num, wt = np.concatenate(rows_l), np.concatenate(num_l), np.concatenate(wt_l)
    value, vend = np.concatenate(val_l), np.concatenate(vend_l)
    # 2) One role per token from a lookup table of (field number, wire type); then each field is assigned
    #    once over all tokens. Tokens are in field order per message, and numpy's assignment with
    #    repeated indices keeps the last: protobuf's "last one wins".
    code = np.where(num < 16, num * 8 + wt, 0) + np.where(is_range[row], 0, 128)  # < 256
    # (role is uint8: the stable argsort below is then a radix sort)
    role = _ROLE_LUT[code]
    f.slow[row[role == _MISMATCH]] = True
    counts = np.bincount(role, minlength=_N_ROLES)
    order = np.argsort(role, kind="stable")
    bounds = np.r_[0, np.cumsum(counts)]
    seen_oneof = {}
    for rid in np.flatnonzero(counts).tolist():
        if rid in (_IGNORE, _MISMATCH):
            continue
        sel = order[bounds[rid] : bounds[rid + 1]]
        r, v = row[sel], value[sel]
        what = _ROLES[rid]
        if what in ("delta", "set"):
            f.va[r] = (v >> _U64(1)) ^ (_U64(0) - (v & _U64(1))) if what == "delta" else v
            f.va_kind[r] = 1 if what == "delta" else 2
            seen_oneof.setdefault("va", []).append(r)
        elif what == "length":
            f.length[r] = v
        elif what == "depth":
            f.depth[r] = v
        elif what == "call_line":
            f.call_line[r] = v
        elif what == "lt":
            f.lt_pos[r] = vend[sel]
            f.lt_len[r] = v.astype(np.int64)
            seen_oneof["lt"] = [r]  # a second lineTable merges into the first: the runtime does that
        else:
            name, kind = what
            f.ref[name][r] = kind
            f.val[name][r] = vend[sel] if kind == 1 else v.astype(np.int64)
            f.slen[name][r] = v.astype(np.int64) if kind == 1 else 0
            seen_oneof.setdefault(name, []).append(r)
    # a oneof set twice (or a field repeated) resolves by token order: leave such messages to the runtime
    for rs in seen_oneof.values():
        times = np.bincount(np.concatenate(rs), minlength=m)
        if len(times) and times.max() > 1:
            f.slow[times > 1] = True
    return f


def _role_table() -> tuple[np.ndarray, list]:
    """(field number * 8 + wire type [+ 128 for ReturnPadV1]) -> role id, and the roles."""
    roles: list = ["ignore", "mismatch", "delta", "set", "length", "depth", "call_line", "lt"]
    lut = np.zeros(256, np.uint8)  # unknown field numbers: ignored, as the runtime does
    for num in range(1, 13):  # RangeV1's field numbers: a wrong wire type goes to the runtime
        lut[num * 8 : num * 8 + 8] = 1
    for num in range(1, 6):
        lut[128 + num * 8 : 128 + num * 8 + 8] = 1
    fixed = {8: "delta", 96: "set", 16: "length", 56: "depth", 40: "call_line", 66: "lt", 128 + 8: "delta",
             128 + 40: "set"}  # fmt: skip
    for code, what in fixed.items():
        lut[code] = roles.index(what)
    for num, (name, kind) in _STR_FIELDS.items():
        roles.append((name, kind))
        lut[num * 8 + (2 if kind == 1 else 0)] = len(roles) - 1
    for num in (2, 3, 4):  # ReturnPadV1's arrays: always decoded by the runtime
        lut[128 + num * 8 : 128 + num * 8 + 8] = 0
    return lut, roles


_ROLE_LUT, _ROLES = _role_table()
_IGNORE, _MISMATCH, _N_ROLES = 0, 1, len(_ROLES)


def _line_tables(
    b: np.ndarray, pos: np.ndarray, ln: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, lines, count per row, row needs the runtime, row mismatched lengths) of lineTable bodies
    (``pos`` -1: none)."""
    m = len(pos)
    seg = {1: (np.zeros(m, np.int64), np.zeros(m, np.int64)), 2: (np.zeros(m, np.int64), np.zeros(m, np.int64))}
    slow = np.zeros(m, bool)
    cur = np.where(pos >= 0, pos, 0)
    end = np.where(pos >= 0, pos + ln, 0)
    act = np.flatnonzero(cur < end)
    seen = {1: np.zeros(m, bool), 2: np.zeros(m, bool)}
    # The writers' layout, checked for all rows at once: 0x0a len offsets 0x12 len lines, nothing after.
    if len(act) and len(b):
        p0 = cur[act]
        n1, e1, ok1 = _varints(b, p0 + 1)
        e1b = e1 + n1.astype(np.int64)
        tag2 = b[np.minimum(e1b, len(b) - 1)]
        n2, e2, ok2 = _varints(b, e1b + 1)
        e2b = e2 + n2.astype(np.int64)
        std = (b[p0] == 0x0A) & ok1 & ok2 & (n1 <= _U64(MAX_MESSAGE)) & (n2 <= _U64(MAX_MESSAGE))
        std &= (e1b < end[act]) & (tag2 == 0x12) & (e2b == end[act])
        rows = act[std]
        seg[1][0][rows], seg[1][1][rows] = e1[std], n1[std].astype(np.int64)
        seg[2][0][rows], seg[2][1][rows] = e2[std], n2[std].astype(np.int64)
        act = act[~std]
    while len(act):
        tag, after, ok = _varints(b, cur[act])
        wt = (tag & _U64(7)).astype(np.int64)
        num = (tag >> _U64(3)).astype(np.int64)
        value, vend, vok = _varints(b, after)
        nxt = vend + np.where(wt == 2, value.astype(np.int64), 0)
        packed = (wt == 2) & ((num == 1) | (num == 2))
        ok &= packed & vok & (value <= _U64(MAX_MESSAGE)) & (nxt <= end[act]) & (tag < _U64(1 << 32))
        for k in (1, 2):
            sel = ok & (num == k)
            rows = act[sel]
            ok[sel] &= ~seen[k][rows]  # a second packed run appends: leave it to the runtime
            seen[k][rows] = True
            sel = ok & (num == k)
            seg[k][0][act[sel]] = vend[sel]
            seg[k][1][act[sel]] = value[sel].astype(np.int64)
        slow[act[~ok]] = True
        act, nxt = act[ok], nxt[ok]
        cur[act] = nxt
        act = act[nxt < end[act]]
    offs, n_off, ok1 = _packed(b, *seg[1])
    lines, n_line, ok2 = _packed(b, *seg[2])
    slow |= ~ok1 | ~ok2
    return offs, lines, n_off, slow, n_off != n_line


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
    f = _fields(b, body[msg], end[msg], is_range)
    lt_offs, lt_lines, lt_n, lt_slow, lt_mismatch = _line_tables(b, f.lt_pos, f.lt_len)
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
    src = _ragged(lt_first[rows[is_fast]], counts[is_fast])
    dst = _ragged(lt_start[:-1][is_fast], counts[is_fast])
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
