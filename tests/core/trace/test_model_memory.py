"""The model's memory budget (issue 3: reader columns plus model tables within 64 bytes per event).

At 10M synthetic events the reader's columns take about 39 bytes an event and the level-of-detail pyramids
about 3 (tests/bench/bench_timeline.py measures them all); this checks the rest, the tables the views use,
on the same synthetic mix: the memory the model still holds once they are built, as tracemalloc sees it
(numpy reports its buffers there), so a column copied where a gather would do shows up.
"""

from __future__ import annotations

import gc
import tracemalloc

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt_bytes

#: bytes per event the model keeps for its tables (slices, per-depth indexes, async spans, flows, counters,
#: instants, scheduling) on the synthetic trace; about 19.1 when written (the numpy part about 17.2)
TABLES_BUDGET = 20.0


def test_model_tables_stay_within_budget() -> None:
    cols = read_fxt_bytes(generate_trace(100_000))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        model = TraceModel(cols)
        for name in ("async_spans", "flows", "counters", "instants", "sched"):
            getattr(model, name)
        gc.collect()
        per_event = (tracemalloc.get_traced_memory()[0] - before) / len(cols.ev_ts)
    finally:
        tracemalloc.stop()
    assert len(model.slices) and len(model.flows) and len(model.async_spans) and len(model.instants)
    assert 10.0 < per_event <= TABLES_BUDGET
