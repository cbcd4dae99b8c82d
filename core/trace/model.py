"""The trace model: what the timeline shows, built once from the reader's columns, Qt-free.

Perfetto's split is the model here: the importer (``formats.fxt.reader``) fills columns, this module derives
tables (slices per thread, tracks grouped by process) and answers the queries a view needs for one frame:
the slices of a track that are visible in a time window at a given pixel resolution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.trace import compiled
from fxscope.core.trace.built_once import BuiltOnce, once_property
from fxscope.core.trace.complete_ends import CompleteEnds, decoded_ends
from fxscope.core.trace.gathered import Difference, Gathered
from fxscope.core.trace.lane_end_max import LaneEndMax, block_ends
from fxscope.core.trace.objects import ObjectLabels
from fxscope.core.trace.query import ArgStringIndex, build_arg_string_index
from fxscope.core.trace.segments import segment_starts, segmented_running_max, sorted_run_starts
from fxscope.core.trace.slices import SliceTable, build_slices, thread_keys
from fxscope.core.trace.sorting import identity_if_sorted, lexsort
from fxscope.formats.filled_arrays import array_to_fill
from fxscope.formats.fxt.column_view import ColumnView
from fxscope.formats.fxt.columns import FxtColumns

if TYPE_CHECKING:  # the tables built on first use: their modules are imported then (``fxscope stacks`` never loads them)
    from fxscope.core.trace.async_spans import AsyncTable
    from fxscope.core.trace.counters import CounterSet
    from fxscope.core.trace.flows import FlowTable
    from fxscope.core.trace.instants import InstantTable
    from fxscope.core.trace.lod import SlicePyramid
    from fxscope.core.trace.logs import LogTable
    from fxscope.core.trace.sched import SchedTables
    from fxscope.core.trace.stats import Stat


@dataclass
class ThreadTrack:
    """The slices of one thread: rows ``lo:hi`` of :attr:`TraceModel.slices` (sorted by thread, start)."""

    thread: int  # index into the reader's thread table
    pid: int
    tid: int
    name: str
    lo: int
    hi: int
    max_depth: int
    #: the model's per-lane index, built on first use (:attr:`by_depth`, :attr:`end_max`)
    lanes: LaneIndex = field(repr=False, compare=False)
    #: lane number of depth 0 in the model's :class:`~fxscope.core.trace.lod.SlicePyramid` (set when it is built)
    lane_base: int = 0

    @property
    def by_depth(self) -> list[np.ndarray]:
        """Per depth 0..max: rows of this track at that depth, sorted by start (empty for a depth without
        slices)."""
        return self.lanes.get().by_depth[self.thread]

    @property
    def end_max(self) -> list[LaneEndMax]:
        """Per depth: the running max of the ends of :attr:`by_depth`'s rows (int64 ns, as ``np.searchsorted``
        and ``np.asarray`` read it: :class:`~fxscope.core.trace.lane_end_max.LaneEndMax`)."""
        return self.lanes.get().end_max_of[self.thread]


@dataclass
class ProcessGroup:
    pid: int
    name: str
    tracks: list[ThreadTrack]


@dataclass
class VisibleSlices:
    """What a track draws in one frame: slice rows plus how many slices each drawn box stands for."""

    rows: np.ndarray  # int64 rows into TraceModel.slices
    depth: np.ndarray  # uint16
    count: np.ndarray  # int64: 1 for a real slice, >1 for a box that merges sub-pixel slices
    start: np.ndarray  # int64 ns of the box
    end: np.ndarray  # int64 ns of the box


#: slice rows whose lanes' running max of ends is scanned at a time (:meth:`_Lanes.end_max_of`)
LANE_ENDS_BATCH = 1 << 18


class _Lanes:
    """The slice rows of every (thread, depth) lane, in start order (a :class:`ThreadTrack`'s ``by_depth``),
    and on first use the running max of their ends (its ``end_max``): computed for all lanes at once, a radix
    sort by lane and one segmented scan, whatever the number of threads; each track gets views of them.

    The ends' maxima (8 bytes a slice, 20 MB at 10M events) are built when a view first reads them (a frame
    zoomed in past the pyramid's finest level, a time-range selection), not by the load: the pyramid, the
    first frame's reader of these rows, needs only their order."""

    def __init__(self, s: SliceTable) -> None:
        self._slices = s
        compiled_lanes = _lane_rows_compiled(s)
        if compiled_lanes is not None:
            self.rows, self.starts = compiled_lanes
            first = self.rows[self.starts]
            lane_thread, lane_depth = s.thread[first].tolist(), s.depth[first].tolist()
            del first
        else:
            by_lane = lexsort((s.depth, s.thread))  # a thread's rows are by start: its lanes keep that order
            self.rows = by_lane.astype(np.int32)  # int32 rows: half the index memory
            del by_lane  # (the temporaries here are per slice: each freed once used)
            thread, depth = s.thread[self.rows], s.depth[self.rows]
            key = thread.astype(np.int64)
            key *= 65536
            key += depth
            #: where each lane's rows start in :attr:`rows` (a few per thread)
            self.starts = segment_starts(key)
            del key
            lane_thread, lane_depth = thread[self.starts].tolist(), depth[self.starts].tolist()
            del thread, depth
        bounds = np.r_[self.starts, len(self.rows)].tolist()
        #: per thread with slices: its lanes' (first, end) positions in :attr:`rows`, one per depth 0..max
        #: (an empty range for a depth without slices)
        self._bounds: dict[int, list[tuple[int, int]]] = {}
        #: per thread with slices: its per-depth rows (views of :attr:`rows`), and all its rows by depth,
        #: then start
        self.by_depth: dict[int, list[np.ndarray]] = {}
        self.thread_rows: dict[int, np.ndarray] = {}
        for k, t in enumerate(lane_thread):
            spans = self._bounds.setdefault(t, [])
            while len(spans) < lane_depth[k]:
                spans.append((bounds[k], bounds[k]))
            spans.append((bounds[k], bounds[k + 1]))
        for t, spans in self._bounds.items():
            self.by_depth[t] = [self.rows[a:b] if b > a else self.rows[:0] for a, b in spans]
            self.thread_rows[t] = self.rows[spans[0][0] : spans[-1][1]]
        self._end_max: BuiltOnce[dict[int, list[LaneEndMax]]] = BuiltOnce()

    @property
    def end_max_of(self) -> dict[int, list[LaneEndMax]]:
        """Per thread with slices, per depth: the running max of the ends of its ``by_depth`` rows (built on
        first use, once: a gather of the slices' ends in lane order and a segmented scan, a batch of rows at a
        time), kept at every :data:`~fxscope.core.trace.lane_end_max.BLOCK`-th row
        (:class:`~fxscope.core.trace.lane_end_max.LaneEndMax`: 8 bytes a slice stored whole, 20 MB at 10M
        events held by the window; ``np.searchsorted`` reads it as the whole)."""
        return self._end_max.get(self._build_end_max)

    def _build_end_max(self) -> dict[int, list[LaneEndMax]]:
        s = self._slices
        n = len(self.rows)
        at, first = block_ends(self.starts, n)
        coarse = np.empty(len(at), np.int64)
        carry = 0
        # LANE_ENDS_BATCH rows at a time (the scan's temporaries, three int64 a row, bounded: at 10M events the
        # step's peak was +60 MB for its 20 MB, built beside the window's other background tables); a lane
        # cut by a batch's start carries the maximum of its rows before
        for a in range(0, n, LANE_ENDS_BATCH):
            b = min(n, a + LANE_ENDS_BATCH)
            rows = self.rows[a:b]
            ends = s.ts[rows]
            ends += s.dur[rows]
            lo, hi = np.searchsorted(self.starts, [a, b])
            starts = self.starts[lo:hi] - a
            if not len(starts) or starts[0] != 0:  # (mid-lane)
                starts = np.r_[0, starts]
                if a:
                    ends[0] = max(int(ends[0]), carry)
            end_max = segmented_running_max(ends, starts)
            del ends
            carry = int(end_max[-1])
            lo, hi = np.searchsorted(at, [a, b])
            coarse[lo:hi] = end_max[at[lo:hi] - a]
            del end_max
        lane_of = {start: k for k, start in enumerate(self.starts.tolist())}
        ts, dur = s.ts, s.dur

        def lane(a: int, b: int) -> LaneEndMax:
            if b <= a:
                return LaneEndMax(self.rows[:0], coarse[:0], ts, dur)
            k = lane_of[a]
            return LaneEndMax(self.rows[a:b], coarse[first[k] : first[k + 1]], ts, dur)

        return {t: [lane(a, b) for a, b in spans] for t, spans in self._bounds.items()}


def _lane_rows_compiled(s: SliceTable) -> tuple[np.ndarray, np.ndarray] | None:
    """:class:`_Lanes`' rows and lane starts by the compiled loops (slice_kernels.c: a counting sort by depth
    of each thread's rows, one pass, no per-slice gather of the threads), or None when they are not built or
    do not take these columns (the numpy path's lexsort then)."""
    kernels = compiled.slice_kernels
    # (a one-byte code column whose values ascend with the code: its codes as they are, grouped and ordered as
    # the values; decoded to its values it was a 2-byte temporary an event, 60 MB faulted in at 30M events)
    ev_thread = thread_keys(s.thread.source) if isinstance(s.thread, Gathered) else None
    if (kernels is None or ev_thread is None or s.thread.index is not s.event or s.thread.missing is not None
            or not compiled.plain(ev_thread, np.uint8, np.int16, np.int32) or not compiled.plain(s.event, np.int32)
            or not compiled.plain(s.depth, np.uint16)):  # fmt: skip
        return None
    rows = array_to_fill(len(s), np.int32)
    starts = np.empty(len(s), np.int64)  # (the pages past the lanes' few are never touched)
    try:
        n_lanes = kernels.lane_rows(ev_thread, ev_thread.dtype.itemsize, s.event, s.depth, rows, starts)
    except ValueError:  # threads not ascending (not a model's table): the numpy path
        return None
    return rows, starts[:n_lanes].copy()


class LaneIndex:
    """The model's :class:`_Lanes`, built on first use (the timeline and time-range searches read them;
    ``fxscope stacks``/``stats`` of whole threads never do), once even when two threads ask together."""

    def __init__(self, slices: SliceTable) -> None:
        self._slices = slices
        self._once: BuiltOnce[_Lanes] = BuiltOnce()

    @property
    def built(self) -> bool:
        return self._once.built

    def get(self) -> _Lanes:
        return self._once.get(lambda: _Lanes(self._slices))


class RowLanes:
    """The lane of each row of a table sorted by its lane key (a CPU, a thread), as ``lanes[row]``: found
    from where each lane's rows start (a few hundred numbers) rather than stored per row (4 bytes a row)."""

    def __init__(self, starts: np.ndarray) -> None:
        self.starts = starts

    def __getitem__(self, row):
        return np.searchsorted(self.starts, row, side="right") - 1

    def __len__(self) -> int:
        return len(self.starts)


#: bins of the density the window's overview strip draws (its ``BINS``) and the loader builds: the model
#: counts them while its slices' build holds every event's time (:meth:`TraceModel._count_density`)
DENSITY_BINS = 1000


def _no_check() -> None:
    """A ``check`` that never cancels."""


class TraceModel:
    """Slices, processes and threads of one trace, with the per-frame queries of the timeline."""

    def __init__(self, cols: FxtColumns, check=None) -> None:
        """``check()``, when given, is called between the building steps and slice batches; a Cancel
        raises from it (the background loader's, until :meth:`done_checking`).

        The constructor finds the time extent and the object labels only: the slices and the tracks
        (:attr:`slices`, :attr:`processes`) are built on first use, once (:meth:`build_slice_tables`), so that the
        loader builds them as a step of its own beside the steps that read only the columns (the async spans,
        counters, scheduling tables: :mod:`fxscope.core.trace.prepare`) instead of alone before them."""
        with cols.holding_pages():  # (its reads of the mapped columns keep their pages until it is built)
            self._build(cols, check or _no_check)

    def _build(self, cols: FxtColumns, check) -> None:
        """The constructor's work: the extent and the object labels."""
        self._check = check
        self.cols = cols
        self.strings = cols.strings
        before_read = getattr(cols.ev_ts, "before_read", None)
        if before_read is not None:  # (no compiled SIGBUS guard: a file truncated since the read zero-mapped
            before_read()  # before the steps read the map, several at once; as the slices' first read did)
        ts_all = [a for a in (cols.ev_ts, cols.sched_ts, cols.log_ts) if len(a)]
        #: the complete events' ends when the extent had to read them from the file (kept for the slices, then
        #: dropped); else the extent reads the reader's decoded ends, which the slices' build takes
        self._complete: CompleteEnds | None = None
        ends = decoded_ends(cols)
        if ends is None:
            self._complete = CompleteEnds(cols)
            ends = self._complete.ends
        times = [*ts_all, ends] if ts_all and len(ends) else ts_all or [np.zeros(1, np.int64)]
        self.start_ns = min(int(a.min()) for a in times)  # (each column's extremes: no concatenated copy)
        self.end_ns = max(max(int(a.max()) for a in times), self.start_ns + 1)
        check()
        #: the overview's density, counted while the slices' build holds every event's time (None: not)
        self._density_read: np.ndarray | None = None
        self._density_rows = 0  # (the rows counted in it, and whether a block could not be counted)
        self._density_blocks_missed = False
        self._labels = ObjectLabels(cols)  # object names: one table, one rule (core/trace/objects.py)
        check()
        #: the slices, the tracks and their lane index, built once on first use (:meth:`build_slice_tables`)
        self._slice_tables: BuiltOnce[tuple[SliceTable, list[ProcessGroup], LaneIndex]] = BuiltOnce()
        #: the parametrised tables (density per bin count, scheduling pyramids per kind), built on first use
        self._memo: dict[str, object] = {}
        #: the search index, built once even when a background build and a search ask for it together
        self._search_index: BuiltOnce[ArgStringIndex] = BuiltOnce()
        #: the flow links and the Info tab's statistics: a large trace's window builds them in a background
        #: thread after its first frame (:mod:`fxscope.app.deferred_tables`), and a click asking meanwhile
        #: waits for that build rather than starting its own
        self._flows: BuiltOnce[FlowTable] = BuiltOnce()
        self._stats: BuiltOnce[list[Stat]] = BuiltOnce()

    # ------------------------------------------------------------------ the slices and tracks
    @property
    def slices(self) -> SliceTable:
        """The thread slices, sorted by (thread, start) (:func:`~fxscope.core.trace.slices.build_slices`; built
        on first use, once: see :meth:`build_slice_tables`)."""
        return self.build_slice_tables()[0]

    @property
    def processes(self) -> list[ProcessGroup]:
        """The thread tracks grouped by process, in pid then tid order (built with :attr:`slices`)."""
        return self.build_slice_tables()[1]

    @property
    def lanes(self) -> LaneIndex:
        """The tracks' per-depth rows (their memory is the model's), built when first read."""
        return self.build_slice_tables()[2]

    @property
    def slices_ready(self) -> bool:
        """:attr:`slices` returns without building or waiting."""
        return self._slice_tables.built

    def build_slice_tables(self) -> tuple[SliceTable, list[ProcessGroup], LaneIndex]:
        """Build the slices, the tracks and their lane index (once: a build in progress in another thread is
        waited for; ``check()`` of the constructor between its batches may raise to cancel it, which leaves
        them unbuilt). The loader's step ``slices``: the matching of every thread's duration events (0.7-0.9 s
        at 30M events) runs beside the steps that read only the columns and the extent."""
        return self._slice_tables.get(self._build_slice_tables)

    def _build_slice_tables(self) -> tuple[SliceTable, list[ProcessGroup], LaneIndex]:
        cols = self.cols
        if self._complete is None:  # (kept until the build succeeds: a cancelled one's retry reads them again)
            self._complete = CompleteEnds(cols)
        complete = self._complete
        self._density_read, self._density_rows, self._density_blocks_missed = None, 0, False  # (counted anew)
        with cols.holding_pages():  # (the pages its passes over the mapped times map kept until it is built)
            slices = build_slices(cols, trace_end=self.end_ns, check=self._check, complete=complete,
                                  times_seen=self._count_density)  # fmt: skip
        self._complete = None  # (12 bytes a complete event: no longer needed)
        del complete
        self._check()
        lanes = LaneIndex(slices)
        return slices, self._build_tracks(slices, lanes), lanes

    def check(self) -> None:
        """Between blocks of a table's building: raises when the load building this model was cancelled
        (the ``check`` given to the constructor; a no-op once the loader is done with it)."""
        self._check()

    def done_checking(self) -> None:
        """The model is built: later tables (built on the UI thread, on first use) no longer check."""
        self._check = _no_check

    # ------------------------------------------------------------------ construction
    def thread_name(self, thread: int) -> str:
        """The label of thread-table row ``thread`` (see :meth:`ObjectLabels.thread_label`)."""
        return self._labels.thread_label(int(self.cols.threads_tid[thread]) if thread >= 0 else 0)

    def process_name(self, pid: int) -> str:
        """The label of process koid ``pid`` (see :meth:`ObjectLabels.process_label`)."""
        return self._labels.process_label(pid)

    def _build_tracks(self, s: SliceTable, lanes: LaneIndex) -> list[ProcessGroup]:
        groups: dict[int, list[ThreadTrack]] = {}
        starts = sorted_run_starts(s.thread)  # (the table is sorted by thread: a few reads a track)
        bounds = np.r_[starts, len(s)].tolist()
        max_depth = np.maximum.reduceat(s.depth, starts).tolist() if len(s) else []
        for lo, hi, top in zip(bounds[:-1], bounds[1:], max_depth, strict=True):
            thread = int(s.thread[lo])
            pid = int(self.cols.threads_pid[thread]) if thread >= 0 else 0
            tid = int(self.cols.threads_tid[thread]) if thread >= 0 else 0
            name = self.thread_name(thread)
            track = ThreadTrack(thread, pid, tid, name, lo, hi, int(top), lanes)
            groups.setdefault(pid, []).append(track)
        return [
            ProcessGroup(pid, self.process_name(pid), sorted(tracks, key=lambda t: t.tid))
            for pid, tracks in sorted(groups.items())
        ]

    @property
    def tracks(self) -> list[ThreadTrack]:
        return [t for group in self.processes for t in group.tracks]

    # ------------------------------------------------------------------ queries
    @once_property
    def async_spans(self) -> AsyncTable:
        """Async spans laid out in lanes per process (built on first use)."""
        from fxscope.core.trace.async_spans import build_async

        return build_async(self.cols, self.start_ns, self.end_ns, check=self._check)

    @once_property
    def async_pyramid(self) -> tuple[SlicePyramid, dict[int, int]]:
        """Per-pixel summaries of the async lanes, and each process's first lane number in them."""
        from fxscope.core.trace.lod import SlicePyramid

        t = self.async_spans
        self._check()
        bases: dict[int, int] = {}
        base = 0
        for pid, lanes in t.tracks():
            bases[pid] = base
            base += lanes
        # the table is sorted by pid, each process's rows one run: its base added run by run (no sort of the
        # pids, nor a gather of them)
        base_of_run = np.array([bases[int(p)] for p in t.pids.tolist()], np.int32)
        lane = np.repeat(base_of_run, np.diff(t.pid_start)) if len(t) else np.zeros(0, np.int32)
        lane += t.lane
        # the rows by (lane, start) are the rows in order: the table's order is (pid, lane, start), the bases
        # ascend with the pids (no sort, nor the check a sort makes, of every span)
        order = np.arange(len(t), dtype=np.int32 if len(t) < 1 << 31 else np.int64)
        pyramid = SlicePyramid(t.start, Difference(t.end, t.start), lane, base, self.start_ns,
                               self.end_ns - self.start_ns, check=self._check, order=order)  # fmt: skip
        return pyramid, bases

    def _memoized(self, name: str, build):
        """The parametrised table ``name``, built by ``build()`` on first use (the views ask only for what
        they show; the unparametrised tables are ``once_property``)."""
        table = self._memo.get(name)
        if table is None:  # (built once across threads, as the once_property tables)
            cell = self._memo.setdefault(f"_once_{name}", BuiltOnce())
            table = self._memo[name] = cell.get(build)
        return table

    @once_property
    def logs(self) -> LogTable:
        """The log records in time order (:class:`fxscope.core.trace.logs.LogTable`), one table for the log panel
        and the timeline's log lanes, so that a row means the same record in both."""
        from fxscope.core.trace.logs import (
            LogTable,  # (it brings the symbolizer: imported when logs are shown)
        )

        return LogTable(self.cols)

    @once_property
    def search_index(self) -> ArgStringIndex:
        """The argument-string index of :func:`fxscope.core.trace.query.search`, built on first use (not by the
        load: its temporaries would add to the load's peak memory). The timeline builds it in a background
        thread (:meth:`build_search_index`) and searches once it is :attr:`search_index_ready`; a caller
        asking while that build runs waits for it rather than building it again."""
        return self.build_search_index(self._check)

    @property
    def search_index_ready(self) -> bool:
        """The search index is built: :attr:`search_index` returns without building or waiting."""
        return self._search_index.built

    def build_search_index(self, check) -> ArgStringIndex:
        """Build the search index (once: a build in progress in another thread is waited for); ``check()`` is
        called between its batches and may raise to cancel it, which leaves it unbuilt."""
        return self._search_index.get(
            lambda: build_arg_string_index(self.slices, self.cols, self.strings, check=check)
        )

    @property
    def stats(self) -> list[Stat]:
        """:func:`fxscope.core.trace.stats.trace_stats` of this model, computed once (the Info tab's rows)."""
        from fxscope.core.trace.stats import trace_stats

        return self._stats.get(lambda: trace_stats(self))

    @property
    def stats_ready(self) -> bool:
        """:attr:`stats` returns without building or waiting."""
        return self._stats.built

    def density(self, bins: int = 1000) -> np.ndarray:
        """Events per bin across the whole trace (the overview strip); int64, ``bins`` long."""
        return self._memoized(f"density{bins}", lambda: self._density(bins))

    def _count_density(self, ts: np.ndarray) -> None:
        """Count :data:`DENSITY_BINS` bins of ``ts`` (a block of every event's times, int64: the slices' build
        calls it block by block, each row once, with the times it read from the mapped file, ~0.1 s at 10M
        events to read again for the density alone) for :meth:`density`. The same kernel and scale as
        :meth:`_density`; the blocks' counts add up."""
        kernels = compiled.slice_kernels
        if kernels is None or not compiled.plain(ts, np.int64):
            self._density_blocks_missed = True
            return
        if self._density_read is None:
            self._density_read = np.zeros(DENSITY_BINS, np.int64)
        kernels.density(ts, self.start_ns, DENSITY_BINS / max(self.end_ns - self.start_ns, 1), self._density_read)
        self._density_rows += len(ts)

    def _density(self, bins: int) -> np.ndarray:
        if (bins == DENSITY_BINS and self._density_read is not None and not self._density_blocks_missed
                and self._density_rows == len(self.cols.ev_ts)):  # (counted as the model was built)  # fmt: skip
            counts, self._density_read = self._density_read, None
            return counts
        span = max(self.end_ns - self.start_ns, 1)
        ts = self.cols.ev_ts
        counts = np.zeros(bins, np.int64)
        kernels = compiled.slice_kernels
        if kernels is not None and compiled.plain(ts, np.int64) and bins >= 1:  # one pass, no temporaries
            kernels.density(ts, self.start_ns, bins / span, counts)
            return counts
        if kernels is not None and isinstance(ts, ColumnView) and ts.dtype == np.int64 and bins >= 1:
            for a in range(0, len(ts), 1 << 20):  # (times read from the file: a block at a time, counts added up)
                kernels.density(ts[a : a + (1 << 20)], self.start_ns, bins / span, counts)
            return counts
        for a in range(0, len(ts), 1 << 20):  # in blocks: no full-size temporaries, short GIL-holding calls
            # in float: a corrupt timestamp can make the span ~2**63 ns, and (ts - start) * bins overflow
            part = ((ts[a : a + (1 << 20)] - self.start_ns) * (bins / span)).astype(np.int64).clip(0, bins - 1)
            counts += np.bincount(part, minlength=bins)
        return counts

    @once_property
    def counters(self) -> CounterSet:
        """Counter series."""
        from fxscope.core.trace.counters import build_counters

        return build_counters(self.cols, check=self._check)

    @property
    def objects(self) -> ObjectLabels:
        """Labels of kernel and userspace objects, for koid and pointer arguments."""
        return self._labels

    @once_property
    def sched(self) -> SchedTables:
        """CPU slices, thread states and wakeups from the scheduling records."""
        from fxscope.core.trace.sched import build_sched

        return build_sched(self.cols, self.end_ns, self.objects)

    @once_property
    def instants(self) -> InstantTable:
        """Instant events by thread and time."""
        from fxscope.core.trace.instants import build_instants

        return build_instants(self.cols)

    @property
    def flows(self) -> FlowTable:
        """Flow links between slices (built on first use)."""
        return self.build_flow_table(self._check)

    @property
    def flows_ready(self) -> bool:
        """:attr:`flows` returns without building or waiting."""
        return self._flows.built

    def build_flow_table(self, check) -> FlowTable:
        """Build :attr:`flows` (once: a build in progress in another thread is waited for); ``check()`` may
        raise to cancel it, which leaves it unbuilt."""
        from fxscope.core.trace.flows import build_flows

        return self._flows.get(lambda: build_flows(self.cols, self.slices, check=check))

    @once_property
    def pyramid(self) -> SlicePyramid:
        """Precomputed per-pixel summaries of every (thread, depth) lane (built on first use)."""
        from fxscope.core.trace.lod import SlicePyramid

        s = self.slices
        lane = np.zeros(len(s), np.int32)
        base = 0
        order = []  # the rows by (lane, start): each track's rows by (depth, start), tracks in lane order
        for track in self.tracks:
            track.lane_base = base
            lane[track.lo : track.hi] = s.depth[track.lo : track.hi]
            lane[track.lo : track.hi] += base  # (in int32: past 65,536 lanes a uint16 sum would wrap or raise)
            base += track.max_depth + 1
            order.append(self.lanes.get().thread_rows[track.thread])
        lanes = self.lanes.get()
        threads = [track.thread for track in self.tracks]
        if threads == sorted(threads):  # tracks in thread order (the usual): the lanes' rows are that order
            by_lane = lanes.rows
        else:
            by_lane = np.concatenate(order) if order else np.zeros(0, np.int32)
        return SlicePyramid(s.ts, s.dur, lane, base, self.start_ns, self.end_ns - self.start_ns,
                            check=self._check, order=by_lane)  # fmt: skip

    def sched_pyramid(self, which: str) -> tuple[SlicePyramid, RowLanes]:
        """Per-pixel summaries of the CPU lanes (``"cpu"``) or the thread-state strips (``"state"``), and
        each row's lane in them (a CPU's, or a thread's, rank). A system trace can hold millions of context
        switches: zoomed out, a lane then costs about one entry per pixel, as the slice lanes do."""

        from fxscope.core.trace.lod import SlicePyramid

        def build() -> tuple[SlicePyramid, RowLanes]:
            table = self.sched.cpu_slices if which == "cpu" else self.sched.thread_states
            key = table.cpu if which == "cpu" else table.tid  # the tables are sorted by it
            lane = np.zeros(len(key), np.int32)
            if len(key):
                np.cumsum(key[1:] != key[:-1], out=lane[1:])
            n_lanes = int(lane[-1]) + 1 if len(lane) else 0
            pyramid = SlicePyramid(table.start, Difference(table.end, table.start), lane, n_lanes, self.start_ns,
                                   self.end_ns - self.start_ns, check=self._check,
                                   order=identity_if_sorted(lane, table.start))  # (sorted by key, start)  # fmt: skip
            return pyramid, RowLanes(segment_starts(key))

        return self._memoized(f"sched_pyramid_{which}", build)

    def visible(self, track: ThreadTrack, t0: int, t1: int, ns_per_px: float) -> VisibleSlices:
        """Slices of ``track`` overlapping [t0, t1), with slices under one pixel merged per pixel bucket.

        Like Perfetto's per-depth summaries, a bucket keeps its longest slice (for the colour and the click)
        and the number of slices it stands for, so a frame draws at most ~width boxes per depth whatever the
        zoom level. Zoomed out, the summaries come precomputed from :attr:`pyramid`; zoomed in past its
        finest level, the few slices in the window are merged here.
        """
        level = self.pyramid.level_for(ns_per_px) if len(self.slices) else None
        if level is not None:
            rows, depth, count, start, end = self.pyramid.query_lanes(
                level, track.lane_base, track.max_depth + 1, t0, t1
            )
            return VisibleSlices(rows, depth.astype(np.uint16), count, start, end)
        s = self.slices
        out_rows, out_depth, out_count, out_start, out_end = [], [], [], [], []
        bucket = max(ns_per_px, 1.0)
        spans = []
        t1_row = track.lo + int(np.searchsorted(s.ts[track.lo : track.hi], t1, side="left"))
        for d, rows in enumerate(track.by_depth):
            if len(rows) == 0:
                spans.append((0, 0))
                continue
            # first row whose running max end exceeds t0, last row starting before t1 (the thread's rows
            # are sorted by start, so t1 is found there and mapped to this depth's rows: no gather of starts)
            a = int(np.searchsorted(track.end_max[d], t0, side="right"))
            # in the rows' own dtype (int32): a Python int makes numpy convert the whole depth's rows first
            spans.append((a, int(np.searchsorted(rows, rows.dtype.type(t1_row), side="left"))))
        from fxscope.core.trace.lod import merged_per_pixel

        merged = merged_per_pixel(self.pyramid.query_columns(), track.by_depth, spans, t0, bucket)
        if merged is not None:
            return VisibleSlices(*merged)
        for d, (rows, (a, b)) in enumerate(zip(track.by_depth, spans, strict=True)):
            if b <= a:
                continue
            r = rows[a:b]
            st = s.ts[r]
            en = st + s.dur[r]
            wide = (en - st) >= bucket
            key = np.floor((st - t0) / bucket).astype(np.int64)
            narrow = ~wide
            if np.any(narrow):
                nk = key[narrow]  # non-decreasing: rows of a depth are sorted by start
                nr = r[narrow]
                ndur = s.dur[nr]
                # longest slice per bucket without sorting: group maxima, then each group's first maximum
                change = np.empty(len(nk), bool)  # run starts (np.r_ is slow for a per-frame path)
                change[0] = True
                np.not_equal(nk[1:], nk[:-1], out=change[1:])
                starts = np.flatnonzero(change)
                counts = np.diff(np.append(starts, len(nk)))
                longest = np.maximum.reduceat(ndur, starts)
                cand = np.where(ndur == np.repeat(longest, counts), np.arange(len(nk)), len(nk))
                pick = np.minimum.reduceat(cand, starts)
                keep_rows = nr[pick]
                b_start = t0 + nk[starts] * bucket
                out_rows.append(keep_rows)
                out_count.append(counts)
                out_start.append(b_start.astype(np.int64))
                out_end.append((b_start + bucket).astype(np.int64))
                out_depth.append(np.full(len(keep_rows), d, np.uint16))
            if np.any(wide):
                wr = r[wide]
                out_rows.append(wr)
                out_count.append(np.ones(len(wr), np.int64))
                out_start.append(st[wide])
                out_end.append(en[wide])
                out_depth.append(np.full(len(wr), d, np.uint16))
        if not out_rows:
            z = np.zeros(0, np.int64)
            return VisibleSlices(z, np.zeros(0, np.uint16), z, z, z)
        return VisibleSlices(
            np.concatenate(out_rows),
            np.concatenate(out_depth),
            np.concatenate(out_count),
            np.concatenate(out_start),
            np.concatenate(out_end),
        )

    def slice_at(self, track: ThreadTrack, depth: int, t: int) -> int:
        """Row of the slice of ``track`` at ``depth`` covering time ``t``, or -1."""
        if depth < 0 or depth >= len(track.by_depth):
            return -1
        rows = track.by_depth[depth]
        i = int(np.searchsorted(self.slices.ts[rows], t, side="right")) - 1
        if i < 0:
            return -1
        row = int(rows[i])
        return row if t < self.slices.ts[row] + max(int(self.slices.dur[row]), 1) else -1

    def slice_details(self, row: int) -> dict[str, object]:
        """What the details panel shows for a slice: names resolved, times in ns, arguments decoded."""
        s = self.slices
        ev = int(s.event[row])
        thread = int(s.thread[row])
        pid = int(self.cols.threads_pid[thread]) if thread >= 0 else 0
        args = []
        try:  # values as the user reads them: koids and pointers labelled with their objects' names
            args = [(a.name, self.objects.label_arg(a, pid)) for a in self.cols.event_args(ev)]
        except Exception as exc:  # noqa: BLE001 - a corrupt argument block must not break the panel
            args = [("<arguments unreadable>", str(exc))]
        return {
            "name": self._str(int(s.name[row])),
            "category": self._str(int(s.category[row])),
            "thread": self.thread_name(thread),
            "process": self.process_name(int(self.cols.threads_pid[thread])) if thread >= 0 else "",
            "start_ns": int(s.ts[row]),
            "duration_ns": int(s.dur[row]),
            "self_ns": int(s.self_dur_of([row])[0]),
            "depth": int(s.depth[row]),
            "flags": int(s.flags[row]),
            "args": args,
        }

    def _str(self, index: int) -> str:
        return self.strings[index] if 0 <= index < len(self.strings) else "<unresolved>"

    def name_of(self, row: int) -> str:
        return self._str(int(self.slices.name[row]))
