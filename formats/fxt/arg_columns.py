"""The arguments of many event records at once, as columns (for counters, whose values are arguments).

:meth:`FxtColumns.event_args` decodes one record in Python: right for a details panel, far too slow for
the millions of samples of a counter track. This walks the argument blocks of all requested records
together, the k-th argument of every record in one vectorized step (at most 15 steps, the 4-bit count),
like the reader's own argument walk, and keeps each argument's header fields and payload word. Names
resolve to global string ids in bulk (:meth:`~fxscope.formats.fxt.reader.ArgDecoder.string_ids`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.columns import FxtColumns
from fxscope.formats.fxt.event_data import compiled_pair, times_and_data
from fxscope.formats.fxt.tables import STRING_KEYS

_U = np.uint64
#: argument types whose value is a number (pointers and koids are identifiers, not quantities)
NUMERIC_TYPES = (ArgType.INT32, ArgType.UINT32, ArgType.INT64, ArgType.UINT64, ArgType.DOUBLE)
_WORD_TYPES = (ArgType.INT64, ArgType.UINT64, ArgType.DOUBLE, ArgType.POINTER, ArgType.KOID)
_IS_WORD_TYPE = np.isin(np.arange(16), _WORD_TYPES)  # by the 4-bit type: a lookup, not an isin a step


@dataclass
class ArgColumns:
    """One row per argument, grouped by record in the order of the requested rows, then argument order."""

    event: np.ndarray  # int64 event row
    index: np.ndarray  # uint8 position of the argument in its record
    name: np.ndarray  # int64 -> FxtColumns.strings (-1 unresolved)
    type: np.ndarray  # uint8 ArgType
    #: the value's bits: bits 32..63 of the header for 32-bit / bool / string-ref types, else the word
    #: after the name (64-bit types); 0 when that word is missing
    raw: np.ndarray
    #: word index where the value's payload starts (after an inline name): a 64-bit value or an inline
    #: string / blob stream
    value_word: np.ndarray
    #: int64 position of each argument's record among the requested rows (``event`` is ``rows[record]``):
    #: what a caller's per-record columns are gathered by, without searching the rows
    record: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.event)

    @property
    def numeric(self) -> np.ndarray:
        """Which arguments hold a number (int32/uint32/int64/uint64/double)."""
        return np.isin(self.type, NUMERIC_TYPES)

    def values(self) -> np.ndarray:
        """float64 value of each argument; NaN for non-numeric ones (int64 beyond 2**53 rounds)."""
        t, raw = self.type, self.raw
        out = np.full(len(t), np.nan)
        low = (raw & _U(0xFFFFFFFF)).astype(np.uint32)
        for atype, vals in (
            (ArgType.INT32, low.view(np.int32)),
            (ArgType.UINT32, low),
            (ArgType.INT64, raw.view(np.int64)),
            (ArgType.UINT64, raw),
            (ArgType.DOUBLE, raw.view(np.float64)),
        ):
            sel = t == atype
            out[sel] = vals[sel]
        return out


def event_arg_columns(cols: FxtColumns, rows: np.ndarray, check=None) -> ArgColumns:
    """The arguments of event ``rows`` (ascending) as columns; see the module docstring. ``check()``, when
    given, is called before each argument position's pass (a Cancel raises from it)."""
    rows = np.asarray(rows, np.int64)
    record, act, index, ref, stream, atype, raw, value_at = _arg_walk(cols, rows, check)
    names = cols.arg_decoder.string_ids(ref, stream, record[act])
    return ArgColumns(event=rows[act], index=index, name=names, type=atype, raw=raw, value_word=value_at,
                      record=act)  # fmt: skip


