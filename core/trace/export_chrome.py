"""Export a trace model as Chrome trace event JSON (``{"traceEvents": [...]}``), streamed to disk.

What is written, and why:

- Thread slices come from the model's matched slices, not the raw begin/end records, so what
  chrome://tracing or Perfetto shows nests exactly as fxscope shows it: a matched pair is ``B``/``E``
  (arguments on the ``B``), a complete event or a zero-length pair is ``X``, a begin never ended is a
  ``B`` alone (the viewers draw it to the end of the trace), an end without a begin (the trace started
  mid-stack) is an ``X`` from the thread's first timestamp with ``"fxscope": "unmatched end"``.
- Instants are ``i`` (scope ``t``/``p``/``g``), log records ``i`` named ``"log"`` with global scope and a
  ``"message"`` argument, as Fuchsia's Chrome exporter writes them; counters ``C`` with their numeric
  arguments (and ``"id"`` when the counter id is not 0); async events ``b``/``n``/``e`` and flow events
  ``s``/``t``/``f`` (``"bp": "e"`` on ``f``, bind to the enclosing slice) as recorded, with ids as hex
  strings (koid-sized ids do not survive a JSON double). The viewers pair them by the same keys.
- ``M`` metadata names every process and thread. Scheduling records are not exported (the JSON format
  has no place for them).
- ``ts``/``dur`` are microseconds written as exact decimals of the nanosecond values.

Records are ordered by time, with ends before begins at a shared timestamp (inner ends first), so ``B``
and ``E`` nest in file order. The file is written in chunks (the JSON never exists whole in memory) to a
temporary file that replaces the target at the end (:func:`fxscope.core.atomic_file.atomic_output`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable

import numpy as np

from fxscope.core.atomic_file import atomic_output
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.slices import FLAG_UNCLOSED, FLAG_UNMATCHED_END
from fxscope.core.trace.threads import thread_pids, thread_tids
from fxscope.formats.fxt.arg_columns import NUMERIC_TYPES, event_arg_columns, python_values
from fxscope.formats.fxt.args import ArgType
from fxscope.formats.fxt.columns import EventKind

# record codes, in the order metadata first at a shared timestamp
_B, _E, _X, _I, _LOG, _C, _AB, _AN, _AE, _FS, _FT, _FF = range(12)
_PH = {_B: "B", _E: "E", _X: "X", _I: "i", _LOG: "i", _C: "C", _AB: "b", _AN: "n", _AE: "e", _FS: "s",
       _FT: "t", _FF: "f"}  # fmt: skip
_RAW_KINDS = {
    EventKind.INSTANT: _I, EventKind.COUNTER: _C, EventKind.ASYNC_BEGIN: _AB, EventKind.ASYNC_INSTANT: _AN,
    EventKind.ASYNC_END: _AE, EventKind.FLOW_BEGIN: _FS, EventKind.FLOW_STEP: _FT, EventKind.FLOW_END: _FF,
}  # fmt: skip
_SCOPES = ("t", "p", "g")
CHUNK = 1 << 15
_NO_ARGS = ',"args":{}'


def _us(ns: int) -> str:
    """Exact microseconds of an int ns value as a JSON number."""
    sign = "-" if ns < 0 else ""
    q, r = divmod(abs(ns), 1000)
    return f"{sign}{q}.{r:03d}" if r else f"{sign}{q}"


def _json_value(arg) -> object:
    v = arg.value
    if arg.type == ArgType.POINTER and isinstance(v, int):
        return f"0x{v:x}"
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


class _Records:
    """Every output record as parallel columns: (ts, rank, sub) order them, (code, row) say what."""

    def __init__(self, model: TraceModel) -> None:
        cols, s = model.cols, model.slices
        parts: list[tuple[np.ndarray, ...]] = []

        def add(
            ts: np.ndarray, rank: int, sub: np.ndarray | int, code: np.ndarray | int, row: np.ndarray
        ) -> None:
            n = len(ts)
            parts.append((
                np.asarray(ts, np.int64), np.full(n, rank, np.int8), np.broadcast_to(np.asarray(sub, np.int64), (n,)),
                np.broadcast_to(np.asarray(code, np.int8), (n,)), np.asarray(row, np.int64),
            ))  # fmt: skip

        kind = cols.ev_kind[s.event] if len(s) else np.zeros(0, np.uint8)
        depth = s.depth.astype(np.int64)
        begin = kind == EventKind.DURATION_BEGIN
        closed = s.flags == 0
        pair = begin & closed & (s.dur > 0)
        lone_b = begin & ((s.flags & FLAG_UNCLOSED) != 0)
        x = ~pair & ~lone_b
        rows = np.arange(len(s))
        add(s.ts[pair | lone_b], 1, depth[pair | lone_b], _B, rows[pair | lone_b])
        add(s.ts[pair] + s.dur[pair], 0, -depth[pair], _E, rows[pair])
        add(s.ts[x], 1, depth[x], _X, rows[x])
        raw = np.flatnonzero(np.isin(cols.ev_kind, list(_RAW_KINDS)))
        lut = np.full(16, -1, np.int8)
        for k, code in _RAW_KINDS.items():
            lut[k] = code
        add(cols.ev_ts[raw], 2, 0, lut[cols.ev_kind[raw]], raw)
        add(cols.log_ts, 2, 0, _LOG, np.arange(len(cols.log_ts)))
        ts, rank, sub, code, row = (np.concatenate(c) for c in zip(*parts, strict=True))
        self.order = np.lexsort((row, sub, rank, ts))
        self.ts, self.code, self.row = ts, code, row
        self.counts = dict.fromkeys("BEXiCbnestf", 0)
        for c, n in enumerate(np.bincount(code, minlength=len(_PH)).tolist()):
            self.counts[_PH[c]] += n


class _Writer:
    """Formats records; per (code, name, category, thread) the JSON text up to ``"ts":`` is cached."""

    def __init__(self, model: TraceModel) -> None:
        self.model = model
        self.cols = model.cols
        self.strings = model.strings
        self._prefix: dict[tuple[int, int, int, int], str] = {}
        self._str: dict[int, str] = {}
        self._with_args: set[int] = set()
        cols = self.cols
        self.pid = thread_pids(cols, np.arange(len(cols.threads_pid))).tolist()
        self.tid = thread_tids(cols, np.arange(len(cols.threads_tid))).tolist()

    def text(self, i: int) -> str:
        out = self._str.get(i)
        if out is None:
            out = json.dumps(self.strings[i] if 0 <= i < len(self.strings) else "<unresolved>")
            self._str[i] = out
        return out

    def prefix(self, code: int, name: int, cat: int, thread: int) -> str:
        key = (code, name, cat, thread)
        out = self._prefix.get(key)
        if out is None:
            pid, tid = (self.pid[thread], self.tid[thread]) if thread >= 0 else (0, 0)
            out = f'{{"ph":"{_PH[code]}","name":{self.text(name)},"cat":{self.text(cat)},"pid":{pid},"tid":{tid},"ts":'
            self._prefix[key] = out
        return out

    def prepare(self, events: np.ndarray) -> None:
        """Decode the arguments of a chunk's events together (vectorized), as JSON text per event."""
        events = np.unique(events[self.cols.nargs_of(events) > 0])
        self._with_args = set(events.tolist())  # (this chunk's events that have arguments)
        args = event_arg_columns(self.cols, events)
        values, fallback = python_values(self.cols, args)
        names = [self.strings[i] if i >= 0 else "" for i in args.name.tolist()]
        numeric = np.isin(args.type, NUMERIC_TYPES).tolist()
        pointer = (args.type == ArgType.POINTER).tolist()
        ev = args.event.tolist()
        bad = set(args.event[fallback].tolist())
        self._args: dict[int, tuple[dict, dict]] = {}
        for e, name, value, num, ptr in zip(ev, names, values, numeric, pointer, strict=True):
            if e in bad:
                continue
            full, nums = self._args.setdefault(e, ({}, {}))
            if ptr:
                value = f"0x{value:x}"
            elif isinstance(value, float) and not math.isfinite(value):
                value = str(value)
            full[name] = value
            if num:
                nums[name] = value
        self._fallback = bad

    def args(self, ev: int, numeric_only: bool = False) -> str:
        got = self._args.get(ev)
        if got is None and ev not in self._with_args:
            return ""
        if got is not None:
            return ',"args":' + json.dumps(got[1] if numeric_only else got[0], separators=(",", ":"))
        try:  # blob or unknown-type arguments: the reader's decoder
            decoded = self.cols.event_args(ev)
        except Exception as exc:  # noqa: BLE001 - a corrupt block must not stop the export
            return f',"args":{{"<arguments unreadable>":{json.dumps(str(exc))}}}'
        if numeric_only:
            decoded = [a for a in decoded if a.type in NUMERIC_TYPES]
        return ',"args":' + json.dumps({a.name: _json_value(a) for a in decoded}, separators=(",", ":"))

    def metadata(self) -> list[str]:
        """process_name / thread_name: the kernel objects' names, else fxscope's "process N" labels."""
        m, cols = self.model, self.cols
        labels = m.objects  # the names every view shows (one rule: core/trace/objects.py)

        def name(koid: int, fallback: str) -> str:
            return json.dumps(labels.name(koid) or fallback)

        out = [
            f'{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"args":{{"name":{name(pid, m.process_name(pid))}}}}}'
            for pid in sorted(set(self.pid))
        ]
        for thread in range(len(cols.threads_pid)):
            pid, tid = self.pid[thread], self.tid[thread]
            label = name(tid, m.thread_name(thread))
            out.append(f'{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":{label}}}}}')
        return out

    def record(self, code: int, row: int, ts: int) -> str:
        cols = self.cols
        if code in (_B, _E, _X):
            s = self.model.slices
            ev = int(s.event[row])
            head = self.prefix(
                code, int(cols.ev_name[ev]), int(cols.ev_category[ev]), int(s.thread[row])
            ) + _us(ts)
            if code == _E:
                return head + "}"
            if code == _B:
                return head + self.args(ev) + "}"
            extra = (
                ',"args":{"fxscope":"unmatched end"}' if s.flags[row] & FLAG_UNMATCHED_END else self.args(ev)
            )
            return f'{head},"dur":{_us(int(s.dur[row]))}{extra}}}'
        if code == _LOG:
            thread = int(cols.log_thread[row])
            msg = self.text(int(cols.log_message[row]))
            pid, tid = (self.pid[thread], self.tid[thread]) if thread >= 0 else (0, 0)
            return f'{{"ph":"i","name":"log","cat":"log","s":"g","pid":{pid},"tid":{tid},"ts":{_us(ts)},"args":{{"message":{msg}}}}}'
        head = self.prefix(
            code, int(cols.ev_name[row]), int(cols.ev_category[row]), int(cols.ev_thread[row])
        ) + _us(ts)
        if code == _I:
            data = int(cols.ev_data[row])  # (an instant's data word is its scope)
            scope = _SCOPES[data if data < len(_SCOPES) else 0]
            return f'{head},"s":"{scope}"{self.args(row)}}}'
        ident = int(cols.ev_data[row])
        if code == _C:
            id_part = f',"id":"0x{ident:x}"' if ident else ""
            return f"{head}{id_part}{self.args(row, numeric_only=True) or _NO_ARGS}}}"
        bp = ',"bp":"e"' if code == _FF else ""
        return f'{head},"id":"0x{ident:x}"{bp}{self.args(row)}}}'


