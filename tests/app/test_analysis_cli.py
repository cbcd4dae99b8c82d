"""``fxscope stats``, ``fxscope stacks`` and ``fxscope diff`` end to end, on generated traces with deep
stacks (tests/core/analysis/nested_trace.py) and the third-party traces, checked by brute force."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fxscope.app.cli import main
from fxscope.core.analysis.folded import parse_folded
from fxscope.core.trace.model import TraceModel
from fxscope.formats.fxt.reader import read_fxt
from tests.core.analysis.nested_trace import nested_trace
from tests.core.analysis.reference import ref_stats, slice_facts


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "a.fxt"
    path.write_bytes(nested_trace(7))
    return path


def test_stats_json_matches_reference(capsys, trace):
    model = TraceModel(read_fxt(trace))
    tid = model.tracks[1].tid
    t0 = model.start_ns + 20_000
    t1 = model.end_ns - 30_000
    for extra, threads, rng in [((), None, (model.start_ns, model.end_ns + 1)),
                                (("--thread", str(tid)), (model.tracks[1].thread,), (model.start_ns, model.end_ns + 1)),
                                (("--process", "2", "--range", f"{t0}:{t1}"),
                                 tuple(t.thread for t in model.tracks if t.pid == 2), (t0, t1))]:  # fmt: skip
        code, out, err = _cli(capsys, "stats", str(trace), "--json", *extra)
        assert code == 0, err
        got = json.loads(out)
        assert all(list(r) == ["name", "count", "total_ns", "self_ns", "min_ns", "p50_ns", "p90_ns", "p99_ns",
                               "max_ns"] for r in got)  # fmt: skip
        assert [r["total_ns"] for r in got] == sorted((r["total_ns"] for r in got), reverse=True)
        ref = ref_stats(slice_facts(model, *rng, threads))
        assert {r.pop("name"): r for r in got} == ref, extra


def test_stacks_folded_totals(capsys, trace, tmp_path):
    """Read back by a folded-stack parser: per thread, the weights add up to the wall time of its depth-0
    slices inside the range; stacks are the slices' call paths (';' in a name written as ':')."""
    model = TraceModel(read_fxt(trace))
    s = model.slices
    t0, t1 = model.start_ns + 12_345, model.start_ns + (model.end_ns - model.start_ns) // 2
    out_path = tmp_path / "out.folded"
    for track in model.tracks:
        code, _out, err = _cli(capsys, "stacks", str(trace), "--thread", str(track.tid), "--range", f"{t0}:{t1}",
                              "-o", str(out_path))  # fmt: skip
        assert code == 0, err
        stacks = parse_folded(out_path.read_text())
        rows = range(track.lo, track.hi)
        wall = sum(max(min(int(s.ts[r] + s.dur[r]), t1) - max(int(s.ts[r]), t0), 0) for r in rows if s.depth[r] == 0)
        assert sum(stacks.values()) == wall > 0
        facts = slice_facts(model, t0, t1, (track.thread,))
        assert set(stacks) <= {tuple(n.replace(";", ":") for n in f["path"]) for f in facts}
        assert all(w > 0 for w in stacks.values())
    assert any("io:wait" in frame for stack in stacks for frame in stack)


def test_stacks_of_magic_trace(capsys, testdata, tmp_path):
    path = testdata / "fxt" / "richiesams_fxt-python_trace.fxt"
    out_path = tmp_path / "m.folded"
    code, _out, err = _cli(capsys, "stacks", str(path), "-o", str(out_path))
    assert code == 0, err
    stacks = parse_folded(out_path.read_text())
    s = TraceModel(read_fxt(path)).slices
    assert sum(stacks.values()) == int(s.dur[s.depth == 0].sum())
    assert max(len(k) for k in stacks) == int(s.depth.max()) + 1