def _arg_walk(cols: FxtColumns, rows: np.ndarray, check=None) -> tuple[np.ndarray, ...]:
    """The arguments of event ``rows`` (int64, ascending), their names not yet resolved: (each row's record
    word; per argument its row's position among the rows, position in its record, name ref, the word after
    its header, type, raw value (uint64), where its value starts), as :class:`ArgColumns` has them. Reads
    only (nothing interned): a worker thread may run it."""
    dec = cols.arg_decoder
    w = dec.w
    record, pos, end, nargs = cols.arg_blocks_of(rows)
    scan = compiled.record_scan
    if scan is not None and compiled.contiguous_words(w):  # one compiled pass, already in record order
        if check is not None:
            check()
        cap = int(nargs.sum(dtype=np.int64))
        act, ref, stream, value_at = (np.empty(cap, np.int64) for _ in range(4))
        index, atype, raw = np.empty(cap, np.uint8), np.empty(cap, np.uint8), np.empty(cap, np.uint64)
        nargs8 = np.ascontiguousarray(nargs, np.uint8)
        c = scan.arg_columns(w, pos, end, nargs8, act, index, ref, stream, atype, raw, value_at)
        return (record, *(a[:c] for a in (act, index, ref, stream, atype, raw, value_at)))
    parts: list[tuple[np.ndarray, ...]] = []
    # the records still walking, with their position, end and argument count alongside (compressed with
    # them each step: cheaper than gathering pos[act], end[act] again several times a step)
    act = np.flatnonzero(nargs > 0)
    p, e, n = pos[act], end[act], nargs[act]
    for k in range(15):
        if check is not None:
            check()
        live = (n > k) & (p < e)
        if not live.all():
            act, p, e, n = act[live], p[live], e[live], n[live]
        if not len(act):
            break
        h = w[p]
        size = ((h >> _U(4)) & _U(0xFFF)).astype(np.int64)
        ref = ((h >> _U(16)) & _U(0xFFFF)).astype(np.int64)
        name_words = np.where(ref >= 0x8000, ((ref & 0x7FFF) + 7) >> 3, 0)
        # the reader already cut bad blocks; be safe: the argument inside its record, and its inline name
        # inside the argument (a name running past a truncated file's end read past the buffer)
        after = p + size
        ok = (size > 0) & (after <= e) & (1 + name_words <= size) & (after <= len(w))
        if not ok.all():  # such a record stops here (its later arguments are not read)
            act, p, e, n, h, size, ref, name_words, after = (
                x[ok] for x in (act, p, e, n, h, size, ref, name_words, after))  # fmt: skip
        atype = (h & _U(0xF)).astype(np.uint8)
        value_at = p + 1 + name_words
        is_word = _IS_WORD_TYPE[atype]
        has_word = is_word & (value_at < after)
        raw = np.where(has_word, w[np.minimum(value_at, len(w) - 1)], h >> _U(32))
        raw[is_word & ~has_word] = 0
        parts.append((act, np.full(len(act), k, np.uint8), ref, p + 1, atype, raw, value_at))
        p = after
    if not parts:
        z = np.zeros(0, np.int64)
        return record, z, np.zeros(0, np.uint8), z.copy(), z.copy(), np.zeros(0, np.uint8), np.zeros(0, np.uint64), z.copy()
    if len(parts) == 1:  # at most one argument a record: in record order already
        act, index, ref, stream, atype, raw, value_at = parts[0]
    else:
        act, index, ref, stream, atype, raw, value_at = (np.concatenate(c) for c in zip(*parts, strict=True))
        # record order (ascending file position), then argument order: the parts come by argument, each
        # by record, so a stable sort by record is the order (a merge of sorted runs)
        order = np.argsort(act, kind="stable")
        act, index, ref, stream, atype, raw, value_at = (
            a[order] for a in (act, index, ref, stream, atype, raw, value_at)
        )
    return record, act, index, ref, stream, atype, raw.astype(np.uint64), value_at


@dataclass
class NumericArgs:
    """The numeric arguments of event rows (:attr:`ArgColumns.numeric`), in row then argument order, with
    their records' times and data words (one a row)."""

    record: np.ndarray  # int64 position of each argument's record among the rows
    name: np.ndarray  # int64 -> FxtColumns.strings (-1 unresolved)
    value: np.ndarray  # float64 (:meth:`ArgColumns.values`)
    ts: np.ndarray  # int64 ns of each row (``ev_ts``)
    data: np.ndarray  # uint64 data word of each row (``ev_data``: a counter's id)
    non_numeric: int  # the rows' other arguments (not numbers), skipped


