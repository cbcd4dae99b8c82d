"""Statistics and call trees of the third-party traces in tests/data/fxt, checked against their MANIFEST's
shapes and the brute-force reference."""

from __future__ import annotations

import json

import numpy as np

from fxscope.core.analysis.call_tree import bottom_up, top_down
from fxscope.core.analysis.folded import folded_lines, parse_folded
from fxscope.core.analysis.selection import Area
from fxscope.core.analysis.stats import name_stats
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt
from tests.core.analysis.reference import ref_bottom_up, ref_stats, ref_top_down, slice_facts, tree_dict


def test_magic_trace_stacks(fxt_testdata):
    """richiesams (magic-trace output): 17,296 begin/end pairs on one thread, starting mid-stack; every slice
    is counted once, the trees equal the reference, folded weights add up to the depth-0 wall time."""
    counts = json.loads((fxt_testdata / "expected-counts.json").read_text())["richiesams_fxt-python_trace.fxt"]
    model = TraceModel(read_fxt(fxt_testdata / "richiesams_fxt-python_trace.fxt"))
    assert len(model.tracks) == 1  # one thread record used by all events
    stats = name_stats(model)
    n_slices = int(stats.count.sum())
    assert n_slices == len(model.slices) >= counts["records"]["event/duration_begin"]
    facts = slice_facts(model, *Area().bounds(model))
    assert {r["name"]: {k: v for k, v in r.items() if k != "name"} for r in stats.records()} == ref_stats(facts)
    td = top_down(model)
    assert int(td.depth.max()) >= 20  # deep native stacks
    assert tree_dict(td, model) == ref_top_down(facts)
    assert tree_dict(bottom_up(td), model) == ref_bottom_up(facts)
    folded = parse_folded("\n".join(folded_lines(td, model)))
    depth0 = model.slices.depth == 0
    assert sum(folded.values()) == int(model.slices.dur[depth0].sum())
    # a click on each frame lists its slices: every slice in exactly one frame, named as the frame
    listed = [td.slice_rows(node) for node in range(len(td))]
    every = np.concatenate(listed)
    assert len(every) == len(model.slices) and len(np.unique(every)) == len(every)
    for node in range(0, len(td), 97):
        assert np.all(np.asarray(model.slices.name[listed[node]]) == td.name[node])
    # a range in the middle of the trace: the reference again, with slices cut by the range
    t0 = model.start_ns + (model.end_ns - model.start_ns) // 3
    area = Area(t0, t0 + (model.end_ns - model.start_ns) // 5)
    facts = slice_facts(model, *area.bounds(model))
    assert tree_dict(top_down(model, area), model) == ref_top_down(facts)


def test_ocaml_outer_inner(fxt_testdata):
    """ocaml-trace t2 second: complete events "outer" and "inner" on one thread, inner inside outer."""
    model = TraceModel(read_fxt(fxt_testdata / "ocaml-trace_t2_second.fxt"))
    s = model.slices
    dur = {model.strings[int(n)]: int(d) for n, d in zip(np.asarray(s.name), s.dur, strict=True)}
    stats = {r["name"]: r for r in name_stats(model).records()}
    assert stats["outer"]["total_ns"] == dur["outer"] and stats["inner"]["self_ns"] == dur["inner"]
    assert stats["outer"]["self_ns"] == dur["outer"] - dur["inner"]
    td = top_down(model)
    assert tree_dict(td, model) == {("outer",): [dur["outer"], dur["outer"] - dur["inner"], 1],
                                    ("outer", "inner"): [dur["inner"], dur["inner"], 1]}
