"""The whole-trace passes of the statistics and the flame graph run in blocks of rows (their temporaries
reused, not fresh memory per pass): with blocks of a few rows, every block boundary, far ancestor (a parent
many blocks back) and root is exercised, and the results must equal the whole-column computation. These are
the numpy paths (an install without a C compiler): the compiled loops, which have no blocks, are off here
(tests/core/analysis/test_summary_kernels.py compares the two)."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.analysis import call_tree, selection
from fxscope.core.analysis.call_tree import top_down
from fxscope.core.analysis.selection import Area, AreaRows, area_rows, clipped_self, grouped_sums
from fxscope.core.analysis.stats import name_stats
from fxscope.core.trace import compiled
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.reading import read_trace
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.formats.fxt.writer import FxtWriter
from tests.core.analysis.nested_trace import nested_trace


@pytest.fixture(autouse=True)
def numpy_paths(monkeypatch) -> None:
    monkeypatch.setattr(compiled, "summary_kernels", None)


def _reference_self(ar: AreaRows) -> np.ndarray:
    """The whole-column formula: the children's times by one bincount over the parents."""
    child = np.bincount(np.asarray(ar.parent, np.int64) + 1, weights=ar.clipped, minlength=len(ar) + 1)[1:]
    return np.maximum(ar.clipped - child, 0)


@pytest.fixture
def model(tmp_path) -> TraceModel:
    path = tmp_path / "nested.fxt"
    path.write_bytes(nested_trace(7, threads=3, roots=40))
    return TraceModel(read_trace(str(path)))


def _results(model: TraceModel, area: Area) -> tuple:
    stats = name_stats(model, area)
    tree = top_down(model, area)
    return (stats.records(), tree.parent.tolist(), tree.name.tolist(), tree.total.tolist(), tree.self_ns.tolist(),
            tree.count.tolist(), tree.node_of.tolist())  # fmt: skip