def numeric_args(cols: FxtColumns, rows: np.ndarray, check=None, per_row: float = 1.25) -> NumericArgs:
    """The numeric arguments of event ``rows`` (ascending) with their times and data words: a counter
    track's samples. Compiled (record_scan.numeric_args), one pass over each row's record: its header, time,
    data word and argument block read while its cache lines are in (three passes, :func:`event_arg_columns`
    then :func:`~fxscope.formats.fxt.event_data.times_and_data`, fetched each record three times: the
    reference, and the path without the compiled loops). ``check()`` as :func:`event_arg_columns`'s;
    ``per_row``: the numeric arguments a row expected (the outputs' size: more found, the rows' argument
    counts are read and the pass made again; a caller of many batches gives the last batches' ratio)."""
    rows = np.asarray(rows)
    dec = cols.arg_decoder
    rec = cols.ev_word
    scan = compiled_pair(cols.ev_ts, cols.ev_data)
    if (
        scan is None
        or not compiled.contiguous_words(dec.w)
        or dec.w is not cols.ev_data.words
        or rows.ndim != 1
        or not len(rows)
        or rows.dtype not in (np.int32, np.int64)
        or not (isinstance(rec, np.ndarray) and rec.flags.c_contiguous and rec.dtype in (np.uint32, np.int64))
        or rec is not cols.ev_data.record_word
    ):
        args = event_arg_columns(cols, rows, check=check)
        numeric = args.numeric
        ts, data = times_and_data(cols.ev_ts, cols.ev_data, rows)
        assert args.record is not None
        return NumericArgs(args.record[numeric], args.name[numeric], args.values()[numeric], np.asarray(ts),
                           np.asarray(data, np.uint64), int(np.count_nonzero(~numeric)))  # fmt: skip
    if check is not None:
        check()
    data_col = cols.ev_data
    if data_col.before_read is not None:  # (no compiled SIGBUS guard: the file's size checked first)
        data_col.before_read()
    rows = np.ascontiguousarray(rows)
    cut_words, cut_nargs = cols.ev_nargs_cut
    cut_words = np.ascontiguousarray(cut_words, np.int64)
    cut_nargs = np.ascontiguousarray(cut_nargs, np.uint8)
    m = len(rows)
    record, ts, data = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.uint64)
    cap = int(m * max(per_row, 0.0) * 1.05) + 64
    while True:
        act, ref, stream, value = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap)
        c, skipped, full = scan.numeric_args(dec.w, rec, rec.dtype == np.int64, data_col.kind, rows,
                                             rows.dtype == np.int64, cut_words, cut_nargs, data_col.seg_pos,
                                             data_col.seg_tps, record, ts, data, act, ref, stream, value)  # fmt: skip
        if not full:
            break
        cap = int(cols.arg_blocks_of(rows)[3].sum(dtype=np.int64))  # (every argument numeric, at most)
    data_col._released_after(rows, 0, m)
    data_col._put_exceptions(rows, 0, data)
    act, ref, stream, value = act[:c], ref[:c], stream[:c], value[:c]
    names = dec.string_ids(ref, stream, record[act])
    return NumericArgs(act, names, value, ts, data, int(skipped))


