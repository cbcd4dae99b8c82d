"""The analysis panel's one-pass summaries (core/trace/summary_kernels.c): ``area_pass`` (the self times summed
per name and per call-path node as a depth-first walk leaves each row, no per-row self time) against the
two-pass loops it replaces (``self_times`` + ``call_nodes``), and ``name_ranks`` (the per-name order
statistics by radix selection, no sort) against the sort of (name, duration) keys that stays the fallback.
Both step aside, never guess, for rows they do not describe: a walk that is not depth-first, negative or
too long durations, too many names."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.analysis import selection, stats
from fxscope.core.analysis.call_tree import top_down
from fxscope.core.analysis.selection import Area, area_names, area_rows
from fxscope.core.analysis.stats import PERCENTILES, name_stats
from fxscope.core.trace import compiled
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt_bytes
from tests.compiled_loops import choose_loops
from tests.core.analysis.nested_trace import nested_trace


@pytest.fixture
def kernels(monkeypatch):
    """The compiled module (a failure when not built, skipped under FXSCOPE_NO_COMPILED)."""
    choose_loops("compiled", monkeypatch, compiled, "summary_kernels")
    return compiled.summary_kernels


def _by_sort(dense: np.ndarray, dur: np.ndarray, k: int) -> list[np.ndarray]:
    """The reference: each name's durations sorted, the nearest ranks read off (stats.nearest_rank)."""
    count = np.bincount(dense.astype(np.int64), minlength=k)
    order = np.lexsort((dur, dense))
    d = dur[order]
    first = np.r_[0, np.cumsum(count)[:-1]]
    safe = np.minimum(first, max(len(d) - 1, 0))
    pick = [np.where(count > 0, d[np.minimum(first + stats.nearest_rank(count, p), len(d) - 1)], 0) for p in PERCENTILES]
    lo = np.where(count > 0, d[safe] if len(d) else 0, 0)
    hi = np.where(count > 0, d[np.maximum(first + count - 1, 0)] if len(d) else 0, 0)
    return [count, lo, hi, *pick]


def _ranks(kernels, dense: np.ndarray, dur: np.ndarray, k: int):
    got = stats._compiled_ranks(dense, dur, k)
    assert got is not None
    return list(got)


@pytest.mark.parametrize("bits", [0, 1, 14, 17, 33, 47, 62])
def test_ranks_are_the_sorted_ones(kernels, bits):
    """Durations of every width (one pass up to 16 bits, more passes beyond), names of very different sizes
    (one holding most rows, some a single row), ties, and names with no row at all."""
    rng = np.random.default_rng(bits)
    n, k = 40_000, 37
    dense = np.minimum(rng.geometric(0.15, n) - 1, k - 3).astype(np.int16)  # (names k-2, k-1: no rows)
    top = (1 << bits) - 1
    dur = rng.integers(0, top + 1, n, dtype=np.int64) if bits else np.zeros(n, np.int64)
    dur[::7] = dur[3]  # ties
    dur[dense == 5] = top  # a name of one duration
    got = _ranks(kernels, dense, dur, k)
    for a, b in zip(got, _by_sort(dense, dur, k), strict=True):
        assert a.dtype == np.int64 and np.array_equal(a, b)


def test_ranks_of_one_huge_name_and_single_rows(kernels):
    rng = np.random.default_rng(3)
    dur = rng.integers(0, 1 << 40, 200_001, dtype=np.int64)
    for dense in (np.zeros(len(dur), np.int32), np.arange(len(dur), dtype=np.int32) % 3):
        k = int(dense.max()) + 1
        got = _ranks(kernels, dense, dur, k)
        for a, b in zip(got, _by_sort(dense, dur, k), strict=True):
            assert np.array_equal(a, b)
    one = np.array([12345], np.int64)
    got = _ranks(kernels, np.zeros(1, np.int16), one, 1)
    assert [int(x[0]) for x in got] == [1, 12345, 12345, 12345, 12345, 12345]


