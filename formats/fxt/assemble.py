"""The decoder: frames the records, runs each record family's decoder in blocks, assembles the columns.

Why blocks: records are decoded :attr:`Decoder.BLOCK_RECORDS` at a time so the temporaries stay
cache-sized, and each block's file pages are dropped from the resident set (``madvise``) once decoded.
Memory: the output columns take 17 bytes per event (the contract's dtypes; what follows from a record's
header, its time and its data word are read from the mapped file when asked) plus 7 bytes per record while
reading. The record families live in their own modules, combined here as mixins of one
:class:`Decoder` (they share its words, tables and diagnostics): control and descriptive records
(:mod:`~fxscope.formats.fxt.records_control`), events (:mod:`~fxscope.formats.fxt.records_events`), logs
(:mod:`~fxscope.formats.fxt.records_log`), scheduling (:mod:`~fxscope.formats.fxt.records_sched`), and the shared
vectorised steps (:mod:`~fxscope.formats.fxt.bulk_resolve`).

Two cores: a large file's read keeps the main thread on what must run in file order (control records,
string and thread resolution, the columns' stores) and gives the rest to worker threads, none of which
changes what is read: every other framing super-chunk framed from a guessed start
(:class:`~fxscope.formats.fxt.framing._Speculation`), the next event block's compiled pass (its fields, times
and data words: ``EventRecords._events_ahead``, one call with the GIL released, so that the two threads do not
pass the GIL back and forth), and the pages about to be touched faulted in
(:mod:`~fxscope.formats.fxt.page_ahead`). A worker that has not started a job by the time the main thread
needs it (another process holds the second core) is not waited for: the main thread does it itself.
"""

from __future__ import annotations

import itertools
import mmap
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ClassVar

import numpy as np

from fxscope.formats.fxt import fields as F
from fxscope.formats.fxt.bulk_resolve import BulkResolve
from fxscope.formats.fxt.coded_column import coded
from fxscope.formats.fxt.columns import Blob, FxtColumns, KernelObject, UserspaceObject
from fxscope.formats.fxt.diagnostics import Diagnostics
from fxscope.formats.fxt.event_data import EventData
from fxscope.formats.fxt.event_times import EventTimes
from fxscope.formats.fxt.fields import RECORD_TYPE_NAMES, record_size
from fxscope.formats.fxt.framing import PADDING, split_records
from fxscope.formats.fxt.frequent_codes import frequent_coded
from fxscope.formats.fxt.lazy_args import ArgDecoder
from fxscope.formats.fxt.mapped_column import PageHold
from fxscope.formats.fxt.page_ahead import PageAhead
from fxscope.formats.fxt.records_control import ControlRecords
from fxscope.formats.fxt.records_events import EventRecords
from fxscope.formats.fxt.records_log import LogRecords
from fxscope.formats.fxt.records_sched import SCHED_COLUMNS, SchedRecords, narrow_sched_columns
from fxscope.formats.fxt.tables import STRING_KEYS, THREAD_KEYS, Lookup, ProviderTables

#: the log columns as the reader fills them ("pos": word index of the record)
LOG_COLUMNS = {"pos": np.int64, "ts": np.int64, "thread": np.int32, "message": np.int32}

_U = np.uint64
#: madvise advice that maps a range's pages at once (Linux 5.14+; the mmap module of Python 3.11 lacks it)
_MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)


