"""``fxscope stats``, ``stacks`` and ``diff`` read only the slice table: the statistics, the call tree,
the folded lines and the comparison must not build the model's other tables on the way (flows, the
search index, level-of-detail pyramids, logs, scheduling, async spans...), each a pass over the whole
trace that the commands would pay for nothing (the 10M-event targets of issue 16)."""

from __future__ import annotations

from fxscope.core.analysis.call_tree import top_down
from fxscope.core.analysis.diff import compare
from fxscope.core.analysis.folded import folded_lines
from fxscope.core.analysis.selection import Area
from fxscope.core.analysis.stats import name_stats
from fxscope.core.trace.built_once import once_property
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.reading import read_trace
from tests.core.analysis.nested_trace import nested_trace

LAZY = sorted(k for k, v in vars(TraceModel).items() if isinstance(v, once_property))


def _built(model: TraceModel) -> list[str]:
    return [k for k in LAZY if k in vars(model)] + sorted(k for k in model._memo if not k.startswith("_once_"))


def test_the_commands_build_no_other_table(tmp_path):
    assert {"search_index", "pyramid", "logs", "sched", "async_spans"} <= set(LAZY)  # the list is real
    models = []
    for i, slow in enumerate(({}, {"alloc": 3})):
        path = tmp_path / f"{i}.fxt"
        path.write_bytes(nested_trace(3, slow=slow))
        models.append(TraceModel(read_trace(str(path))))
    a, b = models
    assert not _built(a) and not _built(b)
    rows = compare(name_stats(a), name_stats(b))  # fxscope diff
    assert rows[0].name == "alloc"
    lines = list(folded_lines(top_down(a), a))  # fxscope stacks
    # whole threads need no per-lane index either (a time range searches it: built on first use)
    assert not a.lanes.built and not b.lanes.built
    span = a.end_ns - a.start_ns
    name_stats(a, Area(a.start_ns + span // 3, a.start_ns + span // 2, (a.tracks[0].thread,)))  # --range --thread
    top_down(a, Area(a.start_ns + span // 3, a.start_ns + span // 2))
    assert lines and _built(a) == [] and _built(b) == []
    a.pyramid  # noqa: B018 - the check can fail: a table built is seen
    assert _built(a) == ["pyramid"]
