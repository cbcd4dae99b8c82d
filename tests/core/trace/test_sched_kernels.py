"""The scheduling replay in C (core/trace/sched_kernels.c) builds exactly the numpy path's tables: on generated
schedules, on random records that need the sorts (switches out of time order, ties between a thread's switch
out, wakeup and switch in, idle threads, koids past the direct table and past 32 bits) and on hostile variants
of real traces."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace import compiled, sched
from fxscope.core.trace.objects import ObjectLabels
from fxscope.core.trace.sched import build_sched
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.reader import read_fxt_bytes
from tests.compiled_loops import choose_loops


@pytest.fixture
def kernels(monkeypatch):
    """The compiled module (a failure when not built, skipped under FXSCOPE_NO_COMPILED)."""
    choose_loops("compiled", monkeypatch, compiled, "sched_kernels")
    return compiled.sched_kernels


def _tables(tables) -> dict[str, np.ndarray]:
    out = {}
    for name in ("cpu_slices", "thread_states", "wakeups"):
        for key, value in vars(getattr(tables, name)).items():
            if isinstance(value, np.ndarray):
                out[f"{name}.{key}"] = value
    return out


def assert_same_sched(cols, monkeypatch, module, **kw) -> int:
    """Both paths' tables of ``cols`` are equal, dtypes too; returns the number of thread states."""
    monkeypatch.setattr(compiled, "sched_kernels", None)
    want = _tables(build_sched(cols, **kw))
    monkeypatch.setattr(compiled, "sched_kernels", module)
    got = _tables(build_sched(cols, **kw))
    assert got.keys() == want.keys()
    for key in want:
        assert got[key].dtype == want[key].dtype and np.array_equal(got[key], want[key]), key
    return len(want["thread_states.start"])


def test_same_tables_of_generated_schedules(kernels, monkeypatch):
    for data in (generate_trace(20_000, seed=4, scheduling=True), generate_trace(5_000, seed=9, scheduling=True,
                                                                                   start_ns=1 << 40)):  # fmt: skip
        cols = read_fxt_bytes(data)
        n, pids = len(cols.sched_kind), np.zeros(len(cols.sched_kind), np.uint32)
        assert sched._replay_compiled(cols, *(np.zeros(n, bool),) * 2, pids, pids, np.uint32, 0) is not None
        assert assert_same_sched(cols, monkeypatch, kernels) > 300


def _records(rng: np.random.Generator, n: int, koids: np.ndarray, wide: bool):
    """Random scheduling columns: few distinct times (ties), CPUs 0..3 and one far one, koids from
    ``koids`` (0: the idle thread), every kind, every state."""
    kind = rng.integers(0, 3, n).astype(np.uint8)
    koid = np.uint64 if wide else np.uint32
    tids = koids.astype(koid)
    return SimpleNamespace(
        sched_kind=kind, sched_ts=rng.integers(-5, 40, n).astype(np.int64),
        sched_cpu=rng.choice(np.array([0, 1, 2, 3, 65535], np.uint16), n),
        sched_out_tid=np.where(kind == 2, koid(0), rng.choice(tids, n)).astype(koid), sched_in_tid=rng.choice(tids, n),
        sched_out_state=rng.integers(0, 9, n).astype(np.uint8), sched_waker_tid=rng.choice(tids, n),
        sched_in_pid=rng.integers(0, 3, n).astype(np.uint64), sched_out_pid=rng.integers(0, 3, n).astype(np.uint64),
        sched_in_prio=rng.integers(0, 2, n).astype(np.uint8), sched_out_prio=rng.integers(0, 2, n).astype(np.uint8),
        kernel_objects=[], userspace_objects=[], threads_tid=np.array([5, 70_000], np.uint64),
        threads_pid=np.array([1, 2], np.uint64), ev_ts=np.zeros(0, np.int64),
    )  # fmt: skip


@pytest.mark.parametrize("wide", [False, True])
def test_same_tables_of_random_records(kernels, monkeypatch, wide):
    rng = np.random.default_rng(18)
    koids = np.array([0, 5, 6, 7, 70_000, (1 << 40) + 3 if wide else 4_000_000_000], np.uint64)
    for n in (0, 1, 2, 7, 50, 3000):
        for _ in range(5):
            cols = _records(rng, n, koids, wide)
            for end in (None, -100, 10):
                assert_same_sched(cols, monkeypatch, kernels, trace_end=end, labels=ObjectLabels(cols))


