"""Every reader warning leaves a model every view, table, index and export can use.

A partial trace that ``fxscope info`` reads (exit 0, warnings) must also go through the model's
``prepare()`` (every table, index and pyramid the window reads), the search and the chrome-json export.
A truncation sweep and a mutation fuzz of the shared traces check that no exception other than the
documented :class:`~fxscope.formats.errors.FormatError` escapes; the window's side (loader, screenshot) is in
tests/app/test_partial_traces_window.py.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from fxscope.core.trace.export_chrome import export_chrome_json
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import prepare_model
from fxscope.core.trace.query import search
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.reader import read_fxt_bytes
from fxscope.resources import DEMO_TRACE


def use_everything(data: bytes, out: Path) -> TraceModel | None:
    """Read, prepare, search and export ``data``; None when the reader refuses it with a FormatError."""
    try:
        cols = read_fxt_bytes(data)
    except FormatError:
        return None
    model = TraceModel(cols)
    prepare_model(model)
    for text in ("a", "e", "x"):
        search(model, text)
    export_chrome_json(model, out)
    json.loads(out.read_text(encoding="utf-8"))  # a complete JSON document
    return model


def test_the_80_byte_partial_trace_prepares_searches_and_exports(tmp_path: Path, partial_80: bytes) -> None:
    model = use_everything(partial_80, tmp_path / "out.json")
    assert model is not None and model.cols.warnings  # read with warnings, then usable everywhere
    events = json.loads((tmp_path / "out.json").read_text())["traceEvents"]
    assert [e["ph"] for e in events] == ["B"]


def test_the_80_byte_partial_trace_exports_from_the_command_line(tmp_path: Path, capsys, partial_80: bytes) -> None:
    from fxscope.app.cli import main

    src = tmp_path / "partial.fxt"
    src.write_bytes(partial_80)
    assert main(["export", str(src), "--format", "chrome-json", "-o", str(tmp_path / "o.json")]) == 0
    assert "internal error" not in capsys.readouterr().err
    assert src.read_bytes() == partial_80  # the input is never modified


def _traces(testdata: Path) -> dict[str, bytes]:
    files = {p.name: p.read_bytes() for p in sorted((testdata / "fxt").glob("*.fxt"))}
    files["demo.fxt"] = DEMO_TRACE.read_bytes()
    return files


def _cuts(data: bytes, rng: random.Random, n: int) -> list[int]:
    """Every byte offset of a small file; else ``n`` offsets: word boundaries, odd bytes, head and tail."""
    if len(data) <= 512:
        return list(range(len(data)))
    cuts = [rng.randrange(8, len(data)) for _ in range(n // 2)]
    cuts += [rng.randrange(1, len(data) // 8) * 8 for _ in range(n // 4)]
    cuts += list(range(8, 8 + 8 * (n // 8), 8)) + [len(data) - k for k in range(1, n // 8 + 1)]
    return sorted(set(cuts))


#: cases per trace (the small files are swept at every byte whatever this says); a big file costs ~0.5 s a
#: case, so it gets a quarter. FXSCOPE_FUZZ_SCALE=10 runs ten times as many.
SCALE = float(os.environ.get("FXSCOPE_FUZZ_SCALE", "1"))
SWEEP_CASES = int(48 * SCALE)
FUZZ_CASES = int(40 * SCALE)
TRACE_NAMES = ["demo.fxt", "ocaml-trace_t2_first.fxt", "ocaml-trace_t2_second.fxt", "richiesams_fxt-python_trace.fxt"]


@pytest.mark.parametrize("name", TRACE_NAMES)
def test_truncation_sweep_and_mutation_fuzz_of_the_shared_traces(
    testdata: Path, tmp_path: Path, capsys, mutate_fxt, name: str
) -> None:
    data = DEMO_TRACE.read_bytes() if name == "demo.fxt" else (testdata / "fxt" / name).read_bytes()
    rng = random.Random(f"12-{name}")
    share = 4 if len(data) > 256 * 1024 else 1
    counts = {"cases": 0, "usable": 0, "format_error": 0}
    cases = [data[:cut] for cut in _cuts(data, rng, SWEEP_CASES // share)]
    cases += [mutate_fxt(data, rng) for _ in range(FUZZ_CASES // share)]
    for i, case in enumerate(cases):
        try:
            model = use_everything(case, tmp_path / "out.json")
        except Exception as exc:  # anything but the documented error is a defect: name the case
            (tmp_path / "failing.fxt").write_bytes(case)
            raise AssertionError(f"{name} case {i} ({len(case)} bytes): {type(exc).__name__}: {exc}") from exc
        counts["cases"] += 1
        counts["usable" if model is not None else "format_error"] += 1
    with capsys.disabled():
        print(f"\n{name}: truncated and mutated copies through prepare/search/export: {counts}")
    assert counts["cases"] >= (SWEEP_CASES + FUZZ_CASES) // share // 2 and counts["usable"] > counts["cases"] // 2


@pytest.mark.parametrize("seed", range(3))
def test_mutated_boot_stamped_traces_prepare_and_export(boot_trace_files, tmp_path: Path, mutate_fxt, seed: int) -> None:
    rng = random.Random(seed)
    data = boot_trace_files["near-2^63"].read_bytes()
    for _ in range(8):
        use_everything(mutate_fxt(data, rng), tmp_path / "out.json")
