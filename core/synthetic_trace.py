"""A deterministic synthetic FXT trace: the input of ``fxscope generate``, the demo and the benchmarks.

The trace looks like a small system: three providers (each with its own string/thread tables and tick
rate), several processes and threads, nested durations, async spans, flows that hop between threads,
counters, instants, scheduling records of all three kinds, logs (a few with symbolizer markup such as
``{{{pc:0x1234}}}``), kernel and userspace objects, every argument type, blobs and large records.

Most events come from a fixed 12-event "unit" (a frame: outer/inner durations, an instant, a counter,
async begin/instant/end, flow end/begin, a complete event) built for many units at once with numpy, so a
5-million-event trace takes seconds, not minutes. Every chunk of units is preceded by a "rich" block
written record by record with :class:`~fxscope.formats.fxt.writer.FxtWriter` that carries the rarer records.
The same ``(events, seed, big_endian)`` always gives the same bytes.
"""

from __future__ import annotations

import os

import numpy as np

from fxscope.core.atomic_file import write_atomic
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.writer import FxtWriter

PROVIDERS = [
    (1, "compositor", 1_000_000_000),
    (2, "netstack", 1_000_000_000),
    (3, "kernel-sampler", 2_000_000_000),
]
THREADS_PER_PROVIDER = 4
CATEGORIES = ["app", "render", "io"]
OUTER = ["frame", "rpc", "commit", "layout"]
INNER = ["draw", "decode", "read", "write", "flush"]
INSTANTS = ["vsync", "tick", "packet"]
COUNTERS = ["queue_depth", "memory"]
ASYNC = ["fetch", "upload"]
ARG_NAMES = ["count", "bytes", "ratio", "status", "ptr", "flow"]
ARG_VALUES = ["ok", "retry", "error"]
STRINGS = CATEGORIES + OUTER + INNER + INSTANTS + COUNTERS + ASYNC + ARG_NAMES + ARG_VALUES
SID = {s: i + 1 for i, s in enumerate(STRINGS)}  # string index (same in every provider's table)
DYNAMIC_INDEX = 60  # re-registered in every chunk with a new value

UNIT_KINDS = [
    K.DURATION_BEGIN, K.FLOW_END, K.DURATION_BEGIN, K.INSTANT, K.ASYNC_BEGIN, K.DURATION_END,
    K.COUNTER, K.ASYNC_INSTANT, K.FLOW_BEGIN, K.DURATION_END, K.DURATION_COMPLETE, K.ASYNC_END,
]  # fmt: skip
UNIT_WORDS = [3, 3, 2, 4, 3, 2, 5, 3, 3, 3, 5, 3]
UNIT_EVENTS = len(UNIT_KINDS)
UNITS_PER_CHUNK = 1500
UNIT_NS = 20_000


def _pid(provider: int) -> int:
    return 1000 * provider


def _tid(provider: int, t: int) -> int:
    return 1000 * provider + 10 + t


class _Rich:
    """Writes the rare records of one chunk and counts the events it wrote."""

    def __init__(self, w: FxtWriter) -> None:
        self.w = w
        self.events = 0

    def event(self, *args, **kwargs) -> None:
        self.w.event(*args, **kwargs)
        self.events += 1


def _preamble(w: FxtWriter) -> None:
    for pid_, name, tps in PROVIDERS:
        w.provider_info(pid_, name)
        if pid_ == 2:  # the Jane Street 4-word initialization variant (base tick, base time)
            w.initialization(tps, extra_words=(0, 1_700_000_000_000_000_000))
        else:
            w.initialization(tps)
        for s, i in SID.items():
            w.string(i, s)
        for t in range(THREADS_PER_PROVIDER):
            w.thread(t + 1, _pid(pid_), _tid(pid_, t))
        w.kernel_object(_pid(pid_), 1, f"{name}.cm")
        for t in range(THREADS_PER_PROVIDER):
            w.kernel_object(_tid(pid_, t), 2, f"{name}-worker-{t}", [("process", A.KOID, _pid(pid_))])
        w.userspace_object(0x7F000000 + pid_ * 0x100, 1, f"{name}::Session", [("refs", A.UINT32, 2)])
        w.userspace_object(0x7F000080 + pid_ * 0x100, (_pid(pid_),), "Buffer", [("size", A.UINT64, 4096)])


