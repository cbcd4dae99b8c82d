"""The FXT reader's output: a columnar, numpy-backed description of one trace archive.

This is the contract between the reader (``formats/fxt/reader.py``) and the trace model
(``core/trace/``). Rows are in file order (the model sorts). There is no Python object per event: every
per-event field is a numpy column of the same length; the few small tables (providers, strings, kernel
objects, blobs) are Python lists.

Conventions
- Timestamps are int64 nanoseconds, converted with the ticks-per-second of the provider that was active
  for the record (1e9 when no initialization record was seen, with a warning).
- ``thread`` columns index ``threads_pid``/``threads_tid`` (one global table of distinct (pid, tid)
  pairs, inline and indexed refs alike); -1 means an unresolved thread reference (a warning was recorded).
- ``name``/``category``/string columns index :attr:`FxtColumns.strings`, one global deduplicated list of
  every string seen (inline or indexed, any provider); -1 means an unresolved string reference.
- ``provider`` columns index :attr:`FxtColumns.providers`.
- Argument blocks are decoded lazily: :meth:`FxtColumns.event_args` (and the like) decode the words at
  ``ev_args_word`` with the string/thread tables that were in force at that record.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from fxscope.formats.fxt import compiled
from fxscope.formats.fxt import fields as F
from fxscope.formats.fxt.args import Arg
from fxscope.formats.fxt.event_data import times_and_data
from fxscope.formats.fxt.fields import column


class EventKind(IntEnum):
    """Event type field of an event record (bits 16..19)."""

    INSTANT = 0
    COUNTER = 1
    DURATION_BEGIN = 2
    DURATION_END = 3
    DURATION_COMPLETE = 4
    ASYNC_BEGIN = 5
    ASYNC_INSTANT = 6
    ASYNC_END = 7
    FLOW_BEGIN = 8
    FLOW_STEP = 9
    FLOW_END = 10


class SchedKind(IntEnum):
    """Row kinds of the scheduling columns."""

    LEGACY_CONTEXT_SWITCH = 0
    CONTEXT_SWITCH = 1
    THREAD_WAKEUP = 2


@dataclass
class Provider:
    id: int
    name: str


@dataclass
class KernelObject:
    """A kernel object record (process, thread, ...): small, so plain Python."""

    koid: int
    obj_type: int  # zx_obj_type_t: 1 = process, 2 = thread, ...
    name: str
    args: list  # decoded arguments (list[Arg])
    provider: int
    offset: int  # byte offset of the record


@dataclass
class UserspaceObject:
    pointer: int
    pid: int
    name: str
    args: list
    provider: int
    offset: int


@dataclass
class Blob:
    name: str
    blob_type: int
    offset: int  # byte offset of the payload in the file
    size: int  # payload bytes
    args: list = field(default_factory=list)  # large blob with metadata only
    ts: int | None = None  # ns, large blob with metadata only
    thread: int = -1
    category: int = -1
    #: None for blob records (type 5); the blob format (0 with metadata, 1 without) for large BLOB records
    large_format: int | None = None


@dataclass
class FxtColumns:
    """Everything the reader found. Field order groups: tables, events, scheduling, logs, diagnostics."""

    path: str
    big_endian: bool
    providers: list[Provider]
    strings: list[str]
    threads_pid: np.ndarray  # uint64, one row per distinct (pid, tid)
    threads_tid: np.ndarray  # uint64

    # --- events (one row per event record, file order) ---
    #: int64 ns. Not stored: an :class:`~fxscope.formats.fxt.event_times.EventTimes` reads the rows asked for
    #: from the mapped file (each record's second word at its provider's tick rate; 8 bytes an event saved).
    #: Index it (``ev_ts[rows]``, a mask, a slice: an int64 array), ``min()``/``max()`` (found once), or
    #: ``np.asarray(ev_ts)`` for the whole column; a reader filled by other means may give an int64 array
    ev_ts: Any
    ev_kind: np.ndarray  # uint8, EventKind
    #: the three code columns are int16 when their table has fewer than 32768 rows (the usual case), else
    #: int32 (decided per file: widen before arithmetic on them); an int16 one holding at most 256 distinct
    #: codes (a trace's categories, often its threads) is a
    #: :class:`~fxscope.formats.fxt.coded_column.CodedColumn`, one byte a row: index it (``col[rows]``, a
    #: mask, a slice) or ``np.asarray(col)`` for an int16 array; it is read-only
    ev_thread: Any  # int16/int32 -> threads_*
    ev_category: Any  # int16/int32 -> strings
    ev_name: Any  # int16/int32 -> strings
    #: uint64 data word: counter id / async correlation id / flow id; for duration-complete events the
    #: end timestamp in ns (as int64 bits); for instants their scope (``ev_scope``); 0 otherwise. Read it
    #: through ``ev_id`` / ``ev_end_ts`` / ``ev_scope``. Not stored: an
    #: :class:`~fxscope.formats.fxt.event_data.EventData` reads the rows asked for from the mapped file
    #: (index it: ``ev_data[rows]`` is a uint64 array; ``np.asarray(ev_data)`` builds the whole column).
    ev_data: Any
    ev_word: np.ndarray  # word index (byte offset / 8) of the record: uint32 below 16 GiB, else int64

    # --- scheduling (one row per scheduling record) ---
    sched_ts: np.ndarray  # int64 ns
    sched_kind: np.ndarray  # uint8, SchedKind
    sched_cpu: np.ndarray  # uint16
    #: the koid columns are uint32 when every koid of the file fits (as a rule), else uint64; the position
    #: columns (sched_offset, sched_args_word) uint32 when the file is under 4 GiB, else int64
    sched_out_tid: np.ndarray  # uint64 koid (outgoing thread; for wakeups: 0)
    sched_in_tid: np.ndarray  # uint64 koid (incoming thread; for wakeups: the woken thread)
    sched_out_state: np.ndarray  # uint8 thread state of the outgoing thread (legacy: from the record)
    sched_waker_tid: np.ndarray  # uint64 koid of the waking thread when an argument names it, else 0
    sched_offset: np.ndarray  # int64 byte offset of the record

    # --- logs ---
    log_ts: np.ndarray  # int64 ns
    log_thread: np.ndarray  # int32 -> threads_*
    log_message: np.ndarray  # int32 -> strings
    log_offset: np.ndarray  # int64

    kernel_objects: list[KernelObject]
    userspace_objects: list[UserspaceObject]
    blobs: list[Blob]

    #: counts by record type name as ``fxscope info --json`` prints them
    record_counts: dict[str, int]
    #: human-readable problems, each naming a byte offset ("offset 0x1a8: ...")
    warnings: list[str]

    # --- additions beyond the original contract (all optional for a consumer) ---
    #: (record words ascending, argument counts) of the events whose argument blocks ended before the count
    #: in their header (an argument of size 0: warned); see :meth:`nargs_of`
    ev_nargs_cut: tuple = field(default_factory=lambda: (np.zeros(0, np.int64), np.zeros(0, np.uint8)))
    #: process koid of each scheduling row's threads (0 when the record carries only tids)
    sched_out_pid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    sched_in_pid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    #: legacy context switch priorities (0 for the other kinds)
    sched_out_prio: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    sched_in_prio: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    #: argument blocks of context-switch/wakeup rows (word index, count; 0 for legacy rows)
    sched_args_word: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    sched_nargs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    #: (provider index, byte offset) of each "buffer filled up, records likely dropped" provider event
    buffer_overflows: list[tuple[int, int]] = field(default_factory=list)
    #: ticks per second of each provider (index as :attr:`providers`), last initialization seen
    ticks_per_second: list[int] = field(default_factory=list)
    #: decodes argument blocks lazily with the tables in force at each record (set by the reader)
    arg_decoder: Any = None
    #: int64 ns end of each complete event, in row order, as the reader decoded them (while their pages
    #: were mapped: ``ev_data`` reads them back from the file, a page fault and two gathers an event).
    #: Handed to the model's build, which takes it (:meth:`take_complete_ends`): 8 bytes a complete event
    #: only until then. None once taken (or from a reader that does not fill it)
    ev_complete_end: np.ndarray | None = None

    #: held while a build reads the mapped columns (:meth:`holding_pages`); None for columns without a map
    page_hold: Any = None
    #: the file's guarded map (:class:`~fxscope.formats.mapped_file.MappedFile`: ``change()`` says whether
    #: the file changed on disk since); None for columns read from bytes
    mapped_file: Any = None

    def holding_pages(self) -> contextlib.AbstractContextManager:
        """``with cols.holding_pages():`` the reads of ``ev_ts``/``ev_data`` keep the file pages they map until
        the block (the last one, when several threads hold) ends, then the map's pages are dropped at once:
        for a build that reads the columns several times (see :mod:`~fxscope.formats.fxt.mapped_column`)."""
        return self.page_hold if self.page_hold is not None else contextlib.nullcontext()

    def segment_rows(self) -> np.ndarray:
        """int64 event rows, ascending, where a provider segment (a provider's section or a new tick rate)
        begins, past row 0: where a trace saved one provider after the other (Fuchsia's one-shot traces: each
        provider's buffer in turn) goes back in time, if anywhere (a build that walks the events in time order
        merges the sections instead of sorting every event)."""
        words = np.asarray(self.arg_decoder.t.seg_pos[1:], np.int64)
        n = len(self.ev_word)
        if not len(words) or not n:
            return np.zeros(0, np.int64)
        starts = self.ev_word
        if isinstance(starts, np.ndarray) and starts.dtype.kind == "u" and words[-1] <= np.iinfo(starts.dtype).max:
            words = words.astype(starts.dtype)  # (else numpy searches an int64 copy of every event's word: 34 ms at 10M)
        rows = np.unique(np.searchsorted(starts, words))
        return rows[(rows > 0) & (rows < n)].astype(np.int64)

    def times_and_data(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(ev_ts[rows], ev_data[rows])``, read from the mapped file in one pass when both are mapped
        (:func:`~fxscope.formats.fxt.event_data.times_and_data`): for the builds that need both of one row set."""
        return times_and_data(self.ev_ts, self.ev_data, rows)

    def take_complete_ends(self) -> np.ndarray | None:
        """:attr:`ev_complete_end`, once: the column is dropped from here (a later caller reads ``ev_data``)."""
        ends, self.ev_complete_end = self.ev_complete_end, None
        return ends

    # The columns below are derived on access (each call builds a new array): storing them would cost
    # 24 more bytes per event, and peak memory while loading must stay within twice the file size.
    @property
    def ev_provider(self) -> np.ndarray:
        """uint16 provider index (into :attr:`providers`) of each event: the provider whose section the
        record is in, found from its position (not stored: 2 bytes an event)."""
        return self.arg_decoder.providers_at(self.ev_word)

    # Argument counts and offsets, and instant scopes, follow from each record's header word (in the mapped
    # file) and are read from it when asked (3 bytes an event not stored).
    def nargs_of(self, rows: np.ndarray) -> np.ndarray:
        """uint8 argument count of event ``rows``: the header's, or fewer where an argument of size 0
        ended the block (the reader warned; later arguments are not decoded)."""
        words = self.ev_word[np.asarray(rows, np.int64)]
        return self._cut_nargs(words, _header_nargs(self.arg_decoder.w[words]))

    def _cut_nargs(self, words: np.ndarray, nargs: np.ndarray) -> np.ndarray:
        """``nargs`` (the headers' counts of the records at ``words``) with the reader's cuts applied."""
        cut_words, cut_nargs = self.ev_nargs_cut
        if len(cut_words) and len(words):
            at = np.minimum(np.searchsorted(cut_words, words), len(cut_words) - 1)
            hit = cut_words[at] == words
            nargs[hit] = cut_nargs[at[hit]]
        return nargs

    def arg_blocks_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(record word, first argument word, end word: int64; argument count: uint8, :meth:`nargs_of`) of
        event ``rows``: the header read once a row (compiled: one pass; else from :meth:`args_skip_of` and
        :meth:`nargs_of`)."""
        rows = np.ascontiguousarray(rows, np.int64)
        w, rec = self.arg_decoder.w, self.ev_word
        scan = compiled.record_scan
        if (
            scan is not None
            and compiled.contiguous_words(w)
            and isinstance(rec, np.ndarray)
            and rec.flags.c_contiguous
            and rec.dtype in (np.uint32, np.int64)
        ):
            record, pos, end = (np.empty(len(rows), np.int64) for _ in range(3))
            nargs = np.empty(len(rows), np.uint8)
            scan.arg_blocks(w, rec, rec.dtype == np.int64, rows, record, pos, end, nargs)
            return record, pos, end, self._cut_nargs(record, nargs)
        record = rec[rows].astype(np.int64)
        pos = record + self.args_skip_of(rows)
        end = record + ((w[record] >> np.uint64(4)) & np.uint64(0xFFF)).astype(np.int64) if len(rows) else record
        return record, pos, end, self.nargs_of(rows)

    def args_skip_of(self, rows: np.ndarray) -> np.ndarray:
        """uint16 words from the record start of event ``rows`` to their first argument header (after the
        timestamp and any inline thread, category and name)."""
        return _header_args_skip(self.arg_decoder.w[self.ev_word[np.asarray(rows, np.int64)]])

    @property
    def ev_nargs(self) -> np.ndarray:
        """uint8 argument count of each event (:meth:`nargs_of` of every row, a block at a time)."""
        return _blockwise(len(self.ev_word), np.uint8, self.nargs_of)

    @property
    def ev_args_skip(self) -> np.ndarray:
        """uint16 words to the first argument header of each event (:meth:`args_skip_of` of every row)."""
        return _blockwise(len(self.ev_word), np.uint16, self.args_skip_of)

    @property
    def ev_scope(self) -> np.ndarray:
        """uint8 scope of instant events (0 thread, 1 process, 2 global; legacy scope word, E1); 0 for other
        kinds (an instant's data word holds it)."""
        return np.where(self.ev_kind == EventKind.INSTANT, np.asarray(self.ev_data), 0).astype(np.uint8)

    @property
    def ev_offset(self) -> np.ndarray:
        """int64 byte offset of each event record."""
        return self.ev_word.astype(np.int64) * 8

    @property
    def ev_args_word(self) -> np.ndarray:
        """int64 word index (byte offset / 8) of each event's first argument header."""
        return self.ev_word.astype(np.int64) + self.ev_args_skip

    @property
    def ev_id(self) -> np.ndarray:
        """uint64 counter id / async correlation id / flow id; 0 for other kinds."""
        no_id = (self.ev_kind == EventKind.DURATION_COMPLETE) | (self.ev_kind == EventKind.INSTANT)
        return np.where(no_id, np.uint64(0), np.asarray(self.ev_data))

    @property
    def ev_end_ts(self) -> np.ndarray:
        """int64 ns end of duration-complete events; -1 for other kinds."""
        return np.where(self.ev_kind == EventKind.DURATION_COMPLETE, np.asarray(self.ev_data).view(np.int64), -1)

    def event_args(self, i: int) -> list[Arg]:
        """Arguments of event row ``i``, resolved with the string table of that record's provider."""
        word = int(self.ev_word[i])
        row = np.array([i], np.int64)
        return self.arg_decoder.args_at(word, word + int(self.args_skip_of(row)[0]), int(self.nargs_of(row)[0]))

    def sched_args(self, i: int) -> list[Arg]:
        """Arguments of scheduling row ``i`` (context switch weights, wakeup ``waker``...)."""
        return self.arg_decoder.args_at(
            int(self.sched_offset[i]) // 8, int(self.sched_args_word[i]), int(self.sched_nargs[i])
        )

    @property
    def n_events(self) -> int:
        return len(self.ev_ts)


def _header_nargs(h: np.ndarray) -> np.ndarray:
    """The argument count field of event headers."""
    return column(h, F.EVENT_NARGS).astype(np.uint8)


def _header_args_skip(h: np.ndarray) -> np.ndarray:
    """Words from an event record's start to its first argument: header and timestamp, then an inline
    thread (two words, thread ref 0), an inline category and name (their streams' words)."""
    skip = 2 + 2 * (column(h, F.EVENT_THREAD_REF) == 0).astype(np.uint16)
    for f in (F.EVENT_CATEGORY_REF, F.EVENT_NAME_REF):
        ref = column(h, f).astype(np.uint16)
        inline = ref >= F.INLINE_STRING
        skip += np.where(inline, ((ref & F.INLINE_LENGTH_MASK) + 7) >> 3, 0).astype(np.uint16)
    return skip


def _blockwise(n: int, dtype, of_rows, block: int = 1 << 20) -> np.ndarray:
    """A whole column from a per-rows function, a block of rows at a time."""
    out = np.empty(n, dtype)
    for a in range(0, n, block):
        out[a : a + block] = of_rows(np.arange(a, min(a + block, n)))
    return out
