"""Per-name slice statistics of an area: count, total, self, min, p50, p90, p99, max, and the duration
histogram of one name (log-scale bins, as Tracy's Find Zone draws it).

Everything is a few passes over the rows: names are renumbered densely (a table of the ids used); the
compiled loops (core/trace/summary_kernels.c) then find every name's shortest, longest and percentile
durations by a radix selection (a pass counting each name's durations by their top bits, a pass per 16 more
bits over the durations in the buckets that hold a wanted rank: 4 MB of counters, no per-slice key), and the
sums come with the self times (selection.area_pass). The numpy path sorts the durations once by (name,
duration) as one integer key (a value sort, no argsort; int32 when it fits), after which every percentile is a
gather at group offsets and the sums are bincounts over blocks of rows. No Python object per slice; the
compiled path makes no whole-column temporary: at 100M events (25M slices) a fresh 100-200 MB array costs
~0.1-0.2 s of page faults alone (issue 18).

Definitions (what ``fxscope stats`` prints):

- ``count``: slices of the name that overlap the range;
- ``total_ns`` / ``self_ns``: their wall / self time *inside the range* (clipped to it), so that the numbers
  of a range cut in two add up; for the whole trace these are the plain sums;
- ``min_ns``, ``p50_ns``, ``p90_ns``, ``p99_ns``, ``max_ns``: of the slices' full durations. Percentiles are
  exact, by the nearest-rank rule: ``pP`` is the duration of the ``ceil(P/100 * count)``-th shortest slice
  (an actual slice's duration, never interpolated).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.analysis.selection import (
    Area,
    AreaNames,
    AreaRows,
    area_names,
    area_rows,
    grouped_sums,
    name_text,
    saturated_int64,
)
from fxscope.core.trace import compiled
from fxscope.core.trace.query_pages import whole_trace_query

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel

PERCENTILES = (50, 90, 99)
KEYS = ("name", "count", "total_ns", "self_ns", "min_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns")


@dataclass
class NameStats:
    """One row per name, as columns, sorted by ``total_ns`` (largest first) then name."""

    names: list[str]
    name_id: np.ndarray  # int64 string ids
    count: np.ndarray
    total_ns: np.ndarray
    self_ns: np.ndarray
    min_ns: np.ndarray
    p50_ns: np.ndarray
    p90_ns: np.ndarray
    p99_ns: np.ndarray
    max_ns: np.ndarray

    def __len__(self) -> int:
        return len(self.names)

    def records(self) -> list[dict]:
        """The rows as dicts with the keys of :data:`KEYS` (``fxscope stats --json``)."""
        cols = [self.names] + [getattr(self, k).tolist() for k in KEYS[1:]]
        return [dict(zip(KEYS, row, strict=True)) for row in zip(*cols, strict=True)]

    def row_of(self, name: str) -> int:
        """The row of ``name`` (ValueError when absent)."""
        return self.names.index(name)


def nearest_rank(count: np.ndarray, p: float) -> np.ndarray:
    """0-based rank of the ``p``-th percentile in groups of ``count`` sorted values (nearest-rank rule)."""
    return np.maximum(np.ceil(count * (p / 100.0)).astype(np.int64) - 1, 0)


def _sorted_by_name(dense: np.ndarray, dur: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The durations grouped by name (``dense`` ids 0..k-1, ascending) and ascending within a name, and the
    count of each name: one sort of ``name << bits | duration`` (values only, no argsort; the counts are
    binary searches for the names' first keys, the duration read back by a mask, no division) when that
    fits 62 bits, else a lexsort. The key is int32 when it fits 31 bits (typical: a few thousand names,
    durations under a second): half the memory of a fresh temporary and a faster sort."""
    bits = int(dur.max()).bit_length() if len(dur) else 0
    if (k - 1) >> max(62 - bits, 0) == 0 and bits < 62:
        kind = np.int32 if ((k - 1) >> max(31 - bits, 0) == 0 and bits < 31) else np.int64
        key = _compiled_keys(dense, dur, bits, kind)
        if key is None:
            key = np.left_shift(dense, bits, dtype=kind, casting="unsafe")
            np.bitwise_or(key, dur, out=key, casting="unsafe")  # (int64 durations cast in buffered chunks)
        key.sort()
        first = np.searchsorted(key, np.left_shift(np.arange(k, dtype=kind), bits))  # (key's type: no copy of it)
        count = np.diff(np.append(first, len(key)))
        key &= (1 << bits) - 1
        return key, count
    return dur[np.lexsort((dur, dense))], grouped_sums(dense, None, k)


