"""A query's result as a timeline track: Perfetto's "add debug track", without Qt.

Perfetto users plot what a query finds next to the trace: a result with ``ts`` and ``dur`` columns is a
slice track (``name``, when present, labels the boxes), one with ``ts`` and ``value`` a counter track. This
module turns the result's Arrow columns into the arrays the timeline's slice and counter items draw from:

- slices: int64 start and end, an int32 label id per box (labels: the distinct names, as one Arrow string
  array, never a Python object per row), and non-overlapping lanes by greedy first fit in start order, as
  the async tracks are stacked (a longer span first on ties, so an enclosing span sits above what it
  encloses); one :class:`~fxscope.core.trace.lod.SlicePyramid` over the lanes for zoomed-out frames;
- counters: one :class:`~fxscope.core.trace.counters.CounterSeries` in its own
  :class:`~fxscope.core.trace.counters.CounterSet`, so its per-pixel summary is the model's own.

Rows whose ``ts`` (or ``dur``, ``value``) is NULL are left out and counted. A negative ``dur`` is Perfetto's
"did not end": the box reaches to the end of the trace. The timeline has no time before the trace's start:
a box or sample from before it starts there (a sample before it is the value in force at the start). Every
box keeps its row in the result (``source_row``), so that a selected box shows the whole row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.trace.async_spans import assign_lanes
from fxscope.core.trace.counters import CounterSeries, CounterSet
from fxscope.core.trace.lane_boxes import covering, lane_boxes
from fxscope.core.trace.lod import SlicePyramid
from fxscope.core.trace.sorting import lexsort

if TYPE_CHECKING:  # (pyarrow is imported where a query's result is turned into a track: the window's
    # timeline imports this module, and pyarrow with its compute kernels held ~9 MB before any query)
    import pyarrow as pa

SLICES = "slices"
COUNTER = "counter"
_I64_MAX = np.iinfo(np.int64).max
#: a selected box or sample of a debug track is one number: the track's id above these bits, its row below
DEBUG_ROW_BITS = 40
_ROW_MASK = (1 << DEBUG_ROW_BITS) - 1


def debug_row(track_id: int, row):
    """The selection row of ``row`` (an int or an int64 array) of debug track ``track_id``."""
    return (int(track_id) << DEBUG_ROW_BITS) | row


def split_debug_row(value: int) -> tuple[int, int]:
    """(track id, row) of a selection row made by :func:`debug_row`."""
    return value >> DEBUG_ROW_BITS, value & _ROW_MASK


class DebugTrackError(ValueError):
    """A result that cannot be drawn as a track (no ``ts``, a column that is not a number, ...)."""


def debug_track_kind(columns: Sequence[str]) -> str | None:
    """:data:`SLICES` for a result with ``ts`` and ``dur``, :data:`COUNTER` for ``ts`` and ``value``, else
    None (Perfetto's rule: a ``dur`` makes slices even when there is a ``value`` too)."""
    names = set(columns)
    if "ts" not in names:
        return None
    if "dur" in names:
        return SLICES
    return COUNTER if "value" in names else None


@dataclass
class DebugSlices:
    """A result's rows as boxes in lanes: rows sorted by (lane, start), within a lane starts and ends both
    ascend."""

    title: str
    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns
    name: np.ndarray  # int32 index into labels
    labels: pa.Array  # string: the distinct names (the title when the result has no name column)
    lane: np.ndarray  # int32
    source_row: np.ndarray  # int64 row of the result
    lane_ranges: list[tuple[int, int]]  # row range of each lane
    pyramid: SlicePyramid
    result: pa.Table
    dropped: int = 0  # rows without ts or dur

    kind = SLICES

    def __len__(self) -> int:
        return len(self.start)

    @property
    def lanes(self) -> int:
        return len(self.lane_ranges)

    def boxes(self, t0: int, t1: int, ns_per_px: float) -> tuple[np.ndarray, ...]:
        """(rows, lane, count, start, end, label ids) of the boxes of one frame (see :func:`lane_boxes`)."""
        rows, lane, count, start, end = lane_boxes(self.pyramid, 0, self.lane_ranges, self.start, self.end,
                                                   t0, t1, ns_per_px)  # fmt: skip
        return rows, lane, count, start, end, self.name[rows]

    def row_at(self, lane: int, t: int) -> int:
        """The row whose box in ``lane`` covers ``t`` (a zero-length box: its nanosecond), or -1."""
        if not 0 <= lane < len(self.lane_ranges):
            return -1
        return covering(self.start, self.end, *self.lane_ranges[lane], t)

    def label(self, name_id: int) -> str:
        return self.labels[name_id].as_py() if 0 <= name_id < len(self.labels) else "?"

    def span(self, row: int) -> tuple[int, int]:
        """(start, end) ns of box ``row``."""
        return int(self.start[row]), int(self.end[row])

    def text(self, row: int) -> str:
        """What a box is called (its label)."""
        return self.label(int(self.name[row]))

    def row_values(self, row: int) -> dict[str, object]:
        """The result row box ``row`` came from, column by column (what its details show)."""
        return _result_row(self.result, int(self.source_row[row]))


def _result_row(table: pa.Table, r: int) -> dict[str, object]:
    return {name: table.column(i)[r].as_py() for i, name in enumerate(table.column_names)}


@dataclass
class DebugCounter:
    """A result's rows as one counter series (sorted by ``ts``; ties keep the result's order)."""

    title: str
    counters: CounterSet  # one series
    result: pa.Table
    dropped: int = 0  # rows without ts or value

    kind = COUNTER

    @property
    def series(self) -> CounterSeries:
        return self.counters.series[0]

    def __len__(self) -> int:
        return len(self.series)

    def span(self, sample: int, end_ns: int) -> tuple[int, int]:
        """(start, end) ns of sample ``sample``: it holds until the next one (the last: until ``end_ns``)."""
        ts = self.series.ts
        return int(ts[sample]), int(ts[sample + 1]) if sample + 1 < len(ts) else max(int(end_ns), int(ts[sample]))

    def text(self, sample: int) -> str:
        return f"{self.title} = {self.series.value[sample]:g}"

    def row_values(self, sample: int) -> dict[str, object]:
        """The result row sample ``sample`` came from, column by column."""
        return _result_row(self.result, int(self.series.event[sample]))


def _numbers(table: pa.Table, name: str, to: pa.DataType) -> tuple[np.ndarray, np.ndarray]:
    """Column ``name`` as numpy ``to`` values and a validity mask (NULL: False, value 0)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    col = table.column(name).combine_chunks()
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.dictionary_decode(), t.value_type
    if pa.types.is_timestamp(t) or pa.types.is_duration(t):  # DuckDB's TIMESTAMP / INTERVAL: as ns
        col = col.cast(pa.timestamp("ns") if pa.types.is_timestamp(t) else pa.duration("ns")).cast(pa.int64())
    elif not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
              or pa.types.is_boolean(t) or pa.types.is_null(t)):  # fmt: skip
        raise DebugTrackError(f"column {name} is {t}, not a number")
    try:
        # a fractional ts or dur (computed: avg(dur), dur / 2.0) is cut to its nanosecond; out of range is an
        # error, not a wrap
        if pa.types.is_integer(to) and pa.types.is_decimal(t) and t.scale > 0:
            col = pc.round(col, 0, round_mode="towards_zero")
        float_to_int = pa.types.is_floating(t) and pa.types.is_integer(to)
        col = pc.cast(col, pa.float64() if float_to_int else to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise DebugTrackError(f"column {name}: {str(exc).splitlines()[0]}") from exc
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    values = np.asarray(col.fill_null(0).to_numpy(zero_copy_only=False))
    if float_to_int:  # NaN, infinities and floats past int64 are no time: left out like NULL
        valid &= np.isfinite(values) & (np.abs(values) < 2.0**63)
        values = np.where(valid, values, 0.0)
    return values.astype(to.to_pandas_dtype(), copy=False), valid


def _labels(table: pa.Table, title: str, rows: np.ndarray) -> tuple[np.ndarray, pa.Array]:
    """Label id of each of ``rows`` and the distinct labels: the ``name`` column as text (NULL: "NULL"), or
    the title for every box when there is none."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if "name" not in table.column_names:
        return np.zeros(len(rows), np.int32), pa.array([title], pa.string())
    col = table.column("name").combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        col = pc.cast(col, pa.string())
    col = col.fill_null("NULL").take(pa.array(rows))
    encoded = pc.dictionary_encode(col)
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32), encoded.dictionary