def test_ranks_with_many_names_use_more_passes(kernels):
    """16,384 names: the first pass counts 6 bits of each name's durations, the next ones 4 to 6."""
    rng = np.random.default_rng(4)
    k = 1 << 14
    dense = rng.integers(0, k, 300_000).astype(np.int16)
    dur = rng.integers(0, 1 << 30, len(dense), dtype=np.int64)
    got = _ranks(kernels, dense, dur, k)
    for a, b in zip(got, _by_sort(dense, dur, k), strict=True):
        assert np.array_equal(a, b)


def test_ranks_step_aside_for_what_they_do_not_take(kernels):
    dense = np.array([0, 1, 0], np.int16)
    assert stats._compiled_ranks(dense, np.array([5, -1, 7], np.int64), 2) is None  # a negative duration
    assert stats._compiled_ranks(np.arange(3, dtype=np.int32), np.array([1, 2, 3], np.int64), (1 << 14) + 1) is None
    assert stats._compiled_ranks(dense, np.array([5, 1 << 62, 7], np.int64), 2) is None  # past 62 bits
    out = [np.empty(2, np.int64) for _ in range(3)] + [np.empty((2, 3), np.int64)]
    fractions = np.array([0.5, 0.9, 0.99])
    with pytest.raises(ValueError):  # a name past the names counted
        kernels.name_ranks(np.array([0, 2, 1], np.int16), False, np.array([1, 2, 3], np.int64), 2, fractions, *out)
    with pytest.raises(ValueError):  # a duration column of another length
        kernels.name_ranks(dense, False, np.array([1, 2], np.int64), 2, fractions, *out)
    assert not kernels.name_ranks(dense, False, np.array([1, 9, 3], np.int64), 2, fractions, *out)  # 9: past bits



def test_ranks_fall_back_to_the_numpy_paths_sort(kernels, monkeypatch):
    """What name_ranks does not take (a negative duration: never from the slice matching) is the numpy path's."""
    dense, dur = np.array([0, 1, 0, 1], np.int16), np.array([5, -1, 7, 3], np.int64)
    got = stats._order_statistics(dense, dur, 2)
    monkeypatch.setattr(compiled, "summary_kernels", None)
    want = stats._order_statistics(dense, dur, 2)
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))


def _walk(n: int, rng: np.random.Generator) -> dict:
    """Random rows as a depth-first walk: each row's parent is the previous row or one of its ancestors."""
    par = np.full(n, -1, np.int32)
    depth = np.zeros(n, np.uint16)
    stack: list[int] = []
    for i in range(n):
        keep = int(rng.integers(0, len(stack) + 1)) if rng.random() < 0.6 else len(stack)
        del stack[keep:]
        par[i] = stack[-1] if stack else -1
        depth[i] = len(stack)
        stack.append(i)
    clipped = rng.integers(0, 1000, n).astype(np.int64)
    return {"par": par, "depth": depth, "dense": rng.integers(0, 5, n).astype(np.int16), "clipped": clipped}


def _two_passes(kernels, r: dict, hit: bytes, k: int):
    n = len(r["par"])
    self_, total, self_total = np.empty(n), np.zeros(k), np.zeros(k)
    kernels.self_times(r["par"], False, r["clipped"], r["dense"], False, hit, self_, total, self_total)
    node_of = np.empty(n, np.int32)
    out = kernels.call_nodes(r["par"], False, r["depth"], r["dense"], False, hit, r["clipped"], self_, node_of, False, k)
    return total, self_total, out, node_of


def _one_pass(kernels, r: dict, hit: bytes, k: int, nodes: bool = True):
    n = len(r["par"])
    total, self_total = np.zeros(k), np.zeros(k)
    node_of = np.empty(n if nodes else 0, np.int32)
    out = kernels.area_pass(r["par"], False, r["depth"] if nodes else b"", r["dense"], False, hit, r["clipped"], total,
                            self_total, node_of, False)  # fmt: skip
    return total, self_total, out, node_of


