"""The analysis panel's compiled loops (core/trace/summary_kernels.c: the self times, the per-name sums and the
call-path nodes of an area's rows) give exactly the numpy paths' statistics and flame graph: on the third-party
traces, on deep random call trees, on hostile variants of both, and for whole-trace, range and thread areas.
Inputs the loops do not describe (a parent out of range, after its child, a depth that is not its parent's
plus one) make them step aside for the numpy path, never read outside a buffer."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fxscope.core.analysis import call_tree
from fxscope.core.analysis.call_tree import top_down
from fxscope.core.analysis.selection import Area, _compiled_dense, _compiled_self, area_names, area_rows
from fxscope.core.analysis.stats import KEYS, name_stats
from fxscope.core.trace import compiled
from fxscope.core.trace.model import TraceModel
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.reader import read_fxt_bytes
from tests.compiled_loops import choose_loops
from tests.core.analysis.nested_trace import nested_trace


@pytest.fixture
def kernels(monkeypatch):
    """The compiled module (a failure when not built, skipped under FXSCOPE_NO_COMPILED)."""
    choose_loops("compiled", monkeypatch, compiled, "summary_kernels")
    return compiled.summary_kernels


def _areas(model: TraceModel) -> list[Area]:
    """The whole trace, a middle third, the first threads over most of it, a range starting at a slice's
    start (zero-length slices there), an empty one."""
    t0, t1 = model.start_ns, model.end_ns
    span = t1 - t0
    threads = tuple(t.thread for t in model.tracks[:2])
    at = int(model.slices.ts[len(model.slices) // 2]) if len(model.slices) else t0
    return [Area(), Area(t0 + span // 3, t0 + 2 * span // 3), Area(t0 + span // 7, t1 - span // 5, threads),
            Area(at, at + max(span // 50, 1)), Area(t0, t0)]  # fmt: skip


def _analysis(model: TraceModel, area: Area):
    ar = area_rows(model, area)
    names = area_names(model, ar)
    return name_stats(model, ar=ar, names=names), top_down(model, ar=ar, names=names), names


def assert_same_analysis(model: TraceModel, monkeypatch, module) -> tuple[int, int]:
    """Compares both paths on every area of :func:`_areas`; returns how many areas took the compiled tree and
    how many the compiled names."""
    trees = names_taken = 0
    for area in _areas(model):
        monkeypatch.setattr(compiled, "summary_kernels", None)
        stats_n, tree_n, names_n = _analysis(model, area)
        monkeypatch.setattr(compiled, "summary_kernels", module)
        stats_c, tree_c, names_c = _analysis(model, area)
        assert stats_c.records() == stats_n.records()
        for col in KEYS[1:]:
            assert getattr(stats_c, col).dtype == getattr(stats_n, col).dtype
        for col in ("parent", "name", "depth", "total", "self_ns", "count", "node_of"):
            a, b = getattr(tree_c, col), getattr(tree_n, col)
            assert a.dtype == b.dtype and np.array_equal(a, b), col
        assert np.array_equal(names_c.self_clip, names_n.self_clip)
        ar = area_rows(model, area)
        if len(ar):
            par = ar.parent
            trees += call_tree._compiled_tree(ar, par, ar.take(model.slices.depth), area_names(model, ar)) is not None
            names_taken += _compiled_dense(model, ar) is not None  # (the names gathered and renumbered in one)
    return trees, names_taken


def test_same_analysis_of_third_party_traces(fxt_testdata, kernels, monkeypatch):
    taken = np.zeros(2, int)
    for path in sorted(fxt_testdata.glob("*.fxt")):
        taken += assert_same_analysis(TraceModel(read_fxt_bytes(path.read_bytes())), monkeypatch, kernels)
    assert taken[0] >= 6 and taken[1] >= 3  # (the compiled loops ran, not only their fallbacks)


def test_same_analysis_of_deep_random_trees(kernels, monkeypatch):
    for seed in range(4):
        model = TraceModel(read_fxt_bytes(nested_trace(seed, threads=4, roots=40)))
        assert int(model.slices.depth.max()) >= 4
        assert min(assert_same_analysis(model, monkeypatch, kernels)) >= 4


def test_same_analysis_of_hostile_variants(fxt_testdata, kernels, monkeypatch, cut_and_flip):
    rng = random.Random(20)
    sources = [(fxt_testdata / "richiesams_fxt-python_trace.fxt").read_bytes(), nested_trace(7, threads=3, roots=20)]
    cases = 0
    for data in sources:
        for _ in range(25):
            try:
                model = TraceModel(read_fxt_bytes(cut_and_flip(data, rng, 6, len(data) // 2)))
            except FormatError:
                continue
            assert_same_analysis(model, monkeypatch, kernels)
            cases += 1
    assert cases >= 30


def _rows(n: int) -> dict:
    """A chain 0 <- 1 <- 2 ... (each row the parent of the next), one name, 10 ns a row."""
    return {"par": np.arange(-1, n - 1, dtype=np.int32), "depth": np.arange(n, dtype=np.uint16),
            "dense": np.zeros(n, np.int16), "clipped": np.full(n, 10, np.int64)}  # fmt: skip


def _nodes(kernels, r: dict):
    n = len(r["par"])
    node_of = np.empty(n, np.int32)
    out = kernels.call_nodes(r["par"], False, r["depth"], r["dense"], False, b"", r["clipped"], np.zeros(n), node_of, False)
    return out, node_of


def test_loops_check_their_inputs(kernels):
    r = _rows(5)
    out, node_of = _nodes(kernels, r)
    assert node_of.tolist() == [0, 1, 2, 3, 4] and np.frombuffer(out[2], np.int64).tolist() == [0, 1, 2, 3, 4]
    self_ = _compiled_self(r["par"], r["clipped"])
    assert self_ is not None and self_[0].tolist() == [0, 0, 0, 0, 10]
    bad = dict(r, par=np.array([-1, 0, 7, 2, 3], np.int32))  # a parent past the rows
    with pytest.raises(ValueError):
        _nodes(kernels, bad)
    assert _compiled_self(bad["par"], bad["clipped"]) is None  # (the numpy path decides)
    assert _compiled_self(np.array([-2, 0, 1, 2, 3], np.int32), r["clipped"]) is None
    assert _nodes(kernels, dict(r, par=np.array([1, 2, 3, 4, -1], np.int32)))[0] is None  # parents after children
    assert _nodes(kernels, dict(r, depth=np.array([0, 1, 3, 4, 5], np.uint16)))[0] is None  # a level skipped
    with pytest.raises(ValueError):  # a buffer of the wrong length
        kernels.call_nodes(r["par"][:3], False, r["depth"], r["dense"], False, b"", r["clipped"], np.zeros(5),
                           np.empty(5, np.int32), False)  # fmt: skip
    with pytest.raises(ValueError):  # a name past the names summed
        kernels.self_times(r["par"], False, r["clipped"], np.full(5, 3, np.int16), False, b"", np.empty(5),
                           np.zeros(2), np.zeros(2))  # fmt: skip
    source = np.array([4, -1, 9, 4], np.int16)
    out = np.empty(3, np.int16)
    ids = kernels.dense_names(source, False, np.array([3, 1, 2], np.int32), False, out)
    assert out.tolist() == [1, 0, 2] and np.frombuffer(ids, np.int64).tolist() == [-1, 4, 9]
    with pytest.raises(ValueError):  # a row past the source
        kernels.dense_names(source, False, np.array([0, 4, 1], np.int32), False, out)
    with pytest.raises(ValueError):  # an id below -1 (hostile)
        kernels.dense_names(np.array([-5], np.int16), False, np.array([0, 0, 0], np.int32), False, out)
    codes = np.array([0, 2, 1, 3], np.uint8)  # a one-byte code column over the values [5, -1, 7]
    ids = kernels.dense_names(np.array([5, -1, 7], np.int16), False, np.array([2, 0, 1], np.int32), False, out, codes)
    assert out.tolist() == [0, 1, 2] and np.frombuffer(ids, np.int64).tolist() == [-1, 5, 7]
    with pytest.raises(ValueError):  # a code past the values
        kernels.dense_names(np.array([5, -1, 7], np.int16), False, np.array([3, 0, 1], np.int32), False, out, codes)
    long_codes = np.tile(codes[:3], 400)  # a long gather (past its read-ahead) with a row far off the codes
    for bad in (10**12, -(10**12), len(long_codes)):
        rows = np.arange(1000, dtype=np.int64)
        rows[600] = bad
        with pytest.raises(ValueError):
            kernels.dense_names(np.array([5, -1, 7], np.int16), False, rows, True, np.empty(1000, np.int16),
                                long_codes)  # fmt: skip
    fresh = np.arange(5, dtype=np.int64)[::-1].copy()
    kernels.renumber(node_of, False, fresh, np.array([1, 0, 1, 1, 1], np.uint8))
    assert node_of.tolist() == [4, -1, 2, 1, 0]
    with pytest.raises(ValueError):
        kernels.renumber(node_of, False, fresh, b"")  # (a -1 left: no node)


@pytest.mark.parametrize("kind", [np.int32, np.int64])
def test_name_keys_are_numpys(kernels, kind):
    """The statistics' sort keys, also for durations past the key's bits or negative (hostile): numpy's
    shift in the key's type and its cast of the durations, bit for bit."""
    rng = np.random.default_rng(5)
    for dense_type in (np.int16, np.int32):
        dense = rng.integers(0, 6, 10_001).astype(dense_type)
        dur = np.r_[rng.integers(0, 1 << 20, 10_000), -7].astype(np.int64)
        dur[::97] = rng.integers(-(1 << 62), 1 << 62, len(dur[::97]))
        for bits in (0, 5, 20, 27):
            want = np.left_shift(dense, bits, dtype=kind, casting="unsafe")
            np.bitwise_or(want, dur, out=want, casting="unsafe")
            got = np.empty(len(dur), kind)
            kernels.name_keys(dense, dense_type == np.int32, dur, bits, got, kind == np.int64)
            assert np.array_equal(got, want), (dense_type, bits)
    with pytest.raises(ValueError):
        kernels.name_keys(dense, True, dur[:5], 3, np.empty(5, kind), kind == np.int64)  # lengths differ


