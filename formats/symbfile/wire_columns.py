"""The protobuf wire format decoded for many messages at once with numpy: the vectorized half of the
columnar symbfile reader (:mod:`fxscope.formats.symbfile.table`).

Varints at many positions in lock step (:func:`varints`), packed varint fields of many rows in one pass
(:func:`packed_varints`), the top-level fields of every ``RangeV1``/``ReturnPadV1`` body (:func:`message_fields`) and
their line tables (:func:`line_tables`). A varint is valid under :mod:`fxscope.formats.leb128`'s rule (10 bytes,
a value within 64 bits; ``tests/formats/test_leb128.py`` checks these copies agree with it); a message with
anything else, or with an encoding these steps do not expect, is marked for the protobuf runtime, which then
decides what it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fxscope.formats.symbfile.codec import MAX_MESSAGE

_U64 = np.uint64


def varints(b: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Varint value, end position and validity at each position ``p`` of byte array ``b``.

    Invalid: runs past ``b``, is longer than 10 bytes or its value does not fit in 64 bits (the reference
    rule, :mod:`fxscope.formats.leb128`; the caller bounds by the message end)."""
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
        ok[act[last & (byte <= 1)] if i == 9 else act[last]] = True  # a 10th byte holds bit 63 only
        end[act[last]] = q[last] + 1
        act = act[~last]
    return val, end, ok


def ragged(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + l)`` for every (s, l) pair."""
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)


def packed_varints(b: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode packed varint fields (one per row): (values, count per row, row ok).

    A row is not ok when its bytes do not end a varint or a varint breaks the reference rule (over 10 bytes,
    or a value past 64 bits: :mod:`fxscope.formats.leb128`); its values are then
    meaningless (the caller decodes it otherwise) but never shift the other rows' values."""
    idx = ragged(starts, lens)
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
    # the reference rule (fxscope.formats.leb128): 10 bytes at most, and the 10th holds bit 63 only
    long_ = np.flatnonzero((shift >= 10) | ((shift == 9) & (byte > 1)))
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
class MessageFields:
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


def message_fields(b: np.ndarray, start: np.ndarray, end: np.ndarray, is_range: np.ndarray) -> MessageFields:
    m = len(start)
    names = ("func", "file", "callFile")
    f = MessageFields(
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
        tag, after, ok = varints(b, p)
        wt = (tag & _U64(7)).astype(np.int8)
        value, vend, vok = varints(b, after)
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


def line_tables(
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
        n1, e1, ok1 = varints(b, p0 + 1)
        e1b = e1 + n1.astype(np.int64)
        tag2 = b[np.minimum(e1b, len(b) - 1)]
        n2, e2, ok2 = varints(b, e1b + 1)
        e2b = e2 + n2.astype(np.int64)
        std = (b[p0] == 0x0A) & ok1 & ok2 & (n1 <= _U64(MAX_MESSAGE)) & (n2 <= _U64(MAX_MESSAGE))
        std &= (e1b < end[act]) & (tag2 == 0x12) & (e2b == end[act])
        rows = act[std]
        seg[1][0][rows], seg[1][1][rows] = e1[std], n1[std].astype(np.int64)
        seg[2][0][rows], seg[2][1][rows] = e2[std], n2[std].astype(np.int64)
        act = act[~std]
    while len(act):
        tag, after, ok = varints(b, cur[act])
        wt = (tag & _U64(7)).astype(np.int64)
        num = (tag >> _U64(3)).astype(np.int64)
        value, vend, vok = varints(b, after)
        nxt = vend + np.where(wt == 2, value.astype(np.int64), 0)
        is_packed = (wt == 2) & ((num == 1) | (num == 2))
        ok &= is_packed & vok & (value <= _U64(MAX_MESSAGE)) & (nxt <= end[act]) & (tag < _U64(1 << 32))
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
    offs, n_off, ok1 = packed_varints(b, *seg[1])
    lines, n_line, ok2 = packed_varints(b, *seg[2])
    slow |= ~ok1 | ~ok2
    return offs, lines, n_off, slow, n_off != n_line