class Decoder(ControlRecords, EventRecords, LogRecords, SchedRecords, BulkResolve):
    """One read of one file: its words, the provider tables, the warnings, and the decoded columns."""

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
        self._first_event_of: dict[int, int] = {}  # provider index -> word of its first event record
        #: (record words, argument counts) of the events whose arguments ended early (size-0 argument)
        self.nargs_cut: list[tuple[np.ndarray, np.ndarray]] = []
        self._unresolved_str: set[tuple[int, int]] = set()
        self._unresolved_thr: set[tuple[int, int]] = set()
        self.pages = PageAhead(None, enabled=False)  # (run's, once it knows the map)
        self.parallel = False

    # ------------------------------------------------------------------ framing
    def _frame(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Event records' starts, and the other records' starts and types (word indices, ascending), after
        the size-0 / padding / truncation rules."""
        w, n, diag = self.w, self.n, self.diag
        # Framing reads the headers while each super-chunk's pages are fresh, and drops those pages as it
        # goes: file pages and per-record arrays never add up.
        ev, other, types, bad_at = split_records(
            w, tick=lambda f: self.progress(0.05 * f), done=self._block_done, ahead=self._frame_ahead,
            fill_ahead=self.pages.fill, parallel=self.parallel, release_ahead=self.pages.release,
        )
        if n >= 1 << 31:  # (uint32 below 16 GiB: see framing)
            ev, other = ev.astype(np.int64, copy=False), other.astype(np.int64, copy=False)
        if bad_at >= 0:
            diag.warn("size0", bad_at * 8, "Unexpected record of size 0: decoding stops here")
        pad = np.flatnonzero(types == PADDING)
        if len(pad):
            diag.warn_many("padding", other[pad].astype(np.int64) * 8, "zero word skipped as padding")
            keep = types != PADDING
            other, types = other[keep], types[keep]
        tail = self.nbytes - n * 8
        if len(ev) or len(other):
            last_ev = len(ev) and (not len(other) or ev[-1] > other[-1])
            last = int(ev[-1] if last_ev else other[-1])
            size = record_size(int(w[last]))
            if last + size > n:
                missing = (last + size) * 8 - self.nbytes
                diag.warn("truncated", last * 8, f"truncated final record: {missing} bytes missing")
                if last_ev:
                    ev = ev[:-1]
                else:
                    other, types = other[:-1], types[:-1]
                tail = 0
        if tail:
            diag.warn(
                "truncated", n * 8, f"file length is not a multiple of 8: {tail} trailing bytes ignored"
            )
        return ev, other, types

    # ------------------------------------------------------------------ assembly
    #: records decoded per vectorized block: bounds the temporaries and lets file pages go early
    BLOCK_RECORDS = 1 << 16
    #: file words a block of sparse records may span (8 MiB)
    SPAN_WORDS = 1 << 20

    #: the stored event columns, 17 bytes per event (11 once the code columns are narrowed to int16, see
    #: :func:`narrowest_codes`; see FxtColumns for the derived ones: the provider
    #: follows from the record's position, argument counts and offsets from its header, the time is the
    #: record's second word and the data word its last, read when asked:
    #: :mod:`~fxscope.formats.fxt.event_times`, :mod:`~fxscope.formats.fxt.event_data`); "pos" is
    #: uint32 (word index) when the file is under 16 GiB, else int64 (set in ``run``)
    _EV_COLUMNS: ClassVar[dict] = {
        "kind": np.uint8, "thread": np.int32, "category": np.int32,
        "name": np.int32, "pos": np.int64,
    }  # fmt: skip

    def _codes_fit_int16(self) -> bool:
        """Whether every event code decoded so far (and the thread table's remapping of them, see
        :meth:`_thread_table`) fits int16: string ids below the string table's size, thread codes between
        -2 - (inline pairs) and the registered threads."""
        limit = np.iinfo(np.int16).max
        return len(self.t.strings) <= limit and len(self.t.thr_key) + self.n_inline + 1 < limit

    def _populate(self, first_word: int, end_word: int) -> None:
        """Map the file pages of words ``[first_word, end_word)`` in one call (MADV_POPULATE_READ, Linux 5.14+)
        rather than a page fault every 64 KiB as the block's gathers reach them; ignored where unsupported."""
        if self.mm is None or not self._can_populate or not hasattr(self.mm, "madvise"):
            return
        start = (first_word * 8) // mmap.PAGESIZE * mmap.PAGESIZE
        length = min(end_word * 8, self.nbytes) - start
        if length > 0:
            try:
                self.mm.madvise(_MADV_POPULATE_READ, start, length)
            except (OSError, ValueError):
                self._can_populate = False

    _can_populate = True

    def _frame_ahead(self, first_word: int, end_word: int) -> None:
        """Before framing words ``[first_word, end_word)`` (a super-chunk): the file pages of the next
        :data:`AHEAD_BLOCKS` super-chunks mapped on the page worker meanwhile, queued every that many
        super-chunks (a wake of the worker costs the reader's thread too); without it this one's now."""
        if not self.pages.enabled:
            self._populate(first_word, end_word)
            return
        span = end_word - first_word
        k = first_word // span if span else 1
        if k % self.AHEAD_BLOCKS == 0:
            batch = self.AHEAD_BLOCKS * span
            if k == 0:
                self.pages.map_file(0, batch * 8)
            self.pages.map_file((first_word + batch) * 8, (first_word + 2 * batch) * 8)

    #: blocks (and framing super-chunks) whose pages are queued to the page worker at once
    AHEAD_BLOCKS = 8

    def _block_ahead(self, starts: np.ndarray, a: int, b: int, out: dict[str, np.ndarray], rows: slice) -> None:
        """The file pages of the records ``starts[a:b]`` (blocks ahead of the one decoded) and the output
        ``rows`` of the columns ``out`` queued to the page worker, so that their first touch costs the
        other core (see :mod:`~fxscope.formats.fxt.page_ahead`)."""
        if not self.pages.enabled:
            return
        if b > a:
            self.pages.map_file(int(starts[a]) * 8, (int(starts[b - 1]) + 1) * 8)
        for col in out.values():
            self.pages.fill(col[rows])

    def _block_done(self, first_word: int, end_word: int) -> None:
        """A block's file pages are done with: released (and no longer mapped ahead)."""
        self.pages.passed(end_word * 8)
        self._release(first_word, end_word)

    def _release(self, first_word: int, end_word: int) -> None:
        """Drop mapped file pages we are done with from our resident set (they stay in the page cache)."""
        if self.mm is not None and not _drop_pages(self.mm, self.nbytes, first_word, end_word):
            self.mm = None

    def run(self) -> FxtColumns:
        # A file of more than a few blocks is read on two cores: its pages are faulted in ahead on a worker
        # thread (see _block_ahead), every other framing super-chunk and the next event block are framed and
        # prepared on others (see _frame, _run)
        self.parallel = self.n >= self.PAGE_AHEAD_WORDS
        self.pages = PageAhead(self.raw if self.mm is not None else None, enabled=self.parallel)
        self._scans: ThreadPoolExecutor | None = None
        try:
            return self._run()
        finally:
            self.pages.close()
            if self._scans is not None:  # (a Cancel: the scan under way ends, the queued one is dropped)
                self._scans.shutdown(cancel_futures=True)

    #: files from this many words on are read with worker threads (8 MiB)
    PAGE_AHEAD_WORDS = 1 << 20

    def _run(self) -> FxtColumns:
        # progress (and with it a Cancel) between blocks of every phase, from the start: a 10M-event
        # trace's framing alone takes seconds
        self.progress(0.0)
        ev_pos, other, types = self._frame()
        counts = np.zeros(16, np.int64)
        self.progress(0.05)
        for a in range(0, len(types), self.BLOCK_RECORDS):  # (bincount widens its input to intp)
            counts += np.bincount(types[a : a + self.BLOCK_RECORDS], minlength=16)
        counts[F.EVENT_RECORD] = len(ev_pos)
        record_counts = {name: int(counts[t]) for t, name in RECORD_TYPE_NAMES.items()}
        record_counts["unknown"] = int(counts[10:15].sum())
        self.progress(0.06)
        self._control(other, types)
        self.progress(0.07)
        # Each page fault maps its neighbours too (fault-around, 64 KiB): the scattered control records
        # made most of the file resident again. Drop it; the blocks below fault in and release in turn.
        self.pages.clear()
        self._release(0, self.n)
        t = self.t
        self._freeze_segments()
        self.str_lookup = Lookup(
            t.str_key, t.str_pos, np.asarray(t.str_gid, np.int64), len(t.gen_provider) * STRING_KEYS
        )
        self.thr_lookup = Lookup(
            t.thr_key, t.thr_pos, np.arange(len(t.thr_key), dtype=np.int64), len(t.gen_provider) * THREAD_KEYS
        )
        n_ev = int(counts[F.EVENT_RECORD])
        step = self.BLOCK_RECORDS
        # The events' record column is the event records' starts as framed (uint32 below 16 GiB, see
        # _frame), compacted in place as blocks are decoded; log and scheduling starts are split off, so
        # the other records' starts and types are gone before the event columns fill up.
        ev_dtypes = {k: dt for k, dt in self._EV_COLUMNS.items() if k != "pos"}
        if self._codes_fit_int16():  # (the usual trace: no int32 code columns to narrow at the end)
            ev_dtypes.update(dict.fromkeys(_CODE_KEYS, np.int16))
        ev = {k: np.empty(n_ev, dt) for k, dt in ev_dtypes.items()}
        ev["pos"] = ev_pos
        log_starts, sched_starts = other[types == F.LOG_RECORD], other[types == F.SCHED_RECORD]
        del other, types
        fill = 0
        odd_rows: list[np.ndarray] = []  # events whose data word is not their record's last (EventData)
        odd_vals: list[np.ndarray] = []
        complete_end: list[np.ndarray] = []  # FxtColumns.ev_complete_end, a block at a time
        extremes: list[tuple[int, int]] = []  # each block's earliest and latest event time (EventTimes)
        self.progress(0.1)
        batch = self.AHEAD_BLOCKS * step  # (the starts' own pages are the framing's)
        self._block_ahead(ev_pos, 0, min(batch, n_ev), {k: ev[k] for k in ev_dtypes}, slice(0, batch))
        # The next block's compiled pass runs on a worker thread (EventRecords._events_ahead) while this one's
        # strings and threads are resolved and its columns stored; its starts are copied before this block's
        # are compacted over them.
        scans = ThreadPoolExecutor(1, "fxscope-event-scan") if n_ev > step and self.parallel else None
        self._scans = scans
        nxt_sel = ev_pos[:step].astype(np.int64)
        scanned = scans.submit(self._events_ahead, nxt_sel) if scans is not None else None
        for b0 in range(0, n_ev, step):
            self.progress(0.1 + 0.85 * b0 / max(n_ev, 1))
            sel = nxt_sel  # a copy: the column is rewritten at fill <= b0
            this_scan = _done_ahead(scanned)
            if b0 + step < n_ev:
                nxt_sel = ev_pos[b0 + step : b0 + 2 * step].astype(np.int64)
                scanned = scans.submit(self._events_ahead, nxt_sel) if scans is not None else None
            if b0 % batch == 0:  # the batch after this one, while this one decodes
                nxt = b0 + batch
                self._block_ahead(ev_pos, nxt, min(nxt + batch, n_ev), {k: ev[k] for k in ev_dtypes},
                                  slice(nxt, nxt + batch))  # fmt: skip
            if not self.pages.enabled:
                self._populate(int(sel[0]), int(sel[-1]) + 1)
            block = self._events(sel, this_scan)
            del this_scan
            m = len(block["pos"])
            if ev["name"].dtype == np.int16 and not self._codes_fit_int16():  # (rare: many inline strings
                for key in _CODE_KEYS:  # or threads) the codes so far in int32, and the rest
                    ev[key] = ev[key].astype(np.int32)
            for key in self._EV_COLUMNS:
                ev[key][fill : fill + m] = block[key]
            self._note_providers(block["provider"], block["pos"])
            if len(block["odd_rows"]):
                odd_rows.append(block["odd_rows"] + fill)
                odd_vals.append(block["odd_vals"])
            complete_end.append(block["complete_end"])
            if block["times"] is not None:
                extremes.append(block["times"])
            fill += m
            del block
            self._block_done(int(sel[0]), int(sel[-1]) + 1)
        if scans is not None:
            scans.shutdown()
        lg = self._columns(log_starts, self._logs, LOG_COLUMNS)
        sc = self._columns(sched_starts, self._sched, SCHED_COLUMNS, narrow_sched_columns(self.nbytes))
        if fill < n_ev:
            ev = {key: v[:fill].copy() for key, v in ev.items()}
        threads_pid, threads_tid = self._thread_table([ev["thread"], lg["thread"]])
        # the event code columns in int16 when the file's tables allow (2 bytes an event each, not 4)
        ev["thread"] = narrowest_codes(ev["thread"], len(threads_pid))  # (no copy when already int16)
        ev["category"] = narrowest_codes(ev["category"], len(t.strings))
        ev["name"] = narrowest_codes(ev["name"], len(t.strings))
        for key in _CODE_KEYS:  # one byte a row where a column holds at most 256 distinct codes (categories, threads)
            ev[key] = coded(ev[key])
        if isinstance(ev["name"], np.ndarray):  # (too many names: their 255 most frequent coded, when they cover it)
            frequent = frequent_coded(ev["name"])
            if frequent is not None:
                ev["name"] = frequent
        self._warn_missing_init()
        decoder = ArgDecoder(self.w, self.raw, t, self.str_lookup)
        # the columns read from the mapped file, sharing one hold on its pages (FxtColumns.holding_pages)
        release = _page_release(self.mm, self.nbytes)
        ev_ts = EventTimes(self.w, ev["pos"], self._seg_pos, self._seg_tps, release=release)
        if extremes:
            ev_ts.set_extremes(min(lo for lo, _ in extremes), max(hi for _, hi in extremes))
        ev_data = EventData(
            self.w, ev["kind"], ev["pos"], self._seg_pos, self._seg_tps,
            np.concatenate(odd_rows) if odd_rows else np.zeros(0, np.int64),
            np.concatenate(odd_vals) if odd_vals else np.zeros(0, np.uint64),
            release=release,
        )  # fmt: skip
        n_words = self.n  # (the closure must not keep the decoder)
        hold = PageHold(None if release is None else lambda: release(0, n_words))
        ev_ts.hold = ev_data.hold = hold
        diag_lines = self.diag.finish()
        return FxtColumns(
            path=self.path,
            big_endian=self.big,
            providers=t.providers,
            strings=t.strings,
            threads_pid=threads_pid,
            threads_tid=threads_tid,
            ev_ts=ev_ts,
            ev_kind=ev["kind"],
            ev_thread=ev["thread"],
            ev_category=ev["category"],
            ev_name=ev["name"],
            ev_data=ev_data,
            ev_word=ev["pos"],
            ev_complete_end=np.concatenate(complete_end) if complete_end else np.zeros(0, np.int64),
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
            ev_nargs_cut=_cuts(self.nargs_cut),
            sched_out_pid=sc["out_pid"],
            sched_in_pid=sc["in_pid"],
            sched_out_prio=sc["out_prio"],
            sched_in_prio=sc["in_prio"],
            sched_args_word=sc["args_word"],
            sched_nargs=sc["nargs"],
            buffer_overflows=self.overflows,
            ticks_per_second=self._provider_tps(),
            arg_decoder=decoder,
            page_hold=hold,
        )

    def _columns(self, starts: np.ndarray, decode, dtypes: dict, narrow: dict | None = None) -> dict[str, np.ndarray]:
        """The columns (``dtypes``) of the records at ``starts``, decoded by ``decode`` a block at a time into
        columns allocated once (no list of blocks concatenated at the end: that held every record twice),
        releasing their file pages. ``narrow``: columns allocated in a narrower unsigned dtype than
        ``dtypes`` says, widened (once, what is filled copied) when a block holds a value past it: the
        scheduling koids and positions, which a narrowing copy after the read made fresh arrays of (at 100M
        events 7 columns of 40-80 MB, their pages faulted in: 0.42 s of the read, 0.04 s at 30M, where
        such arrays come from the allocator's heap).

        Sparse records (logs, scheduling) are spread over the whole file, and one page fault can map a
        whole large page-cache folio: a block therefore also ends after ``SPAN_WORDS`` of file, so that
        what one block maps stays small.
        """
        narrow = narrow or {}
        out = {k: np.empty(len(starts), narrow.get(k, dt)) for k, dt in dtypes.items()}
        if not len(starts):
            return out
        cuts = np.searchsorted(starts, np.arange(int(starts[0]), int(starts[-1]) + 1, self.SPAN_WORDS)[1:])
        bounds = np.union1d(np.r_[0, cuts, len(starts)], np.arange(0, len(starts), self.BLOCK_RECORDS)).tolist()
        self.pages.clear()  # (another pass over the file)
        k, last = self.AHEAD_BLOCKS, len(bounds) - 1
        self._block_ahead(starts, 0, bounds[min(k, last)], out, slice(0, bounds[min(k, last)]))
        fill = 0
        for i, (a, b) in enumerate(itertools.pairwise(bounds)):
            if b > a:
                sel = starts[a:b].astype(np.int64)
                if i % k == 0 and i + k < last:  # the batch after this one, while this one decodes
                    nxt, end = bounds[i + k], bounds[min(i + 2 * k, last)]
                    self._block_ahead(starts, nxt, end, out, slice(nxt, end))
                if not self.pages.enabled:
                    self._populate(int(sel[0]), int(sel[-1]) + 1)
                block = decode(sel)
                m = len(block["ts"])
                for key in dtypes:
                    col = out[key]
                    if key in narrow and col.dtype != dtypes[key] and m and block[key].max() > np.iinfo(col.dtype).max:
                        col = out[key] = _widened(col, fill, dtypes[key])
                    col[fill : fill + m] = block[key]
                fill += m
                del block
                self._block_done(int(sel[0]), int(sel[-1]) + 1)
        if fill < len(starts):  # records dropped (warned)
            out = {key: v[:fill].copy() for key, v in out.items()}
        return out

    def _provider_tps(self) -> list[int]:
        out = [1_000_000_000] * len(self.t.providers)
        for gen, pindex in enumerate(self.t.gen_provider):
            if self.t.gen_has_init[gen]:
                out[pindex] = self.t.gen_tps[gen]
        return out

    def _note_providers(self, provider: np.ndarray, pos: np.ndarray) -> None:
        """Remember the first event record of each provider (for :meth:`_warn_missing_init`): the first row
        of each provider segment the block's records ``pos`` fall in (``provider`` is theirs, from
        :meth:`_segments`), a few segments a block rather than a count over its rows."""
        if not len(pos):
            return
        if provider.strides == (0,):  # one provider (a broadcast, see _segments)
            self._first_event_of.setdefault(int(provider[0]), int(pos[0]))
            return
        sp = self._seg_pos
        lo = int(np.searchsorted(sp, pos[0], side="right")) - 1
        hi = int(np.searchsorted(sp, pos[-1], side="right"))
        bounds = [0, *np.searchsorted(pos, sp[lo + 1 : hi], side="left").tolist(), len(pos)]
        for i, pindex in enumerate(self._seg_prov[lo:hi].tolist()):
            if bounds[i + 1] > bounds[i] and pindex not in self._first_event_of:
                self._first_event_of[pindex] = int(pos[bounds[i]])

    def _warn_missing_init(self) -> None:
        with_init = {self.t.gen_provider[g] for g, has in enumerate(self.t.gen_has_init) if has}
        for pindex, first in sorted(self._first_event_of.items()):
            if pindex not in with_init:
                p = self.t.providers[pindex]
                self.diag.warn(
                    "no initialization",
                    first * 8,
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


def _done_ahead(job: Future | None):
    """What a worker prepared ahead (waiting for it while it runs), or None when there was no job or the
    worker has not started it yet: then the caller does the work itself rather than wait (the worker is
    behind when another process holds the second core; the read then runs at the one core's pace, never
    slower)."""
    if job is None or job.cancel():
        return None
    return job.result()


#: the event code columns (int16 while the tables allow, see Decoder._codes_fit_int16)
_CODE_KEYS = ("thread", "category", "name")


def narrowest_codes(codes: np.ndarray, n_rows: int) -> np.ndarray:
    """``codes`` (int32 rows into a table of ``n_rows``, -1 unresolved) as int16 when the table has fewer
    than 32768 rows (a trace's strings and threads usually do: 6 bytes an event saved over the three event
    code columns), else as they are. Consumers index with them and compare them to -1; none does arithmetic
    on them (widen first: ``astype(np.int64)``)."""
    if n_rows > np.iinfo(np.int16).max:
        return codes.astype(np.int32, copy=False)
    return codes.astype(np.int16, copy=False)


def _drop_pages(mm, nbytes: int, first_word: int, end_word: int) -> bool:
    """``madvise(DONTNEED)`` the mapped pages of words ``[first_word, end_word)``; False when the map
    cannot (no ``madvise`` on this system, or it failed: then stop trying)."""
    if not hasattr(mm, "madvise"):
        return False
    start = (first_word * 8) // mmap.PAGESIZE * mmap.PAGESIZE
    length = min(end_word * 8, nbytes) - start
    if length > 0:
        try:
            mm.madvise(mmap.MADV_DONTNEED, start, length)
        except (OSError, ValueError):
            return False
    return True


def _page_release(mm, nbytes: int):
    """A ``release(first_word, end_word)`` for the columns that read the map later (None without one)."""
    if mm is None or not hasattr(mm, "madvise"):
        return None
    return lambda first_word, end_word: _drop_pages(mm, nbytes, first_word, end_word)


def _cuts(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The (record words, argument counts) pairs of every block, joined (words ascending: file order)."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.uint8)
    return np.concatenate([w for w, _ in parts]), np.concatenate([n for _, n in parts])


def _widened(col: np.ndarray, filled: int, dtype) -> np.ndarray:
    """``col`` (its first ``filled`` values set) as a fresh array of ``dtype``, those values copied."""
    out = np.empty(len(col), dtype)
    out[:filled] = col[:filled]
    return out