def python_values(cols: FxtColumns, args: ArgColumns) -> tuple[list[object], np.ndarray]:
    """Each argument's value as :class:`~fxscope.formats.fxt.args.Arg` would hold it, converted per type in bulk.

    Returns (values, fallback): blob and unknown-type arguments are left as None with ``fallback`` set,
    for :meth:`FxtColumns.event_args` to decode (they are rare). String values resolve like names.
    """
    t, raw = args.type, args.raw
    out = np.empty(len(t), object)
    low = (raw & _U(0xFFFFFFFF)).astype(np.uint32)
    conv = {
        ArgType.INT32: low.view(np.int32),
        ArgType.UINT32: low,
        ArgType.INT64: raw.view(np.int64),
        ArgType.UINT64: raw,
        ArgType.DOUBLE: raw.view(np.float64),
        ArgType.POINTER: raw,
        ArgType.KOID: raw,
        ArgType.BOOL: (raw & _U(1)).astype(bool),
    }
    for atype, vals in conv.items():
        sel = np.flatnonzero(t == atype)
        if len(sel):
            out[sel] = vals[sel].tolist()
    strs = np.flatnonzero(t == ArgType.STRING)
    if len(strs):
        ids = cols.arg_decoder.string_ids(
            (raw[strs] & _U(0xFFFF)).astype(np.int64), args.value_word[strs], cols.ev_word[args.event[strs]]
        )
        text = cols.strings
        refs = (raw[strs] & _U(0xFFFF)).tolist()
        out[strs] = [
            text[i] if i >= 0 else f"<unresolved string #{r}>"
            for i, r in zip(ids.tolist(), refs, strict=True)
        ]
    fallback = (t == ArgType.BLOB) | (t > ArgType.BLOB)
    return out.tolist(), fallback


@dataclass
class StringArgRefs:
    """The string refs of the arguments of event rows, not yet resolved (:func:`string_arg_refs`): per
    argument, ``act`` (int64) its row's position among the rows, ``ref`` its name ref and ``stream`` the word
    after its header, ``value_ref`` its string value's ref (-1: not a string argument) and ``value_at`` where
    that value's stream starts (0: not a string argument); ``record`` (int64) each row's record word."""

    record: np.ndarray
    act: np.ndarray
    ref: np.ndarray
    stream: np.ndarray
    value_ref: np.ndarray
    value_at: np.ndarray


@dataclass
class StringArgIds:
    """The strings the arguments of event rows use: ``record[k]`` (int64) is the position among the rows of the
    record whose argument name, or string value, is string ``sid[k]`` (int64 global string id, -1 unresolved);
    the names first (in row then argument order), then the string values (in the same order)."""

    record: np.ndarray
    sid: np.ndarray


def string_arg_refs(cols: FxtColumns, rows: np.ndarray, check=None) -> StringArgRefs:
    """The string refs of the arguments of event ``rows`` (ascending): their names' and string values'
    (:func:`string_arg_ids` resolves them), by the numpy walk of :func:`event_arg_columns`: the search index's
    reader where the compiled pass (:func:`string_arg_sids`, which reads and resolves them at once) is not
    built. ``check()`` as :func:`event_arg_columns`'s."""
    rows = np.ascontiguousarray(rows, np.int64)
    record, act, _index, ref, stream, atype, raw, value_at = _arg_walk(cols, rows, check)
    string = atype == ArgType.STRING
    value_ref = np.where(string, (raw & _U(0xFFFF)).astype(np.int64), -1)
    return StringArgRefs(record, act, ref, stream, value_ref, np.where(string, value_at, 0))


def string_arg_ids(cols: FxtColumns, refs: StringArgRefs) -> StringArgIds:
    """:func:`string_arg_refs` resolved to global string ids, inline texts interned into the string table (on
    one thread at a time: the table grows)."""
    dec = cols.arg_decoder
    names = dec.string_ids(refs.ref, refs.stream, refs.record[refs.act])
    string = np.flatnonzero(refs.value_ref >= 0)
    act = refs.act[string]
    values = dec.string_ids(refs.value_ref[string], refs.value_at[string], refs.record[act])
    return StringArgIds(np.concatenate([refs.act, act]), np.concatenate([names, values]))


@dataclass
class StringArgSids:
    """The strings the arguments of event rows use, resolved in the reading pass (:func:`string_arg_sids`):
    ``sid[k]`` (int32 global string id, -1 unresolved) is used by the row at position ``act[k]`` (int32) among the
    rows; the strings that pass could not resolve (inline streams, keys registered more than once) are
    ``sid[special_at]`` (-3, -2) until :func:`resolve_special_sids` sets them, with their refs, stream words and
    record words (int64) beside."""

    act: np.ndarray
    sid: np.ndarray
    special_at: np.ndarray
    special_ref: np.ndarray
    special_word: np.ndarray
    special_record: np.ndarray