def _rich_block(
    w: FxtWriter, chunk: int, provider: int, tps: int, t0: int, first_flow: int, blob_arg: bool = True,
    sched: bool = True,
) -> int:
    """Rare records for one chunk in a 10 us window starting at ``t0`` ns; returns the events written.
    ``sched=False`` leaves out its scheduling records (a whole schedule is written apart, and these would
    contradict it)."""
    r = _Rich(w)
    tk = tps // 1_000_000_000  # ticks per ns (1 or 2)

    def ts(ns: int) -> int:
        return (t0 + ns) * tk

    w.string(DYNAMIC_INDEX, f"dynamic-{chunk}")
    every_arg = [
        ("null", A.NULL, None),
        ("i32", A.INT32, -chunk),
        ("u32", A.UINT32, chunk),
        ("i64", A.INT64, -(1 << 40) - chunk),
        ("u64", A.UINT64, (1 << 63) + chunk),
        ("f64", A.DOUBLE, chunk / 3),
        (SID["status"], A.STRING, SID["ok"]),
        ("inline_str", A.STRING, f"chunk {chunk}"),
        (SID["ptr"], A.POINTER, 0x7F000000 + provider * 0x100),
        ("koid", A.KOID, _tid(provider, 0)),
        ("flag", A.BOOL, chunk % 2 == 0),
        ("blob", A.BLOB, bytes(range(chunk % 7, chunk % 7 + 11))),
    ][: None if blob_arg else -1]
    r.event(K.INSTANT, ts(100), 1, "rich", "every-arg-type", every_arg)
    r.event(
        K.INSTANT, ts(200), 2, SID["app"], DYNAMIC_INDEX, [("scope", A.STRING, "global")], extra_words=(2,)
    )
    # a thread only ever referenced inline
    inline_thread = (_pid(provider), _tid(provider, 9))
    r.event(K.DURATION_BEGIN, ts(300), inline_thread, SID["io"], "inline-thread-work")
    r.event(K.COUNTER, ts(400), inline_thread, SID["app"], SID["memory"],
            [("heap", A.INT64, 1 << 20 + chunk % 5), ("slabs", A.UINT32, 10 + chunk % 3)], data=provider)  # fmt: skip
    r.event(K.DURATION_END, ts(900), inline_thread, SID["io"], "inline-thread-work")
    # a flow step on another thread, between the previous chunk's last flow begin and this chunk's end
    if chunk > 0:
        r.event(K.DURATION_BEGIN, ts(1000), 3, SID["render"], "relay")
        r.event(K.FLOW_STEP, ts(1100), 3, SID["render"], SID["flow"], data=first_flow)
        r.event(K.DURATION_END, ts(1500), 3, SID["render"], "relay")
    cpu = chunk % 4
    if blob_arg and sched:  # the peer reader does not know legacy context switches either
        w.legacy_context_switch(ts(1600), cpu, 3, 1, (_pid(provider), _tid(provider, 1)), 20, 24)
    if sched:
        w.context_switch(ts(1700), cpu, 2, _tid(provider, 1), _tid(provider, 2),
                         [("incoming_weight", A.INT32, 100), ("outgoing_weight", A.INT32, 80)])  # fmt: skip
        w.thread_wakeup(
            ts(1800), cpu, _tid(provider, 3), [("weight", A.INT32, 50), ("waker", A.KOID, _tid(provider, 2))]
        )
        # and the CPU goes idle again: a thread runs on one CPU at a time, chunk after chunk
        w.context_switch(ts(1850), cpu, 3, _tid(provider, 2), 0)
    w.log(ts(1900), 1, f"chunk {chunk}: frames queued")
    if chunk % 3 == 0:
        w.log(
            ts(2000),
            (_pid(provider), _tid(provider, 0)),
            "crash report:\n{{{reset}}}\n{{{module:0:libfoo.so:elf:0123456789abcdef}}}\n"
            "{{{mmap:0x1000:0x4000:load:0:rx:0x0}}}\n{{{pc:0x1234}}}\n{{{bt:0:0x1234:pc}}}",
        )
    if chunk % 5 == 0:
        w.blob("raw-data", 1, bytes((chunk + i) & 0xFF for i in range(37)))
        w.blob(SID["bytes"], 2, b"\x01\x02\x03\x04" * 8)
        w.blob("perfetto", 3, b"\x0a\x02\x08\x01")
    if chunk == 0:
        w.large_blob("debug", "big-snapshot", bytes(range(256)) * 160, ts=ts(2100), thread=1,
                     args=[("compressed", A.BOOL, False)])  # fmt: skip
        w.large_blob(SID["app"], "attachment", b"attachment payload")
        w.kernel_object(_tid(provider, 9), 2, "inline-only-thread", [("process", A.KOID, _pid(provider))])
    if chunk == 1:
        w.provider_event(provider, 0)  # "buffer filled up"
    return r.events