def export_chrome_json(
    model: TraceModel, path: str | os.PathLike[str], progress: Callable[[float], None] | None = None
) -> dict[str, int]:
    """Write ``model`` as Chrome trace event JSON at ``path`` (atomically); returns records per ``ph``."""
    records = _Records(model)
    writer = _Writer(model)
    meta = writer.metadata()
    order, ts, code, row = records.order, records.ts, records.code, records.row
    with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write('{"displayTimeUnit":"ns","traceEvents":[\n')
        fh.write(",\n".join(meta))
        first = not meta
        for a in range(0, len(order), CHUNK):
            sel = order[a : a + CHUNK]
            c, r = code[sel], row[sel]
            slice_rows = r[(c == _B) | (c == _X)]
            writer.prepare(np.r_[model.slices.event[slice_rows].astype(np.int64), r[(c >= _I) & (c != _LOG)]])
            lines = [
                writer.record(c, r, t)
                for c, r, t in zip(code[sel].tolist(), row[sel].tolist(), ts[sel].tolist(), strict=True)
            ]
            if lines:
                fh.write(("" if first else ",\n") + ",\n".join(lines))
                first = False
            if progress is not None:
                progress(min(1.0, (a + CHUNK) / max(len(order), 1)))
        fh.write("\n]}\n")
    counts = dict(records.counts)
    counts["M"] = len(meta)
    return counts
