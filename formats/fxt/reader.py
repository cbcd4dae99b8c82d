"""Read an FXT trace archive into :class:`~formats.fxt.columns.FxtColumns`.

Design (why it is fast): the file is memory-mapped and viewed as a numpy array of 64-bit words.
:mod:`formats.fxt.framing` finds every record start with vectorized chain walking. The rare records that
change how later ones are read (metadata, initialization, string, thread) and the rare descriptive ones
(objects, blobs, large records) are handled in Python in file order (:mod:`formats.fxt.tables`). Events,
logs and scheduling records, the bulk of any trace, are decoded with vectorized gathers: field offsets
that inline strings/threads shift are computed as arrays, argument blocks are walked argument-by-argument
for all records at once, and indexed refs are resolved against the registration history.
Records are decoded in blocks of :attr:`_Decoder.BLOCK_RECORDS` so the temporaries stay cache-sized,
and each block's file pages are dropped from the resident set (``madvise``) once decoded. Memory: the
output columns take ~57 bytes per event (the contract's dtypes) plus 8 bytes per record while reading.

Robustness (spec Part 3): nothing but a missing magic raises; every anomaly becomes a warning naming the
byte offset of the record header, and whatever could be decoded is kept.

Choice for the c-cube/ocaml-trace quirk (a thread record before the provider-info record): the spec's
P2 rule is followed, so a provider-info record starts empty tables and thread ref 5 of that file's events
is unresolved (thread -1, one warning). The provider name honours the length field ("oc").
"""

from __future__ import annotations

import mmap
import os
from collections import Counter
from collections.abc import Callable

import numpy as np

from formats.errors import FormatError
from formats.fxt.args import decode_args, decode_text
from formats.fxt.columns import Blob, FxtColumns, KernelObject, UserspaceObject
from formats.fxt.framing import record_starts
from formats.fxt.magic import MAGIC_BE, MAGIC_LE
from formats.fxt.tables import STRING_KEYS, THREAD_KEYS, Lookup, ProviderTables

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
RECORD_COUNT_KEYS = [*RECORD_TYPE_NAMES.values(), "unknown"]

_U = np.uint64
_WARN_CAP = 20  # individual warnings shown per kind; the rest are summarised with a count