SCHED_CPUS = 4


def _scheduling(w: FxtWriter, rng: np.random.Generator, t_start: int, t_end: int) -> None:
    """A run of the providers' worker threads on ``SCHED_CPUS`` CPUs from ``t_start`` to ``t_end`` ns, as
    context switch and wakeup records in time order: a thread runs a burst (20-200 us), then blocks (most
    often), suspends, or is preempted when others wait; a blocked thread is woken 50-1500 us later by a
    thread then running (the wakeup names it), waits in a FIFO run queue, and the first free CPU switches
    it in after a 1-8 us latency. What the timeline's CPU lanes, state strips and wakeups are for.
    Times are written in ns: the records go in a section of provider 1 (1 GHz ticks)."""
    import heapq

    tids = [_tid(p, t) for p, _name, _tps in PROVIDERS for t in range(THREADS_PER_PROVIDER)]
    events: list[tuple[int, int, int, int]] = []  # (ts, order, what, who): 0 wake tid, 1 burst ends on cpu
    order = 0

    def push(ts: int, what: int, who: int) -> None:
        nonlocal order
        heapq.heappush(events, (ts, order, what, who))
        order += 1

    for tid in tids:
        push(t_start + int(rng.integers(0, 300_000)), 0, tid)
    running = [0] * SCHED_CPUS  # tid on each CPU, 0 idle
    queue: list[int] = []
    idle_since = [t_start] * SCHED_CPUS

    pid_of = {_tid(p, t): _pid(p) for p, _name, _tps in PROVIDERS for t in range(THREADS_PER_PROVIDER)}
    switches = 0

    def switch_in(ts: int, cpu: int, out_state: int) -> None:
        nonlocal switches
        out = running[cpu]
        nxt = queue.pop(0) if queue else 0
        if switches % 16 == 5:  # now and then the legacy record (type 8 sub-type 0), inline thread refs
            w.legacy_context_switch(ts, cpu, out_state if out else 0, (pid_of.get(out, 0), out),
                                    (pid_of.get(nxt, 0), nxt), 20 if out else 0, 20 if nxt else 0)  # fmt: skip
        else:
            w.context_switch(ts, cpu, out_state if out else 0, out, nxt,
                             [("incoming_weight", A.INT32, 100), ("outgoing_weight", A.INT32, 80)])  # fmt: skip
        switches += 1
        running[cpu] = nxt
        if nxt:
            push(ts + int(rng.integers(20_000, 200_000)), 1, cpu)
        else:
            idle_since[cpu] = ts

    while events:
        ts, _o, what, who = heapq.heappop(events)
        if ts >= t_end:
            break
        if what == 0:  # a sleeping thread is woken by whatever runs on some CPU
            cpu = int(rng.integers(0, SCHED_CPUS))
            waker = max(running[cpu], 0)  # (-1: an idle CPU claimed for a woken thread)
            w.thread_wakeup(ts, cpu, who, [("waker", A.KOID, waker)] if waker else [])
            queue.append(who)
            idle = [c for c in range(SCHED_CPUS) if running[c] == 0]
            if idle:  # an idle CPU picks it up after a short latency (as a burst end of the idle thread)
                c = min(idle, key=lambda c: idle_since[c])
                running[c] = -1  # claimed
                push(ts + int(rng.integers(1_000, 8_000)), 1, c)
        else:  # the burst on CPU ``who`` ends
            out = running[who]
            if out == -1:  # an idle CPU claimed for a woken thread
                running[who] = 0
                switch_in(ts, who, 0)
                continue
            roll = rng.random()
            if queue and roll < 0.3:  # preempted: stays runnable, back in the queue
                queue.append(out)
                switch_in(ts, who, 1)
            else:
                state = 2 if roll > 0.9 else 3  # suspended or blocked, woken later
                push(ts + int(rng.integers(50_000, 1_500_000)), 0, out)
                switch_in(ts, who, state)