@pytest.mark.parametrize("loops", ["compiled", "numpy"])
def test_totals_past_int64_saturate_not_wrap(monkeypatch, loops):
    """Two slices of one name, each 6e18 ns long on its own thread (a hostile or bogus trace: timestamps near
    2**63): their total, 1.2e19 ns, is past int64's range; the statistics show it as int64's largest (it
    became a negative total, the float sum's cast being undefined there)."""
    from fxscope.formats.fxt.columns import EventKind as K
    from fxscope.formats.fxt.writer import FxtWriter

    choose_loops(loops, monkeypatch, compiled, "summary_kernels")
    w = FxtWriter()
    for thread, tid in ((1, 11), (2, 12)):
        w.thread(thread, 10, tid)
        w.event(K.DURATION_BEGIN, 1, thread, "cat", "huge")
        w.event(K.DURATION_END, 6 * 10**18 + 1, thread, "cat", "huge")
    model = TraceModel(read_fxt_bytes(w.getvalue()))
    stats = name_stats(model, ar=area_rows(model, Area()))
    row = stats.names.index("huge")
    assert stats.count[row] == 2 and stats.max_ns[row] == 6 * 10**18
    assert stats.total_ns[row] >= 2**63 - 2048 and stats.self_ns[row] >= 2**63 - 2048