@pytest.mark.parametrize(("block", "max_keys"), [(1, 1 << 22), (3, 1 << 22), (16, 1 << 22), (16, 200)])
def test_small_blocks_give_the_whole_column_results(model, monkeypatch, block, max_keys) -> None:
    """(``max_keys``: the deeper levels' keys too many for a table: those levels over the whole level)"""
    span = model.end_ns - model.start_ns
    areas = [Area(), Area(model.start_ns + span // 3, model.start_ns + 2 * span // 3)]
    whole = [_results(model, a) for a in areas]
    ar = area_rows(model, Area())
    depth = model.slices.depth
    assert 2 < int(depth.max()) < call_tree.FEW_LEVELS  # nested levels, numbered in blocks: the test can fail
    assert len(ar) > 3 * 16  # over many blocks
    monkeypatch.setattr(selection, "BLOCK", block)
    monkeypatch.setattr(call_tree, "BLOCK", block)
    monkeypatch.setattr(call_tree, "MAX_KEYS_IN_BLOCKS", max_keys)
    assert np.array_equal(clipped_self(model, ar), _reference_self(ar))
    assert [_results(model, a) for a in areas] == whole


def test_parents_anywhere_are_summed(monkeypatch) -> None:
    """Parents far back, after their child (not from the model, but the sum must not depend on order)."""
    rng = np.random.default_rng(3)
    n = 500
    parent = rng.integers(-1, n, n).astype(np.int32)
    clipped = rng.integers(0, 1000, n).astype(np.int64)
    ar = AreaRows(None, np.ones(n, bool), clipped, parent, (0, n))
    monkeypatch.setattr(selection, "BLOCK", 7)
    assert np.array_equal(clipped_self(None, ar), _reference_self(ar))


def test_grouped_sums_in_blocks(monkeypatch) -> None:
    rng = np.random.default_rng(5)
    groups = rng.integers(0, 9, 1000).astype(np.int32)
    weights = rng.integers(0, 1 << 40, 1000)
    monkeypatch.setattr(selection, "BLOCK", 64)
    assert np.array_equal(grouped_sums(groups, weights, 9), np.bincount(groups, weights, minlength=9))
    assert np.array_equal(grouped_sums(groups, None, 9), np.bincount(groups, minlength=9))
    assert grouped_sums(groups, None, 9).dtype == np.int64


def test_dense_ids_keep_a_narrow_type_without_overflow(monkeypatch) -> None:
    ids = np.array([32767, -1, 5, 32767, 5, 0], np.int16)
    monkeypatch.setattr(selection, "BLOCK", 4)
    dense, uniq = selection.dense_ids(ids)
    assert dense.dtype == np.int16 and dense.tolist() == [3, 0, 2, 3, 2, 1]
    assert uniq.tolist() == [-1, 0, 5, 32767] and ids.tolist() == [32767, -1, 5, 32767, 5, 0]  # not in place


def test_area_names_leave_the_model_columns_alone(model, monkeypatch) -> None:
    """The names are renumbered in place only in the area's own gathered copy, never in a model column."""
    ar = area_rows(model, Area())
    before = np.asarray(model.slices.name).copy()
    selection.area_names(model, ar)
    assert np.array_equal(np.asarray(model.slices.name), before)
    plain = before.copy()  # a column stored as it is (a view for a run of rows)
    monkeypatch.setattr(model.slices, "name", plain)
    names = selection.area_names(model, ar)
    assert np.array_equal(plain, before) and int(names.dense.max()) < len(names.ids) <= int(before.max()) + 2


def _repeated_stacks(roots: int) -> TraceModel:
    """Two threads of ``roots`` times the same few call paths: a tree of few nodes over many rows."""
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for tid in (2, 3):
        for i in range(roots):
            t = 1000 * i
            w.event(K.DURATION_BEGIN, t, (1, tid), "c", "frame")
            w.event(K.DURATION_COMPLETE, t + 10, (1, tid), "c", "layout" if i % 3 else "paint", data=t + 300 + i % 7)
            w.event(K.DURATION_COMPLETE, t + 400, (1, tid), "c", "draw", data=t + 500)
            w.event(K.DURATION_END, t + 600 + i % 5, (1, tid), "c", "frame")
    return TraceModel(read_fxt_bytes(w.getvalue()))


def test_counted_as_numbered(monkeypatch) -> None:
    """A tree of few nodes over more rows than a block: each level's rows counted as its keys are marked
    (no pass for the counts), equal to the whole-column counts."""
    model = _repeated_stacks(200)
    span = model.end_ns - model.start_ns
    areas = [Area(), Area(model.start_ns + span // 3, model.start_ns + 2 * span // 3)]
    whole = [_results(model, a) for a in areas]
    assert len(area_rows(model, Area())) > 256 and len(top_down(model)) < 10
    monkeypatch.setattr(selection, "BLOCK", 256)
    monkeypatch.setattr(call_tree, "BLOCK", 256)
    counted = []
    real = call_tree._level_in_blocks
    monkeypatch.setattr(call_tree, "_level_in_blocks", lambda *a: counted.append(real(*a)) or counted[-1])
    assert [_results(model, a) for a in areas] == whole
    assert counted and all(c[2] is not None for c in counted)  # the counting path ran


@pytest.mark.parametrize("longest", [12_500, 1 << 40])
def test_sorted_by_name_in_either_key_type(longest) -> None:
    """The (name, duration) key is int32 for short durations, int64 for long ones: the same groups either way."""
    from fxscope.core.analysis.stats import _sorted_by_name

    rng = np.random.default_rng(11)
    k = 300
    dense = rng.integers(0, k, 5000).astype(np.int16)
    dense[:k] = np.arange(k)  # (every name used)
    dur = rng.integers(0, longest, 5000)
    d, count = _sorted_by_name(dense, dur, k)
    assert d.dtype == (np.int32 if longest < 1 << 31 else np.int64)
    assert np.array_equal(d, dur[np.lexsort((dur, dense))])
    assert np.array_equal(count, np.bincount(dense, minlength=k)) and count.dtype == np.int64