def _bulk_units(rng: np.random.Generator, n: int, u0: int, t0: int, tk: int, big_endian: bool) -> bytes:
    """``n`` 12-event units starting at global unit ``u0`` and time ``t0`` ns, as bytes."""
    if n <= 0:
        return b""
    u = np.arange(u0, u0 + n, dtype=np.uint64)
    words = np.zeros((n, sum(UNIT_WORDS)), dtype=np.uint64)
    gaps = rng.integers(200, 1500, size=(n, UNIT_EVENTS), dtype=np.int64)
    offs = np.cumsum(gaps, axis=1)
    # in uint64: a trace stamped near 2**63 ns from boot has 2 GHz tick values past the int64 range
    base = np.uint64(t0) + (np.arange(n, dtype=np.uint64) * np.uint64(UNIT_NS))
    ticks = (base[:, None] + offs.astype(np.uint64)) * np.uint64(tk)
    thread = rng.integers(1, THREADS_PER_PROVIDER + 1, size=n).astype(np.uint64)
    cat = np.array([SID[c] for c in CATEGORIES], np.uint64)[rng.integers(0, len(CATEGORIES), size=n)]

    def pick(names: list[str]) -> np.ndarray:
        return np.array([SID[s] for s in names], np.uint64)[rng.integers(0, len(names), size=n)]

    outer, inner = pick(OUTER), pick(INNER)
    names = [outer, SID["flow"], inner, pick(INSTANTS), pick(ASYNC), inner, pick(COUNTERS), None, SID["flow"],
             outer, pick(INNER), None]  # fmt: skip
    # async spans cross units: their name and category depend only on the id so begin and end match
    async_ids = np.array([SID[s] for s in ASYNC], np.uint64)
    names[4] = names[7] = async_ids[((u + np.uint64(1)) % np.uint64(len(ASYNC))).astype(np.int64)]
    names[11] = async_ids[(u % np.uint64(len(ASYNC))).astype(np.int64)]
    nargs = [1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0]
    kinds = np.array(UNIT_KINDS, np.uint64)
    col = 0
    for r, size in enumerate(UNIT_WORDS):
        kind = np.full(n, kinds[r], np.uint64)
        if r in (1, 11) and u0 == 0:
            kind[0] = K.INSTANT  # nothing to end yet: an instant with a (thread) scope word instead
        name = names[r]
        words[:, col] = (
            np.uint64(4) | np.uint64(size << 4) | (kind << np.uint64(16)) | np.uint64(nargs[r] << 20)
            | (thread << np.uint64(24)) | ((np.uint64(SID["io"]) if r in (4, 7, 11) else cat) << np.uint64(32))
            | (np.asarray(name, np.uint64) << np.uint64(48))
        )  # fmt: skip
        words[:, col + 1] = ticks[:, r]
        col += size
    # per-record payloads (column = start of record + offset)
    starts = np.cumsum([0, *UNIT_WORDS[:-1]])
    words[:, starts[0] + 2] = np.uint64(A.INT32 | (1 << 4) | (SID["count"] << 16)) | (
        u & np.uint64(0xFFFF)
    ) << np.uint64(32)
    words[:, starts[1] + 2] = np.where(u == 0, 0, u)  # flow end: id u (begun by the previous unit)
    words[:, starts[3] + 2] = np.uint64(A.UINT64 | (2 << 4) | (SID["bytes"] << 16))
    words[:, starts[3] + 3] = rng.integers(0, 1 << 20, size=n).astype(np.uint64)
    words[:, starts[4] + 2] = u + np.uint64(1)  # async id
    words[:, starts[6] + 2] = np.uint64(A.DOUBLE | (2 << 4) | (SID["ratio"] << 16))
    words[:, starts[6] + 3] = rng.random(n).view(np.uint64)
    words[:, starts[6] + 4] = thread  # counter id
    words[:, starts[7] + 2] = u + np.uint64(1)
    words[:, starts[8] + 2] = u + np.uint64(1)  # flow begin: id u + 1
    status = np.array([SID[s] for s in ARG_VALUES], np.uint64)[rng.integers(0, 3, size=n)]
    words[:, starts[9] + 2] = np.uint64(A.STRING | (1 << 4) | (SID["status"] << 16)) | (
        status << np.uint64(32)
    )
    words[:, starts[10] + 2] = np.uint64(A.POINTER | (2 << 4) | (SID["ptr"] << 16))
    words[:, starts[10] + 3] = np.uint64(0x7F000000) + (thread << np.uint64(8))
    words[:, starts[10] + 4] = ticks[:, 10] + (gaps[:, 11] // 2 * tk).astype(np.uint64)  # end time
    words[:, starts[11] + 2] = np.where(u == 0, 0, u)  # async end of the previous unit's span
    return words.astype(">u8" if big_endian else "<u8").tobytes()


EXTRA_THREADS_PER_PROCESS = 20
EXTRA_PID_BASE = 100_000


def _extra_threads(count: int, t_start: int, t_end: int, big_endian: bool) -> bytes:
    """``count`` more threads (inline thread references, processes of :data:`EXTRA_THREADS_PER_PROCESS`)
    in a section of provider 1 (1 GHz ticks), each with two nested slices, a log record and a counter
    sample spread over [t_start, t_end) ns; every process and thread is named."""
    w = FxtWriter(big_endian=big_endian, magic=False)
    w.provider_section(PROVIDERS[0][0])
    span = max(t_end - t_start, 1000)
    step = span // (count + 1)
    for i in range(count):
        pid = EXTRA_PID_BASE + 1000 * (i // EXTRA_THREADS_PER_PROCESS)
        tid = pid + 1 + i % EXTRA_THREADS_PER_PROCESS
        if i % EXTRA_THREADS_PER_PROCESS == 0:
            w.kernel_object(pid, 1, f"service-{i // EXTRA_THREADS_PER_PROCESS}")
        w.kernel_object(tid, 2, f"worker-{i}", [("process", A.KOID, pid)])
        a = t_start + i * step
        b = a + max(step, 4)
        thread = (pid, tid)
        w.event(K.DURATION_BEGIN, a, thread, SID["app"], SID["rpc"], [(SID["count"], A.INT32, i)])
        w.event(K.DURATION_COMPLETE, a + (b - a) // 4, thread, SID["app"], SID["read"], data=a + (b - a) // 2)
        w.event(K.COUNTER, a + (b - a) // 3, thread, SID["app"], SID["queue_depth"],
                [("depth", A.INT64, i)], data=0)  # fmt: skip
        w.event(K.DURATION_END, b, thread, SID["app"], SID["rpc"])
        w.log(a + (b - a) // 2, thread, f"worker {i} done")
    return w.getvalue()


#: the latest first timestamp: the 2 GHz provider's ticks of a trace starting there fit 64 bits
MAX_START_NS = (1 << 63) - (1 << 40)


def generate_trace(
    events: int, seed: int = 1, big_endian: bool = False, peer_compatible: bool = False,
    crash_log: str | None = None, scheduling: bool = False, start_ns: int = 0, extra_threads: int = 0,
    providers_in_turn: bool = False,
) -> bytes:
    """The bytes of a synthetic trace with exactly ``events`` event records.

    ``peer_compatible`` leaves out the blob argument (type 10), which the pure-Python ``fxt`` package
    rejects, and the legacy context switch, which it does not know, so that the benchmark can run that peer on the same file.
    ``crash_log``: a log text (e.g. a crash report in symbolizer markup) appended as log records, one per
    line, of the first provider's first thread after the last event, as a crashing component's logger writes it.
    ``scheduling`` adds a busy four-CPU schedule of the worker threads over the whole trace (see
    :func:`_scheduling`; the demo has it, the benchmarks' traces do not).
    ``start_ns`` shifts every timestamp: real traces are stamped from boot, hours (``2**33`` ns and more)
    or, with a bogus clock, nearly ``2**63`` ns after it (kept below ``2**63 - 2**40`` so that the 2 GHz
    provider's ticks fit 64 bits). ``extra_threads`` adds that many threads (in processes of 20), each with a
    few nested slices, a log record and a counter sample: a trace with hundreds of tracks.
    ``providers_in_turn`` writes each provider's chunks together, one provider after the other, as Fuchsia's
    trace manager saves a one-shot trace (each provider's buffer in turn): the file is then out of time order
    wherever one provider's records end and the next one's begin (else the chunks take turns in time order, as
    a streamed trace's do).
    """
    if not 0 <= start_ns <= MAX_START_NS:
        raise ValueError(f"start_ns must be between 0 and {MAX_START_NS}")
    rng = np.random.default_rng(seed)
    parts: list[bytes] = []
    w = FxtWriter(big_endian=big_endian)
    _preamble(w)
    parts.append(w.getvalue())
    remaining = max(0, events)
    per_chunk = max(20, min(UNITS_PER_CHUNK, events // (UNIT_EVENTS * 8)))  # >= 8 chunks: every provider
    unit = 0
    t0 = start_ns + 1_000_000
    chunk = 0
    chunks: list[tuple[int, int]] = []  # (provider, where its parts start) of each chunk
    while remaining > 0:
        provider, _name, tps = PROVIDERS[chunk % len(PROVIDERS)]
        chunks.append((provider, len(parts)))
        w = FxtWriter(big_endian=big_endian, magic=False)
        w.provider_section(provider)
        rich_events = _rich_block(w, chunk, provider, tps, t0, unit, not peer_compatible, not scheduling)
        if rich_events > remaining:  # tiny traces: fill with instants instead
            w = FxtWriter(big_endian=big_endian, magic=False)
            w.provider_section(provider)
            rich_events = 0
        remaining -= rich_events
        parts.append(w.getvalue())
        t0 += 10_000
        n_units = min(per_chunk, remaining // UNIT_EVENTS)
        parts.append(_bulk_units(rng, n_units, unit, t0, tps // 1_000_000_000, big_endian))
        remaining -= n_units * UNIT_EVENTS
        unit += n_units
        t0 += n_units * UNIT_NS
        if n_units < per_chunk and remaining > 0:  # the tail: single instants
            w = FxtWriter(big_endian=big_endian, magic=False)
            for i in range(remaining):
                w.event(K.INSTANT, (t0 + i * 100) * (tps // 1_000_000_000), 1 + i % THREADS_PER_PROVIDER,
                        SID["app"], SID["tick"])  # fmt: skip
            parts.append(w.getvalue())
            remaining = 0
        chunk += 1
    if providers_in_turn:  # each provider's chunks (a chunk: its parts up to the next chunk's) together, in turn
        bounds = [at for _, at in chunks] + [len(parts)]
        spans = [(provider, parts[bounds[i] : bounds[i + 1]]) for i, (provider, _) in enumerate(chunks)]
        parts = parts[: bounds[0]] + [part for p, _, _ in PROVIDERS for q, span in spans if q == p for part in span]
    if scheduling:
        w = FxtWriter(big_endian=big_endian, magic=False)
        w.provider_section(PROVIDERS[0][0])
        _scheduling(w, np.random.default_rng(seed + 1), start_ns + 1_000_000, t0)
        parts.append(w.getvalue())
    if extra_threads > 0:
        parts.append(_extra_threads(extra_threads, start_ns + 1_000_000, max(t0, start_ns + 2_000_000), big_endian))
    if crash_log:
        provider, _name, tps = PROVIDERS[0]
        w = FxtWriter(big_endian=big_endian, magic=False)
        w.provider_section(provider)
        for i, line in enumerate(crash_log.splitlines()):
            w.log((t0 + 1_000 + i * 10) * (tps // 1_000_000_000), (_pid(provider), _tid(provider, 0)), line)
        parts.append(w.getvalue())
    return b"".join(parts)


def write_trace(
    path: str | os.PathLike[str],
    events: int,
    seed: int = 1,
    big_endian: bool = False,
    peer_compatible: bool = False,
    crash_log: str | None = None,
    scheduling: bool = False,
    start_ns: int = 0,
    extra_threads: int = 0,
    providers_in_turn: bool = False,
) -> int:
    """Write :func:`generate_trace` output atomically (see :mod:`fxscope.core.atomic_file`)."""
    data = generate_trace(events, seed, big_endian, peer_compatible, crash_log, scheduling, start_ns, extra_threads,
                          providers_in_turn)
    write_atomic(path, data)
    return len(data)
