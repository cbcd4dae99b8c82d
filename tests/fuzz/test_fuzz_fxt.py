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