def debug_slices(table: pa.Table, title: str, start_ns: int, end_ns: int) -> DebugSlices:
    """The rows of ``table`` (columns ``ts``, ``dur``, optional ``name``) as boxes within the trace that
    spans ``start_ns .. end_ns`` (a negative ``dur`` runs to its end; a box ending before its start is left
    out with the NULLs)."""
    import pyarrow as pa
    ts, ts_ok = _numbers(table, "ts", pa.int64())
    dur, dur_ok = _numbers(table, "dur", pa.int64())
    start, dur = ts, dur
    # a duration past int64 is cut at its end (a corrupt or computed value must not wrap around)
    room = _I64_MAX - np.maximum(start, 0)
    end = np.where(dur < 0, np.maximum(start, end_ns), start + np.minimum(np.maximum(dur, 0), room))
    keep = np.flatnonzero(ts_ok & dur_ok & ((end > start_ns) | (start >= start_ns)))
    start, end = np.maximum(start[keep], start_ns), end[keep]
    # lanes by first fit in start order (longest first on ties): an enclosing span gets the lower lane
    order = lexsort((start - end, start))
    lane = np.empty(len(order), np.int32)
    lane[order] = assign_lanes(np.zeros(len(order), np.int8), start[order], end[order])
    final = lexsort((start, lane))
    start, end, lane, rows = start[final], end[final], lane[final], keep[final].astype(np.int64)
    name, labels = _labels(table, title, rows)
    n_lanes = int(lane.max()) + 1 if len(lane) else 0
    bounds = np.searchsorted(lane, np.arange(n_lanes + 1))
    origin = int(start.min()) if len(start) else 0
    span = int(end.max()) - origin if len(end) else 1
    pyramid = SlicePyramid(start, end - start, lane, n_lanes, origin, max(span, 1))
    return DebugSlices(title, start, end, name, labels, lane, rows,
                       list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)), pyramid, table,
                       dropped=len(ts) - len(keep))  # fmt: skip


