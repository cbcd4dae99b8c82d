"""Find every record start of an FXT archive without a Python loop per record.

:func:`split_records` is what the reader calls: the compiled walk of ``record_scan.c`` (``frame_split``)
where it was built, else the numpy walk below (:func:`frame_records`), which reads every file alike.

Records are a chain: the next record starts ``size`` words after this one, so finding the starts is
inherently sequential. The file is framed a *super-chunk* of :data:`SUPER_WORDS` words at a time (so that
its pages and the temporaries stay hot; each page is read once). In a super-chunk, one vectorized pass
computes for every word where the next record would start if a record started there (its low 16 bits
are the type and size), then the super-chunk is cut into chunks of :data:`CHUNK_WORDS` and one chain per
chunk is walked in lockstep through that next-word table (one ``take`` advances every chain by one
record; a chain stops at its chunk's end, so every mark in a chunk is its own chain's). A chain started
where no record starts reads garbage sizes for a while, but it soon lands on a true record start and from
then on it *is* the true chain. A short sequential pass then stitches the chunks: it enters chunk ``j``
at the position where the true chain left chunk ``j-1``; if chunk ``j``'s chain visited that position,
the rest of its positions are true, otherwise (rare) that chunk is walked again in Python.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from fxscope.formats.fxt import compiled

#: words per chunk (one chain each): small enough that a pure-Python fallback walk of one chunk is cheap,
#: large enough that the lockstep's steps (one numpy call each, ~chunk / 3 of them a super-chunk) are few
CHUNK_WORDS = 1024
#: words framed at once (8 MiB of file): the next-word table and the chains' marks of one super-chunk
#: stay in the caches, and its file pages are read once (then released by the caller)
SUPER_WORDS = 1 << 20


def guessed_sizes(headers: np.ndarray) -> np.ndarray:
    """Record size in words for each header, 32-bit field for type 15; 0 becomes 1 (skip one word)."""
    size = (headers >> np.uint64(4)) & np.uint64(0xFFF)
    large = (headers & np.uint64(0xF)) == 15
    if large.any():
        size[large] = (headers[large] >> np.uint64(4)) & np.uint64(0xFFFFFFFF)
    size[size == 0] = 1
    return size.astype(np.int64)


def _plausible(headers: np.ndarray) -> np.ndarray:
    """Headers that could start a record: defined type, non-zero size, defined sub-type."""
    t = headers & np.uint64(0xF)
    size = (headers >> np.uint64(4)) & np.uint64(0xFFF)
    sub = (headers >> np.uint64(16)) & np.uint64(0xF)
    ok = (size > 0) | (t == 15)
    ok &= (t <= 9) | (t == 15)
    ok &= (t != 4) | (sub <= 10)
    ok &= (t != 0) | ((sub >= 1) & (sub <= 4))
    ok &= (t != 8) | ((headers >> np.uint64(60)) <= 2)
    ok &= (t != 15) | (((headers >> np.uint64(36)) & np.uint64(0xF)) == 0)
    return ok


#: candidate start words tried at the beginning of each chunk, and records checked from each
_CANDIDATES = 24
_CHECK_STEPS = 6


def _chunk_starts(low: np.ndarray, nxt: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each chunk ``[lo, hi)`` (local word indices of a super-chunk), a word among its first few from
    which several records in a row have a defined type and a size (``low``: the words' low 16 bits,
    ``nxt``: the next-word table, ``len(nxt) - 1`` the super-chunk's end).

    Only speed depends on this guess (a chain started on a true record start is the true chain at once);
    correctness comes from the stitching pass.
    """
    m = len(nxt) - 1
    cand = lo[:, None] + np.arange(_CANDIDATES, dtype=np.int32)
    cand = np.minimum(cand, (hi - 1)[:, None]).reshape(-1).astype(np.int32)
    cur = cand
    good = np.ones(len(cand), dtype=bool)
    low = np.append(low, np.uint16(1))  # the sentinel reads as a valid header
    for _ in range(_CHECK_STEPS):
        good &= _PLAUSIBLE_LOW[low[cur]]
        cur = nxt[cur]  # (a walk that leaves the chunk, or meets a large record, stops at the sentinel)
    # Among plausible candidates prefer the one whose walk ends earliest: chains from wrong starts
    # usually take one big random jump (out of the chunk: the sentinel), and a wrong start that merges
    # early costs nothing.
    score = np.where(good, cur, m + 1).reshape(len(lo), _CANDIDATES)
    best = np.argmin(score, axis=1)
    return cand.reshape(len(lo), _CANDIDATES)[np.arange(len(lo)), best]


