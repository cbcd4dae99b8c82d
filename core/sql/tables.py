"""The trace model as Arrow tables named and shaped like Perfetto's trace processor tables.

A Perfetto user's library of queries is the reason to speak SQL at all, so the names are Perfetto's wherever
the concept exists (``slice``, ``thread``, ``process``, ``thread_track``, ``counter``, ``sched``,
``thread_state``, ``args``, ...); what FXT has and Perfetto lacks gets tables of its own (``log``, ``blob``,
``kernel_object``, ``userspace_object``, ``provider``, ``warning``). docs/sql.md lists every column and
every difference.

The event columns are handed to Arrow as they are: ``pa.array`` over a contiguous numpy column of a
primitive type wraps its buffer (no copy), and DuckDB scans Arrow in place. Strings are dictionary arrays
over the trace's one string table (a slice's name is its int32 string index). What has to be made is
small (per-thread and per-process tables) or gathered once (a slice's name through its event row: 4 bytes
a slice). Each builder runs only when a query names its table; ``args`` decodes every argument block, so
it is built only when a query touches it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.sched import (
    BLOCKED,
    DEAD,
    DYING,
    NEW,
    PREEMPTED_STATE,
    RUNNABLE,
    RUNNING,
    STATE_NAMES,
    SUSPENDED,
)
from fxscope.formats.fxt.arg_columns import event_arg_columns
from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.columns import EventKind

#: Perfetto's thread_state letters for FXT's thread states (docs/sql.md: Zircon's states are not Linux's)
PERFETTO_STATE = {RUNNING: "Running", RUNNABLE: "R", PREEMPTED_STATE: "R+", BLOCKED: "S", SUSPENDED: "T",
                  NEW: "N", DYING: "Z", DEAD: "X"}  # fmt: skip
#: Perfetto's args.value_type for each FXT argument type (koids are unsigned integers there)
VALUE_TYPE = {ArgType.NULL: "null", ArgType.INT32: "int", ArgType.UINT32: "uint", ArgType.INT64: "int",
              ArgType.UINT64: "uint", ArgType.DOUBLE: "real", ArgType.STRING: "string",
              ArgType.POINTER: "pointer", ArgType.KOID: "uint", ArgType.BOOL: "bool", ArgType.BLOB: "blob"}  # fmt: skip


def _col(a) -> pa.Array:
    """A numpy column as an Arrow array: the buffer is wrapped, not copied, when it is contiguous."""
    return pa.array(np.ascontiguousarray(np.asarray(a)))


def _masked(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    """``values`` with nulls where ``valid`` is False: the data buffer is wrapped (no copy), only the
    validity bitmap (1 bit a row) is made."""
    values = np.ascontiguousarray(values)
    if valid.all():
        return pa.array(values)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [bitmap, pa.py_buffer(values)],
                                 null_count=int(len(valid) - np.count_nonzero(valid)))  # fmt: skip


def _ids(n: int, base: int = 0) -> pa.Array:
    """Row ids ``base .. base+n-1``: int32 while they fit (half the memory of int64)."""
    return pa.array(np.arange(base, base + n, dtype=np.int32 if base + n < 2**31 else np.int64))


class SqlTables:
    """Builds (once, on demand) the Arrow table behind each SQL table name of one trace model."""

    def __init__(self, model: TraceModel) -> None:
        self.model = model
        self.cols = model.cols
        self._built: dict[str, pa.Table] = {}
        self._strings: pa.Array | None = None
        cols = self.cols
        # utid = row of the reader's thread table; upid = rank of the process koid
        self.upid_pids = np.unique(cols.threads_pid) if len(cols.threads_pid) else np.zeros(0, np.uint64)
        self.thread_upid = np.searchsorted(self.upid_pids, cols.threads_pid).astype(np.int64)
        self.n_threads = len(cols.threads_pid)
        # track ids: thread tracks 0..n_threads-1, then one process track per process, then counter tracks
        self.process_track_base = self.n_threads
        self.counter_track_base = self.n_threads + len(self.upid_pids)
        self.builders: dict[str, Callable[[], pa.Table]] = {
            "_thread_slice": self._thread_slice, "_async_slice": self._async_slice, "thread": self._thread,
            "process": self._process, "thread_track": self._thread_track, "process_track": self._process_track,
            "counter_track": self._counter_track, "counter": self._counter, "_cpu_slice": self._cpu_slice,
            "thread_state": self._thread_state, "instant": self._instant, "flow": self._flow,
            "args": self._args, "log": self._log, "blob": self._blob, "kernel_object": self._kernel_object,
            "userspace_object": self._userspace_object, "provider": self._provider, "warning": self._warning,
        }  # fmt: skip

    def table(self, name: str) -> pa.Table:
        """The Arrow table ``name`` (built on first use)."""
        t = self._built.get(name)
        if t is None:
            t = self._built[name] = self.builders[name]()
        return t

    # ------------------------------------------------------------------ helpers
    @property
    def strings(self) -> pa.Array:
        """The trace's string table, plus ``<unresolved>`` last (for index -1), as one Arrow dictionary."""
        if self._strings is None or len(self._strings) != len(self.cols.strings) + 1:
            # (decoding arguments can add inline strings to the table: the dictionary follows it)
            self._strings = pa.array([*self.cols.strings, "<unresolved>"], pa.string())
        return self._strings

    def _text(self, index) -> pa.DictionaryArray:
        """String-table indexes as a dictionary array over :attr:`strings` (out of range: ``<unresolved>``)."""
        idx = np.asarray(index)
        n = len(self.cols.strings)
        bad = (idx < 0) | (idx >= n)
        idx = np.where(bad, n, idx).astype(np.int32) if bad.any() else np.ascontiguousarray(idx, np.int32)
        return pa.DictionaryArray.from_arrays(pa.array(idx), self.strings)

    def _utid_of_tid(self, tids: np.ndarray) -> np.ndarray:
        """utid of each thread koid (the first thread-table row with that tid), -1 when none."""
        tids = np.asarray(tids, np.uint64)
        tt = self.cols.threads_tid
        if len(tt) == 0:
            return np.full(len(tids), -1, np.int64)
        order = np.argsort(tt, kind="stable")
        j = np.minimum(np.searchsorted(tt[order], tids), len(tt) - 1)
        return np.where(tt[order][j] == tids, order[j], -1).astype(np.int64)

    def _upid_of_pid(self, pids: np.ndarray) -> np.ndarray:
        pids = np.asarray(pids, np.uint64)
        if len(self.upid_pids) == 0:
            return np.full(len(pids), -1, np.int64)
        j = np.minimum(np.searchsorted(self.upid_pids, pids), len(self.upid_pids) - 1)
        return np.where(self.upid_pids[j] == pids, j, -1).astype(np.int64)

    def _arg_set(self, events: np.ndarray) -> pa.Array:
        """Perfetto's arg_set_id of events: the event row when it has arguments, else null."""
        events = np.asarray(events)
        has = self.cols.nargs_of(events) > 0 if len(events) else np.zeros(0, bool)
        return _masked(events, has)

    # ------------------------------------------------------------------ slices
    def _thread_slice(self) -> pa.Table:
        s = self.model.slices
        return pa.table({
            "id": _ids(len(s)),
            "ts": _col(s.ts), "dur": _col(s.dur),
            "track_id": _col(s.thread), "utid": _col(s.thread),
            "category": self._text(s.category[:]), "name": self._text(s.name[:]),
            "depth": _col(s.depth), "parent_id": _masked(s.parent, s.parent >= 0),
            "arg_set_id": self._arg_set(s.event),
        })  # fmt: skip

    def _async_slice(self) -> pa.Table:
        a = self.model.async_spans
        base = len(self.model.slices)
        upid = self._upid_of_pid(np.asarray(a.pid[:], np.uint64))
        return pa.table({
            "id": _ids(len(a), base),
            "ts": _col(a.start), "dur": _col(a.end - a.start),
            "track_id": pa.array(self.process_track_base + upid),
            "category": self._text(a.category[:]), "name": self._text(a.name[:]),
            "depth": _col(a.lane), "arg_set_id": self._arg_set(a.event), "upid": pa.array(upid),
        })  # fmt: skip

    # ------------------------------------------------------------------ threads and processes
    def _thread(self) -> pa.Table:
        n = self.n_threads
        return pa.table({
            "utid": pa.array(np.arange(n, dtype=np.int64)),
            "tid": _col(self.cols.threads_tid.astype(np.int64)),
            "name": pa.array([self.model.objects.name(int(t), 2) or None for t in self.cols.threads_tid.tolist()],
                             pa.string()),
            "upid": pa.array(self.thread_upid),
        })  # fmt: skip

    def _process(self) -> pa.Table:
        pids = self.upid_pids
        return pa.table({
            "upid": pa.array(np.arange(len(pids), dtype=np.int64)),
            "pid": pa.array(pids.astype(np.int64)),
            "name": pa.array([self.model.objects.name(int(p), 1) or None for p in pids.tolist()], pa.string()),
        })  # fmt: skip

    def _thread_track(self) -> pa.Table:
        n = self.n_threads
        return pa.table({
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "name": pa.array([self.model.thread_name(i) for i in range(n)], pa.string()),
            "utid": pa.array(np.arange(n, dtype=np.int64)),
        })  # fmt: skip

    def _process_track(self) -> pa.Table:
        pids = self.upid_pids
        return pa.table({
            "id": pa.array(self.process_track_base + np.arange(len(pids), dtype=np.int64)),
            "name": pa.array([self.model.process_name(int(p)) for p in pids.tolist()], pa.string()),
            "upid": pa.array(np.arange(len(pids), dtype=np.int64)),
        })  # fmt: skip

    # ------------------------------------------------------------------ counters
    def _counter_track(self) -> pa.Table:
        series = self.model.counters.series
        return pa.table({
            "id": pa.array(self.counter_track_base + np.arange(len(series), dtype=np.int64)),
            "name": pa.array([c.label for c in series], pa.string()),
            "upid": pa.array(self._upid_of_pid(np.array([c.pid for c in series], np.uint64))),
            "counter_name": pa.array([c.name for c in series], pa.string()),
            "arg_name": pa.array([c.arg_name for c in series], pa.string()),
            "counter_id": pa.array([c.counter_id for c in series], pa.uint64()),
        })  # fmt: skip

    def _counter(self) -> pa.Table:
        series = self.model.counters.series
        n = [len(c) for c in series]
        ts = np.concatenate([c.ts for c in series]) if series else np.zeros(0, np.int64)
        value = np.concatenate([c.value for c in series]) if series else np.zeros(0)
        event = np.concatenate([c.event for c in series]).astype(np.int64) if series else np.zeros(0, np.int64)
        track = np.repeat(self.counter_track_base + np.arange(len(series), dtype=np.int64), n)
        return pa.table({
            "id": pa.array(np.arange(len(ts), dtype=np.int64)), "ts": _col(ts),
            "track_id": pa.array(track), "value": _col(value), "arg_set_id": self._arg_set(event),
        })  # fmt: skip

    # ------------------------------------------------------------------ scheduling
    def _cpu_slice(self) -> pa.Table:
        c = self.model.sched.cpu_slices
        return pa.table({
            "id": pa.array(np.arange(len(c), dtype=np.int64)), "ts": _col(c.start), "dur": _col(c.end - c.start),
            "cpu": _col(c.cpu.astype(np.int64)), "utid": pa.array(self._utid_of_tid(c.tid)),
            "tid": _col(c.tid.astype(np.int64)),
        })  # fmt: skip

    def _thread_state(self) -> pa.Table:
        t = self.model.sched.thread_states
        letters = [PERFETTO_STATE.get(k, "?") for k in range(max(STATE_NAMES) + 1)]
        names = [STATE_NAMES.get(k, "?") for k in range(max(STATE_NAMES) + 1)]
        code = np.minimum(t.state, len(letters) - 1).astype(np.int32)
        cpu = np.asarray(t.cpu, np.int64)
        w = self.model.sched.wakeups
        waker = self._waker_utid(t, w)
        return pa.table({
            "id": pa.array(np.arange(len(t), dtype=np.int64)), "ts": _col(t.start), "dur": _col(t.end - t.start),
            "cpu": pa.array(cpu, mask=cpu < 0), "utid": pa.array(self._utid_of_tid(t.tid)),
            "state": pa.DictionaryArray.from_arrays(pa.array(code), pa.array(letters)),
            "state_name": pa.DictionaryArray.from_arrays(pa.array(code), pa.array(names)),
            "waker_utid": pa.array(waker, mask=waker < 0),
        })  # fmt: skip

    def _waker_utid(self, t, w) -> np.ndarray:
        """For runnable intervals: the utid of the thread that woke this one at the interval's start (the
        wakeup record of that tid at that time naming a waker), else -1."""
        out = np.full(len(t), -1, np.int64)
        if not len(w) or not len(t):
            return out
        runnable = np.flatnonzero(t.state == RUNNABLE)
        # wakeups and runnable starts in one order by (tid, ts, wakeup first): each start's last wakeup is
        # the running maximum of the wakeup positions, when it belongs to the same tid
        tid = np.concatenate([w.tid, t.tid[runnable]])
        ts = np.concatenate([w.ts, t.start[runnable]])
        is_start = np.r_[np.zeros(len(w), np.int8), np.ones(len(runnable), np.int8)]
        order = np.lexsort((is_start, ts, tid))
        pos = np.where(order < len(w), np.arange(len(order)), -1)
        last = np.maximum.accumulate(pos)
        at = np.flatnonzero(order >= len(w))
        src = last[at]
        ok = (src >= 0) & (tid[order[np.maximum(src, 0)]] == tid[order[at]])
        waker = np.zeros(len(at), np.uint64)
        waker[ok] = w.waker_tid[order[src[ok]]]
        utid = np.where(waker != 0, self._utid_of_tid(waker), -1)
        out[runnable[order[at] - len(w)]] = utid
        return out

    # ------------------------------------------------------------------ other events
    def _instant(self) -> pa.Table:
        i = self.model.instants
        return pa.table({
            "id": pa.array(np.arange(len(i), dtype=np.int64)), "ts": _col(i.ts),
            "track_id": _col(i.thread), "utid": _col(i.thread),
            "category": self._text(i.category[:]), "name": self._text(i.name[:]),
            "arg_set_id": self._arg_set(i.event),
        })  # fmt: skip

    def _flow(self) -> pa.Table:
        f = self.model.flows
        return pa.table({
            "id": pa.array(np.arange(len(f.src_slice), dtype=np.int64)),
            "slice_out": _col(f.src_slice.astype(np.int64)), "slice_in": _col(f.dst_slice.astype(np.int64)),
            "flow_id": pa.array(np.asarray(f.id[:], np.uint64)),
            "arg_set_id": self._arg_set(f.src_event),
        })  # fmt: skip

    def _args(self) -> pa.Table:
        cols = self.cols
        rows = np.flatnonzero(cols.ev_nargs > 0)
        a = event_arg_columns(cols, rows)
        t, raw = a.type, a.raw
        low = (raw & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        ints = np.zeros(len(t), np.int64)
        for atype, vals in ((ArgType.INT32, low.view(np.int32)), (ArgType.UINT32, low),
                            (ArgType.INT64, raw.view(np.int64)), (ArgType.UINT64, raw.view(np.int64)),
                            (ArgType.POINTER, raw.view(np.int64)), (ArgType.KOID, raw.view(np.int64)),
                            (ArgType.BOOL, (raw & np.uint64(1)).astype(np.int64))):  # fmt: skip
            sel = t == atype
            ints[sel] = vals[sel]
        is_int = np.isin(t, [ArgType.INT32, ArgType.UINT32, ArgType.INT64, ArgType.UINT64, ArgType.POINTER,
                             ArgType.KOID, ArgType.BOOL])  # fmt: skip
        is_real = t == ArgType.DOUBLE
        is_str = t == ArgType.STRING
        str_id = np.full(len(t), -1, np.int64)
        s = np.flatnonzero(is_str)
        if len(s):
            str_id[s] = cols.arg_decoder.string_ids(
                (raw[s] & np.uint64(0xFFFF)).astype(np.int64), a.value_word[s], cols.ev_word[a.event[s]]
            )
        types = [VALUE_TYPE.get(k, "unknown") for k in range(16)]
        key = self._text(a.name)  # (after string_ids: the inline strings are in the table now)
        return pa.table({
            "arg_set_id": _col(a.event), "flat_key": key, "key": key,
            "int_value": pa.array(ints, mask=~is_int),
            "string_value": pa.DictionaryArray.from_arrays(
                pa.array(np.where(str_id >= 0, str_id, len(cols.strings)).astype(np.int32), mask=~is_str),
                key.dictionary),
            "real_value": pa.array(raw.view(np.float64), mask=~is_real),
            "value_type": pa.DictionaryArray.from_arrays(pa.array(np.minimum(t, 15).astype(np.int32)), pa.array(types)),
        })  # fmt: skip

    def _log(self) -> pa.Table:
        cols = self.cols
        order = np.argsort(cols.log_ts, kind="stable")
        thread = cols.log_thread[order].astype(np.int64)
        return pa.table({
            "id": pa.array(np.arange(len(order), dtype=np.int64)), "ts": _col(cols.log_ts[order]),
            "utid": pa.array(thread, mask=thread < 0), "message": self._text(cols.log_message[order]),
            "file_offset": _col(cols.log_offset[order]),
        })  # fmt: skip

    def _blob(self) -> pa.Table:
        b = self.cols.blobs
        return pa.table({
            "id": pa.array(range(len(b)), pa.int64()), "name": pa.array([x.name for x in b], pa.string()),
            "blob_type": pa.array([x.blob_type for x in b], pa.int64()),
            "large_format": pa.array([x.large_format for x in b], pa.int64()),
            "ts": pa.array([x.ts for x in b], pa.int64()),
            "file_offset": pa.array([x.offset for x in b], pa.int64()),
            "size": pa.array([x.size for x in b], pa.int64()),
        })  # fmt: skip

    def _kernel_object(self) -> pa.Table:
        k = self.cols.kernel_objects
        return pa.table({
            "koid": pa.array([x.koid for x in k], pa.uint64()), "obj_type": pa.array([x.obj_type for x in k], pa.int64()),
            "name": pa.array([x.name for x in k], pa.string()), "provider": pa.array([x.provider for x in k], pa.int64()),
            "file_offset": pa.array([x.offset for x in k], pa.int64()),
        })  # fmt: skip

    def _userspace_object(self) -> pa.Table:
        u = self.cols.userspace_objects
        return pa.table({
            "pointer": pa.array([x.pointer for x in u], pa.uint64()), "pid": pa.array([x.pid for x in u], pa.uint64()),
            "name": pa.array([x.name for x in u], pa.string()), "provider": pa.array([x.provider for x in u], pa.int64()),
            "file_offset": pa.array([x.offset for x in u], pa.int64()),
        })  # fmt: skip

    def _provider(self) -> pa.Table:
        p = self.cols.providers
        return pa.table({"id": pa.array([x.id for x in p], pa.int64()), "name": pa.array([x.name for x in p], pa.string())})

    def _warning(self) -> pa.Table:
        return pa.table({"id": pa.array(range(len(self.cols.warnings)), pa.int64()),
                         "message": pa.array(list(self.cols.warnings), pa.string())})  # fmt: skip


#: event kinds that each SQL table counts (for docs and tests)
SLICE_KINDS = (EventKind.DURATION_BEGIN, EventKind.DURATION_COMPLETE)
