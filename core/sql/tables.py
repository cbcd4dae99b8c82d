"""The trace model as Arrow tables named and shaped like Perfetto's trace processor tables.

A Perfetto user's library of queries is the reason to speak SQL at all, so the names are Perfetto's wherever
the concept exists (``slice``, ``thread``, ``process``, ``thread_track``, ``counter``, ``sched``,
``thread_state``, ``args``, ...); what FXT has and Perfetto lacks gets tables of its own (``log``, ``blob``,
``kernel_object``, ``userspace_object``, ``provider``, ``warning``). docs/sql.md lists every column and
every difference.

The event columns are handed to Arrow as they are: ``pa.array`` over a contiguous numpy column of a
primitive type wraps its buffer (no copy), and DuckDB scans Arrow in place. What has to be made is kept
small, because it is paid next to a model that already holds the trace:

- strings are dictionary arrays over the strings a column uses (a slice's name and category are gathered
  through its event row), so that the indices take the narrowest type: 1 byte a row while a column has at
  most 127 distinct strings (a trace's slice names and categories usually do), 2 up to 32,767;
- a column that is constant over runs of rows (an async span's process, a counter sample's track) is
  run-end encoded: a few bytes a run, not 8 a row;
- the large tables behind views (thread slices, async spans, thread states, CPU slices) hold no row ids:
  the views count them (``range(n)`` positionally joined, see :mod:`.engine`); the other tables' ids are
  zero-copy slices of one shared ``0..n-1`` column (int32);
- ``dur`` of the tables that store an end (async spans, CPU slices, thread states) is computed by the views
  (``"end" - ts``, per chunk as DuckDB scans) instead of stored.

Each builder runs only when a query names its table; ``args`` decodes every argument block, so it is built
only when a query touches it.
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
#: which FXT argument types fill args.int_value (by the 4-bit type)
_INT_ARG_TYPE = np.isin(np.arange(16), [ArgType.INT32, ArgType.UINT32, ArgType.INT64, ArgType.UINT64,
                                        ArgType.POINTER, ArgType.KOID, ArgType.BOOL])  # fmt: skip
#: Perfetto's args.value_type for each FXT argument type (koids are unsigned integers there)
VALUE_TYPE = {ArgType.NULL: "null", ArgType.INT32: "int", ArgType.UINT32: "uint", ArgType.INT64: "int",
              ArgType.UINT64: "uint", ArgType.DOUBLE: "real", ArgType.STRING: "string",
              ArgType.POINTER: "pointer", ArgType.KOID: "uint", ArgType.BOOL: "bool", ArgType.BLOB: "blob"}  # fmt: skip


def _col(a) -> pa.Array:
    """A numpy column as an Arrow array: the buffer is wrapped, not copied, when it is contiguous."""
    return pa.array(np.ascontiguousarray(np.asarray(a)))


def _koid64(koids: np.ndarray) -> np.ndarray:
    """Koids as SQL's int64: uint64 ones reinterpreted (a view, as Perfetto stores them), narrower ones
    widened (the model keeps them uint32 when they fit)."""
    return koids.view(np.int64) if koids.dtype == np.uint64 else koids.astype(np.int64)


def _masked(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    """``values`` with nulls where ``valid`` is False: the data buffer is wrapped (no copy), only the
    validity bitmap (1 bit a row) is made."""
    values = np.ascontiguousarray(values)
    if valid.all():
        return pa.array(values)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [bitmap, pa.py_buffer(values)],
                                 null_count=int(len(valid) - np.count_nonzero(valid)))  # fmt: skip


def _index_dtype(n: int) -> type:
    """The narrowest signed integer type that holds ``0..n`` (dictionary indices: DuckDB takes any)."""
    return np.int8 if n <= 127 else np.int16 if n <= 32767 else np.int32


def _runs(values: np.ndarray, run_ends: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """A run-end encoded column: ``values[k]`` over rows ``run_ends[k-1]:run_ends[k]`` (empty runs are
    dropped; NULL where ``valid`` is False). A few bytes a run instead of a value a row; DuckDB scans it."""
    values, run_ends = np.asarray(values), np.asarray(run_ends, np.int64)
    keep = np.diff(np.r_[0, run_ends]) > 0
    values, run_ends = values[keep], run_ends[keep]
    mask = None if valid is None else ~np.asarray(valid)[keep]
    ends_type = pa.int32() if not len(run_ends) or run_ends[-1] < 2**31 else pa.int64()
    return pa.RunEndEncodedArray.from_arrays(pa.array(run_ends, ends_type), pa.array(values, mask=mask))


class SqlTables:
    """Builds (once, on demand) the Arrow table behind each SQL table name of one trace model."""

    def __init__(self, model: TraceModel) -> None:
        self.model = model
        self.cols = model.cols
        self._built: dict[str, pa.Table] = {}
        self._row_ids = np.zeros(0, np.int32)
        cols = self.cols
        # utid = row of the reader's thread table; upid = rank of the process koid
        self.upid_pids = np.unique(cols.threads_pid) if len(cols.threads_pid) else np.zeros(0, np.uint64)
        self.thread_upid = np.searchsorted(self.upid_pids, cols.threads_pid).astype(np.int64)
        self.n_threads = len(cols.threads_pid)
        # track ids: thread tracks 0..n_threads-1, then one process track per process, then counter tracks
        self.process_track_base = self.n_threads
        self.counter_track_base = self.n_threads + len(self.upid_pids)
        self.async_slice_base = len(model.slices)  # slice ids: thread slices, then async spans
        self.builders: dict[str, Callable[[], pa.Table]] = {
            "_thread_slice": self._thread_slice, "_async_slice": self._async_slice, "thread": self._thread,
            "process": self._process, "thread_track": self._thread_track, "process_track": self._process_track,
            "counter_track": self._counter_track, "counter": self._counter, "_cpu_slice": self._cpu_slice,
            "_thread_state": self._thread_state, "instant": self._instant, "flow": self._flow,
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
    def ids(self, n: int) -> pa.Array:
        """Row ids ``0..n-1``: a zero-copy slice of one column shared by every table (int32 while it fits)."""
        if len(self._row_ids) < n:
            self._row_ids = np.arange(max(n, 2 * len(self._row_ids)), dtype=np.int32 if n < 2**31 else np.int64)
        return pa.array(self._row_ids[:n])

    def _text(self, index) -> pa.DictionaryArray:
        """String-table indexes as a dictionary array (out of range: ``<unresolved>``) over the strings the
        column uses, so that its indices take the narrowest type: a trace has thousands of strings, its
        slices a few dozen names and fewer categories (1 byte a row instead of 4)."""
        idx = np.asarray(index)
        n = len(self.cols.strings)
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            idx = np.where(bad, n, idx)
        used = np.flatnonzero(np.bincount(idx, minlength=n + 1)) if len(idx) else np.zeros(0, np.int64)
        dtype = _index_dtype(len(used))
        remap = np.zeros(n + 1, dtype)
        remap[used] = np.arange(len(used), dtype=dtype)
        # (the dictionary from Python strings, not Arrow's take: its compute kernels cost 14 MB when first used)
        strings = self.cols.strings
        words = pa.array([strings[i] if i < n else "<unresolved>" for i in used.tolist()], pa.string())
        return pa.DictionaryArray.from_arrays(pa.array(remap[idx]), words)

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
        thread = np.asarray(s.thread, np.int32)  # (the model reads it through the events: int16 or int32)
        return pa.table({
            "ts": _col(s.ts), "dur": _col(s.dur),
            "track_id": _col(thread), "utid": _col(thread),
            "category": self._text(s.category[:]), "name": self._text(s.name[:]),
            "depth": _col(s.depth), "parent_id": _masked(s.parent, s.parent >= 0),
            "arg_set_id": self._arg_set(s.event),
        })  # fmt: skip

    def slice_parts(self, schema: pa.Schema) -> list[pa.Table]:
        """The rows of the ``slice`` view as two Arrow tables for a Parquet writer, the thread slices then the
        async spans, with ``schema``'s column types (the view's) and one dictionary of names and one of
        categories for both. Written by pyarrow the dictionaries go to the file as they are, where DuckDB's
        COPY of the view expands and hashes every name again (10M events: 1.4 CPU s -> 0.5)."""
        import pyarrow.compute as pc  # (export only: its kernels cost memory when first used)

        s, a = self.model.slices, self.model.async_spans
        n = len(s)
        names = self._text(np.concatenate([s.name[:], a.name[:]]))
        categories = self._text(np.concatenate([s.category[:], a.category[:]]))
        t, at = self.table("_thread_slice"), self.table("_async_slice")
        ids = np.arange(n + len(a), dtype=np.int64)
        parts = [
            {"id": ids[:n], "ts": t["ts"], "dur": t["dur"], "track_id": t["track_id"], "category": categories[:n],
             "name": names[:n], "depth": t["depth"], "parent_id": t["parent_id"], "arg_set_id": t["arg_set_id"]},
            {"id": ids[n:], "ts": at["ts"], "dur": a.end - a.start, "track_id": pc.run_end_decode(at["track_id"]),
             "category": categories[n:], "name": names[n:], "depth": at["depth"], "parent_id": None,
             "arg_set_id": at["arg_set_id"]},
        ]  # fmt: skip

        def typed(values, field: pa.Field, rows: int):
            if values is None:
                return pa.nulls(rows, field.type)
            if isinstance(values, np.ndarray):
                values = pa.array(values)
            return values if pa.types.is_dictionary(values.type) else values.cast(field.type)

        return [pa.table({f.name: typed(part[f.name], f, len(part["id"])) for f in schema}) for part in parts]

    def _async_slice(self) -> pa.Table:
        """Async spans: rows sorted by process, so upid and track_id are runs (the view adds the id base and
        computes dur)."""
        a = self.model.async_spans
        upid = self._upid_of_pid(a.pids)
        ends = a.pid_start[1:]
        return pa.table({
            "ts": _col(a.start), "end": _col(a.end),
            "track_id": _runs(self.process_track_base + upid, ends, upid >= 0),
            "category": self._text(a.category[:]), "name": self._text(a.name[:]),
            "depth": _col(a.lane), "arg_set_id": self._arg_set(a.event), "upid": _runs(upid, ends, upid >= 0),
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
        """Every series' samples one after the other (the series are separate arrays: ts and value are
        concatenated, the track of each run of samples run-end encoded)."""
        series = self.model.counters.series
        ends = np.cumsum([len(c) for c in series], dtype=np.int64)
        ts = np.concatenate([c.ts for c in series]) if series else np.zeros(0, np.int64)
        value = np.concatenate([c.value for c in series]) if series else np.zeros(0)
        event = np.concatenate([c.event for c in series]) if series else np.zeros(0, np.int32)
        return pa.table({
            "id": self.ids(len(ts)), "ts": _col(ts),
            "track_id": _runs(self.counter_track_base + np.arange(len(series), dtype=np.int64), ends),
            "value": _col(value), "arg_set_id": self._arg_set(event),
        })  # fmt: skip

    # ------------------------------------------------------------------ scheduling
    def _cpu_slice(self) -> pa.Table:
        """CPU slices (``sched`` computes dur from end)."""
        c = self.model.sched.cpu_slices
        return pa.table({
            "ts": _col(c.start), "end": _col(c.end), "cpu": _col(c.cpu),
            "utid": _masked(*self._utid32(c.tid)), "tid": _col(_koid64(c.tid)),
        })  # fmt: skip

    def _utid32(self, tids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """int32 utid of each thread koid and where there is one (for :func:`_masked`)."""
        utid = self._utid_of_tid(tids)
        return utid.astype(np.int32), utid >= 0

    def _thread_state(self) -> pa.Table:
        """Thread states (the ``thread_state`` view computes dur from end)."""
        t = self.model.sched.thread_states
        letters = [PERFETTO_STATE.get(k, "?") for k in range(max(STATE_NAMES) + 1)]
        names = [STATE_NAMES.get(k, "?") for k in range(max(STATE_NAMES) + 1)]
        code = pa.array(np.minimum(t.state, len(letters) - 1).astype(np.int8))
        w = self.model.sched.wakeups
        waker = self._waker_utid(t, w)
        cpu = np.asarray(t.cpu, np.int32)  # (the model's is uint16)
        return pa.table({
            "ts": _col(t.start), "end": _col(t.end),
            "cpu": _masked(cpu, cpu >= 0), "utid": _masked(*self._utid32(t.tid)),
            "state": pa.DictionaryArray.from_arrays(code, pa.array(letters)),
            "state_name": pa.DictionaryArray.from_arrays(code, pa.array(names)),
            "waker_utid": _masked(waker.astype(np.int32), waker >= 0),
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
            "id": self.ids(len(i)), "ts": _col(i.ts),
            "track_id": _col(i.thread), "utid": _col(i.thread),
            "category": self._text(i.category[:]), "name": self._text(i.name[:]),
            "arg_set_id": self._arg_set(i.event),
        })  # fmt: skip

    def _flow(self) -> pa.Table:
        f = self.model.flows
        return pa.table({
            "id": self.ids(len(f.src_slice)), "slice_out": _col(f.src_slice), "slice_in": _col(f.dst_slice),
            "flow_id": pa.array(np.asarray(f.id[:], np.uint64)),
            "arg_set_id": self._arg_set(f.src_event),
        })  # fmt: skip

    def _args(self) -> pa.Table:
        cols = self.cols
        rows = np.flatnonzero(cols.ev_nargs > 0)
        a = event_arg_columns(cols, rows)
        t, raw = a.type, a.raw
        # 64-bit types are the raw word as it is; the 32-bit ones and bools are fixed up where they are
        ints = raw.view(np.int64).copy()
        low = (raw & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        for atype, vals in ((ArgType.INT32, low.view(np.int32)), (ArgType.UINT32, low),
                            (ArgType.BOOL, low & np.uint32(1))):  # fmt: skip
            sel = np.flatnonzero(t == atype)
            ints[sel] = vals[sel]
        is_int = _INT_ARG_TYPE[t & 15]
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
        value = self._text(np.where(str_id >= 0, str_id, len(cols.strings)))
        return pa.table({
            "arg_set_id": _col(a.event), "flat_key": key, "key": key,
            "int_value": pa.array(ints, mask=~is_int),
            "string_value": pa.DictionaryArray.from_arrays(
                pa.array(value.indices.to_numpy(), mask=~is_str), value.dictionary),
            "real_value": pa.array(raw.view(np.float64), mask=~is_real),
            "value_type": pa.DictionaryArray.from_arrays(pa.array((t & 15).astype(np.int8)), pa.array(types)),
        })  # fmt: skip

    def _log(self) -> pa.Table:
        """Log records by time: the reader's columns as they are when the file has them in order (the
        common case), else gathered in time order."""
        cols = self.cols
        ts = cols.log_ts
        if np.all(ts[1:] >= ts[:-1]):
            pick = lambda c: c  # noqa: E731
        else:
            order = np.argsort(ts, kind="stable")
            pick = lambda c: c[order]  # noqa: E731
        thread = pick(cols.log_thread)
        return pa.table({
            "id": self.ids(len(ts)), "ts": _col(pick(ts)), "utid": _masked(thread, thread >= 0),
            "message": self._text(pick(cols.log_message)), "file_offset": _col(pick(cols.log_offset)),
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