def test_same_tables_of_hostile_variants(kernels, monkeypatch, cut_and_flip):
    rng = random.Random(20)
    sources = [generate_trace(3000, seed=3, scheduling=True), generate_trace(2000, seed=5, scheduling=True)]
    cases = 0
    for data in sources:
        for _ in range(40):
            try:
                cols = read_fxt_bytes(cut_and_flip(data, rng, 8, len(data) // 2))
            except FormatError:
                continue
            assert_same_sched(cols, monkeypatch, kernels)
            cases += 1
    assert cases >= 50


def test_replay_checks_its_outputs(kernels):
    cols = _records(np.random.default_rng(1), 100, np.array([0, 5, 6], np.uint64), False)
    n = len(cols.sched_kind)
    idle = np.zeros(n, np.uint8)
    pid = np.zeros(n, np.uint32)

    def outputs(room: int, koid=np.uint32) -> list[np.ndarray]:
        return [np.empty(room, np.uint16), np.empty(room, np.int64), np.empty(room, np.int64), np.empty(room, koid),
                np.empty(room, koid), np.empty(room, koid), np.empty(room, koid), np.empty(room, np.int64),
                np.empty(room, np.int64), np.empty(room, np.uint8), np.empty(room, np.uint16)]  # fmt: skip

    def replay(ts=cols.sched_ts, in_pid=pid, out=None, wide=False):
        return kernels.sched_replay(cols.sched_kind, ts, cols.sched_cpu, cols.sched_out_tid, False,
                                    cols.sched_in_tid, False, cols.sched_out_state, idle, idle, in_pid, pid, wide, 0,
                                    *(outputs(3 * n) if out is None else out))  # fmt: skip

    assert replay()[1] > 0
    with pytest.raises(ValueError):  # outputs too short for the records: refused, nothing written past them
        replay(out=outputs(3))
    with pytest.raises(ValueError):  # a column of the wrong length
        replay(ts=cols.sched_ts[:50])
    with pytest.raises(ValueError):  # processes of another length, or not of the outputs' koid type
        replay(in_pid=pid[:50])
    with pytest.raises(ValueError):
        replay(in_pid=pid.astype(np.uint64), wide=False, out=outputs(3 * n, np.uint64))
    for i in range(11):  # a table's outputs of differing room
        out = outputs(3 * n)
        out[i] = out[i][:-1]
        with pytest.raises(ValueError):
            replay(out=out)


@pytest.mark.parametrize("wide", [False, True])
def test_record_processes_block_by_block_are_the_whole_columns(monkeypatch, wide):
    """The records' processes and idle flags, made a block at a time (blocks of 7 records here), are what the
    whole columns' expressions give: a legacy switch's own process, else its threads' (0 when unknown); a
    process koid past 32 bits in a later block widens the column, values kept."""
    monkeypatch.setattr(sched, "RECORD_BLOCK", 7)
    rng = np.random.default_rng(5)
    koids = np.array([0, 5, 6, 7, 70_000, (1 << 40) + 3 if wide else 4_000_000_000], np.uint64)
    for n in (0, 1, 6, 7, 8, 100, 3000):
        cols = _records(rng, n, koids, wide)
        if n > 20 and wide:  # a legacy record of a late block names a process past 32 bits
            cols.sched_kind[n - 3], cols.sched_in_pid[n - 3] = 0, (1 << 35) + 1
        labels = ObjectLabels(cols)
        in_pid, out_pid, in_idle, out_idle = sched._record_processes(cols, labels)
        legacy = cols.sched_kind == 0
        for got, tid, pid in ((in_pid, cols.sched_in_tid, cols.sched_in_pid),
                              (out_pid, cols.sched_out_tid, cols.sched_out_pid)):  # fmt: skip
            want = np.where(legacy, pid, labels.pids_of(tid))
            assert np.array_equal(got, want) and got.dtype == (np.uint64 if int(want.max(initial=0)) >> 32 else np.uint32)
        for got, tid, pid, prio in ((in_idle, cols.sched_in_tid, cols.sched_in_pid, cols.sched_in_prio),
                                    (out_idle, cols.sched_out_tid, cols.sched_out_pid, cols.sched_out_prio)):  # fmt: skip
            assert np.array_equal(got, (tid == 0) | (legacy & (pid == 0) & (prio == 0)))
