"""Which tracks a trace's timeline has and in what order, as Perfetto orders them: global instants, then
the CPUs, then one group per process (by pid) holding its process instants, its async spans, each thread
followed by its scheduling-state strip, its counters and its log records.

Decided once per trace from the model, without Qt: the widget makes one graphics item per :class:`Lane`.
"""

from __future__ import annotations

import weakref

import numpy as np

from fxscope.core.timeline.layout import CPU_GROUP, GLOBAL_GROUP, Group, Lane
from fxscope.core.trace.instants import SCOPE_GLOBAL, SCOPE_PROCESS
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import pending_tables
from fxscope.core.trace.threads import thread_pids
from fxscope.formats.fxt.coded_column import CodedColumn
from fxscope.formats.fxt.columns import EventKind

COUNTER_ROWS = 2  # a counter track is two rows high (its values need the room)


def async_track_name(model: TraceModel, pid: int) -> str:
    """An async track is named after its spans (as Perfetto names one by their common name): the name
    all its spans share, else the most frequent names ("fetch, upload", "a, b +3")."""
    t = model.async_spans
    k = int(np.searchsorted(t.pids, np.uint64(pid)))
    if k >= len(t.pids) or int(t.pids[k]) != pid:
        return "async"
    lo, hi = int(t.pid_start[k]), int(t.pid_start[k + 1])
    names, counts = np.unique(np.asarray(t.name[np.arange(lo, hi)], np.int64), return_counts=True)
    order = np.argsort(-counts, kind="stable")
    strings = model.strings
    texts = [strings[n] if 0 <= n < len(strings) else "?" for n in names[order][:3].tolist()]
    if len(names) > 3:
        return f"{texts[0]}, {texts[1]} +{len(names) - 2}"
    return ", ".join(texts) if texts else "async"


#: the key kind of a track whose table a background build is still making (it draws "building…"); its key
#: is ("building", the step it waits for, pid) and its source that step's name
BUILDING = "building"


#: events whose kinds and threads :func:`_kind_threads` examines at once
KIND_BLOCK = 1 << 20
#: the event kinds a record can say (its type field is 4 bits: spec, event records' bits 16..19)
KINDS = 16
#: per model, the process koids of each range of event kinds (:func:`_kind_pids`: asked again by each
#: track list built while that kind's table is still building)
_KIND_PIDS: weakref.WeakKeyDictionary[TraceModel, dict[tuple[int, int], list[int]]] = weakref.WeakKeyDictionary()
#: per model, :func:`_kind_code_table` of its events (None: a thread column it does not take)
_KIND_CODES: weakref.WeakKeyDictionary[TraceModel, tuple[np.ndarray, np.ndarray] | None] = weakref.WeakKeyDictionary()
#: the most threads a plain thread column may index for :func:`_kind_code_table` (its table and a block's
#: counts are 16 entries a thread)
TABLE_THREADS = 1 << 16


def _kind_pids(model: TraceModel, first: EventKind, last: EventKind) -> list[int]:
    """The process koids of the events of kinds ``first..last``, ascending: what a building track needs to
    know where it goes, without the table (once a model and range; the threads of every kind are found in
    one pass over the events, :func:`_kind_code_table`, ~0.3 s at 100M events)."""
    known = _KIND_PIDS.setdefault(model, {})
    key = (int(first), int(last))
    if key not in known:
        cols = model.cols
        n_threads = len(cols.threads_pid)
        if model not in _KIND_CODES:
            _KIND_CODES[model] = _kind_code_table(cols.ev_kind, cols.ev_thread, n_threads)
        threads = _kind_threads(cols.ev_kind, cols.ev_thread, int(first), int(last), _KIND_CODES[model])
        known[key] = sorted({int(p) for p in thread_pids(cols, threads).tolist()}) if len(threads) else []
    return known[key]


