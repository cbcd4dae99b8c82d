"""The differential flame graph's per-node deltas against the per-slice reference: B (one name slowed) minus
A per call path; paths that do not reach the slowed name do not change."""

from __future__ import annotations

from fxscope.core.analysis.call_tree import top_down
from fxscope.core.analysis.diff_tree import node_paths, total_deltas
from fxscope.core.analysis.selection import Area
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt_bytes
from tests.core.analysis.nested_trace import nested_trace
from tests.core.analysis.reference import ref_top_down, slice_facts


def test_deltas_per_path():
    a = TraceModel(read_fxt_bytes(nested_trace(21)))
    b = TraceModel(read_fxt_bytes(nested_trace(21, slow={"alloc": 4})))
    tree_a, tree_b = top_down(a), top_down(b)
    delta = total_deltas(tree_a, a, tree_b, b)
    ref_a = ref_top_down(slice_facts(a, *Area().bounds(a)))
    ref_b = ref_top_down(slice_facts(b, *Area().bounds(b)))
    paths = node_paths(tree_b, b)
    assert dict(zip(paths, delta.tolist(), strict=True)) == {
        p: v[0] - ref_a.get(p, [0])[0] for p, v in ref_b.items()}  # fmt: skip
    assert any(d > 0 for d in delta.tolist())
    # a path is slower only when "alloc" is on it or below it
    below_alloc = {p[: i + 1] for p in paths if "alloc" in p for i in range(len(p))}
    assert all(d == 0 for p, d in zip(paths, delta.tolist(), strict=True) if p not in below_alloc)
    assert len(top_down(a)) == len(tree_b)  # same structure, only times changed
