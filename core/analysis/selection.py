"""The part of a trace an analysis looks at: a time range and a set of threads (an area selection, one
thread, one process or the whole trace), and the slice rows it holds.

A slice belongs to an area when it overlaps the range: it starts before the end and ends after the start
(a zero-length slice when it sits inside the range), the rule of the area aggregate table. Times inside
the area are the slices' durations clipped to the range, so that the totals of a range cut in two add up.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.trace import compiled
from fxscope.core.trace.query_pages import whole_trace_query
from fxscope.formats.fxt.coded_column import CodedColumn
from fxscope.formats.fxt.frequent_codes import FrequentCodedColumn

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel


@dataclass(frozen=True)
class Area:
    """``[t0, t1)`` in trace nanoseconds (None: from the trace's start / to its end) and the reader thread
    indexes it covers (None: every thread)."""

    t0: int | None = None
    t1: int | None = None
    threads: tuple[int, ...] | None = None

    def bounds(self, model: TraceModel) -> tuple[int, int]:
        """The range as numbers: the trace's own span for an open end."""
        t0 = model.start_ns if self.t0 is None else int(self.t0)
        t1 = model.end_ns + 1 if self.t1 is None else int(self.t1)
        return t0, t1


def thread_area(model: TraceModel, tid: int, t0: int | None = None, t1: int | None = None) -> Area:
    """The area of the thread(s) with koid ``tid`` (a tid may be listed by several providers)."""
    threads = tuple(t.thread for t in model.tracks if t.tid == tid)
    if not threads:
        raise LookupError(f"no thread {tid} with slices in the trace")
    return Area(t0, t1, threads)


def process_area(model: TraceModel, pid: int, t0: int | None = None, t1: int | None = None) -> Area:
    """The area of every thread of process ``pid``."""
    threads = tuple(t.thread for g in model.processes if g.pid == pid for t in g.tracks)
    if not threads:
        raise LookupError(f"no process {pid} with slices in the trace")
    return Area(t0, t1, threads)


class AreaRows:
    """The slices an analysis reads: ``rows`` (ascending rows of ``model.slices``) are the area's threads'
    slices that overlap the range or are ancestors of one that does; ``hit`` says which overlap it, and
    ``clipped`` is each row's time inside the range (0 for the others).

    ``run``, when set, is ``(lo, hi)``: the rows are exactly ``lo .. hi - 1`` (whole threads) and each lies
    inside the range (``hit`` all true, ``clipped`` their durations): :meth:`take` then reads a column as a
    view, and ``rows`` is made only when asked for. A whole-trace analysis (``fxscope stacks``) reads no
    gathered copy of a column and no mask."""

    def __init__(self, rows: np.ndarray | None, hit: np.ndarray | None, clipped: np.ndarray,
                 parent: np.ndarray | None = None, run: tuple[int, int] | None = None) -> None:  # fmt: skip
        self._rows = rows  # int64 (None for a run, until asked for)
        self._hit = hit  # bool (None for a run, until asked for)
        self.clipped = clipped  # int64 ns
        #: position in ``rows`` of each row's parent slice, -1 at depth 0 (see :func:`local_parents`); int32
        #: or int64
        self.parent = parent
        self.run = run

    @property
    def rows(self) -> np.ndarray:
        if self._rows is None:
            lo, hi = self.run or (0, 0)
            self._rows = np.arange(lo, hi, dtype=np.int64)
        return self._rows

    @property
    def hit(self) -> np.ndarray:
        """bool, which rows overlap the range (all of a run's: made when first asked for, 25 MB of fresh
        pages at 100M events that the whole trace's statistics and flame graph never read)."""
        if self._hit is None:
            self._hit = np.ones(len(self.clipped), bool)
        return self._hit

    @property
    def all_hit(self) -> bool:
        """Every row overlaps the range (no mask needed to keep the hits)."""
        return self.run is not None

    def take(self, column) -> np.ndarray:
        """``column[rows]`` (a view for a run)."""
        if self.run is not None:
            return np.asarray(column[self.run[0] : self.run[1]])
        return np.asarray(column[self.rows])

    def __len__(self) -> int:
        return len(self.clipped)


def _thread_spans(model: TraceModel, threads: tuple[int, ...] | None) -> list[tuple[int, int]]:
    """Row ranges ``(lo, hi)`` of the slices of ``threads`` (the table is sorted by thread), merged where
    they touch, so that the whole trace is one range (views, no copies)."""
    n = len(model.slices)
    if threads is None:
        return [(0, n)] if n else []
    wanted = np.unique(np.asarray(threads, np.int64))
    col = model.slices.thread
    lo = np.searchsorted(col, wanted, "left").tolist()
    hi = np.searchsorted(col, wanted, "right").tolist()
    spans: list[tuple[int, int]] = []
    for a, b in zip(lo, hi, strict=True):
        if a == b:
            continue
        if spans and spans[-1][1] == a:
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return spans


#: a time range over more (thread, depth) lanes than this is cut by a mask over its threads' rows instead
#: of per-lane searches (one Python step per lane)
MAX_LANES_SEARCHED = 4096


def _range_rows(model: TraceModel, area: Area, t0: int, t1: int) -> list[tuple[np.ndarray, int, int]] | None:
    """Per thread, the candidate rows of a time range found by binary searches, without touching the rows
    outside it: rows starting in [t0, t1) are one run of the thread's rows (sorted by start), and the rows
    starting before t0 that end at or after it are found per depth lane through the running maximum of the
    lane's ends (the model's ``end_max``: every row before the first maximum >= t0 ends before t0). None
    when the area spans too many lanes for that to pay. Per thread: (the rows before t0, ascending; a, b)
    with rows ``a:b`` starting in the range."""
    want = None if area.threads is None else set(area.threads)
    tracks = [t for t in model.tracks if want is None or t.thread in want]
    if sum(len(t.by_depth) for t in tracks) > MAX_LANES_SEARCHED:
        return None
    s = model.slices
    out = []
    for track in sorted(tracks, key=lambda t: t.lo):  # per thread and lane, never per slice
        ts = s.ts[track.lo : track.hi]
        a = track.lo + int(np.searchsorted(ts, t0, "left"))
        b = track.lo + int(np.searchsorted(ts, t1, "left"))
        before = []
        if a > track.lo:
            for rows, end_max in zip(track.by_depth, track.end_max, strict=True):
                j = int(np.searchsorted(end_max, t0, "left"))
                k = int(np.searchsorted(rows, a, "left"))
                if j < k:
                    cand = rows[j:k].astype(np.int64)
                    before.append(cand[s.ts[cand] + s.dur[cand] >= t0])
        out.append((np.sort(np.concatenate(before)) if before else np.zeros(0, np.int64), a, b))
    return out


@whole_trace_query
def area_rows(model: TraceModel, area: Area) -> AreaRows:
    """The rows of ``area`` (see :class:`AreaRows`), vectorized over the threads' row ranges.

    Candidates are the slices with ``ts < t1`` and ``end >= t0``: every ancestor of such a slice is one too
    (it starts no later and ends no earlier), so call paths stay whole without walking parents. A range
    narrower than the trace is cut by binary searches (:func:`_range_rows`), the whole trace (or a range
    over very many lanes) by a mask over the threads' rows.
    """
    s = model.slices
    t0, t1 = area.bounds(model)
    parts_rows, parts_hit, parts_clip = [], [], []
    searched = None
    if t0 > model.start_ns or t1 <= model.end_ns:
        searched = _range_rows(model, area, t0, t1)
    if searched is not None:  # the runs are sliced (views), only the few rows before t0 gathered
        pieces = [(head, np.arange(a, b, dtype=np.int64), s.ts[head], s.ts[a:b], s.dur[head], s.dur[a:b])
                  for head, a, b in searched]  # fmt: skip
        rows, ts, dur = (np.concatenate([x for p in pieces for x in p[k : k + 2]]) if pieces else np.zeros(0, np.int64)
                         for k in (0, 2, 4))  # fmt: skip
        end = ts + dur
        parts_rows.append(rows)
        parts_hit.append((end > t0) | ((dur == 0) & (ts >= t0)))
        parts_clip.append(np.maximum(np.minimum(end, t1) - np.maximum(ts, t0), 0))
    spans = _thread_spans(model, area.threads) if searched is None else []
    if len(spans) == 1:
        whole = _whole_run(model, *spans[0], t0, t1, area.t0 is None and area.t1 is None)
        if whole is not None:
            return whole
    for lo, hi in spans:
        ts, dur = s.ts[lo:hi], s.dur[lo:hi]
        end = ts + dur
        cand = (ts < t1) & (end >= t0)
        if not cand.all():
            idx = np.flatnonzero(cand)
            ts, dur, end = ts[idx], dur[idx], end[idx]
            rows = idx + lo
        else:
            rows = np.arange(lo, hi, dtype=np.int64)
        hit = (end > t0) | ((dur == 0) & (ts >= t0))
        clipped = np.maximum(np.minimum(end, t1) - np.maximum(ts, t0), 0)
        parts_rows.append(rows)
        parts_hit.append(hit)
        parts_clip.append(clipped)
    if not parts_rows or not sum(len(r) for r in parts_rows):
        z = np.zeros(0, np.int64)
        return AreaRows(z, np.zeros(0, bool), z.copy(), z.copy())
    if len(parts_rows) == 1:
        ar = AreaRows(parts_rows[0], parts_hit[0], parts_clip[0])
    else:
        ar = AreaRows(np.concatenate(parts_rows), np.concatenate(parts_hit), np.concatenate(parts_clip))
    ar.parent = local_parents(model, ar.rows)
    return ar


def _whole_run(model: TraceModel, lo: int, hi: int, t0: int, t1: int, open_ended: bool = False) -> AreaRows | None:
    """Rows ``lo:hi`` (whole threads) as a run (see :class:`AreaRows`) when every one of them lies inside
    ``[t0, t1)``: the whole trace, or whole threads, with no range or a range around them; else None.
    The check is two reductions, no column-sized temporary; the columns are then views. ``open_ended``: the
    range is the trace's extent (no bounds given), which holds every slice by construction (the model's
    start and end are the extremes of every event time and complete event's end, and a slice left open ends
    at the end): no check (two passes over 400 MB at 100M events, a tenth of the whole trace's analysis)."""
    s = model.slices
    ts, dur = s.ts[lo:hi], s.dur[lo:hi]
    if not open_ended and (int(ts.min()) < t0 or latest_end(ts, dur) >= t1):
        return None
    parent = s.parent[lo:hi]  # a thread's parents are its own rows: positions are rows - lo
    if lo:
        parent = np.where(parent >= 0, parent - parent.dtype.type(lo), parent)
    return AreaRows(None, None, dur, parent, (lo, hi))


def latest_end(ts: np.ndarray, dur: np.ndarray) -> int:
    """``max(ts + dur)`` (int64 ns; ``ts`` not empty), computed in blocks that stay in the cache."""
    step = 1 << 16
    block = np.empty(min(len(ts), step), np.int64)
    best = None
    for a in range(0, len(ts), step):
        part = block[: min(step, len(ts) - a)]
        np.add(ts[a : a + step], dur[a : a + step], out=part)
        m = int(part.max())
        best = m if best is None or m > best else best
    return best


def local_parents(model: TraceModel, rows: np.ndarray) -> np.ndarray:
    """For each of ``rows`` (ascending), the position in ``rows`` of its parent slice, -1 at depth 0 (or
    when the parent is not among the rows, which :func:`area_rows` never gives). One run of rows is an
    offset; scattered rows go through a table of the rows' span (a scatter and a gather, no search)."""
    parent = model.slices.parent[rows].astype(np.int64)
    if not len(rows):
        return parent
    lo, hi = int(rows[0]), int(rows[-1]) + 1
    if hi - lo == len(rows):  # one run of rows: an offset
        pos = parent - lo
        return np.where((parent >= 0) & (pos >= 0), pos, -1)
    where = np.full(hi - lo + 1, -1, np.int64)  # 1 + (row - lo) -> position; slot 0: outside the span
    where[rows - lo + 1] = np.arange(len(rows))
    inside = (parent >= lo) & (parent < hi)
    return where[np.where(inside, parent - lo + 1, 0)]


#: rows per block of the blockwise passes: their temporaries (a few MB) are reused from the heap, where a
#: whole-column temporary is fresh memory each time (page faults: ~1 ms per MB on a loaded host at 100M events)
BLOCK = 1 << 18


#: the largest float64 below 2**63: float sums clipped to it convert to int64 exactly
_INT64_FLOAT_MAX = float(np.nextafter(2.0**63, 0))


def saturated_int64(sums: np.ndarray) -> np.ndarray:
    """Float sums of nanoseconds (:func:`grouped_sums`) as int64, saturated at int64's range: a hostile or
    bogus trace's durations (timestamps near 2**63) can sum past it, where numpy's cast is undefined (a
    negative total). Integer sums are returned as int64 as they are."""
    if sums.dtype.kind != "f":
        return sums.astype(np.int64, copy=False)
    return np.clip(sums, -_INT64_FLOAT_MAX, _INT64_FLOAT_MAX).astype(np.int64)


def grouped_sums(groups: np.ndarray, weights: np.ndarray | None, k: int) -> np.ndarray:
    """``np.bincount(groups, weights, minlength=k)`` (float64 with weights, else int64) in blocks: no
    whole-column intp or float64 copy of narrower inputs. ``k`` is small (names, nodes): each block's
    result is added to the total; a large ``k`` (more than a block's rows) takes one whole bincount."""
    n = len(groups)
    if k > BLOCK or n <= BLOCK:
        return np.bincount(groups, weights, minlength=k)
    out = np.zeros(k, np.int64 if weights is None else np.float64)
    for a in range(0, n, BLOCK):
        w = None if weights is None else weights[a : a + BLOCK]
        out += np.bincount(groups[a : a + BLOCK], w, minlength=k)
    return out


def clipped_self(model: TraceModel, ar: AreaRows) -> np.ndarray:
    """Each row's self time inside the range: its clipped time minus its children's (at least 0), as
    float64, the weights the sums over nodes and names take (``np.bincount`` weighs in float64: no second
    conversion). Exact: float sums are exact below 2**53 ns (104 days); children never outlast their parent.

    The children's times are summed in blocks of rows: a block's parents mostly lie in a window just before
    it (bincount over that window); the few far ones (long-lived ancestors) are summed by a sort of their
    positions. No temporary is a multiple of the row count but the result."""
    par = ar.parent if ar.parent is not None else local_parents(model, ar.rows)
    clipped = ar.clipped
    n = len(ar)
    out = _compiled_self(par, clipped)
    if out is not None:
        return out[0]
    child = np.zeros(n, np.float64)  # the children's time, then the self time (in place)
    for a in range(0, n, BLOCK):
        b = min(a + BLOCK, n)
        p, w = par[a:b], clipped[a:b]
        # the block's parents' span: the smallest parent (roots, -1, read as the largest unsigned) to the
        # largest; one bincount over it when it is near the block (parents precede their children)
        lo, hi = int(p.view(np.uint32 if p.itemsize == 4 else np.uint64).min()), int(p.max())
        if hi < 0:  # roots only
            continue
        if a - BLOCK <= lo and hi < b:
            slot = np.subtract(p, lo - 1, dtype=np.intp)
            np.maximum(slot, 0, out=slot)  # (slot 0: the roots, dropped)
            child[lo : hi + 1] += np.bincount(slot, weights=w, minlength=hi - lo + 2)[1:]
            continue
        lo = max(a - BLOCK, 0)  # far ancestors: the near ones by a bincount, the far ones by a sort
        inside = p >= lo
        inside &= p < b
        slot = np.subtract(p, lo - 1, dtype=np.intp)
        slot[~inside] = 0  # (slot 0: roots and far parents, dropped)
        child[lo:b] += np.bincount(slot, weights=w, minlength=b - lo + 1)[1:]
        far = ~inside
        far &= p >= 0
        if far.any():  # (a few long-lived ancestors, often one: a bincount over their span when it is short)
            pf, wf = p[far], w[far]
            flo, fhi = int(pf.min()), int(pf.max())
            if fhi - flo <= 4 * BLOCK:
                child[flo : fhi + 1] += np.bincount(np.subtract(pf, flo, dtype=np.intp), weights=wf, minlength=fhi - flo + 1)
            else:
                uniq, inv = np.unique(pf, return_inverse=True)
                child[uniq] += np.bincount(inv.reshape(-1), weights=wf, minlength=len(uniq))
    np.subtract(clipped, child, out=child)
    np.maximum(child, 0, out=child)
    return child


def _compiled_self(par: np.ndarray, clipped: np.ndarray, hit: np.ndarray | None = None,
                   dense: np.ndarray | None = None, k: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:  # fmt: skip
    """The self times of :func:`clipped_self` by the compiled loop (summary_kernels.c: the children's sums
    and the self times in two passes over the rows), with, when ``dense`` names are given, the sums of the
    clipped and self times of each of the ``k`` names over the ``hit`` rows (None: every row) in the same
    pass: (self, total, self_total). None when the loop is not built or does not take these columns."""
    kernels = compiled.summary_kernels
    if dense is None:  # (no sums)
        dense = np.zeros(0, np.int16)
    if kernels is None or not (compiled.plain(par, np.int32, np.int64) and compiled.plain(clipped, np.int64)
                               and compiled.plain(dense, np.int16, np.int32)
                               and (hit is None or compiled.plain(hit, np.bool_))):  # fmt: skip
        return None
    out = np.empty(len(clipped), np.float64)
    total, self_total = np.zeros(k, np.float64), np.zeros(k, np.float64)
    try:
        kernels.self_times(par, par.dtype == np.int64, clipped, dense, dense.dtype == np.int32,
                           b"" if hit is None else hit.view(np.uint8), out, total, self_total)  # fmt: skip
    except ValueError:  # (a parent or name out of range: the numpy path decides)
        return None
    return out, total, self_total


def _compiled_dense(model: TraceModel, ar: AreaRows) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`dense_ids` of the area's names by the compiled loop (summary_kernels.c: the gather through the
    events and the renumbering in one buffer, three passes; from :data:`PARTS_FROM` rows two halves on two
    threads, renumbered as one where a half lacks a name), or None when it is not built or the names are not
    a gathered plain column (the numpy path)."""
    kernels = compiled.summary_kernels
    col = model.slices.name
    source, index = getattr(col, "source", None), getattr(col, "index", None)
    codes, rare = None, ()
    if isinstance(source, CodedColumn):  # (a one-byte code column: its codes and values)
        codes, source = source.index, source.values
    elif isinstance(source, FrequentCodedColumn):  # (names coded by frequency: their rare rows looked up too)
        codes, rare, source = source.codes, (source.rare_rows, source.rare_values), source.table
        if not all(compiled.plain(a, np.int64, np.int16, np.int32) for a in rare):
            return None
    if codes is not None and not compiled.plain(codes, np.uint8):
        return None
    if kernels is None or getattr(col, "missing", 0) is not None or not compiled.plain(source, np.int16, np.int32):
        return None
    rows = ar.take(index) if compiled.plain(index, np.int32, np.int64) else None
    if rows is None or not compiled.plain(rows, np.int32, np.int64):
        return None
    out = np.empty(len(rows), source.dtype)

    def part(lo: int, hi: int) -> np.ndarray:
        ids = kernels.dense_names(source, source.dtype == np.int32, rows[lo:hi], rows.dtype == np.int64,
                                  out[lo:hi], *(() if codes is None else (codes, *rare)))  # fmt: skip
        return np.frombuffer(ids, np.int64)

    n = len(rows)
    try:
        if n < PARTS_FROM:
            return out, part(0, n).copy()
        half = n // 2  # (two halves on two threads, each numbered on its own, then renumbered as one)
        ids = in_two(lambda: part(0, half), lambda: part(half, n))
    except ValueError:  # (a row or id out of range: the numpy path decides)
        return None
    every = np.union1d(*ids)
    jobs = [(lo, hi, np.searchsorted(every, i)) for (lo, hi), i in zip(((0, half), (half, n)), ids, strict=True)
            if not np.array_equal(i, every)]  # fmt: skip
    renumbered = [lambda lo=lo, hi=hi, at=at: _renumbered(out, lo, hi, at.astype(out.dtype)) for lo, hi, at in jobs]
    if len(renumbered) == 2:
        in_two(*renumbered)
    elif renumbered:
        renumbered[0]()
    return out, every


def _renumbered(dense: np.ndarray, lo: int, hi: int, table: np.ndarray) -> None:
    """``dense[lo:hi] = table[dense[lo:hi]]`` in place, in blocks of rows (np.take widens its indices to intp:
    a block's worth at a time, no whole-column copy)."""
    for a in range(lo, hi, BLOCK):
        part = dense[a : min(a + BLOCK, hi)]
        np.take(table, part, out=part, mode="clip")  # (the indices widened first: no overlap; all in range)


def dense_ids(ids: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """String ids (>= -1) renumbered 0..k-1 in ascending order (in ``ids``' dtype, into ``out`` when given:
    ``ids`` itself works), and the k ids (int64): marks in a table of the ids, not a sort, in blocks of rows
    (no whole-column int64 copy)."""
    if not len(ids):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    used = np.zeros(int(ids.max()) + 2, bool)
    slot = np.empty(min(len(ids), BLOCK), np.intp)
    for a in range(0, len(ids), BLOCK):
        at = slot[: len(ids[a : a + BLOCK])]
        np.add(ids[a : a + BLOCK], 1, out=at, dtype=np.intp)
        used[at] = True
    dense = np.cumsum(used, dtype=np.int64)
    dense -= 1
    out = np.empty(len(ids), ids.dtype) if out is None else out
    dense = dense.astype(out.dtype)  # (fits: no dense id exceeds its string id)
    for a in range(0, len(ids), BLOCK):
        at = slot[: len(ids[a : a + BLOCK])]
        np.add(ids[a : a + BLOCK], 1, out=at, dtype=np.intp)
        np.take(dense, at, out=out[a : a + BLOCK], mode="clip")  # (ids valid: no bounds check needed)
    return out, np.flatnonzero(used) - 1


class AreaNames:
    """What the per-name statistics and the flame graph of one area both derive from its rows, each a pass
    over every row: the names renumbered densely (:func:`dense_ids` of the rows' names, read through the
    events: a gather), the per-name sums of the clipped and self times, and the self times inside the range
    (:func:`clipped_self`). The analysis panel, which shows both, makes them once (:func:`area_names`).

    With the compiled loops the self times of the rows are never kept: one forward pass over the rows as a
    depth-first walk (summary_kernels.c area_pass) sums them per name and per call-path node as it leaves
    each row, and finds each row's node for the flame graph on the way (:attr:`call_nodes`). A per-row
    float64 array at 100M events (25M slices) was 200 MB of fresh pages, a third of the panel's time
    (issue 18); :attr:`self_clip` is made only when something asks for it (the numpy paths)."""

    def __init__(self, dense: np.ndarray, ids: np.ndarray, total: np.ndarray | None = None,
                 self_total: np.ndarray | None = None, self_clip: np.ndarray | Callable[[], np.ndarray] | None = None,
                 call_nodes: FoundNodes | None = None) -> None:  # fmt: skip
        self.dense = dense  # 0..k-1, one per row, in the name column's integer type (int16/int32)
        self.ids = ids  # int64 the k string ids, ascending
        #: per name (k float64), the sums of the clipped and of the self times of the rows that overlap the
        #: range, when the compiled loops summed them (None: the statistics sum them)
        self.total = total
        self.self_total = self_total
        #: the call-path nodes the compiled pass found with the sums, taken (and renumbered in place) by the
        #: first top_down
        self.call_nodes = call_nodes
        self._self_clip = self_clip

    @property
    def self_clip(self) -> np.ndarray:
        """float64, each row's self time inside the range (:func:`clipped_self`), made when first asked for."""
        if callable(self._self_clip):
            self._self_clip = self._self_clip()
        return self._self_clip


@whole_trace_query
def area_names(model: TraceModel, ar: AreaRows, call_paths: bool = True) -> AreaNames:
    """The :class:`AreaNames` of ``ar`` (every row's, hit or not); ``call_paths``: find the rows' call-path
    nodes in the same pass too (for :func:`~fxscope.core.analysis.call_tree.top_down`), when compiled."""
    dense_of = _compiled_dense(model, ar)
    if dense_of is not None:
        dense, ids = dense_of
    else:
        names = ar.take(model.slices.name)  # (a gather through the events: the area's own copy, renumbered in place)
        owned = names.flags.owndata and names.flags.writeable
        dense, ids = dense_ids(names, names if owned else None)
    par = ar.parent if ar.parent is not None else local_parents(model, ar.rows)
    swept = area_pass(ar, par, ar.take(model.slices.depth) if call_paths else None, dense, len(ids), rows_nodes=False)
    if swept is not None:
        total, self_total, found = swept
        return AreaNames(dense, ids, total, self_total, lambda: clipped_self(model, ar), found)
    summed = _compiled_self(par, ar.clipped, None if ar.all_hit else ar.hit, dense, len(ids))
    if summed is not None:
        return AreaNames(dense, ids, summed[1], summed[2], summed[0])
    return AreaNames(dense, ids, self_clip=clipped_self(model, ar))


#: rows from which the compiled pass runs as two parts on two threads (split at a root near the middle: each
#: part a walk of its own); fewer go in one pass (a thread costs more than it saves)
PARTS_FROM = 1 << 21


@dataclass
class FoundNodes:
    """The rows' call-path nodes as the compiled pass found them: ``node_of`` (each row's node; None when the
    pass found the nodes alone, see :func:`area_pass`'s ``rows_nodes``) and, per part of the rows (one, or two
    run on two threads), ``(lo, hi, columns)``: the part's rows and its nodes in its own first-encounter
    numbers (``node_of[lo:hi]`` holds those), as int64 parent node, dense name, depth, count and float64 total
    and self time. The flame graph merges the parts' nodes and numbers them."""

    node_of: np.ndarray | None
    parts: list[tuple[int, int, tuple[np.ndarray, ...]]]


def area_pass(ar: AreaRows, par: np.ndarray, depth: np.ndarray | None, dense: np.ndarray, k: int,
              rows_nodes: bool = True, bounds: list[tuple[int, int]] | None = None,
              kernels=None) -> tuple[np.ndarray, np.ndarray, FoundNodes | None] | None:  # fmt: skip
    """The per-name sums of the clipped and self times of the ``hit`` rows over the ``k`` ``dense`` names,
    and, with ``depth``, the rows' call-path nodes (summary_kernels.c area_pass: one forward pass, no per-row
    self time): (total, self_total, :class:`FoundNodes` or None). From :data:`PARTS_FROM` rows the pass runs
    as two parts on two threads (at 100M events, 25M slices: 0.26 s in one). None when the loop is not built,
    does not take these columns or the rows are not a depth-first walk (:func:`_compiled_self` and the numpy
    paths then decide).

    ``rows_nodes`` False: the nodes without each row's node (``node_of`` None), which only a click on a frame
    of the flame graph needs (:attr:`fxscope.core.analysis.call_tree.CallTree.node_of`, made then): at 100M
    events 100 MB of fresh pages and a renumbering pass less before the flame graph shows. ``bounds``: the
    parts to run (those of an earlier pass, whose nodes' numbers the caller has: the same parts number the
    same nodes alike), instead of the split at a root near the middle; ``kernels``: the compiled module to
    run (by default :data:`fxscope.core.trace.compiled.summary_kernels`)."""
    kernels = kernels or compiled.summary_kernels
    nodes = depth is not None and compiled.plain(depth, np.uint16)
    if kernels is None or not (compiled.plain(par, np.int32, np.int64) and compiled.plain(ar.clipped, np.int64)
                               and compiled.plain(dense, np.int16, np.int32)
                               and (ar.all_hit or compiled.plain(ar.hit, np.bool_))):  # fmt: skip
        return None
    n = len(ar)
    wide = n >= 1 << 31
    stored = nodes and rows_nodes
    node_of = np.empty(n if stored else 0, np.int64 if wide else np.int32)
    hit = None if ar.all_hit else ar.hit.view(np.uint8)

    def part(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, tuple | None] | None:
        total, self_total = np.zeros(k, np.float64), np.zeros(k, np.float64)
        out = kernels.area_pass(par[lo:hi], par.dtype == np.int64, depth[lo:hi] if nodes else b"", dense[lo:hi],
                                dense.dtype == np.int32, b"" if hit is None else hit[lo:hi], ar.clipped[lo:hi],
                                total, self_total, node_of[lo:hi] if stored else node_of, wide, lo,
                                nodes and not rows_nodes)  # fmt: skip
        return None if out is None else (total, self_total, out)

    if bounds is not None:
        split = bounds[0][1] if len(bounds) == 2 else None
    else:
        split = _root_near_middle(par) if n >= PARTS_FROM else None
    try:
        if split is not None:
            done = in_two(lambda: part(0, split), lambda: part(split, n))
            # (a part that is not a walk of its own, or float sums past 2**53 ns together: in one pass)
            if bounds is None and (any(d is None for d in done) or sum(float(d[0].sum()) for d in done) >= 2.0**53):
                split = None
        if split is None:
            done = [part(0, n)]
    except ValueError:  # (a parent or name out of range: the numpy path decides)
        return None
    if any(d is None for d in done):
        return None
    total, self_total = (np.sum([d[j] for d in done], axis=0) for j in (0, 1))
    if not nodes:
        return total, self_total, None
    bounds = [(0, n)] if len(done) == 1 else [(0, split), (split, n)]
    parts = [(lo, hi, _node_columns(d[2])) for (lo, hi), d in zip(bounds, done, strict=True)]
    return total, self_total, FoundNodes(node_of if stored else None, parts)


def _node_columns(out: tuple[bytes, ...]) -> tuple[np.ndarray, ...]:
    """summary_kernels' node columns (bytes) as arrays: int64 parent, name, depth, count; float64 total, self."""
    return (*(np.frombuffer(b, np.int64) for b in out[:4]), *(np.frombuffer(b, np.float64) for b in out[4:]))


def _root_near_middle(par: np.ndarray) -> int | None:
    """A row near the middle whose parent is -1 (a root: the walk's stack is empty there), or None."""
    mid = len(par) // 2
    at = np.flatnonzero(par[mid : mid + (1 << 16)] < 0)
    return mid + int(at[0]) if len(at) and mid else None


def in_two(first: Callable[[], object], second: Callable[[], object]) -> list:
    """``[first(), second()]``, ``first`` on a thread of its own while ``second`` runs on this one (compiled
    loops that release the GIL: two cores). An exception of either is raised here."""
    with ThreadPoolExecutor(1, thread_name_prefix="fxscope-area") as pool:
        pending = pool.submit(first)
        other = second()
        return [pending.result(), other]


def name_text(model: TraceModel, name_id: int) -> str:
    """The text of string id ``name_id`` (``<unresolved>`` for a name the reader could not resolve)."""
    strings = model.strings
    return strings[name_id] if 0 <= name_id < len(strings) else "<unresolved>"
