"""Find every record start of an FXT archive without a Python loop per record.

Records are a chain: the next record starts ``size`` words after this one, so finding the starts is
inherently sequential. We break the sequence into chunks and walk one chain per chunk in lockstep
(one numpy step advances every chain by one record). A chain started at a chunk boundary that is not a
record start reads garbage sizes for a while, but it soon lands on a true record start and from then on
it *is* the true chain. A short sequential pass then stitches the chunks: it enters chunk ``j`` at the
position where the true chain left chunk ``j-1``; if chunk ``j``'s chain visited that position, the rest
of its positions are true, otherwise (rare) that chunk is walked again in Python.
"""

from __future__ import annotations

import numpy as np

#: words per chunk, at least: small enough that a pure-Python fallback walk of one chunk is cheap
CHUNK_WORDS = 2048
#: words per chunk, at most, and the number of chains a big file is cut into: each lockstep step reads one
#: word in every chain's part of the file, and with tens of thousands of chains those reads miss the TLB
#: (a 10M-event file walked in 2,048-word chunks took 1.4-1.6 s of CPU, in 16,384-word chunks 0.9 s); with
#: fewer chains than this the steps' own overhead (~30 us each) would show
MAX_CHUNK_WORDS = 1 << 14
MIN_CHAINS = 2048


def chunk_words(n: int) -> int:
    """Words per chunk for a file of ``n`` words: :data:`CHUNK_WORDS`, larger for big files (a power of two
    up to :data:`MAX_CHUNK_WORDS`) so that they are cut into about :data:`MIN_CHAINS` chains."""
    size = CHUNK_WORDS
    while size < MAX_CHUNK_WORDS and n // (2 * size) >= MIN_CHAINS:
        size *= 2
    return size


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


def _chunk_starts(words: np.ndarray, lo: np.ndarray, tick=None) -> np.ndarray:
    """For each chunk, a word among its first few from which several records in a row look valid.

    Only speed depends on this guess (a chain started on a true record start is the true chain at once);
    correctness comes from the stitching pass.
    """
    n = len(words)
    cand = (lo[:, None] + np.arange(_CANDIDATES)).reshape(-1)
    cand = np.minimum(cand, n - 1)
    cur = cand.copy()
    good = np.ones(len(cand), dtype=bool)
    for _ in range(_CHECK_STEPS):
        if tick is not None:
            tick(0.0)
        inside = cur < n
        h = words[np.minimum(cur, n - 1)]
        good &= ~inside | _plausible(h)
        cur = np.where(inside, cur + guessed_sizes(h), cur)
    # Among plausible candidates prefer the one whose walk ends earliest: chains from wrong starts
    # usually take one big random jump, and a wrong start that merges early costs nothing.
    score = np.where(good, cur, np.iinfo(np.int64).max).reshape(len(lo), _CANDIDATES)
    best = np.argmin(score, axis=1)
    return cand.reshape(len(lo), _CANDIDATES)[np.arange(len(lo)), best]


def _size_of(header: int) -> int:
    size = (header >> 4) & (0xFFFFFFFF if header & 0xF == 15 else 0xFFF)
    return size or 1


#: lockstep steps (and stitched chunks / 64) between two calls of record_starts' ``tick``
TICK_STEPS = 16  # (a step over a 10M-event trace's chunks takes ~7 ms)


def record_starts(words: np.ndarray, tick=None) -> np.ndarray:
    """Word indices of the records chained from word 0 (ascending; uint32 when ``words`` is shorter than
    2**32, else int64: 4 bytes a record, found a block of words at a time). ``tick(fraction)``, when given,
    is called every :data:`TICK_STEPS` steps with a rough fraction done (a Cancel raises from it).

    A header of size 0 counts as a one-word record here; callers decide what it means (padding when the
    word is all zero, otherwise the end of what can be decoded). The last start may describe a record
    that runs past the end of ``words``.
    """
    n = len(words)
    if n == 0:
        return np.zeros(0, np.uint32)
    chunk = chunk_words(n)
    k = (n + chunk - 1) // chunk
    lo = np.arange(k, dtype=np.int64) * chunk
    hi = np.minimum(lo + chunk, n)
    mark = np.zeros(n, dtype=bool)
    exit_pos = np.empty(k, dtype=np.int64)
    cur, lim, chain = _chunk_starts(words, lo, tick), hi.copy(), np.arange(k)
    cur[0] = 0
    early = cur >= lim
    exit_pos[early] = cur[early]
    cur, lim, chain = cur[~early], lim[~early], chain[~early]
    steps = 0
    expected = chunk / 3  # records a chunk, about (the walk's steps)
    if tick is not None:
        tick(0.0)
    while len(cur):
        steps += 1
        if tick is not None and steps % TICK_STEPS == 0:
            tick(min(steps / expected, 1.0) * 0.8)
        mark[cur] = True
        cur = cur + guessed_sizes(words[cur])
        done = cur >= lim
        if done.any():
            exit_pos[chain[done]] = cur[done]
            keep = ~done
            cur, lim, chain = cur[keep], lim[keep], chain[keep]

    lo_l, hi_l, exit_l = lo.tolist(), hi.tolist(), exit_pos.tolist()
    p = 0
    for j in range(k):
        if tick is not None and j % (TICK_STEPS * 64) == 0:
            tick(0.8 + 0.2 * j / k)
        a, b = lo_l[j], hi_l[j]
        if p >= b:  # a large record spans this whole chunk
            mark[a:b] = False
            continue
        if p > a:
            mark[a:p] = False
        if mark[p]:
            p = exit_l[j]
            continue
        # The chunk's chain met the true one later (or never): walk the true chain until it reaches a
        # position the chunk's chain visited; from there on, that chain is the true one.
        entry = p
        walked = []
        while p < b and not mark[p]:
            walked.append(p)
            p += _size_of(int(words[p]))
        mark[entry : min(p, b)] = False
        mark[walked] = True
        if p < b:
            p = exit_l[j]
    return _marked_positions(mark)


#: words scanned at once for the marked record starts
_SCAN_WORDS = 1 << 22


def _marked_positions(mark: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(mark)`` in a narrow dtype, a block at a time (flatnonzero's int64 result for the
    whole file is 8 bytes a record, on top of the mark array, at the read's start)."""
    dtype = np.uint32 if len(mark) < (1 << 32) else np.int64
    parts = [
        np.flatnonzero(mark[a : a + _SCAN_WORDS]).astype(dtype) + dtype(a) for a in range(0, len(mark), _SCAN_WORDS)
    ]
    if not parts:
        return np.zeros(0, dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def plausible_headers(headers: np.ndarray) -> np.ndarray:
    """Which of ``headers`` (native-order uint64 words) could start a record (see :func:`_plausible`)."""
    return _plausible(np.asarray(headers, np.uint64))