def _plausible_low() -> np.ndarray:
    """Which 16-bit header starts (type and 12-bit size) could start a record: a defined type (0-9, or 15
    the large record) and, except for large records, a size."""
    low = np.arange(1 << 16, dtype=np.uint32)
    t, size = low & 0xF, low >> 4
    return ((t <= 9) & (size > 0)) | (t == 15)


_PLAUSIBLE_LOW = _plausible_low()


def _size_of(header: int) -> int:
    size = (header >> 4) & (0xFFFFFFFF if header & 0xF == 15 else 0xFFF)
    return size or 1


#: lockstep steps between two calls of record_starts' ``tick``
TICK_STEPS = 64


def record_starts(words: np.ndarray, tick=None) -> np.ndarray:
    """Word indices of the records chained from word 0 (ascending; uint32 when ``words`` is shorter than
    2**32, else int64: 4 bytes a record). ``tick(fraction)``, when given, is called between steps with a
    rough fraction done (a Cancel raises from it).

    A header of size 0 counts as a one-word record here; callers decide what it means (padding when the
    word is all zero, otherwise the end of what can be decoded). The last start may describe a record
    that runs past the end of ``words``.
    """
    return frame_records(words, tick)[0]


def frame_records(
    words: np.ndarray,
    tick: Callable[[float], None] | None = None,
    done: Callable[[int, int], None] | None = None,
    ahead: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`record_starts` and the low 16 bits of each start's header (uint16: type and 12-bit size),
    read while the super-chunk is framed. ``ahead(first_word, end_word)`` is called before each super-chunk
    is read and ``done(first_word, end_word)`` after it (the reader maps its pages at once there, and
    releases them)."""
    n = len(words)
    dtype = np.uint32 if n < (1 << 32) else np.int64
    # Room for a record at every word (the most there can be): only the pages written become resident, and
    # the parts need no concatenating copy at the end.
    starts = np.empty(n, dtype)
    lows = np.empty(n, np.uint16)
    count = 0
    chunk = max(int(CHUNK_WORDS), 2)
    sup = max(SUPER_WORDS // chunk, 1) * chunk
    p = 0  # the true chain's next record start (global word index)
    buf = _Buffers(min(sup, n), chunk)
    for s0 in range(0, n, sup):
        s1 = min(s0 + sup, n)
        if tick is not None:
            tick(s0 / n)
        if p < s1:  # (else a large record spans this whole super-chunk)
            if ahead is not None:
                ahead(s0, s1)
            local, low, p_local = _frame_super(words, s0, s1, p - s0, buf, tick, n)
            p = s0 + p_local
            np.add(local, s0, out=starts[count : count + len(local)], casting="unsafe")
            lows[count : count + len(local)] = low
            count += len(local)
        if done is not None:
            done(s0, s1)
    return starts[:count], lows[:count]


#: the type :func:`split_records` gives a zero word (padding) among the other records
PADDING = 16
#: the event record type, the records :func:`split_records` keeps apart
_EVENT = 4


class SplitRecords(NamedTuple):
    """The records of a file, framed and sorted: event records and the rest (see :func:`split_records`)."""

    #: event records' starts (word indices, ascending; uint32 below 2**32 words, else int64)
    events: np.ndarray
    #: every other record's start (ascending, same dtype)
    other: np.ndarray
    #: their record types (uint8), :data:`PADDING` for a zero word
    other_types: np.ndarray
    #: where a header of size 0 that is not a zero word ended the framing (-1: none did)
    bad_at: int


def split_records(
    words: np.ndarray,
    tick: Callable[[float], None] | None = None,
    done: Callable[[int, int], None] | None = None,
    ahead: Callable[[int, int], None] | None = None,
    fill_ahead: Callable[[np.ndarray], None] | None = None,
    parallel: bool = False,
    release_ahead: Callable[[np.ndarray], None] | None = None,
) -> SplitRecords:
    """Frame ``words`` (as :func:`frame_records`) and sort the records as it goes: the event records (the
    bulk of a trace) apart from the rest, with the size-0 rules applied: a zero word is one word of padding
    (type :data:`PADDING`), any other header of size 0 ends the framing (``bad_at``). The last record may
    run past the end of ``words`` (the caller drops it). ``fill_ahead(part)``, when given, is called by the
    compiled walk with the part of the event starts' buffer that the next super-chunks are likely to fill
    (the caller faults it in ahead), before the part it was given last is half used; ``release_ahead(part)``
    at the end with the part of the last one no record filled (the caller gives its pages back after that
    fill: at most a super-chunk's starts, ~2.9 MB that stayed resident with the model's event starts, at any
    trace size). ``parallel``: every
    other super-chunk is framed ahead on a worker thread (see :class:`_Speculation`)."""
    scan = compiled.record_scan if compiled.contiguous_words(words) else None
    if scan is None:
        return _split(words, *frame_records(words, tick, done, ahead))
    n = len(words)
    dtype = np.uint32 if n < (1 << 32) else np.int64
    # room for a record at every word: only the pages written become resident
    ev, other, types = np.empty(n, dtype), np.empty(n, dtype), np.empty(n, np.uint8)
    ne = no = 0
    p, bad = 0, 0
    sup = max(int(SUPER_WORDS), 1)
    filled = 0  # where the last part given to fill_ahead ends
    spec = _Speculation(scan, words, sup, dtype) if parallel and n > 2 * sup else None
    try:
        for k, s0 in enumerate(range(0, n, sup)):
            s1 = min(s0 + sup, n)
            if tick is not None:
                tick(s0 / n)
            if spec is not None and k % 2 == 0 and not bad and s1 < n:
                spec.start(s1, min(s1 + sup, n))  # the next super-chunk, while this one is framed
            taken = spec.take() if spec is not None and k % 2 == 1 else None
            if p < s1 and not bad:
                if ahead is not None:
                    ahead(s0, s1)
                if fill_ahead is not None and ne + sup // 4 > filled:  # (an event record is ~4 words: a part
                    filled = ne + sup  # lasts a few super-chunks; at the end, at most one part is not used)
                    fill_ahead(ev[ne:filled])
                tail = None
                if taken is not None:  # the true chain until it meets the guessed one (a few steps)
                    for _ in range(_MEET_STEPS):
                        tail = taken.tail_from(p)
                        meet = taken.next_start(p)
                        if tail is not None or bad or meet >= s1:
                            break
                        ne, no, p, bad = scan.frame_split(words, p, meet, ev, ne, other, types, no, dtype is np.int64)
                if tail is not None:
                    e, o, ty, p, bad = tail
                    ev[ne : ne + len(e)] = e
                    other[no : no + len(o)] = o
                    types[no : no + len(o)] = ty
                    ne, no = ne + len(e), no + len(o)
                elif p < s1 and not bad:
                    ne, no, p, bad = scan.frame_split(words, p, s1, ev, ne, other, types, no, dtype is np.int64)
            if done is not None:
                done(s0, s1)
    finally:
        if spec is not None:
            spec.close()
    if release_ahead is not None and filled > ne:  # the part faulted in for records that did not come: the
        release_ahead(ev[ne:filled])  # event starts' buffer stays the model's (~2.9 MB of a super-chunk, any size)
    return SplitRecords(ev[:ne], other[:no], types[:no], p if bad else -1)


class _Framed(NamedTuple):
    """One super-chunk framed from a guessed start (see :class:`_Speculation`)."""

    ev: np.ndarray
    other: np.ndarray
    types: np.ndarray
    exit: int
    bad: int
    #: the guessed start (the chain's first record)
    start: int

    def tail_from(self, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int] | None:
        """What framing from the true record start ``p`` gives (event starts, other starts, their types,
        where the chain leaves, whether a bad header ended it), when the guessed chain passed ``p``; None
        when it did not (the caller frames the super-chunk itself)."""
        i = int(np.searchsorted(self.ev, p))
        j = int(np.searchsorted(self.other, p))
        if not ((i < len(self.ev) and self.ev[i] == p) or (j < len(self.other) and self.other[j] == p)):
            return None
        return self.ev[i:], self.other[j:], self.types[j:], self.exit, self.bad

    def next_start(self, p: int) -> int:
        """The guessed chain's first record start after ``p`` (its exit when none is)."""
        i = int(np.searchsorted(self.ev, p, side="right"))
        j = int(np.searchsorted(self.other, p, side="right"))
        return min(int(self.ev[i]) if i < len(self.ev) else self.exit, int(self.other[j]) if j < len(self.other) else self.exit)


#: walks of the true chain up to the guessed chain's next start before the super-chunk is framed again
_MEET_STEPS = 64
#: words read to guess where a record starts, candidates tried, and plausible records in a row wanted
_GUESS_WORDS, _GUESS_CANDIDATES, _GUESS_RECORDS = 8192, 64, 24


def _guessed_start(words: np.ndarray, s0: int, s1: int) -> int:
    """A word among the first of ``[s0, s1)`` from which :data:`_GUESS_RECORDS` records in a row have
    plausible headers (:func:`plausible_headers`) in the fewest words (a chain from inside a record tends
    to take a long jump first; ``s0`` when none has): most likely a true record start. Only how far
    :class:`_Speculation`'s caller walks to meet the guessed chain depends on it."""
    win = words[s0 : min(s0 + _GUESS_WORDS, s1)]
    ok = _plausible(win).tolist()
    heads = win.tolist()
    best, best_end = 0, len(heads)
    for c in range(min(_GUESS_CANDIDATES, len(heads))):
        q = c
        for _ in range(_GUESS_RECORDS):
            if q >= best_end or not ok[q]:  # (no better than the best, or not a record)
                break
            q += _size_of(heads[q])
        else:
            if q < best_end:
                best, best_end = c, q
    return s0 + best


class _Speculation:
    """Frames the next super-chunk on a worker thread while the caller frames this one, from a guessed
    start (:func:`_guessed_start`: from a word inside a record the chain reads garbage sizes, and may stay
    out of step with the true chain for long where records have regular sizes; once on a true record start
    it *is* the true chain). When the true chain's entry, known once
    the super-chunk before is framed, is one of the guessed chain's starts, the rest of that chain is the
    true framing (the walk from a start depends on nothing before it); else the caller frames the
    super-chunk itself (rare). ``frame_split`` releases the GIL, so the two walks run on two cores."""

    def __init__(self, scan, words: np.ndarray, sup: int, dtype) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self._scan, self._words, self._wide = scan, words, dtype is np.int64
        # one super-chunk in flight: its buffers are read (copied out) before the next one starts
        self._ev, self._other, self._types = np.empty(sup, dtype), np.empty(sup, dtype), np.empty(sup, np.uint8)
        self._pool = ThreadPoolExecutor(1, "fxscope-framing")
        self._running = None

    def start(self, s0: int, s1: int) -> None:
        self._running = self._pool.submit(self._frame, s0, s1)

    def _frame(self, s0: int, s1: int) -> _Framed:
        start = _guessed_start(self._words, s0, s1)
        ne, no, p, bad = self._scan.frame_split(self._words, start, s1, self._ev, 0, self._other, self._types, 0,
                                                self._wide)  # fmt: skip
        return _Framed(self._ev[:ne], self._other[:no], self._types[:no], p, bad, start)

    def take(self) -> _Framed | None:
        """The super-chunk started last (waiting for it while it runs), or None when none was, or when the
        worker has not started it yet (another process holds the second core): the caller frames it itself
        rather than wait for the worker."""
        running, self._running = self._running, None
        if running is None or running.cancel():
            return None
        return running.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _split(words: np.ndarray, starts: np.ndarray, low: np.ndarray) -> SplitRecords:
    """:func:`split_records` of :func:`frame_records`' output (the numpy path)."""
    bad_at = -1
    zero = np.flatnonzero(low < 16)  # 12-bit size field 0: padding, corrupt, or a large record
    types = (low & np.uint16(0xF)).astype(np.uint8)
    if len(zero):
        hz = words[starts[zero].astype(np.int64)]
        real_zero = ((hz & np.uint64(0xF)) != 15) | (((hz >> np.uint64(4)) & np.uint64(0xFFFFFFFF)) == 0)
        bad = zero[real_zero & (hz != 0)]
        if len(bad):
            cut = int(bad[0])
            bad_at = int(starts[cut])
            starts, types = starts[:cut], types[:cut]
            zero, hz, real_zero = zero[zero < cut], hz[: np.searchsorted(zero, cut)], real_zero[zero < cut]
        types[zero[real_zero & (hz == 0)]] = PADDING
    is_ev = types == _EVENT
    return SplitRecords(starts[is_ev], starts[~is_ev], types[~is_ev], bad_at)


class _Buffers:
    """The work arrays of one super-chunk, allocated once per file (fresh ones would be page-faulted in
    again for every super-chunk)."""

    def __init__(self, m: int, chunk: int) -> None:
        k = (m + chunk - 1) // chunk
        self.chunk = chunk
        self.low = np.empty(m, np.uint16)
        self.step = np.empty(m, np.uint16)
        self.nxt = np.empty(m + 1, np.int32)
        self.stop = np.empty(m + 1, bool)
        self.mark = np.empty(m + 1, bool)
        self.walked = np.empty((chunk + 8, k), np.int32)  # a chain takes at most ``chunk`` steps
        self.ar = np.arange(m, dtype=np.int32)
        self.ends = np.minimum((self.ar // chunk + 1) * chunk, m).astype(np.int32)  # each word's chunk end


def _sizes_at(words: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Record sizes (words; 0 read as 1) of the headers at ``at``, the large records' 32-bit field too."""
    h = words[at]
    large = (h & np.uint64(0xF)) == 15
    size = (h >> np.uint64(4)) & np.where(large, np.uint64(0xFFFFFFFF), np.uint64(0xFFF))
    return np.maximum(size, np.uint64(1)).astype(np.int64)


def _frame_super(
    words: np.ndarray, s0: int, s1: int, entry: int, buf: _Buffers, tick, n: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """The record starts of words ``[s0, s1)`` (local indices, int64), their headers' low 16 bits, and
    where the true chain leaves (local; ``entry``: where it enters, ``0 <= entry < s1 - s0``)."""
    m = s1 - s0
    chunk = buf.chunk
    halves = words[s0:s1].view(np.uint16)
    low = buf.low[:m]
    np.copyto(low, halves[0::4] if np.little_endian else halves[3::4])  # type and 12-bit size
    step = np.right_shift(low, np.uint16(4), out=buf.step[:m])
    np.maximum(step, np.uint16(1), out=step)  # (size 0: a one-word record here)
    # Where the next record would start if one started here, cut at the chunk's end: a chain stops (at the
    # sentinel m) when it leaves its chunk, and at a large record (type 15: its size is a 32-bit field,
    # read with the exits below; a true one ends the chain there, and the stitching walks on from its end).
    nxt = np.add(buf.ar[:m], step, out=buf.nxt[:m])
    ends = buf.ends[:m] if m == len(buf.ends) else np.minimum(buf.ends[:m], np.int32(m))  # (the last part)
    stop = buf.stop[: m + 1]
    np.greater_equal(nxt, ends, out=stop[:m])
    stop[:m] |= (low & np.uint16(0xF)) == 15
    stop[m] = True
    nxt = np.where(stop, np.int32(m), buf.nxt[: m + 1])  # (a masked copyto is several times slower)

    def size_at(q: np.ndarray) -> np.ndarray:
        return _sizes_at(words, s0 + q)

    lo = np.arange(0, m, chunk, dtype=np.int64)
    hi = np.minimum(lo + chunk, m)
    cand = _chunk_starts(low, nxt, lo, hi)
    if entry < hi[0]:
        cand[0] = entry
    k = len(lo)
    path = buf.walked[:, :k]
    path[0] = cand
    steps = 0
    while True:
        cur = path[steps + 1]
        np.take(nxt, path[steps], out=cur)
        steps += 1
        if steps % 4 == 0 and int(cur.min()) == m:
            break
        if tick is not None and steps % TICK_STEPS == 0:
            tick((s0 + m * min(steps * 3 / chunk, 0.95)) / n)
    walked = path[: steps + 1]
    mark = buf.mark[: m + 1]
    mark[:] = False
    mark[walked.reshape(-1)] = True
    mark[m] = False
    last = walked[(walked != m).sum(axis=0) - 1, np.arange(k)].astype(np.int64)
    exits = (last + size_at(last)).tolist()  # where each chunk's chain leaves its chunk
    # Stitch: the true chain enters chunk j where it left chunk j-1 (entry into chunk 0: ``entry``).
    entries = np.array([entry, *exits[:-1]], np.int64)
    ok = (entries < hi) & mark[np.minimum(entries, m)]
    look = np.flatnonzero(~ok | (entries != cand)).tolist()
    lo_l, hi_l = lo.tolist(), hi.tolist()
    entries_l = entries.tolist()
    out = exits[-1]
    i, forced = 0, None  # forced: (chunk, entry) when a fixed chunk left it elsewhere than its chain
    while True:
        if forced is not None:
            j, e = forced
            forced = None
        elif i < len(look):
            j = look[i]
            e = entries_l[j]
        else:
            break
        while i < len(look) and look[i] <= j:
            i += 1
        a, b = lo_l[j], hi_l[j]
        if e >= b:  # a record spans this whole chunk
            mark[a:b] = False
            left = e
        else:
            if e > a:
                mark[a:e] = False
            if mark[e]:
                left = exits[j]
            else:
                # The chunk's chain met the true one later (or never): walk the true chain until it
                # reaches a position the chunk's chain visited; from there on, that chain is the true one.
                q, visited = e, []
                while q < b and not mark[q]:
                    visited.append(q)
                    q += _size_of(int(words[s0 + q]))
                mark[e : min(q, b)] = False
                mark[visited] = True
                left = exits[j] if q < b else q
        if left != exits[j]:
            if j + 1 < k:
                forced = (j + 1, left)
            else:
                out = left
        elif j + 1 == k:
            out = left
    if out < m:  # the chain stopped at a large record that ends inside the last chunk: walk the rest
        while out < m:
            mark[out] = True
            out += _size_of(int(words[s0 + out]))
    local = np.flatnonzero(mark[:m])
    return local, low[local], out


def plausible_headers(headers: np.ndarray) -> np.ndarray:
    """Which of ``headers`` (native-order uint64 words) could start a record (see :func:`_plausible`)."""
    return _plausible(np.asarray(headers, np.uint64))
