"""Statistics and call trees against the brute-force per-slice reference (tests/core/analysis/reference.py)
over small random traces with deep recursive stacks, whole and in areas (ranges cut through slices,
ranges starting exactly at slice ends, thread subsets)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fxscope.core.analysis.call_tree import bottom_up, callees, callers, top_down
from fxscope.core.analysis.selection import Area
from fxscope.core.analysis.stats import KEYS, name_stats
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt_bytes
from tests.core.analysis.nested_trace import nested_trace
from tests.core.analysis.reference import (
    ref_bottom_up,
    ref_callees,
    ref_callers,
    ref_stats,
    ref_top_down,
    slice_facts,
    tree_dict,
)


def _model(seed: int) -> TraceModel:
    return TraceModel(read_fxt_bytes(nested_trace(seed)))


def _areas(model: TraceModel, seed: int) -> list[Area]:
    rng = random.Random(seed)
    threads = [t.thread for t in model.tracks]
    s = model.slices
    ends = (s.ts + s.dur).tolist()
    areas = [Area(), Area(threads=(threads[0],)), Area(threads=tuple(threads[1:]))]
    for _ in range(6):
        a, b = sorted(rng.randint(model.start_ns, model.end_ns) for _ in range(2))
        areas.append(Area(a, b + 1, tuple(rng.sample(threads, rng.randint(1, len(threads))))))
    e = rng.choice(ends)
    areas.append(Area(e, e + rng.randint(1, 20_000)))  # starts exactly where a slice ends
    areas.append(Area(e - 5000, e))  # ends exactly where a slice ends
    return areas


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stats_match_reference(seed):
    model = _model(seed)
    assert model.slices.depth.max() >= 4  # deep stacks: the test means something
    for area in _areas(model, seed):
        t0, t1 = area.bounds(model)
        ref = ref_stats(slice_facts(model, t0, t1, area.threads))
        got = {r["name"]: {k: r[k] for k in KEYS[1:]} for r in name_stats(model, area).records()}
        assert got == ref, area


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_call_trees_match_reference(seed):
    model = _model(seed)
    for area in _areas(model, seed):
        t0, t1 = area.bounds(model)
        facts = slice_facts(model, t0, t1, area.threads)
        td = top_down(model, area)
        assert tree_dict(td, model) == ref_top_down(facts), area
        assert tree_dict(bottom_up(td), model) == ref_bottom_up(facts), area
        for name in ("eval", "alloc", "main"):
            x = model.strings.index(name)
            assert tree_dict(callees(td, x), model) == ref_callees(facts, name), (area, name)
            assert tree_dict(callers(td, x), model) == ref_callers(facts, name), (area, name)


def test_frame_selects_its_slices():
    """A node's slice rows are exactly the slices of the area whose call path is the node's path."""
    model = _model(4)
    area = Area(threads=(model.tracks[0].thread,))
    td = top_down(model, area)
    facts_by_path: dict[tuple, int] = {}
    for f in slice_facts(model, *area.bounds(model), area.threads):
        facts_by_path[f["path"]] = facts_by_path.get(f["path"], 0) + 1
    for node in range(len(td)):
        rows = td.slice_rows(node)
        assert len(rows) == facts_by_path[tuple(td.path(node, model))]
        assert np.all(np.asarray(model.slices.name[rows]) == td.name[node])
        assert np.all(np.isin(model.slices.thread[rows], area.threads))


def test_a_runs_frame_rows_without_the_areas_row_numbers():
    """A whole-trace tree's areas are a run of rows (lo..hi - 1): a node's slice rows are found without making
    the area's row numbers (8 bytes a slice), and equal them where they are made; a bounded area's too."""
    model = _model(4)
    td = top_down(model, Area())
    assert td.area is not None and td.area.run is not None
    got = [td.slice_rows(node) for node in range(len(td))]
    assert td.area._rows is None  # (not made)
    for node, rows in enumerate(got):
        assert np.array_equal(rows, td.rows[td.node_of == node]) and len(rows)
    t0, t1 = model.start_ns, (model.start_ns + model.end_ns) // 2
    bounded = top_down(model, Area(t0, t1))
    assert bounded.area is not None and bounded.area.run is None
    for node in range(len(bounded)):
        assert np.array_equal(bounded.slice_rows(node), bounded.rows[bounded.node_of == node])


def test_empty_area_gives_empty_results():
    model = _model(5)
    area = Area(model.end_ns + 10, model.end_ns + 20)
    assert len(name_stats(model, area)) == 0
    td = top_down(model, area)
    assert len(td) == 0 and len(bottom_up(td)) == 0 and len(callers(td, 1)) == 0


@pytest.mark.parametrize("seed", [1, 6])
def test_range_search_equals_the_row_mask(seed, monkeypatch, fxt_testdata):
    """A time range is cut by binary searches per lane; the same rows (and hits, clipped times, parents) as
    the mask over the threads' rows, which a range over too many lanes uses."""
    from fxscope.core.analysis import selection
    from fxscope.formats.fxt.reader import read_fxt

    models = [_model(seed), TraceModel(read_fxt(fxt_testdata / "richiesams_fxt-python_trace.fxt"))]
    for model in models:
        for area in _areas(model, seed)[3:]:
            searched = selection.area_rows(model, area)
            monkeypatch.setattr(selection, "MAX_LANES_SEARCHED", -1)
            masked = selection.area_rows(model, area)
            monkeypatch.undo()
            for name in ("rows", "hit", "clipped", "parent"):
                assert np.array_equal(getattr(searched, name), getattr(masked, name)), (area, name)


def test_hostile_deep_chain_stays_bounded():
    """A chain 5,000 calls deep (each slice inside the previous one): the top-down tree has one node per
    level, the caller trees stop at MAX_CALLER_LEVELS (a full reversed tree would have 12.5M nodes) with
    exact roots, and statistics are per name as usual."""
    from fxscope.core.analysis.call_tree import MAX_CALLER_LEVELS
    from fxscope.formats.fxt.columns import EventKind as K
    from fxscope.formats.fxt.writer import FxtWriter

    depth = 5000
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for i in range(depth):
        w.event(K.DURATION_BEGIN, 1000 + i, (1, 2), "c", f"f{i % 3}")
    for i in range(depth):
        w.event(K.DURATION_END, 1000 + depth + i, (1, 2), "c", f"f{(depth - 1 - i) % 3}")
    model = TraceModel(read_fxt_bytes(w.getvalue()))
    td = top_down(model)
    assert len(td) == depth and int(td.depth.max()) == depth - 1
    bu = bottom_up(td)
    assert int(bu.depth.max()) == MAX_CALLER_LEVELS - 1 and len(bu) <= 3 * MAX_CALLER_LEVELS
    roots = bu.parent < 0
    assert int(bu.total[roots].sum()) == int(td.self_ns.sum()) == 2 * depth - 1
    assert int(callers(td, model.strings.index("f1")).total[0]) == 2 * depth - 3  # outermost f1: level 1
    stats = {r["name"]: r for r in name_stats(model).records()}
    assert sum(r["count"] for r in stats.values()) == depth