def test_one_pass_is_the_two_passes(kernels):
    rng = np.random.default_rng(8)
    for _ in range(5):
        r = _walk(3000, rng)
        for hit in (b"", (rng.random(3000) < 0.7).astype(np.uint8).tobytes()):
            want, got = _two_passes(kernels, r, hit, 5), _one_pass(kernels, r, hit, 5)
            assert np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])
            assert want[2] == got[2] and np.array_equal(want[3], got[3])
            sums = _one_pass(kernels, r, hit, 5, nodes=False)  # (the sums alone: no nodes)
            assert sums[2] == () and np.array_equal(sums[0], want[0]) and np.array_equal(sums[1], want[1])


def test_nodes_alone_are_the_nodes_found_with_each_rows(kernels):
    """``nodes_only``: the same nodes (and sums) as the pass that writes each row's node, none written; a
    ``node_of`` given with it is refused (the caller meant one or the other)."""
    rng = np.random.default_rng(21)
    for _ in range(5):
        r = _walk(3000, rng)
        for hit in (b"", (rng.random(3000) < 0.7).astype(np.uint8).tobytes()):
            want = _one_pass(kernels, r, hit, 5)
            total, self_total = np.zeros(5), np.zeros(5)
            got = kernels.area_pass(r["par"], False, r["depth"], r["dense"], False, hit, r["clipped"], total,
                                    self_total, np.empty(0, np.int32), False, 0, True)  # fmt: skip
            assert got == want[2] and len(got[0]) > 8  # (the nodes' columns: bytes)
            assert np.array_equal(total, want[0]) and np.array_equal(self_total, want[1])
    with pytest.raises(ValueError, match="nodes_only"):
        kernels.area_pass(r["par"], False, r["depth"], r["dense"], False, b"", r["clipped"], np.zeros(5),
                          np.zeros(5), np.empty(3000, np.int32), False, 0, True)  # fmt: skip


def test_one_pass_takes_late_children_and_steps_aside_for_what_is_not_a_walk(kernels):
    # 0 <- 1, 0 <- 2, 1 <- 3: row 3 comes after its parent was left (row 2 came between: a zero-length slice
    # at its parent's end sorts after a slice one level up that starts there): it takes its node under row 1
    r = {"par": np.array([-1, 0, 0, 1], np.int32), "depth": np.array([0, 1, 1, 2], np.uint16),
         "dense": np.array([0, 1, 1, 2], np.int16), "clipped": np.array([100, 30, 30, 0], np.int64)}  # fmt: skip
    want, got = _two_passes(kernels, r, b"", 3), _one_pass(kernels, r, b"", 3)
    assert got[2] is not None and want[2] == got[2] and np.array_equal(want[3], got[3])
    assert np.array_equal(want[1], got[1]) and got[1].tolist() == [40, 60, 0]
    hit = bytes([1, 0, 1, 1])
    want, got = _two_passes(kernels, r, hit, 3), _one_pass(kernels, r, hit, 3)
    assert want[2] == got[2] and np.array_equal(want[1], got[1]) and np.array_equal(want[0], got[0])
    # a late child with time in the range: its parent's self time was final (the two passes decide)
    assert _one_pass(kernels, dict(r, clipped=np.array([100, 30, 30, 10], np.int64)), b"", 3)[2] is None
    # a parent left 5,000 rows before its child: past the rows kept, not a walk the pass takes
    far = 5003
    par = np.zeros(far, np.int32)
    par[0], par[-1] = -1, 1
    rf = {"par": par, "depth": np.r_[0, np.ones(far - 2), 2].astype(np.uint16), "dense": np.zeros(far, np.int16),
          "clipped": np.ones(far, np.int64)}  # fmt: skip
    assert _one_pass(kernels, rf, b"", 1)[2] is None
    assert _one_pass(kernels, rf, b"", 1, nodes=False)[2] is None
    assert _two_passes(kernels, rf, b"", 1)[2] is not None  # (call_nodes takes it: the fallback)
    r2 = dict(r, par=np.array([-1, 0, 1, 1], np.int32), depth=np.array([0, 1, 3, 2], np.uint16))  # a level skipped
    assert _one_pass(kernels, r2, b"", 3)[2] is None
    with pytest.raises(ValueError):  # a parent past the rows
        _one_pass(kernels, dict(r, par=np.array([-1, 0, 9, 1], np.int32)), b"", 3)
    with pytest.raises(ValueError):  # a name past the names summed
        _one_pass(kernels, r, b"", 2)
    with pytest.raises(ValueError):  # a hit mask of another length
        _one_pass(kernels, r, b"\x01", 3)


