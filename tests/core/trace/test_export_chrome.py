"""Chrome JSON export: counts per phase match the model, B/E nest, ids and args survive; the CLI command."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from fxscope.app.cli import main
from fxscope.core.trace.export_chrome import export_chrome_json
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.slices import FLAG_UNCLOSED, FLAG_UNMATCHED_END
from fxscope.formats.fxt.args import ArgType as A
from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.reader import read_fxt

REPO = Path(__file__).resolve().parents[3]


def _expected(model: TraceModel) -> Counter:
    """What each phase should count, from the model's own tables."""
    cols, s = model.cols, model.slices
    kinds = np.bincount(cols.ev_kind, minlength=11)
    begin = cols.ev_kind[s.event] == K.DURATION_BEGIN
    pair = begin & (s.flags == 0) & (s.dur > 0)
    lone = begin & ((s.flags & FLAG_UNCLOSED) != 0)
    return Counter({
        "B": int((pair | lone).sum()), "E": int(pair.sum()), "X": int(len(s) - pair.sum() - lone.sum()),
        "i": int(kinds[K.INSTANT]) + len(cols.log_ts), "C": int(kinds[K.COUNTER]),
        "b": int(kinds[K.ASYNC_BEGIN]), "n": int(kinds[K.ASYNC_INSTANT]), "e": int(kinds[K.ASYNC_END]),
        "s": int(kinds[K.FLOW_BEGIN]), "t": int(kinds[K.FLOW_STEP]), "f": int(kinds[K.FLOW_END]),
    })  # fmt: skip


def _check(model: TraceModel, out: Path) -> list[dict]:
    counts = export_chrome_json(model, out)
    events = json.loads(out.read_text())["traceEvents"]
    got = Counter(e["ph"] for e in events)
    expect = _expected(model)
    expect["M"] = got["M"]
    assert +got == +expect
    assert {k: v for k, v in counts.items() if v} == dict(+got)
    # B/E nest per thread in file order, and time never goes back
    stacks: dict[tuple[int, int], list[str]] = {}
    last = -1.0
    for e in events:
        if e["ph"] == "M":
            continue
        assert e["ts"] >= last
        last = e["ts"]
        key = (e["pid"], e["tid"])
        if e["ph"] == "B":
            stacks.setdefault(key, []).append(e["name"])
        elif e["ph"] == "E":
            assert stacks[key] and stacks[key].pop() == e["name"]
    assert got["M"] >= len(model.cols.threads_pid)
    return events


def test_demo_trace(tmp_path: Path) -> None:
    model = TraceModel(read_fxt(REPO / "resources" / "demo" / "demo.fxt"))
    events = _check(model, tmp_path / "demo.json")
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert "compositor.cm" in names
    flows = [e for e in events if e["ph"] == "f"]
    assert flows and all(e["bp"] == "e" and e["id"].startswith("0x") for e in flows)
    counters = [e for e in events if e["ph"] == "C"]
    assert all(isinstance(v, (int, float)) for e in counters for v in e["args"].values())


@pytest.mark.parametrize(
    "name", ["richiesams_fxt-python_trace.fxt", "ocaml-trace_t2_first.fxt", "ocaml-trace_t2_second.fxt"]
)
def test_third_party_traces(testdata, tmp_path: Path, name: str) -> None:
    model = TraceModel(read_fxt(testdata / "fxt" / name))
    events = _check(model, tmp_path / "out.json")
    unmatched = [e for e in events if e.get("args", {}).get("fxscope") == "unmatched end"]
    assert len(unmatched) == int(((model.slices.flags & FLAG_UNMATCHED_END) != 0).sum())
    if name.startswith("richiesams"):  # MANIFEST: pointer and string arguments; pointers go out in hex
        begins = [e for e in events if e["ph"] in "BX"]  # zero-length pairs go out as X
        assert len(begins) == 17296
        assert all(isinstance(v, str) for e in begins for v in e["args"].values())
        assert any(v.startswith("0x") for e in begins for v in e["args"].values())
    if name == "ocaml-trace_t2_first.fxt":  # MANIFEST: one instant "hello" with x = 42
        assert [(e["name"], e["args"]) for e in events if e["ph"] == "i"] == [("hello", {"x": 42})]


def test_hand_built_values_and_microseconds(fxt, tmp_path: Path) -> None:
    cols = fxt([
        (K.DURATION_BEGIN, 1_500, (1, 10), "work", None, [("n", A.INT64, -(1 << 40)), ("big", A.UINT64, 1 << 63)]),
        (K.DURATION_END, 2_001, (1, 10), "work"),
        (K.COUNTER, 1_700, (1, 10), "mem", 5, [("rss", A.UINT32, 7), ("tag", A.STRING, "x")]),
        (K.ASYNC_BEGIN, 1_800, (1, 10), "load", (1 << 63) + 1),
        (K.DURATION_BEGIN, 1_900, (1, 11), "open-ended"),
    ])  # fmt: skip
    events = {e["name"]: e for e in _check(TraceModel(cols), tmp_path / "h.json") if e["ph"] in "BCb"}
    assert events["work"]["ts"] == 1.5 and events["work"]["args"] == {"n": -(1 << 40), "big": 1 << 63}
    assert events["mem"]["args"] == {"rss": 7} and events["mem"]["id"] == "0x5"
    assert events["load"]["id"] == hex((1 << 63) + 1)
    assert "open-ended" in events  # a begin never ended stays a lone B


def test_cli_export_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.json"
    assert (
        main(
            [
                "export",
                str(REPO / "resources" / "demo" / "demo.fxt"),
                "--format",
                "chrome-json",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["traceEvents"]
    assert "trace events" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "missing.fxt"), "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fxscope: error:") and err.count("\n") == 1
    not_fxt = tmp_path / "not.fxt"
    not_fxt.write_bytes(b"hello world, not a trace")
    assert main(["export", str(not_fxt), "-o", str(tmp_path / "x.json")]) == 2
    assert not (tmp_path / "x.json").exists()