class Diagnostics:
    """Warnings, each "offset 0x..: message"; at most a few per kind, then one summary line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._count: Counter[str] = Counter()
        self._first: dict[str, int] = {}

    def warn(self, kind: str, offset: int, message: str) -> None:
        self._count[kind] += 1
        self._first.setdefault(kind, offset)
        if self._count[kind] <= _WARN_CAP:
            self.lines.append(f"offset 0x{offset:x}: {message}")

    def warn_many(self, kind: str, offsets: np.ndarray, message: str) -> None:
        """The same problem at many records (``message`` may contain ``{}`` for nothing else)."""
        for off in offsets[: max(0, _WARN_CAP - self._count[kind])].tolist():
            self.lines.append(f"offset 0x{off:x}: {message}")
        if len(offsets):
            self._first.setdefault(kind, int(offsets[0]))
        self._count[kind] += len(offsets)

    def finish(self) -> list[str]:
        for kind, count in self._count.items():
            if count > _WARN_CAP:
                self.lines.append(
                    f"offset 0x{self._first[kind]:x}: {count - _WARN_CAP} more warnings of this kind: {kind}"
                )
        return self.lines


def read_fxt(
    path: str | os.PathLike[str], *, force: bool | str = False, progress: Callable[[float], None] | None = None
) -> FxtColumns:
    """Read the FXT file at ``path`` (memory-mapped; the file is never modified).

    Raises :class:`~formats.errors.FormatError` only when the file is not an FXT trace at all (no magic
    record at its start, unless ``force`` assumes little-endian, or ``force="big"`` big-endian; see
    :func:`formats.fxt.magic.headerless_byte_order`) or cannot be opened. ``progress`` is
    called with the fraction done (0..1) between blocks; an exception it raises (a Cancel button's)
    ends the read and propagates.
    """
    spath = os.fspath(path)
    try:
        with open(spath, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 8:
                raise FormatError("not an FXT trace (shorter than one record)", path=spath, offset=0)
            buf: object = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path=spath) from exc
    return _decode(buf, spath, force, progress)


def read_fxt_bytes(data: bytes, path: str = "<bytes>", *, force: bool | str = False) -> FxtColumns:
    """Read an FXT trace held in memory (tests, fuzzing)."""
    if len(data) < 8:
        raise FormatError("not an FXT trace (shorter than one record)", path=path, offset=0)
    return _decode(bytes(data), path, force)


def _decode(buf, path: str, force: bool | str, progress: Callable[[float], None] | None = None) -> FxtColumns:
    head = bytes(memoryview(buf)[:8])
    if head == MAGIC_LE:
        big = False
    elif head == MAGIC_BE:
        big = True
    elif force:
        big = force == "big"
    else:
        raise FormatError("not an FXT trace (no magic record at the start)", path=path, offset=0)
    nbytes = len(buf)
    n = nbytes // 8
    raw = np.frombuffer(buf, dtype=np.uint8, count=n * 8)
    words = np.frombuffer(buf, dtype=">u8" if big else "<u8", count=n)
    if not words.dtype.isnative:
        words = words.astype(np.uint64)  # native order once; streams still come from ``raw``
    dec = _Decoder(words, raw, path, big, nbytes)
    dec.mm = buf if isinstance(buf, mmap.mmap) else None
    dec.progress = progress or (lambda _fraction: None)
    return dec.run()


def _convert_rate(ticks: np.ndarray, rate: int) -> np.ndarray:
    """Exact ``ticks * 1e9 // rate`` (T1) for one tick rate, as int64."""
    if rate < (1 << 33):
        q, r = np.divmod(ticks, _U(rate))
        return (q * _U(1_000_000_000) + (r * _U(1_000_000_000)) // _U(rate)).view(np.int64)
    # exact in Python integers; such tick rates are exotic
    return np.array([min(v * 1_000_000_000 // rate, (1 << 63) - 1) for v in ticks.tolist()], np.int64)


def _ticks_to_ns(ticks: np.ndarray, runs: list[tuple[int, int, int]]) -> np.ndarray:
    """Nanoseconds from ticks; ``runs`` gives the row ranges whose rate is not 1e9 (1 tick = 1 ns)."""
    out = ticks.astype(np.uint64, copy=bool(runs)).view(np.int64)
    for a, b, rate in runs:
        out[a:b] = _convert_rate(ticks[a:b].astype(np.uint64, copy=False), rate)
    return out


def intern_streams(raw64: np.ndarray, tables: ProviderTables, word_off: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Global string ids of inline streams (word offset, byte length), deduplicated by content without a
    loop per stream: one decode per distinct content."""
    out = np.zeros(len(lengths), np.int64)  # length 0 -> "" (id 0)
    nw = (lengths + 7) >> 3
    for width in sorted(set(nw[nw > 0].tolist())):
        sel = np.flatnonzero(nw == width)
        mat = raw64[word_off[sel][:, None] + np.arange(width)]
        rem = (lengths[sel] & 7).astype(np.uint64)
        mask = np.where(rem == 0, _U(0xFFFFFFFFFFFFFFFF), (_U(1) << (rem * _U(8))) - _U(1))
        mat[:, -1] &= mask
        key = np.column_stack([lengths[sel].astype(np.uint64), mat])
        uniq, inv = np.unique(key, axis=0, return_inverse=True)
        gids = np.array(
            [tables.intern(decode_text(row[1:].astype("<u8").tobytes()[: int(row[0])])) for row in uniq],
            dtype=np.int64,
        )
        out[sel] = gids[inv.reshape(-1)]
    return out


class _Decoder:
    def __init__(self, words: np.ndarray, raw: np.ndarray, path: str, big: bool, nbytes: int) -> None:
        self.w = words
        self.raw = raw
        self.raw64 = raw.view("<u8") if len(raw) else np.zeros(0, "<u8")
        self.n = len(words)
        self.path = path
        self.big = big
        self.nbytes = nbytes
        self.diag = Diagnostics()
        self.t = ProviderTables()
        self.kernel_objects: list[KernelObject] = []
        self.userspace_objects: list[UserspaceObject] = []
        self.blobs: list[Blob] = []
        self.overflows: list[tuple[int, int]] = []
        # (pid, tid) of inline thread refs, in code order (see _thread_codes)
        self.inline_pids: list[np.ndarray] = []
        self.inline_tids: list[np.ndarray] = []
        self.n_inline = 0
        self.mm = None
        self.progress: Callable[[float], None] = lambda _fraction: None
        self.rates: set[int] = {1_000_000_000}
        self._unresolved_str: set[tuple[int, int]] = set()
        self._unresolved_thr: set[tuple[int, int]] = set()

    # ------------------------------------------------------------------ framing
    def _frame(self) -> tuple[np.ndarray, np.ndarray]:
        """Record starts (word indices) and record types, after the size-0 / padding / truncation rules."""
        w, n, diag = self.w, self.n, self.diag
        starts = record_starts(w, tick=lambda f: self.progress(0.03 * f))
        # Walking the chain touched every page of the file: drop them, then read the headers' low 16 bits
        # a chunk at a time, releasing as we go, so that file pages and per-record arrays never add up.
        self._release(0, n)
        if n < 1 << 31:
            starts = starts.astype(np.uint32)
        low = np.empty(len(starts), np.uint16)
        for a in range(0, len(starts), self.BLOCK_RECORDS):
            self.progress(0.03 + 0.02 * a / len(starts))
            st = starts[a : a + self.BLOCK_RECORDS].astype(np.int64)
            low[a : a + len(st)] = self.w[st] & _U(0xFFFF)
            self._release(int(st[0]), int(st[-1]) + 1)
        zero = np.flatnonzero(low < 16)  # 12-bit size field 0: padding, corrupt, or a large record
        if len(zero):
            hz = w[starts[zero]]
            real_zero = ((hz & _U(0xF)) != 15) | (((hz >> _U(4)) & _U(0xFFFFFFFF)) == 0)
            bad = zero[real_zero & (hz != 0)]
            if len(bad):
                cut = int(bad[0])
                diag.warn("size0", int(starts[cut]) * 8, "Unexpected record of size 0: decoding stops here")
                starts, low = starts[:cut], low[:cut]
                zero = zero[zero < cut]
                hz = w[starts[zero]]
            pad = zero[hz == 0]
            if len(pad):
                diag.warn_many("padding", starts[pad].astype(np.int64) * 8, "zero word skipped as padding")
                keep = np.ones(len(starts), bool)
                keep[pad] = False
                starts, low = starts[keep], low[keep]
        types = (low & np.uint16(0xF)).astype(np.uint8)
        tail = self.nbytes - n * 8
        if len(starts):
            last = int(starts[-1])
            h = int(w[last])
            size = (h >> 4) & (0xFFFFFFFF if h & 0xF == 15 else 0xFFF)
            if last + size > n:
                missing = (last + size) * 8 - self.nbytes
                diag.warn("truncated", last * 8, f"truncated final record: {missing} bytes missing")
                starts, types = starts[:-1], types[:-1]
                tail = 0
        if tail:
            diag.warn(
                "truncated", n * 8, f"file length is not a multiple of 8: {tail} trailing bytes ignored"
            )
        return starts, types

    # ------------------------------------------------------------------ control records (Python)
    def _string_ref(self, ref: int, word: int, end: int, offset: int) -> tuple[str, int]:
        """Resolve a string ref against the live tables; ``word`` is where an inline stream would be."""
        if ref == 0:
            return "", 0
        if ref & 0x8000:
            length = ref & 0x7FFF
            used = (length + 7) // 8
            if word + used > end:
                raise _Short("inline string runs past the record")
            return decode_text(self.raw[word * 8 : word * 8 + length].tobytes()), used
        gid = self.t.live_string(ref)
        if gid is None:
            self._warn_unresolved_string(ref, offset)
            return f"<unresolved string #{ref}>", 0
        return self.t.strings[gid], 0

    def _warn_unresolved_string(self, ref: int, offset: int) -> None:
        key = (self.t.provider, ref)
        if key not in self._unresolved_str:
            self._unresolved_str.add(key)
            pid = self.t.providers[self.t.provider].id
            self.diag.warn("unresolved string", offset, f"string ref {ref} not registered (provider {pid})")

    def _args(self, first: int, nargs: int, end: int, offset: int) -> list:
        problems: list[str] = []

        def sref(ref: int, word: int) -> tuple[str, int]:
            return self._string_ref(ref, word, end, offset)

        try:
            args = decode_args(self.w, self.raw, first, nargs, end, sref, problems)
        except _Short as exc:
            problems.append(str(exc))
            args = []
        for p in problems:
            self.diag.warn("argument", offset, p)
        return args

    def _control(self, starts: np.ndarray, types: np.ndarray) -> None:
        w, t, diag = self.w, self.t, self.diag
        sel = np.flatnonzero((types != 4) & (types != 8) & (types != 9))
        for pos, rtype in zip(starts[sel].tolist(), types[sel].tolist(), strict=True):
            h = int(w[pos])
            off = pos * 8
            size = (h >> 4) & (0xFFFFFFFF if rtype == 15 else 0xFFF)
            end = pos + size
            try:
                if rtype == 0:
                    self._metadata(pos, h, end)
                elif rtype == 1:
                    if size < 2:
                        raise _Short("initialization record without its ticks-per-second word")
                    tps = int(w[pos + 1])
                    if tps == 0 or tps >= 1 << 63:
                        diag.warn("init0", off, f"initialization record with {tps} ticks per second ignored")
                    else:
                        t.initialization(pos, tps)
                elif rtype == 2:
                    index, length = (h >> 16) & 0x7FFF, (h >> 32) & 0x7FFF
                    if pos + 1 + (length + 7) // 8 > end:
                        raise _Short("string record shorter than its string")
                    if index == 0:
                        diag.warn("string index 0", off, "string record with index 0 ignored")
                    else:
                        text = decode_text(self.raw[(pos + 1) * 8 : (pos + 1) * 8 + length].tobytes())
                        t.register_string(pos, index, text)
                elif rtype == 3:
                    index = (h >> 16) & 0xFF
                    if size < 3:
                        raise _Short("thread record shorter than 3 words")
                    if index == 0:
                        diag.warn("thread index 0", off, "thread record with index 0 ignored")
                    else:
                        t.register_thread(pos, index, int(w[pos + 1]), int(w[pos + 2]))
                elif rtype == 5:
                    self._blob(pos, h, end)
                elif rtype == 6:
                    self._userspace_object(pos, h, end)
                elif rtype == 7:
                    self._kernel_object(pos, h, end)
                elif rtype == 15:
                    self._large(pos, h, end)
                else:
                    diag.warn(f"unknown record type {rtype}", off, f"skipping record of unknown type {rtype}")
            except _Short as exc:
                diag.warn("short record", off, f"record dropped: {exc}")

    def _metadata(self, pos: int, h: int, end: int) -> None:
        mtype = (h >> 16) & 0xF
        off = pos * 8
        provider_id = (h >> 20) & 0xFFFFFFFF
        if mtype == 1:
            length = (h >> 52) & 0xFF
            avail = (end - pos - 1) * 8
            if length > avail:
                self.diag.warn("provider name", off, "provider name longer than its record: truncated")
                length = avail
            name = decode_text(self.raw[(pos + 1) * 8 : (pos + 1) * 8 + length].tobytes())
            self.t.provider_info(pos, provider_id, name)
        elif mtype == 2:
            if not self.t.provider_section(pos, provider_id):
                self.diag.warn(
                    "unknown provider", off, f"provider section for unregistered provider {provider_id}"
                )
        elif mtype == 3:
            event = (h >> 52) & 0xF
            if event == 0:
                pindex = next(
                    (i for i, p in enumerate(self.t.providers) if p.id == provider_id), self.t.provider
                )
                self.overflows.append((pindex, off))
                self.diag.warn(
                    "overflow", off, f"provider {provider_id}: buffer filled up, records were likely dropped"
                )
            else:
                self.diag.warn("provider event", off, f"skipping provider event of unknown type {event}")
        elif mtype == 4:
            info = (h >> 20) & 0xF
            if info != 0:
                self.diag.warn("trace info", off, f"skipping trace info record of unknown type {info}")
        else:
            self.diag.warn("metadata", off, f"skipping metadata of unknown type {mtype}")

    def _thread_of(self, ref: int, word: int, end: int, offset: int) -> tuple[tuple[int, int] | None, int]:
        if ref == 0:
            if word + 2 > end:
                raise _Short("inline thread runs past the record")
            return (int(self.w[word]), int(self.w[word + 1])), 2
        pair = self.t.live_thread(ref)
        if pair is None:
            self._warn_unresolved_thread(ref, offset)
        return pair, 0

    def _warn_unresolved_thread(self, ref: int, offset: int) -> None:
        key = (self.t.provider, ref)
        if key not in self._unresolved_thr:
            self._unresolved_thr.add(key)
            pid = self.t.providers[self.t.provider].id
            self.diag.warn("unresolved thread", offset, f"thread ref {ref} not registered (provider {pid})")

    def _kernel_object(self, pos: int, h: int, end: int) -> None:
        if end - pos < 2:
            raise _Short("kernel object record shorter than 2 words")
        obj_type, name_ref, nargs = (h >> 16) & 0xFF, (h >> 24) & 0xFFFF, (h >> 40) & 0xF
        koid = int(self.w[pos + 1])
        name, used = self._string_ref(name_ref, pos + 2, end, pos * 8)
        args = self._args(pos + 2 + used, nargs, end, pos * 8)
        self.kernel_objects.append(KernelObject(koid, obj_type, name, args, self.t.provider, pos * 8))

    def _userspace_object(self, pos: int, h: int, end: int) -> None:
        if end - pos < 2:
            raise _Short("userspace object record shorter than 2 words")
        tref, name_ref, nargs = (h >> 16) & 0xFF, (h >> 24) & 0xFFFF, (h >> 40) & 0xF
        pointer = int(self.w[pos + 1])
        cur = pos + 2
        if tref == 0:
            if cur >= end:
                raise _Short("inline process koid runs past the record")
            pid = int(self.w[cur])
            cur += 1
        else:
            pair = self.t.live_thread(tref)
            if pair is None:
                self._warn_unresolved_thread(tref, pos * 8)
            pid = pair[0] if pair else 0
        name, used = self._string_ref(name_ref, cur, end, pos * 8)
        args = self._args(cur + used, nargs, end, pos * 8)
        self.userspace_objects.append(UserspaceObject(pointer, pid, name, args, self.t.provider, pos * 8))

    def _blob(self, pos: int, h: int, end: int) -> None:
        name_ref, length, btype = (h >> 16) & 0xFFFF, (h >> 32) & 0x7FFF, (h >> 48) & 0xFF
        name, used = self._string_ref(name_ref, pos + 1, end, pos * 8)
        start = pos + 1 + used
        if start + (length + 7) // 8 > end:
            raise _Short("blob payload runs past the record")
        if btype not in (1, 2, 3):
            self.diag.warn("blob type", pos * 8, f"blob of undefined type {btype} kept as raw data")
        self.blobs.append(Blob(name, btype, start * 8, length))

    def _large(self, pos: int, h: int, end: int) -> None:
        lrt, fmt = (h >> 36) & 0xF, (h >> 40) & 0xF
        off = pos * 8
        if lrt != 0:
            self.diag.warn("large type", off, f"skipping unknown large record type {lrt}")
            return
        if fmt not in (0, 1):
            self.diag.warn("large format", off, f"skipping unknown large blob record format {fmt}")
            return
        if end - pos < 3:
            raise _Short("large blob record too short")
        fh = int(self.w[pos + 1])
        cat_ref, name_ref = fh & 0xFFFF, (fh >> 16) & 0xFFFF
        cur = pos + 2
        category, used = self._string_ref(cat_ref, cur, end, off)
        cur += used
        name, used = self._string_ref(name_ref, cur, end, off)
        cur += used
        blob = Blob(name, 0, 0, 0, large_format=fmt)
        blob.category = self.t.intern(category)
        if fmt == 0:
            nargs, tref = (fh >> 32) & 0xF, (fh >> 36) & 0xFF
            if cur >= end:
                raise _Short("large blob record too short")
            ticks = int(self.w[cur])
            cur += 1
            pair, used = self._thread_of(tref, cur, end, off)
            cur += used
            blob.args = self._args(cur, nargs, end, off)
            cur = self._skip_args(cur, nargs, end)
            blob.ts = min(ticks * 1_000_000_000 // self.t.gen_tps[self.t.gen], (1 << 63) - 1)
            if pair is not None:  # an inline-thread code, mapped to the thread table at the end
                self.inline_pids.append(np.array([pair[0]], np.uint64))
                self.inline_tids.append(np.array([pair[1]], np.uint64))
                blob.thread = -2 - self.n_inline
                self.n_inline += 1
        if cur >= end:
            raise _Short("large blob record without its size word")
        length = int(self.w[cur])
        cur += 1
        if cur * 8 + length > end * 8:
            raise _Short("large blob payload runs past the record")
        blob.offset, blob.size = cur * 8, length
        self.blobs.append(blob)

    def _skip_args(self, cur: int, nargs: int, end: int) -> int:
        for _ in range(nargs):
            if cur >= end:
                break
            size = (int(self.w[cur]) >> 4) & 0xFFF
            if size == 0:
                break
            cur += size
        return cur

    # ------------------------------------------------------------------ bulk decoding helpers
    def _gather(self, idx: np.ndarray) -> np.ndarray:
        return np.take(self.w, idx, mode="clip") if self.n else np.zeros(len(idx), np.uint64)

    def _segments(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
        """Generation and provider index at each (ascending) position, and the runs of rows whose tick
        rate is not 1e9 as ``(start row, end row, ticks per second)``."""
        m = len(pos)
        if m == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.uint16), []
        sp = self._seg_pos
        lo = int(np.searchsorted(sp, pos[0], side="right")) - 1
        hi = int(np.searchsorted(sp, pos[-1], side="right"))
        if hi - lo == 1:
            gen = np.full(m, self._seg_gen[lo], np.int64)
            prov = np.full(m, self._seg_prov[lo], np.uint16)
            bounds = [0, m]
        else:
            inner = np.searchsorted(pos, sp[lo + 1 : hi], side="left")
            counts = np.diff(np.concatenate([[0], inner, [m]]))
            gen = np.repeat(self._seg_gen[lo:hi], counts)
            prov = np.repeat(self._seg_prov[lo:hi], counts)
            bounds = [0, *inner.tolist(), m]
        runs = [
            (bounds[i], bounds[i + 1], rate)
            for i, rate in enumerate(self._seg_tps[lo:hi].tolist())
            if rate != 1_000_000_000 and bounds[i + 1] > bounds[i]
        ]
        return gen, prov, runs

    def _freeze_segments(self) -> None:
        t = self.t
        self.rates = set(t.seg_tps)
        self._seg_pos = np.asarray(t.seg_pos, np.int64)
        self._seg_gen = np.asarray(t.seg_gen, np.int64)
        self._seg_prov = np.asarray(t.gen_provider, np.uint16)[self._seg_gen]
        self._seg_tps = np.asarray(t.seg_tps, np.int64)

    def _intern_streams(self, word_off: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        return intern_streams(self.raw64, self.t, word_off, lengths)

    def _strings(
        self, ref: np.ndarray, inline_word: np.ndarray, gen: np.ndarray, pos: np.ndarray
    ) -> np.ndarray:
        """Global string ids (int32) for string refs (-1 unresolved, warned once per provider and index)."""
        special = (ref.astype(np.uint16) - np.uint16(1)) >= np.uint16(0x7FFF)  # 0 (empty) or inline
        if not special.any():
            got = self.str_lookup(gen * STRING_KEYS + ref, pos)
            if self._has_unresolved(got):
                self._warn_unresolved_bulk(np.flatnonzero(got < 0), ref.astype(np.int64), gen, pos, "string")
            return got.astype(np.int32)
        # Mixed block: resolve every ref as if indexed, then overwrite the empty and inline ones.
        ref = ref.astype(np.int64)
        got = self.str_lookup(gen * STRING_KEYS + (ref & 0x7FFF), pos)
        out = got.astype(np.int32)
        out[special] = 0
        inline = np.flatnonzero(ref >= 0x8000)
        if len(inline):
            out[inline] = self._intern_streams(inline_word[inline], ref[inline] & 0x7FFF)
        self._warn_unresolved_bulk(np.flatnonzero((got < 0) & ~special), ref, gen, pos, "string")
        return out

    @staticmethod
    def _has_unresolved(got: np.ndarray) -> bool:
        return bool(len(got)) and int(got.min()) < 0

    def _warn_unresolved_bulk(self, bad: np.ndarray, ref, gen, pos, what: str) -> None:
        if not len(bad):
            return
        pindex = np.asarray(self.t.gen_provider, np.int64)[gen[bad]]
        keys = pindex * 65536 + ref[bad]
        _, first = np.unique(keys, return_index=True)
        seen = self._unresolved_str if what == "string" else self._unresolved_thr
        for i in np.sort(first).tolist():
            key = (int(pindex[i]), int(ref[bad][i]))
            if key in seen:
                continue
            seen.add(key)
            prov = self.t.providers[key[0]].id
            self.diag.warn(
                f"unresolved {what}",
                int(pos[bad][i]) * 8,
                f"{what} ref {key[1]} not registered (provider {prov})",
            )

    def _threads(self, ref: np.ndarray, gen: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Registration row of each indexed thread ref (-1 unresolved); inline refs give -1 too."""
        ref = ref.astype(np.int64)
        if (ref != 0).all():
            out = self.thr_lookup(gen * THREAD_KEYS + ref, pos)
            self._warn_unresolved_bulk(np.flatnonzero(out < 0), ref, gen, pos, "thread")
            return out
        out = np.full(len(ref), -1, np.int64)
        idx = np.flatnonzero(ref != 0)
        if len(idx):
            got = self.thr_lookup(gen[idx] * THREAD_KEYS + ref[idx], pos[idx])
            out[idx] = got
            self._warn_unresolved_bulk(idx[got < 0], ref, gen, pos, "thread")
        return out

    def _walk_args(
        self,
        first: np.ndarray,
        nargs: np.ndarray,
        end: np.ndarray,
        ok: np.ndarray,
        pos: np.ndarray,
        collect: bool,
    ) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """Advance past every record's arguments at once; returns (word after args, usable arg count, args).

        Records whose arguments run past the record are marked not ``ok`` (F5/A3); an argument of size 0
        ends that record's arguments (A2). With ``collect``, returns (row, position, header) per argument.
        """
        a = first.copy()
        nargs_eff = nargs.copy()
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        act = np.flatnonzero(ok & (nargs > 0))
        for k in range(15):
            act = act[nargs[act] > k]
            if not len(act):
                break
            ah = self._gather(a[act])
            asz = ((ah >> _U(4)) & _U(0xFFF)).astype(np.int64)
            zero = asz == 0
            if zero.any():
                nargs_eff[act[zero]] = k
                self.diag.warn_many(
                    "argument size 0", pos[act[zero]] * 8, "argument of size 0: later arguments dropped"
                )
            past = ~zero & (a[act] + asz > end[act])
            if past.any():
                ok[act[past]] = False
                self.diag.warn_many(
                    "short record", pos[act[past]] * 8, "record dropped: arguments run past the record"
                )
            keep = ~zero & ~past
            act, asz, ah = act[keep], asz[keep], ah[keep]
            if collect:
                found.append((act, a[act].copy(), ah))
            a[act] += asz
        return a, nargs_eff, found

    # ------------------------------------------------------------------ events
    def _header_fields(self, h: np.ndarray) -> tuple[np.ndarray, ...]:
        """(size, byte 2, byte 3, bits 32..47, bits 48..63) of record headers, via cheap strided views."""
        if np.little_endian:
            h16 = h.view(np.uint16).reshape(-1, 4)
            h8 = h.view(np.uint8).reshape(-1, 8)
            return h16[:, 0] >> 4, h8[:, 2], h8[:, 3], h16[:, 2], h16[:, 3]
        return (
            ((h >> _U(4)) & _U(0xFFF)).astype(np.uint16),
            ((h >> _U(16)) & _U(0xFF)).astype(np.uint8),
            ((h >> _U(24)) & _U(0xFF)).astype(np.uint8),
            ((h >> _U(32)) & _U(0xFFFF)).astype(np.uint16),
            (h >> _U(48)).astype(np.uint16),
        )

    def _thread_codes(
        self, tref: np.ndarray, gen: np.ndarray, pos: np.ndarray, inl: np.ndarray, cur: np.ndarray
    ):
        """int32 codes: >= 0 a thread registration row, -1 unresolved, <= -2 an inline pair (collected)."""
        code = self._threads(tref, gen, pos).astype(np.int32)
        sel = np.flatnonzero(inl)
        if len(sel):
            # Keep each block's distinct pairs only: a trace of inline thread refs would otherwise hold
            # 16 bytes per event until the end, more than the event columns' share of the memory budget.
            pairs = np.empty((len(sel), 2), np.uint64)
            pairs[:, 0] = self._gather(cur[sel])
            pairs[:, 1] = self._gather(cur[sel] + 1)
            uniq, inv = np.unique(pairs.view(f"V{16}").reshape(-1), return_inverse=True)
            uniq = uniq.view(np.uint64).reshape(-1, 2)
            self.inline_pids.append(uniq[:, 0].copy())
            self.inline_tids.append(uniq[:, 1].copy())
            code[sel] = -2 - (self.n_inline + inv.reshape(-1).astype(np.int32))
            self.n_inline += len(uniq)
        return code

    def _events(self, pos: np.ndarray) -> dict[str, np.ndarray]:
        h = self.w[pos]
        size16, b2, b3, cref, nref = self._header_fields(h)
        end = pos + size16
        kind = b2 & np.uint8(0xF)
        nargs = b2 >> np.uint8(4)
        tref = b3
        ok = size16 >= 2
        unknown = kind > 10
        if unknown.any():
            for k in np.unique(kind[unknown]).tolist():
                self.diag.warn_many(
                    f"event type {k}", pos[kind == k] * 8, f"skipping event of unknown type {k}"
                )
            ok &= ~unknown
        ticks = self._gather(pos + 1)
        inl_t = tref == 0
        c_inl = cref >= 0x8000
        n_inl = nref >= 0x8000
        any_inline = inl_t.any() or c_inl.any() or n_inl.any()
        if any_inline:
            c_word = pos + 2 + 2 * inl_t
            n_word = c_word + np.where(c_inl, ((cref & 0x7FFF).astype(np.int64) + 7) >> 3, 0)
            args_word = n_word + np.where(n_inl, ((nref & 0x7FFF).astype(np.int64) + 7) >> 3, 0)
            short = ok & (args_word > end)
            if short.any():
                self.diag.warn_many(
                    "short record", pos[short] * 8, "record dropped: event fields run past the record"
                )
                ok &= ~short
        else:
            args_word = pos + 2
            c_word = n_word = args_word
        after, nargs_eff, _ = self._walk_args(args_word, nargs, end, ok, pos, False)
        has_data = (kind == 1) | (kind >= 4)
        full_args = nargs_eff == nargs
        room = after < end
        missing = ok & has_data & ~room & full_args
        if missing.any():
            self.diag.warn_many("short record", pos[missing] * 8, "record dropped: event data word missing")
            ok &= ~missing
        data_ok = room & full_args
        data = self._gather(after)
        data[~(data_ok & has_data)] = 0
        scope_m = data_ok & (kind == 0)
        scope = np.zeros(len(pos), np.uint8)
        if scope_m.any():
            sv = self._gather(after[scope_m])
            bad = sv > 2
            if bad.any():
                self.diag.warn_many(
                    "scope", pos[scope_m][bad] * 8, "instant event scope out of range: thread scope used"
                )
            scope[scope_m] = np.where(bad, 0, sv)
        if not ok.all():
            keep = np.flatnonzero(ok)
            pos, end, kind, nargs_eff, tref, cref, nref, inl_t = (
                x[keep] for x in (pos, end, kind, nargs_eff, tref, cref, nref, inl_t)
            )
            ticks, data, scope, args_word = (x[keep] for x in (ticks, data, scope, args_word))
            if any_inline:
                c_word, n_word = c_word[keep], n_word[keep]
            else:
                c_word = n_word = args_word
        gen, provider, tps = self._segments(pos)
        complete = kind == 4
        if complete.any():  # the data word of a complete event is its end: stored in ns, in place
            data[complete] = _ticks_to_ns(data, tps)[complete].view(np.uint64)
        return {
            "pos": pos,
            "ts": _ticks_to_ns(ticks, tps),
            "kind": kind,
            "provider": provider,
            "category": self._strings(cref, c_word, gen, pos),
            "name": self._strings(nref, n_word, gen, pos),
            "thread": self._thread_codes(tref, gen, pos, inl_t, pos + 2),
            "nargs": nargs_eff,
            "args_skip": (args_word - pos).astype(np.uint16),  # <= record size (12 bits)
            "data": data,
            "scope": scope,
        }

    # ------------------------------------------------------------------ logs
    def _logs(self, pos: np.ndarray) -> dict[str, np.ndarray]:
        h = self.w[pos]
        size = ((h >> _U(4)) & _U(0xFFF)).astype(np.int64)
        end = pos + size
        length = ((h >> _U(16)) & _U(0x7FFF)).astype(np.int64)
        tref = ((h >> _U(32)) & _U(0xFF)).astype(np.int64)
        ticks = self._gather(pos + 1)
        inl = tref == 0
        cur = pos + 2 + 2 * inl
        ok = (size >= 2) & (cur + ((length + 7) >> 3) <= end)
        if not ok.all():
            self.diag.warn_many(
                "short record", pos[~ok] * 8, "log record dropped: message runs past the record"
            )
            pos, tref, ticks, cur, length, inl = (x[ok] for x in (pos, tref, ticks, cur, length, inl))
        gen, _provider, tps = self._segments(pos)
        return {
            "pos": pos,
            "ts": _ticks_to_ns(ticks, tps),
            "thread": self._thread_codes(tref, gen, pos, inl, pos + 2),
            "message": self._intern_streams(cur, length).astype(np.int32),
        }

    # ------------------------------------------------------------------ scheduling
    def _sched(self, pos: np.ndarray) -> dict[str, np.ndarray]:
        h = self.w[pos]
        size = ((h >> _U(4)) & _U(0xFFF)).astype(np.int64)
        end = pos + size
        sub = (h >> _U(60)).astype(np.int64)
        m = len(pos)
        ts = self._gather(pos + 1)
        out_tid = np.zeros(m, np.uint64)
        in_tid = np.zeros(m, np.uint64)
        out_pid = np.zeros(m, np.uint64)
        in_pid = np.zeros(m, np.uint64)
        cpu = np.zeros(m, np.uint16)
        state = np.zeros(m, np.uint8)
        oprio = np.zeros(m, np.uint8)
        iprio = np.zeros(m, np.uint8)
        args_word = np.zeros(m, np.int64)
        nargs = np.zeros(m, np.int64)
        ok = size >= 2
        gen, _provider, tps = self._segments(pos)
        # legacy context switch (0)
        leg = np.flatnonzero(sub == 0)
        if len(leg):
            hl = h[leg]
            cpu[leg] = (hl >> _U(16)) & _U(0xFF)
            state[leg] = (hl >> _U(24)) & _U(0xF)
            oref = ((hl >> _U(28)) & _U(0xFF)).astype(np.int64)
            iref = ((hl >> _U(36)) & _U(0xFF)).astype(np.int64)
            oprio[leg] = (hl >> _U(44)) & _U(0xFF)
            iprio[leg] = (hl >> _U(52)) & _U(0xFF)
            cur = pos[leg] + 2
            for ref, pid_col, tid_col in ((oref, out_pid, out_tid), (iref, in_pid, in_tid)):
                inl = ref == 0
                pid_col[leg] = np.where(inl, self._gather(cur), _U(0))
                tid_col[leg] = np.where(inl, self._gather(cur + 1), _U(0))
                cur = cur + 2 * inl
                rows = self._threads(ref, gen[leg], pos[leg])
                got = rows >= 0
                if got.any():
                    pid_col[leg[got]] = np.asarray(self.t.thr_pid, np.uint64)[rows[got]]
                    tid_col[leg[got]] = np.asarray(self.t.thr_tid, np.uint64)[rows[got]]
            ok[leg] &= cur <= end[leg]
        for kind, fixed in ((1, 4), (2, 3)):
            sel = np.flatnonzero(sub == kind)
            if not len(sel):
                continue
            hs = h[sel]
            nargs[sel] = (hs >> _U(16)) & _U(0xF)
            cpu[sel] = (hs >> _U(20)) & _U(0xFFFF)
            if kind == 1:
                state[sel] = (hs >> _U(36)) & _U(0xF)
                out_tid[sel] = self._gather(pos[sel] + 2)
                in_tid[sel] = self._gather(pos[sel] + 3)
            else:
                in_tid[sel] = self._gather(pos[sel] + 2)
            args_word[sel] = pos[sel] + fixed
            ok[sel] &= size[sel] >= fixed
        unknown = (sub > 2) & ok
        if unknown.any():
            for k in np.unique(sub[unknown]).tolist():
                self.diag.warn_many(
                    f"scheduling type {k}",
                    pos[sub == k] * 8,
                    f"skipping scheduling record of unknown type {k}",
                )
            ok &= ~unknown
        short = (size >= 2) & ~ok & (sub <= 2)
        if short.any():
            self.diag.warn_many(
                "short record", pos[short] * 8, "scheduling record dropped: shorter than its fields"
            )
        _after, nargs_eff, found = self._walk_args(args_word, nargs, end, ok, pos, True)
        waker = self._waker(found, sub, gen, pos)
        keep = np.flatnonzero(ok)
        cols = {
            "ts": _ticks_to_ns(ts, tps)[keep],
            "kind": sub[keep].astype(np.uint8),
            "cpu": cpu[keep],
            "out_tid": out_tid[keep],
            "in_tid": in_tid[keep],
            "out_pid": out_pid[keep],
            "in_pid": in_pid[keep],
            "state": state[keep],
            "waker": waker[keep],
            "offset": pos[keep] * 8,
            "out_prio": oprio[keep],
            "in_prio": iprio[keep],
            "args_word": args_word[keep],
            "nargs": nargs_eff[keep].astype(np.uint8),
        }
        return cols

    def _waker(self, found, sub: np.ndarray, gen: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Koid argument named "waker" of wakeup records (a Perfetto convention), vectorized."""
        waker = np.zeros(len(sub), np.uint64)
        target = self.t.string_id("waker")
        inline_key = np.frombuffer(b"waker\0\0\0", "<u8")[0]
        for rows, apos, ah in found:
            is_koid = ((ah & _U(0xF)) == 8) & (sub[rows] == 2)
            if not is_koid.any():
                continue
            rows, apos, ah = rows[is_koid], apos[is_koid], ah[is_koid]
            ref = ((ah >> _U(16)) & _U(0xFFFF)).astype(np.int64)
            inline = (ref & 0x8000) != 0
            match = (
                inline
                & ((ref & 0x7FFF) == 5)
                & (self.raw64[np.minimum(apos + 1, len(self.raw64) - 1)] == inline_key)
            )
            if target is not None:
                idx = ~inline & (ref != 0)
                got = self.str_lookup(gen[rows] * STRING_KEYS + ref, pos[rows])
                match |= idx & (got == target)
            value_word = apos + 1 + np.where(inline, ((ref & 0x7FFF) + 7) >> 3, 0)
            waker[rows[match]] = self._gather(value_word[match])
        return waker

    # ------------------------------------------------------------------ assembly
    #: records decoded per vectorized block: bounds the temporaries and lets file pages go early
    BLOCK_RECORDS = 1 << 16
    #: file words a block of sparse records may span (8 MiB)
    SPAN_WORDS = 1 << 20

    #: the stored event columns, 39 bytes per event (see FxtColumns for the derived ones); "pos" is
    #: uint32 (word index) when the file is under 16 GiB, else int64 (set in ``run``)
    _EV_COLUMNS = {
        "ts": np.int64, "kind": np.uint8, "provider": np.uint16, "thread": np.int32, "category": np.int32,
        "name": np.int32, "nargs": np.uint8, "args_skip": np.uint16, "data": np.uint64,
        "pos": np.int64, "scope": np.uint8,
    }  # fmt: skip

    def _release(self, first_word: int, end_word: int) -> None:
        """Drop mapped file pages we are done with from our resident set (they stay in the page cache)."""
        if self.mm is None or not hasattr(self.mm, "madvise"):
            return
        start = (first_word * 8) // mmap.PAGESIZE * mmap.PAGESIZE
        length = min(end_word * 8, self.nbytes) - start
        if length > 0:
            try:
                self.mm.madvise(mmap.MADV_DONTNEED, start, length)
            except (OSError, ValueError):
                self.mm = None

    def run(self) -> FxtColumns:
        # progress (and with it a Cancel) between blocks of every phase, from the start: a 10M-event
        # trace's framing alone takes seconds
        self.progress(0.0)
        starts, types = self._frame()
        counts = np.zeros(16, np.int64)
        self.progress(0.05)
        for a in range(0, len(types), self.BLOCK_RECORDS):  # (bincount widens its input to intp)
            counts += np.bincount(types[a : a + self.BLOCK_RECORDS], minlength=16)
        record_counts = {name: int(counts[t]) for t, name in RECORD_TYPE_NAMES.items()}
        record_counts["unknown"] = int(counts[10:15].sum())
        self.progress(0.06)
        self._control(starts, types)
        self.progress(0.07)
        # Each page fault maps its neighbours too (fault-around, 64 KiB): the scattered control records
        # made most of the file resident again. Drop it; the blocks below fault in and release in turn.
        self._release(0, self.n)
        t = self.t
        self._freeze_segments()
        self.str_lookup = Lookup(
            t.str_key, t.str_pos, np.asarray(t.str_gid, np.int64), len(t.gen_provider) * STRING_KEYS
        )
        self.thr_lookup = Lookup(
            t.thr_key, t.thr_pos, np.arange(len(t.thr_key), dtype=np.int64), len(t.gen_provider) * THREAD_KEYS
        )
        n_ev = int(counts[4])
        B = self.BLOCK_RECORDS
        # The events' record column starts out as the event records' starts (uint32 below 16 GiB, see
        # _frame) and is compacted in place as blocks are decoded; log and scheduling starts are split off,
        # so the per-record starts and types are gone before the event columns fill up.
        ev_dtypes = {**self._EV_COLUMNS, "pos": starts.dtype}
        ev = {k: np.empty(n_ev, dt) for k, dt in ev_dtypes.items()}
        ev_pos, k = ev["pos"], 0
        for a in range(0, len(starts), B):
            self.progress(0.08 + 0.02 * a / max(len(starts), 1))
            sel = starts[a : a + B][types[a : a + B] == 4]
            ev_pos[k : k + len(sel)] = sel
            k += len(sel)
        log_starts, sched_starts = starts[types == 9], starts[types == 8]
        del starts, types
        fill = 0
        self.progress(0.1)
        for b0 in range(0, n_ev, B):
            self.progress(0.1 + 0.85 * b0 / max(n_ev, 1))
            sel = ev_pos[b0 : b0 + B].astype(np.int64)  # a copy: the column is rewritten at fill <= b0
            block = self._events(sel)
            m = len(block["pos"])
            for key in self._EV_COLUMNS:
                ev[key][fill : fill + m] = block[key]
            fill += m
            del block
            self._release(int(sel[0]), int(sel[-1]) + 1)
        logs = self._blocks(log_starts, self._logs)
        scheds = self._blocks(sched_starts, self._sched)
        if fill < n_ev:
            ev = {key: v[:fill].copy() for key, v in ev.items()}
        lg = _concat(logs, {"pos": np.int64, "ts": np.int64, "thread": np.int32, "message": np.int32})
        sc = _concat(scheds, _SCHED_COLUMNS)
        threads_pid, threads_tid = self._thread_table([ev["thread"], lg["thread"]])
        self._warn_missing_init(ev["provider"], ev["pos"])
        decoder = ArgDecoder(self)
        diag_lines = self.diag.finish()
        return FxtColumns(
            path=self.path,
            big_endian=self.big,
            providers=t.providers,
            strings=t.strings,
            threads_pid=threads_pid,
            threads_tid=threads_tid,
            ev_ts=ev["ts"],
            ev_kind=ev["kind"],
            ev_provider=ev["provider"],
            ev_thread=ev["thread"],
            ev_category=ev["category"],
            ev_name=ev["name"],
            ev_nargs=ev["nargs"],
            ev_args_skip=ev["args_skip"],
            ev_data=ev["data"],
            ev_word=ev["pos"],
            sched_ts=sc["ts"],
            sched_kind=sc["kind"],
            sched_cpu=sc["cpu"],
            sched_out_tid=sc["out_tid"],
            sched_in_tid=sc["in_tid"],
            sched_out_state=sc["state"],
            sched_waker_tid=sc["waker"],
            sched_offset=sc["offset"],
            log_ts=lg["ts"],
            log_thread=lg["thread"],
            log_message=lg["message"],
            log_offset=lg["pos"] * 8,
            kernel_objects=self.kernel_objects,
            userspace_objects=self.userspace_objects,
            blobs=self.blobs,
            record_counts=record_counts,
            warnings=diag_lines,
            ev_scope=ev["scope"],
            sched_out_pid=sc["out_pid"],
            sched_in_pid=sc["in_pid"],
            sched_out_prio=sc["out_prio"],
            sched_in_prio=sc["in_prio"],
            sched_args_word=sc["args_word"],
            sched_nargs=sc["nargs"],
            buffer_overflows=self.overflows,
            ticks_per_second=self._provider_tps(),
            arg_decoder=decoder,
        )

    def _blocks(self, starts: np.ndarray, decode) -> list[dict]:
        """Decode records at ``starts`` with ``decode`` a block at a time, releasing their file pages.

        Sparse records (logs, scheduling) are spread over the whole file, and one page fault can map a
        whole large page-cache folio: a block therefore also ends after ``SPAN_WORDS`` of file, so that
        what one block maps stays small.
        """
        out = []
        if not len(starts):
            return out
        cuts = np.searchsorted(starts, np.arange(int(starts[0]), int(starts[-1]) + 1, self.SPAN_WORDS)[1:])
        bounds = np.union1d(np.r_[0, cuts, len(starts)], np.arange(0, len(starts), self.BLOCK_RECORDS))
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            if b > a:
                sel = starts[a:b].astype(np.int64)
                out.append(decode(sel))
                self._release(int(sel[0]), int(sel[-1]) + 1)
        return out

    def _provider_tps(self) -> list[int]:
        out = [1_000_000_000] * len(self.t.providers)
        for gen, pindex in enumerate(self.t.gen_provider):
            if self.t.gen_has_init[gen]:
                out[pindex] = self.t.gen_tps[gen]
        return out

    def _warn_missing_init(self, ev_provider: np.ndarray, ev_pos: np.ndarray) -> None:
        with_init = {self.t.gen_provider[g] for g, has in enumerate(self.t.gen_has_init) if has}
        used = np.zeros(len(self.t.providers), np.int64)
        for a in range(0, len(ev_provider), self.BLOCK_RECORDS):  # (bincount widens its input to intp)
            used += np.bincount(ev_provider[a : a + self.BLOCK_RECORDS], minlength=len(used))
        for pindex in np.flatnonzero(used).tolist():
            if pindex not in with_init:
                p = self.t.providers[pindex]
                first = int(ev_pos[np.argmax(ev_provider == pindex)]) * 8
                self.diag.warn(
                    "no initialization",
                    first,
                    f"provider {p.id} ({p.name!r}) has no initialization record: assuming 1 tick = 1 ns",
                )

    def _thread_table(self, code_columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """One global table of distinct (pid, tid) pairs; rewrites thread codes (in place) to its rows."""
        reg_pid = np.asarray(self.t.thr_pid, np.uint64)
        reg_tid = np.asarray(self.t.thr_tid, np.uint64)
        pids = np.concatenate([reg_pid, *self.inline_pids])
        tids = np.concatenate([reg_tid, *self.inline_tids])
        pairs = np.empty(len(pids), dtype=[("p", "<u8"), ("t", "<u8")])
        pairs["p"], pairs["t"] = pids, tids
        uniq, inv = np.unique(pairs, return_inverse=True)
        inv = inv.reshape(-1).astype(np.int32)
        nreg = len(reg_pid)
        n_inline = len(pids) - nreg
        # codes: >= 0 registration row, -1 unresolved, <= -2 inline pair (-2 - k); one gather maps all
        table = np.concatenate([inv[nreg:][::-1], np.array([-1], np.int32), inv[:nreg]])
        for codes in code_columns:
            for a in range(0, len(codes), self.BLOCK_RECORDS):  # in chunks: no full-size temporaries
                chunk = codes[a : a + self.BLOCK_RECORDS]
                chunk += n_inline + 1
                chunk[:] = np.take(table, chunk)  # (take with out= aliasing its input is slow)
        for blob in self.blobs:
            if blob.thread <= -2:
                blob.thread = int(inv[nreg + (-2 - blob.thread)])
        return np.ascontiguousarray(uniq["p"]).astype(np.uint64), np.ascontiguousarray(uniq["t"]).astype(
            np.uint64
        )


_SCHED_COLUMNS = {
    "ts": np.int64, "kind": np.uint8, "cpu": np.uint16, "out_tid": np.uint64, "in_tid": np.uint64,
    "out_pid": np.uint64, "in_pid": np.uint64, "state": np.uint8, "waker": np.uint64, "offset": np.int64,
    "out_prio": np.uint8, "in_prio": np.uint8, "args_word": np.int64, "nargs": np.uint8,
}  # fmt: skip


def _concat(blocks: list[dict], dtypes: dict) -> dict[str, np.ndarray]:
    return {
        k: (np.concatenate([b[k] for b in blocks]).astype(dt, copy=False) if blocks else np.zeros(0, dt))
        for k, dt in dtypes.items()
    }


class _Short(Exception):
    """A record's fields run past its size (F5): the record is dropped with a warning."""


class ArgDecoder:
    """Lazy argument decoding with the string table in force at a given record (kept by the columns)."""

    def __init__(self, dec: _Decoder) -> None:
        self.w, self.raw, self.t = dec.w, dec.raw, dec.t
        self.raw64 = dec.raw64
        self.str_lookup = dec.str_lookup
        self._seg_pos = np.asarray(dec.t.seg_pos, np.int64)
        self._seg_gen = np.asarray(dec.t.seg_gen, np.int64)

    def string_ids(self, refs: np.ndarray, stream_words: np.ndarray, record_words: np.ndarray) -> np.ndarray:
        """Global string ids (into ``FxtColumns.strings``, -1 unresolved) of many string refs at once.

        ``refs`` are 16-bit string refs found in the records whose headers are at ``record_words``
        (ascending); ``stream_words`` is where each inline stream would start. Indexed refs resolve with the
        table of the provider in force at the record; inline streams are interned (new texts are appended
        to the strings list, so ids stay valid for everyone holding it).
        """
        refs = np.asarray(refs, np.int64)
        record_words = np.asarray(record_words, np.int64)
        out = np.zeros(len(refs), np.int64)
        indexed = np.flatnonzero((refs != 0) & (refs < 0x8000))
        if len(indexed):
            seg = np.searchsorted(self._seg_pos, record_words[indexed], side="right") - 1
            gen = self._seg_gen[np.maximum(seg, 0)]
            out[indexed] = self.str_lookup(gen * STRING_KEYS + refs[indexed], record_words[indexed])
        inline = np.flatnonzero(refs >= 0x8000)
        if len(inline):
            words = np.asarray(stream_words, np.int64)[inline]
            lengths = refs[inline] & 0x7FFF
            # a stream that would run past the end of the data (a corrupt or truncated record) is unresolved
            fits = (words >= 0) & (words + ((lengths + 7) >> 3) <= len(self.raw64))
            out[inline] = -1
            if fits.any():
                out[inline[fits]] = intern_streams(self.raw64, self.t, words[fits], lengths[fits])
        return out

    def args_at(self, record_word: int, first: int, nargs: int) -> list:
        """Decode ``nargs`` arguments at word ``first`` of the record whose header is at ``record_word``."""
        if nargs == 0:
            return []
        h = int(self.w[record_word])
        size = (h >> 4) & (0xFFFFFFFF if h & 0xF == 15 else 0xFFF)
        end = min(record_word + size, len(self.w))
        seg = int(np.searchsorted(self._seg_pos, record_word, side="right")) - 1
        gen = self.t.seg_gen[seg]

        def sref(ref: int, word: int) -> tuple[str, int]:
            if ref == 0:
                return "", 0
            if ref & 0x8000:
                length = ref & 0x7FFF
                return decode_text(self.raw[word * 8 : word * 8 + length].tobytes()), (length + 7) // 8
            gid = self.str_lookup.scalar(gen * STRING_KEYS + ref, record_word)
            return (self.t.strings[gid] if gid >= 0 else f"<unresolved string #{ref}>"), 0

        return decode_args(self.w, self.raw, first, nargs, end, sref)