def test_one_huge_thread_as_one_deep_chain(kernels):
    """A chain 20,000 levels deep (one thread nesting every slice in the one before): the walk holds every
    row open at once (its list grows past its first 1,024 entries); the sums and nodes are the two passes'."""
    n = 20_000
    r = {"par": np.arange(-1, n - 1, dtype=np.int32), "depth": np.arange(n, dtype=np.uint16),
         "dense": (np.arange(n) % 3).astype(np.int16), "clipped": np.arange(n, 0, -1).astype(np.int64)}  # fmt: skip
    want, got = _two_passes(kernels, r, b"", 3), _one_pass(kernels, r, b"", 3)
    assert np.array_equal(want[1], got[1]) and want[2] == got[2] and np.array_equal(want[3], got[3])
    assert got[1].tolist() == [6667, 6667, 6666]  # (every self time 1 ns)


def test_the_panel_takes_the_one_pass_and_its_numbers_are_numpys(kernels, monkeypatch):
    """The whole trace and a range of random nested trees: area_names finds the nodes in its one pass (no
    per-row self time made), and the statistics and flame graph equal the numpy paths' (self times asked
    for afterwards too)."""
    for seed in range(3):
        model = TraceModel(read_fxt_bytes(nested_trace(seed, threads=3, roots=30)))
        span = model.end_ns - model.start_ns
        for area in (Area(), Area(model.start_ns + span // 4, model.end_ns - span // 3)):
            ar = area_rows(model, area)
            names = area_names(model, ar)
            assert names.call_nodes is not None and callable(names._self_clip)
            assert names.call_nodes.node_of is None  # (the nodes alone: each row's made when asked for)
            got = name_stats(model, ar=ar, names=names), top_down(model, ar=ar, names=names)
            assert names.call_nodes is None and callable(names._self_clip)  # (taken; still no self times)
            assert callable(got[1].node_of_made)  # (not made yet: the comparison below makes it)
            monkeypatch.setattr(compiled, "summary_kernels", None)
            ar_n = area_rows(model, area)
            names_n = area_names(model, ar_n)
            want = name_stats(model, ar=ar_n, names=names_n), top_down(model, ar=ar_n, names=names_n)
            monkeypatch.setattr(compiled, "summary_kernels", kernels)
            assert got[0].records() == want[0].records()
            for col in ("parent", "name", "depth", "total", "self_ns", "count", "node_of"):
                assert np.array_equal(getattr(got[1], col), getattr(want[1], col)), col
            assert np.array_equal(names.self_clip, names_n.self_clip)
            again = top_down(model, ar=ar, names=names)  # (the nodes were taken: found again, the same)
            assert np.array_equal(again.node_of, got[1].node_of) and np.array_equal(again.total, got[1].total)


def test_empty_area_and_statistics_alone(kernels):
    model = TraceModel(read_fxt_bytes(nested_trace(1, threads=2, roots=10)))
    empty = area_rows(model, Area(model.start_ns, model.start_ns))
    assert len(name_stats(model, ar=empty)) == 0 and len(top_down(model, ar=empty)) == 0
    ar = area_rows(model, Area())
    alone = selection.area_names(model, ar, call_paths=False)
    assert alone.call_nodes is None and alone.total is not None  # (sums only: no node per row made)
    assert name_stats(model, ar=ar).records() == name_stats(model, ar=ar, names=area_names(model, ar)).records()


def test_one_pass_steps_aside_where_float_sums_depend_on_their_order(kernels):
    """Clipped times summing to 2**53 ns or more (a hostile trace's): the self times summed as rows close
    could round otherwise than summed in row order (self_times, numpy): the two-pass loops decide."""
    r = _rows_of(np.array([-1, 0, 0], np.int32), np.array([1 << 52, 1 << 51, 1 << 51], np.int64))
    assert _one_pass(kernels, r, b"", 1)[2] is None
    r = _rows_of(np.array([-1, 0, 0], np.int32), np.array([(1 << 52) - 8, 3, 4], np.int64))
    assert _one_pass(kernels, r, b"", 1)[2] is not None
    assert _one_pass(kernels, _rows_of(r["par"], np.array([5, -1, 0], np.int64)), b"", 1)[2] is None  # (negative)


def _rows_of(par: np.ndarray, clipped: np.ndarray) -> dict:
    depth = np.zeros(len(par), np.uint16)
    for i, p in enumerate(par.tolist()):
        depth[i] = depth[p] + 1 if p >= 0 else 0
    return {"par": par, "depth": depth, "dense": np.zeros(len(par), np.int16), "clipped": clipped}


def test_every_slice_lies_inside_the_traces_extent(fxt_testdata, cut_and_flip):
    """What area_rows takes for granted for an area with no bounds (no check of the whole run): every slice,
    of the third-party traces and of hostile variants of them, starts at or after the model's start and ends
    before its end + 1 (the open area's end)."""
    import random

    from fxscope.formats.errors import FormatError

    rng = random.Random(11)
    sources = [p.read_bytes() for p in sorted(fxt_testdata.glob("*.fxt"))] + [nested_trace(2, threads=3, roots=20)]
    checked = 0
    for data in sources:
        for variant in [data] + [cut_and_flip(data, rng, 6, len(data) // 2) for _ in range(15)]:
            try:
                model = TraceModel(read_fxt_bytes(variant))
            except FormatError:
                continue
            s = model.slices
            if not len(s):
                continue
            t0, t1 = Area().bounds(model)
            assert int(s.ts.min()) >= t0 and selection.latest_end(s.ts, s.dur) < t1
            ar = area_rows(model, Area())
            assert ar.all_hit and np.array_equal(ar.clipped, s.dur)
            checked += 1
    assert checked >= 20


def test_two_parts_on_two_threads_are_the_one_pass(kernels, monkeypatch, fxt_testdata):
    """The pass split at a root near the middle and run as two parts (from PARTS_FROM rows; lowered here),
    their nodes merged: the statistics and flame graph are the one pass's and the numpy paths'."""
    models = [TraceModel(read_fxt_bytes(nested_trace(seed, threads=4, roots=40))) for seed in range(3)]
    models.append(TraceModel(read_fxt_bytes((fxt_testdata / "richiesams_fxt-python_trace.fxt").read_bytes())))
    split = 0
    for model in models:
        span = model.end_ns - model.start_ns
        for area in (Area(), Area(model.start_ns + span // 5, model.end_ns - span // 4)):
            results = []
            for parts_from, loops in ((1 << 40, kernels), (16, kernels), (16, None)):
                monkeypatch.setattr(selection, "PARTS_FROM", parts_from)
                monkeypatch.setattr(compiled, "summary_kernels", loops)
                ar = area_rows(model, area)
                names = area_names(model, ar)
                if loops is not None and parts_from == 16 and names.call_nodes is not None:
                    split += len(names.call_nodes.parts) == 2
                results.append((name_stats(model, ar=ar, names=names), top_down(model, ar=ar, names=names)))
            (s1, t1), (s2, t2), (s3, t3) = results
            assert s1.records() == s2.records() == s3.records()
            for col in ("parent", "name", "depth", "total", "self_ns", "count", "node_of"):
                a, b, c = getattr(t1, col), getattr(t2, col), getattr(t3, col)
                assert np.array_equal(a, b) and np.array_equal(b, c) and a.dtype == b.dtype == c.dtype, col
    assert split >= 6  # (the two parts ran, not only the one pass)


def test_two_parts_fall_back_to_one_pass(kernels, monkeypatch):
    """A second part that is not a walk of its own (its first rows' parent lies in the first part: a late
    child right after the split) is done again in one pass."""
    # roots 0 and 3 (the split: the middle row); row 4 is a late zero-length child of row 2, left when root 3 came
    par = np.array([-1, 0, 1, -1, 2, 3, 5], np.int32)
    r = _rows_of(par, np.array([50, 20, 10, 30, 0, 10, 5], np.int64))
    monkeypatch.setattr(selection, "PARTS_FROM", 4)
    from fxscope.core.analysis.selection import AreaRows, area_pass

    ar = AreaRows(None, None, r["clipped"], par, (0, len(par)))
    assert selection._root_near_middle(par) == 3
    whole = area_pass(ar, par, r["depth"], r["dense"], 1)
    assert whole is not None and len(whole[2].parts) == 1  # (done again in one pass)
    monkeypatch.setattr(selection, "PARTS_FROM", 1 << 40)
    one = area_pass(ar, par, r["depth"], r["dense"], 1)
    assert one is not None and np.array_equal(whole[0], one[0]) and np.array_equal(whole[1], one[1])
    assert np.array_equal(whole[2].node_of, one[2].node_of)


def test_merged_nodes_match_by_path():
    """Nodes of a second part merged into the first's: the same (parent, name) paths are one node, new ones
    are added after them, level by level, and the sums add up."""
    from fxscope.core.analysis.call_tree import _merged_nodes

    def cols(parent, name, depth, count):
        c = np.asarray(count, np.int64)
        return (np.asarray(parent, np.int64), np.asarray(name, np.int64), np.asarray(depth, np.int64), c,
                c * 10.0, c * 1.0)  # fmt: skip

    a = cols([-1, 0, -1], [0, 1, 2], [0, 1, 0], [1, 2, 3])  # a/b, c
    b = cols([-1, 0, 1, -1, 0], [2, 3, 4, 0, 1], [0, 1, 2, 0, 1], [4, 5, 6, 7, 0])  # c/d/e, a, and c/b
    merged, where = _merged_nodes(a, b)
    assert where.tolist() == [2, 3, 5, 0, 4]
    assert merged[0].tolist() == [-1, 0, -1, 2, 2, 3] and merged[1].tolist() == [0, 1, 2, 3, 1, 4]
    assert merged[2].tolist() == [0, 1, 0, 1, 1, 2] and merged[3].tolist() == [8, 2, 7, 5, 0, 6]
    assert merged[4].tolist() == [80.0, 20.0, 70.0, 50.0, 0.0, 60.0]


def test_names_in_two_halves_are_numbered_as_one(kernels, monkeypatch, fxt_testdata):
    """The rows' names gathered and numbered as two halves on two threads, then renumbered as one where a half
    lacks a name: the same dense ids as one pass, also when the halves hold different names."""
    models = [TraceModel(read_fxt_bytes(nested_trace(seed, threads=2, roots=12))) for seed in range(4)]
    models.append(TraceModel(read_fxt_bytes((fxt_testdata / "richiesams_fxt-python_trace.fxt").read_bytes())))
    models.append(_two_threads_two_name_sets())
    differ = 0
    for model in models:
        ar = area_rows(model, Area())
        monkeypatch.setattr(selection, "PARTS_FROM", 1 << 40)
        dense, ids = selection._compiled_dense(model, ar)
        monkeypatch.setattr(selection, "PARTS_FROM", 8)
        dense2, ids2 = selection._compiled_dense(model, ar)
        assert dense2.dtype == dense.dtype and np.array_equal(dense2, dense) and np.array_equal(ids2, ids)
        half = len(dense) // 2
        differ += len(np.unique(dense[:half])) < len(ids) or len(np.unique(dense[half:])) < len(ids)
    assert differ >= 2


def _two_threads_two_name_sets() -> TraceModel:
    """Thread 1's slices named "a" and "b", thread 2's "c": the table's halves hold different names."""
    from fxscope.formats.fxt.columns import EventKind as K
    from fxscope.formats.fxt.writer import FxtWriter

    w = FxtWriter()
    w.initialization(1_000_000_000)
    for thread, names in (((1, 2), "ab"), ((1, 3), "cc")):
        for i in range(6):
            w.event(K.DURATION_COMPLETE, 1000 * i, thread, "c", names[i % 2], data=1000 * i + 500)
    return TraceModel(read_fxt_bytes(w.getvalue()))