def string_arg_sids(cols: FxtColumns, rows: np.ndarray, per_row: float = 2.0) -> StringArgSids | None:
    """The argument names and string values of event ``rows`` (ascending) as global string ids, read and resolved
    in one compiled pass over each row's record (record_scan.string_arg_ids): the string refs through the
    string table of the provider in force at each record, as :meth:`~fxscope.formats.fxt.lazy_args.ArgDecoder.string_ids`
    resolves them, with none of the per-argument arrays :func:`string_arg_refs` then gives that call (at 100M
    events their resolution was half the search index's build). Reads only, nothing is interned: the strings
    left (inline, or keys registered more than once) are the caller's (:func:`resolve_special_sids`, on one
    thread at a time; every indexed ref too when the string table has no dense lookup: a trace of thousands of
    provider generations). None when the pass is not built or the columns are not plain words (then
    :func:`string_arg_refs` and :func:`string_arg_ids`). ``per_row``: the strings a
    row expected (the outputs' first size; a row whose arguments do not fit makes the next call, with room for
    twice as many)."""
    dec = cols.arg_decoder
    rec = cols.ev_word
    scan = compiled.record_scan
    lookup = dec.str_lookup
    if (
        scan is None
        or not compiled.contiguous_words(dec.w)
        or not (isinstance(rec, np.ndarray) and rec.flags.c_contiguous and rec.dtype in (np.uint32, np.int64))
    ):
        return None
    rows = np.ascontiguousarray(rows, np.int64)
    m = len(rows)
    if m >= 1 << 31:  # (act, a position among the rows, is int32)
        return None
    if cols.ev_data.before_read is not None:  # (no compiled SIGBUS guard: the file's size checked first)
        cols.ev_data.before_read()
    cut_words, cut_nargs = cols.ev_nargs_cut
    cut_words = np.ascontiguousarray(cut_words, np.int64)
    cut_nargs = np.ascontiguousarray(cut_nargs, np.uint8)
    dense = lookup.dense
    first, value, single_last = dense if dense is not None else (np.zeros(0, np.int64), np.zeros(0, np.int32), -1)
    seg_pos, seg_gen = (np.ascontiguousarray(a, np.int64) for a in dec.segments)
    check_first = bool(m) and int(rec[rows[0]]) <= single_last
    parts: list[tuple[np.ndarray, ...]] = []
    specials: list[tuple[np.ndarray, ...]] = []
    start, cap, written = 0, int(m * max(per_row, 0.0)) + 32, 0  # (32: room for any one row's strings)
    while start < m:
        act, sid = np.empty(cap, np.int32), np.empty(cap, np.int32)
        at, ref, word, record = (np.empty(cap, np.int64) for _ in range(4))
        c, start, k = scan.string_arg_ids(dec.w, rec, rec.dtype == np.int64, rows, start, cut_words, cut_nargs,
                                          seg_pos, seg_gen, value, first, STRING_KEYS, check_first,
                                          act, sid, at, ref, word, record)  # fmt: skip
        parts.append((act[:c], sid[:c]))
        specials.append((at[:k] + written, ref[:k], word[:k], record[:k]))
        written += c
        cap *= 2
    if not parts:  # (no rows)
        act, sid = np.zeros(0, np.int32), np.zeros(0, np.int32)
        at, ref, word, record = (np.zeros(0, np.int64) for _ in range(4))
    elif len(parts) == 1:
        (act, sid), (at, ref, word, record) = parts[0], specials[0]
    else:
        act, sid = (np.concatenate(c) for c in zip(*parts, strict=True))
        at, ref, word, record = (np.concatenate(c) for c in zip(*specials, strict=True))
    return StringArgSids(act, sid, at, ref, word, record)


def resolve_special_sids(cols: FxtColumns, sids: StringArgSids) -> np.ndarray:
    """``sids.sid`` with the strings :func:`string_arg_sids` left resolved: inline texts interned into the
    string table (on one thread at a time: the table grows), keys registered more than once looked up."""
    if len(sids.special_at):
        sids.sid[sids.special_at] = cols.arg_decoder.string_ids(sids.special_ref, sids.special_word,
                                                                sids.special_record)  # fmt: skip
    return sids.sid