def test_diff_against_itself_is_zero(capsys, trace):
    code, out, err = _cli(capsys, "diff", str(trace), str(trace), "--json", "--threshold", "0")
    assert code == 0, err
    result = json.loads(out)
    assert result["regressed"] == [] and len(result["names"]) >= 5
    for row in result["names"]:
        assert row["in_a"] and row["in_b"]
        assert all(row[f"{f}_delta"] == 0 for f in ("count", "total_ns", "p50_ns", "p99_ns"))
        assert row["change_pct"] == 0


def test_diff_names_the_slowed_name_first(capsys, trace, tmp_path):
    slow = tmp_path / "b.fxt"
    slow.write_bytes(nested_trace(7, slow={"alloc": 3}))
    code, out, err = _cli(capsys, "diff", str(trace), str(slow), "--json")
    assert code == 1, err
    result = json.loads(out)
    assert result["names"][0]["name"] == "alloc" and "alloc" in result["regressed"]
    assert result["names"][0]["total_ns_delta"] > 0 and result["names"][0]["count_delta"] == 0
    # the table too, and a threshold above the change passes the gate
    code, out, err = _cli(capsys, "diff", str(trace), str(slow))
    assert code == 1 and out.splitlines()[1].startswith("alloc") and "regressed past 10%: " in out
    change = json.loads(_cli(capsys, "diff", str(trace), str(slow), "--json")[1])["names"]
    top = max(r["change_pct"] for r in change if r["change_pct"] is not None)
    assert _cli(capsys, "diff", str(trace), str(slow), "--threshold", str(top + 1))[0] == 0
    # B against A: the name and its callers got faster, nothing regressed
    assert _cli(capsys, "diff", str(slow), str(trace))[0] == 0


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fxscope", *args], capture_output=True, text=True, timeout=120)


def test_bad_input_is_one_line_exit_2(tmp_path, trace):
    garbage = tmp_path / "g.fxt"
    garbage.write_bytes(b"\x00" * 7)
    out_path = tmp_path / "never.folded"
    cases = [
        ("stats", str(tmp_path / "missing.fxt")),
        ("stats", str(garbage), "--json"),
        ("stacks", str(garbage), "-o", str(out_path)),
        ("stacks", str(trace), "--thread", "999999", "-o", str(out_path)),
        ("stats", str(trace), "--range", "5:3"),
        ("diff", str(trace), str(garbage)),
        ("diff", str(trace), str(trace), "--threshold", "-4"),
    ]
    for args in cases:
        r = _run(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = [line for line in r.stderr.splitlines() if line.startswith("fxscope: error:")]
        assert len(lines) == 1 and "Traceback" not in r.stderr, (args, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.fxt", "g.fxt"]  # no output, no temporary left


def test_compressed_trace_reads_as_plain(capsys, trace, tmp_path):
    """Traces are read as every command reads them: a gzip-compressed copy gives the same statistics."""
    import gzip

    packed = tmp_path / "a.fxt.gz"
    packed.write_bytes(gzip.compress(trace.read_bytes()))
    plain = _cli(capsys, "stats", str(trace), "--json")
    code, out, err = _cli(capsys, "stats", str(packed), "--json")
    assert code == 0 and out == plain[1], err


def test_partial_trace_is_a_warning_that_counts_right(capsys, trace, tmp_path):
    """A truncated trace still gives its statistics, with one line on stderr that counts the reader's warnings
    (in the singular for one) and names the command that lists them."""
    data = trace.read_bytes()
    cut = tmp_path / "cut.fxt"
    cut.write_bytes(data[: len(data) * 2 // 3 + 3])  # (mid-record: the reader warns once and keeps the rest)
    n = len(read_fxt(cut).warnings)
    assert n == 1
    code, out, err = _cli(capsys, "stats", str(cut), "--json")
    assert code == 0 and json.loads(out)
    assert err.splitlines() == [f"fxscope: warning: {cut}: 1 reader warning, the trace may be partial "
                                f"(fxscope info {cut} lists them)"]  # fmt: skip