def _order_statistics(dense: np.ndarray, dur: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    """Per name (``dense`` ids 0..k-1), the count, the shortest and the longest duration and the
    :data:`PERCENTILES` (nearest rank): by the compiled radix selection (no sort, no per-row key) when it
    takes the columns, else from :func:`_sorted_by_name`."""
    ranked = _compiled_ranks(dense, dur, k)
    if ranked is not None:
        return ranked
    d, count = _sorted_by_name(dense, dur, k)
    first = np.r_[0, np.cumsum(count)[:-1]]
    pct = [d[first + nearest_rank(count, p)].astype(np.int64) for p in PERCENTILES]
    return count, d[first].astype(np.int64), d[first + count - 1].astype(np.int64), *pct


def _compiled_ranks(dense: np.ndarray, dur: np.ndarray, k: int) -> tuple[np.ndarray, ...] | None:
    """:func:`_order_statistics` by summary_kernels.c's name_ranks: a pass counting each name's durations by
    their top bits, then a pass per further 16 bits (at most) over the durations in the buckets holding a
    wanted rank; ~0.1 s and 4 MB at 100M events (25M slices), where the sort of a key per slice took
    0.25-0.35 s and a fresh 100 MB (issue 18). None when not built or it does not take the columns (a
    duration below 0, more than 16,384 names): the sort decides."""
    kernels = compiled.summary_kernels
    if kernels is None or not len(dur) or not (compiled.plain(dense, np.int16, np.int32) and compiled.plain(dur, np.int64)):
        return None
    bits = int(dur.max()).bit_length()
    if bits > 62:
        return None
    fractions = np.array([p / 100.0 for p in PERCENTILES], np.float64)  # (as nearest_rank computes them)
    count, lo, hi = np.empty(k, np.int64), np.empty(k, np.int64), np.empty(k, np.int64)
    pct = np.empty((k, len(PERCENTILES)), np.int64)
    if not kernels.name_ranks(dense, dense.dtype == np.int32, dur, bits, fractions, count, lo, hi, pct):
        return None
    return count, lo, hi, *(pct[:, j].copy() for j in range(len(PERCENTILES)))


def _compiled_keys(dense: np.ndarray, dur: np.ndarray, bits: int, kind: type) -> np.ndarray | None:
    """:func:`_sorted_by_name`'s keys by the compiled loop (summary_kernels.c: one pass; numpy's cast of the
    int64 durations to an int32 key goes in buffered chunks, ~0.3 s at 25M slices), or None when it is not
    built or does not take these columns."""
    kernels = compiled.summary_kernels
    if kernels is None or not (compiled.plain(dense, np.int16, np.int32) and compiled.plain(dur, np.int64)):
        return None
    key = np.empty(len(dur), kind)
    kernels.name_keys(dense, dense.dtype == np.int32, dur, bits, key, kind == np.int64)
    return key


@whole_trace_query
def name_stats(model: TraceModel, area: Area | None = None, ar: AreaRows | None = None,
               names: AreaNames | None = None) -> NameStats:  # fmt: skip
    """The statistics of every slice name in ``area`` (the whole trace when None); see the module docstring.
    ``names``: :func:`area_names` of ``ar``, when the caller made it for the flame graph too."""
    if ar is None:
        ar = area_rows(model, area or Area())
    s = model.slices
    if not len(ar) or not (ar.all_hit or ar.hit.any()):
        z = np.zeros(0, np.int64)
        return NameStats([], z, *(z.copy() for _ in range(8)))
    if names is None:
        names = area_names(model, ar, call_paths=False)
    dense, ids = names.dense, names.ids
    sums = None if names.total is None else (names.total, names.self_total)  # (summed with the self times)
    keep = None
    if ar.all_hit:  # every row is in the range: the columns as they are (views for a run)
        clipped, dur = ar.clipped, ar.take(s.dur)
    else:
        keep = np.flatnonzero(ar.hit)
        clipped, dense, dur = ar.clipped[keep], dense[keep], s.dur[ar.rows[keep]]
        used = np.bincount(dense, minlength=len(ids)) > 0
        if not used.all():  # names of ancestors outside the range only: renumbered without them
            dense = (np.cumsum(used) - 1)[dense]
            ids = ids[used]
            sums = None if sums is None else (sums[0][used], sums[1][used])
    k = len(ids)
    count, lo, hi, *pct = _order_statistics(dense, dur, k)
    # float sums are exact below 2**53 ns (104 days of slices of one name); in blocks: no float64 copy
    if sums is None:  # (the numpy paths: each row's self time)
        self_clip = names.self_clip if keep is None else names.self_clip[keep]
        sums = grouped_sums(dense, clipped, k), grouped_sums(dense, self_clip, k)
    total, self_total = (saturated_int64(x) for x in sums)
    name_id = ids
    texts = [name_text(model, int(i)) for i in name_id.tolist()]
    rank = sorted(range(len(texts)), key=lambda i: (-int(total[i]), texts[i]))  # per name, not per slice
    r = np.asarray(rank, np.int64)
    return NameStats([texts[i] for i in rank], name_id[r], count[r], total[r], self_total[r], lo[r],
                     pct[0][r], pct[1][r], pct[2][r], hi[r])  # fmt: skip


def name_rows(model: TraceModel, name_id: int, area: Area | None = None, ar: AreaRows | None = None) -> np.ndarray:
    """The rows of the slices named ``name_id`` that overlap ``area``, by duration (longest first), then row."""
    if ar is None:
        ar = area_rows(model, area or Area())
    rows = ar.rows[ar.hit]
    rows = rows[np.asarray(model.slices.name[rows]) == name_id]
    dur = model.slices.dur[rows]
    return rows[np.lexsort((rows, -dur))]


@dataclass
class Histogram:
    """Durations of one name in log-spaced bins: bin ``i`` holds ``edges[i] <= dur < edges[i + 1]`` (ns);
    ``zero`` counts the zero-length slices, which a log axis cannot place."""

    edges: np.ndarray  # float64, len(counts) + 1
    counts: np.ndarray  # int64
    zero: int

    def bin_of(self, dur: np.ndarray) -> np.ndarray:
        """The bin of each duration (-1 for zero-length)."""
        dur = np.asarray(dur, np.float64)
        b = np.searchsorted(self.edges, dur, "right") - 1
        b = np.clip(b, 0, len(self.counts) - 1)
        return np.where(dur > 0, b, -1)


def _log_edges(pos: np.ndarray, bins_per_decade: int) -> np.ndarray:
    """Bin edges of equal ratio from the decade below the shortest to the decade above the longest of the
    positive durations ``pos`` (not empty)."""
    lo = np.floor(np.log10(pos.min()))
    hi = np.floor(np.log10(pos.max())) + 1
    n = int(np.rint((hi - lo) * bins_per_decade))
    return 10.0 ** (lo + np.arange(n + 1) / bins_per_decade)


def _binned(d: np.ndarray, edges: np.ndarray) -> Histogram:
    pos = d[d > 0]
    h = Histogram(edges, np.zeros(len(edges) - 1, np.int64), int(len(d) - len(pos)))
    h.counts = np.bincount(h.bin_of(pos), minlength=len(h.counts)).astype(np.int64)
    return h


def duration_histogram(durations: np.ndarray, bins_per_decade: int = 10) -> Histogram:
    """Log-scale histogram of ``durations`` (ns): bins of equal ratio, ``bins_per_decade`` per factor 10,
    from the decade below the shortest to the decade above the longest positive duration."""
    return shared_histograms(durations, bins_per_decade=bins_per_decade)[0]


def shared_histograms(*durations: np.ndarray, bins_per_decade: int = 10) -> list[Histogram]:
    """One log-scale histogram per array of durations, all on the same bins (spanning every array's
    positive durations), so that they can be drawn over each other: a name's durations in trace A and B."""
    ds = [np.asarray(d, np.int64) for d in durations]
    pos = [d[d > 0] for d in ds]
    ends = [(int(p.min()), int(p.max())) for p in pos if len(p)]
    if ends:
        edges = _log_edges(np.array([min(e[0] for e in ends), max(e[1] for e in ends)]), bins_per_decade)
    else:
        edges = np.array([1.0, 10.0])
    return [_binned(d, edges) for d in ds]