def _kind_code_table(kind, thread, n_threads: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """``(seen, threads)``: ``seen[k, c]`` whether some event of kind ``k`` names the thread of code ``c``,
    ``threads[c]`` that thread's index (-1: unresolved). The codes are a one-byte coded column's
    (:class:`~fxscope.formats.fxt.coded_column.CodedColumn`, at most 256 threads), or a plain column's
    thread indexes plus one when ``n_threads`` (the thread table's length, at most :data:`TABLE_THREADS`)
    is given; None for another column. One pass over the events, a block of :data:`KIND_BLOCK` at a time,
    counting each event's kind and code as one number (``kind * codes + code``): the three kind ranges a
    track list asks for (counters, async spans, instants) took a pass each, each gathering the threads of its
    kinds' rows (at 30M events 0.30 s for the three against 0.08 s for the table, the first frame of a
    100M-event trace waiting ~1 s for them; with 400 threads, 10M events, 0.15 s)."""
    if isinstance(thread, CodedColumn):
        if thread.index.dtype != np.uint8:
            return None
        threads = np.asarray(thread.values).astype(np.int64)
        dtype = np.uint16  # (a block's numbers: below 16 * 256)

        def codes(a: int, b: int) -> np.ndarray:
            return thread.index[a:b]  # (a code names one of the values)
    elif (isinstance(thread, np.ndarray) and thread.dtype.kind in "iu" and n_threads is not None
          and 0 <= n_threads <= TABLE_THREADS):  # fmt: skip
        threads = np.arange(-1, n_threads, dtype=np.int64)
        dtype = np.int32

        def codes(a: int, b: int) -> np.ndarray:
            code = np.clip(thread[a:b], -1, n_threads - 1).astype(np.int32)  # (the reader's are in range)
            code += 1  # (-1, unresolved: code 0)
            return code
    else:
        return None
    n_codes = max(len(threads), 1)
    size = KINDS * n_codes
    seen = np.zeros(size, bool)
    for a in range(0, len(kind), KIND_BLOCK):
        b = min(a + KIND_BLOCK, len(kind))
        number = np.asarray(kind[a:b]).astype(dtype)
        number &= KINDS - 1  # (4 bits as read; a kind column from elsewhere cannot reach past the table)
        number *= n_codes
        number += codes(a, b)
        seen |= np.bincount(number, minlength=size)[:size].astype(bool)
    return seen.reshape(KINDS, n_codes), threads


def _kind_threads(kind, thread, first: int, last: int,
                  table: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:  # fmt: skip
    """The distinct thread indexes (-1: unresolved) of the events of kinds ``first..last``, ascending: from
    ``table`` (:func:`_kind_code_table`; made here for a one-byte coded column when not given), else a block
    of :data:`KIND_BLOCK` events at a time. Not the kinds' rows and their decoded threads at once: at 10M
    events that was 35 MB of temporaries (41 MB resident until the next trim) for each track list built while
    a kind was building, the window's background build's peak with the step running beside it."""
    if table is None:
        table = _kind_code_table(kind, thread)
    if table is not None:
        seen, threads = table
        present = np.flatnonzero(seen[max(first, 0) : min(last, KINDS - 1) + 1].any(axis=0))
        return np.unique(threads[present[present < len(threads)]])
    low, span = np.uint8(first), np.uint8(last - first)
    found: set[int] = set()
    for a in range(0, len(kind), KIND_BLOCK):
        b = min(a + KIND_BLOCK, len(kind))
        selected = np.asarray(kind[a:b]) - low <= span  # (uint8: kinds below ``first`` wrap past ``span``)
        if selected.any():
            found.update(np.unique(np.asarray(thread[a:b])[selected]).tolist())
    return np.array(sorted(found), np.int64)


#: the second element of the key of a thread's state strip while it is building (its third: the thread)
STATE_STRIP = "state"
#: the threads switched to or from on some CPU, per model: where the state strips will be (see below)
_SWITCHED: weakref.WeakKeyDictionary[TraceModel, set[int]] = weakref.WeakKeyDictionary()


def _switched_tids(model: TraceModel) -> set[int]:
    """The thread koids of the context switches (idle excluded): the threads that get a state strip, for
    their "building…" strips before the scheduling tables are built (one sort of the switches' koids, ~0.4 s
    at 100M events; the tables' own rules may leave a few out, whose strips then go)."""
    found = _SWITCHED.get(model)
    if found is None:
        cols = model.cols
        if not len(cols.sched_ts):
            found = set()
        else:
            tids = np.unique(np.concatenate([np.unique(cols.sched_in_tid), np.unique(cols.sched_out_tid)]))
            found = {int(t) for t in tids.tolist() if t}
        _SWITCHED[model] = found
    return found


def _building_lane(step: str, label: str, pid: int, rows: int = 1) -> Lane:
    return Lane((BUILDING, step, pid), label, pid, rows=rows, source=step)


#: the steps whose tables the CPU lanes and thread-state strips draw: their tracks come in when all three are
#: built (the background build finishes them in any order)
SCHED_STEPS = frozenset({"sched", "sched_pyramid_cpu", "sched_pyramid_state"})


def groups_change(model: TraceModel, step: str) -> bool:
    """Whether the track list changes now that step ``step`` of ``model``'s background build is done: not for
    the overview's density, and for the scheduling steps only once the last of them is in."""
    if step == "density":
        return False
    return step not in SCHED_STEPS or not (pending_tables(model) & SCHED_STEPS)


def build_groups(model: TraceModel) -> list[Group]:
    """The timeline's groups of lanes, in display order, each lane with what the track filter matches. The
    tracks of a table that a background build is still making (:func:`fxscope.core.trace.prepare.pending_tables`)
    are each kind's "building…" lanes where its tracks will go, built from cheap facts (which processes have
    such events); the widget builds its groups again when the tables are in."""
    pending = pending_tables(model)
    by_pid: dict[int, Group] = {}
    sched_pending = bool(pending & SCHED_STEPS)
    sched = None if sched_pending else model.sched
    state_tids = set(sched.state_tids()) if sched is not None else _switched_tids(model)
    for process in model.processes:
        lanes = []
        for track in process.tracks:
            lanes.append(Lane(("thread", track.thread), track.name, process.pid, rows=track.max_depth + 1,
                              source=track))  # fmt: skip
            if track.tid in state_tids and sched is None:  # where its states will be
                lanes.append(Lane((BUILDING, STATE_STRIP, track.thread), "  state", process.pid, source="sched"))
            elif track.tid in state_tids:  # its scheduling states, right under it
                lanes.append(Lane(("state", track.thread), "  state", process.pid, source=track.tid,
                                  row_range=sched.state_rows(track.tid)))  # fmt: skip
        by_pid[process.pid] = Group(process.pid, process.name, lanes)
    if "counters" in pending:  # (their names are in the arguments, which the build decodes)
        for pid in _kind_pids(model, EventKind.COUNTER, EventKind.COUNTER):
            group = by_pid.setdefault(pid, Group(pid, model.process_name(pid), []))
            group.lanes.append(_building_lane("counters", "counters", pid, COUNTER_ROWS))
    else:
        for index, series in enumerate(model.counters.series):  # counters after the process's threads
            group = by_pid.setdefault(series.pid, Group(series.pid, model.process_name(series.pid), []))
            group.lanes.append(Lane(("counter", index), series.label, series.pid, rows=COUNTER_ROWS, source=index))
    # async spans: one track per process, first in its group (as Perfetto shows them)
    if "async_pyramid" in pending:  # (their names and lanes are the spans' layout: the build's longest step)
        for pid in _kind_pids(model, EventKind.ASYNC_BEGIN, EventKind.ASYNC_END):
            group = by_pid.setdefault(pid, Group(pid, model.process_name(pid), []))
            group.lanes.insert(0, _building_lane("async_pyramid", "async", pid))
    else:
        for pid, n_lanes in model.async_spans.tracks():
            group = by_pid.setdefault(pid, Group(pid, model.process_name(pid), []))
            group.lanes.insert(0, Lane(("async", pid), async_track_name(model, pid), pid, rows=n_lanes,
                                       source=(pid, n_lanes)))  # fmt: skip
    groups = [by_pid[pid] for pid in sorted(by_pid)]
    if sched is None:
        if len(model.cols.sched_ts):  # the CPUs (the threads' state strips come with them)
            groups.insert(0, Group(CPU_GROUP, "CPUs", [_building_lane("sched", "CPUs", CPU_GROUP)]))
        cpus = []
    else:
        cpus = sched.cpus()
    if cpus:  # CPU lanes first, as Perfetto shows them
        lanes = [Lane(("cpu", cpu), f"CPU {cpu}", CPU_GROUP, source=cpu, row_range=sched.cpu_rows(cpu))
                 for cpu in cpus]  # fmt: skip
        groups.insert(0, Group(CPU_GROUP, "CPUs", lanes))

    def group_of(pid: int) -> Group:
        """The process's group; a process with no threads, counters or async spans gets one, last."""
        group = by_pid.get(pid)
        if group is None:
            group = by_pid[pid] = Group(pid, model.process_name(pid), [])
            groups.append(group)
        return group

    # process-scope instants: a marker lane per process; global-scope instants: a lane of their own
    if "instants" in pending:  # (their scopes are in the arguments: one building lane for them all)
        global_rows = proc_rows = np.zeros(0, np.int64)
        if _kind_pids(model, EventKind.INSTANT, EventKind.INSTANT):
            groups.insert(0, Group(GLOBAL_GROUP, "global", [_building_lane("instants", "instants", GLOBAL_GROUP)]))
    else:
        inst = model.instants
        proc_rows = inst.scoped(SCOPE_PROCESS)
        global_rows = inst.scoped(SCOPE_GLOBAL)
    for pid in np.unique(inst.pid[proc_rows]).tolist() if len(proc_rows) else []:
        rows = proc_rows[inst.pid[proc_rows] == pid]
        group_of(int(pid)).lanes.insert(0, Lane(("instants", int(pid)), "instants", int(pid), source=rows))
    if len(global_rows):
        lane = Lane(("instants", GLOBAL_GROUP), "instants", GLOBAL_GROUP, source=global_rows)
        groups.insert(0, Group(GLOBAL_GROUP, "global", [lane]))
    # log records: one marker lane per process that logs, after its threads
    logs = model.logs
    for pid in np.unique(logs.pid).tolist():
        rows = np.flatnonzero(logs.pid == pid)
        group_of(int(pid)).lanes.append(Lane(("logs", int(pid)), "logs", int(pid), source=rows))
    for group in groups:  # what the track filter matches: process and thread names and ids
        for lane in group.lanes:
            kind, what = lane.key[0], lane.key[1]
            owner = model.thread_name(what) if kind in ("thread", "state") else lane.label
            lane.match = f"{group.name} {group.pid} {owner}".casefold()
    return groups


#: groups built ahead of the window (by the loader thread), each taken by the first timeline of its model
_PREBUILT: weakref.WeakKeyDictionary[TraceModel, list[Group]] = weakref.WeakKeyDictionary()


def prebuild_groups(model: TraceModel) -> None:
    """Build ``model``'s groups now (off the UI thread: ~50 ms at 10M events, names of async tracks and
    filter texts of every lane) for the timeline that :func:`take_groups` them."""
    _PREBUILT[model] = build_groups(model)


def take_groups(model: TraceModel) -> list[Group]:
    """The groups :func:`prebuild_groups` made for ``model`` (once: a group holds one timeline's state, a
    second timeline of the model gets new ones), else built now."""
    groups = _PREBUILT.pop(model, None)
    return groups if groups is not None else build_groups(model)


def thread_tracks(group: Group) -> list:
    """The thread tracks of a group (what its collapsed header's busy strip sums)."""
    return [lane.source for lane in group.lanes if lane.key[0] == "thread"]
