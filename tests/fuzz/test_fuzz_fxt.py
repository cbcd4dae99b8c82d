"""FXT reader and the trace model's ``prepare_model()`` (every table, index and pyramid the views read) on mutated
traces: the third-party samples and generated traces with every record and argument type, scheduling and
logs; then the Chrome JSON export of what was read."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_bounds import fuzz_settings
from fuzz_mutations import mutated
from hypothesis import given
from hypothesis import strategies as st

from fxscope.core.synthetic_trace import generate_trace
from fxscope.core.trace.export_chrome import export_chrome_json
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import prepare_model
from fxscope.formats.fxt.reader import read_fxt_bytes


@pytest.fixture(scope="module")
def seeds(testdata: Path) -> list[bytes]:
    return [
        (testdata / "fxt" / "ocaml-trace_t2_first.fxt").read_bytes(),
        (testdata / "fxt" / "ocaml-trace_t2_second.fxt").read_bytes(),
        generate_trace(120, seed=3),
        generate_trace(120, seed=5, big_endian=True),
        generate_trace(80, seed=7, scheduling=True, crash_log="{{{reset}}}\n[1.0] crash at {{{pc:0x1234}}}\n"),
    ]


@fuzz_settings(60)
@given(st.data())
def test_reader_model_and_export(seeds, tmp_path: Path, campaign, data: st.DataObject) -> None:
    blob = data.draw(mutated(data.draw(st.sampled_from(seeds)), max_ops=8))
    force = data.draw(st.booleans())

    def case():
        model = TraceModel(read_fxt_bytes(blob, force=force))
        prepare_model(model)
        export_chrome_json(model, tmp_path / "out.json")
        assert model.end_ns > model.start_ns
        return model

    campaign.run(len(blob), case)


def _views(model: TraceModel) -> None:
    """What a user reaches once a trace is open: the hover text and details of the first and last row of every
    kind, a search, the whole trace's statistics and flame graph, every SQL table, the crash reports in the
    logs and their text, a click on a flame graph's frames."""
    from fxscope.core.analysis.call_tree import bottom_up, top_down
    from fxscope.core.analysis.stats import name_stats
    from fxscope.core.sql.engine import TraceSQL
    from fxscope.core.trace.details import (
        async_details,
        counter_details,
        counter_row,
        describe,
        instant_details,
    )
    from fxscope.core.trace.sched import cpu_slice_details, thread_state_details
    from fxscope.core.trace.search_hits import search_all

    def ends(n: int) -> list[int]:
        return sorted({0, n - 1}) if n else []

    for r in ends(len(model.slices)):
        model.slice_details(r)
        describe(model, "slice", r)
    for r in ends(len(model.async_spans.start)):
        async_details(model, r)
        describe(model, "async", r)
    for r in ends(len(model.instants)):
        instant_details(model, r)
        describe(model, "instant", r)
    for i, series in enumerate(model.counters.series):
        for k in ends(len(series.ts)):
            counter_details(model, counter_row(i, k))
            describe(model, "counter", counter_row(i, k))
    sched = model.sched
    for r in ends(len(sched.cpu_slices.tid)):
        cpu_slice_details(model, r)
        describe(model, "cpu", r)
    for r in ends(len(sched.thread_states.tid)):
        thread_state_details(model, r)
        describe(model, "state", r)
    for r in ends(len(model.logs)):
        describe(model, "log", r)
        model.logs.report_text(r)
    for i in range(min(len(model.logs.reports), 3)):
        model.logs.report_text_at(i)
    for text in ("a", "frame", "\x00"):
        search_all(model, text)
    name_stats(model)
    tree = top_down(model)
    bottom_up(tree)
    if len(tree):  # a click on the first and the last frame (each slice's node, made on the first)
        tree.slice_rows(0)
        tree.slice_rows(len(tree) - 1)
    sql = TraceSQL(model, threads=1)
    for name in sorted(sql.tables.builders):
        sql.query(f"select count(*) from {name}")


@fuzz_settings(25)
@given(st.data())
def test_views_of_mutated_traces(seeds, campaign, data: st.DataObject) -> None:
    """The views on a mutated trace: each may show less, none may raise (a window's panel would break)."""
    blob = data.draw(mutated(data.draw(st.sampled_from(seeds)), max_ops=8))

    def case():
        model = TraceModel(read_fxt_bytes(blob))
        prepare_model(model)
        _views(model)
        return model

    campaign.run(len(blob), case)