def debug_counter(table: pa.Table, title: str, start_ns: int) -> DebugCounter:
    """The rows of ``table`` (columns ``ts`` and ``value``) as one counter series from ``start_ns`` (the
    trace's start) on."""
    import pyarrow as pa
    ts, ts_ok = _numbers(table, "ts", pa.int64())
    value, value_ok = _numbers(table, "value", pa.float64())
    keep = np.flatnonzero(ts_ok & value_ok)
    order = keep[np.argsort(ts[keep], kind="stable")]
    series = CounterSeries(pid=0, name=title, counter_id=0, arg_name="value", ts=np.maximum(ts[order], start_ns),
                           value=value[order], event=order.astype(np.int32))  # fmt: skip
    return DebugCounter(title, CounterSet([series]), table, dropped=len(ts) - len(keep))


def debug_track(table: pa.Table, title: str, start_ns: int, end_ns: int) -> DebugSlices | DebugCounter:
    """The track a result makes (:func:`debug_track_kind`) on a trace spanning ``start_ns .. end_ns``;
    :class:`DebugTrackError` when it makes none."""
    kind = debug_track_kind(table.column_names)
    if kind == SLICES:
        return debug_slices(table, title, start_ns, end_ns)
    if kind == COUNTER:
        return debug_counter(table, title, start_ns)
    raise DebugTrackError("a debug track needs columns ts and dur (slices) or ts and value (a counter)")
