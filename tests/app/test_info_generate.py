"""``fxscope info`` and ``fxscope generate`` end to end (subprocess, as a user runs them)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

EVENT_KEYS = {"instant", "counter", "duration_begin", "duration_end", "duration_complete", "async_begin",
              "async_instant", "async_end", "flow_begin", "flow_step", "flow_end"}  # fmt: skip
RECORD_KEYS = {"metadata", "initialization", "string", "thread", "event", "blob", "userspace_object",
               "kernel_object", "scheduling", "log", "large", "unknown"}  # fmt: skip


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fxscope", *args], capture_output=True, text=True, timeout=120)


def test_info_json_on_real_trace(testdata):
    r = _run("info", str(testdata / "fxt" / "richiesams_fxt-python_trace.fxt"), "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert set(info["records"]) == RECORD_KEYS and set(info["events"]) == EVENT_KEYS
    assert info["records"]["string"] == 864 and info["records"]["event"] == 34592
    assert info["events"]["duration_begin"] == info["events"]["duration_end"] == 17296
    assert info["providers"] == [{"id": 0, "name": "jane_tracing"}]
    assert (info["processes"], info["threads"]) == (1, 1)
    assert (info["first_ts_ns"], info["last_ts_ns"], info["warnings"]) == (0, 329913, [])


def test_info_partial_trace_and_not_a_trace(tmp_path, testdata):
    data = (testdata / "fxt" / "ocaml-trace_t2_second.fxt").read_bytes()
    part = tmp_path / "part.fxt"
    part.write_bytes(data[:-12])
    r = _run("info", str(part), "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["events"]["instant"] == 0 and info["events"]["duration_complete"] == 2
    assert any("truncated final record" in w and w.startswith("offset 0x") for w in info["warnings"])
    bad = tmp_path / "bad.fxt"
    bad.write_text("not a trace\n")
    for path in (bad, tmp_path / "missing.fxt"):
        r = _run("info", str(path))
        assert r.returncode == 2 and r.stderr.startswith("fxscope: error: ") and "Traceback" not in r.stderr


def test_info_human_output(testdata):
    r = _run("info", str(testdata / "fxt" / "ocaml-trace_t2_second.fxt"))
    assert r.returncode == 0
    assert "duration_complete 2" in r.stdout and "1 oc" in r.stdout and "warnings: 2" in r.stdout


def test_generate_is_deterministic_and_complete(tmp_path):
    a, b, c, be = (tmp_path / n for n in ("a.fxt", "b.fxt", "c.fxt", "be.fxt"))
    assert _run("generate", "-o", str(a), "--events", "5000", "--seed", "3").returncode == 0
    assert _run("generate", "-o", str(b), "--events", "5000", "--seed", "3").returncode == 0
    assert _run("generate", "-o", str(c), "--events", "5000", "--seed", "4").returncode == 0
    assert _run("generate", "-o", str(be), "--events", "5000", "--seed", "3", "--big-endian").returncode == 0
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    infos = [json.loads(_run("info", str(p), "--json").stdout) for p in (a, be)]
    for info in infos:
        assert sum(info["events"].values()) == 5000
        assert all(info["events"][k] > 0 for k in EVENT_KEYS)
        assert all(info["records"][k] > 0 for k in RECORD_KEYS - {"unknown"})
        assert len(info["providers"]) == 4 and info["processes"] >= 3 and info["threads"] >= 12
    assert infos[1]["big_endian"] and {**infos[0], "path": "", "big_endian": 0} == {
        **infos[1],
        "path": "",
        "big_endian": 0,
    }
    r = _run("generate", "-o", str(tmp_path / "x.fxt"), "--events", "-1")
    assert r.returncode == 2 and "fxscope: error:" in r.stderr


def test_bundled_demo_shows_every_kind(tmp_path):
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "resources" / "demo" / "demo.fxt"
    info = json.loads(_run("info", str(demo), "--json").stdout)
    assert all(v > 0 for v in info["events"].values())
    assert all(info["records"][k] > 0 for k in RECORD_KEYS - {"unknown"})


def test_bundled_demo_is_what_its_readme_command_writes(tmp_path):
    """resources/demo/README.md says how demo.fxt was made; the command still makes those exact bytes."""
    from pathlib import Path

    demo_dir = Path(__file__).resolve().parents[2] / "resources" / "demo"
    out = tmp_path / "demo.fxt"
    r = _run("generate", "-o", str(out), "--events", "20000", "--crash-log", str(demo_dir / "crash.log"),
             "--scheduling")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "--scheduling" in (demo_dir / "README.md").read_text()
    assert out.read_bytes() == (demo_dir / "demo.fxt").read_bytes()


def test_generated_schedule_keeps_cpus_and_threads_consistent(tmp_path):
    """The --scheduling stream: no thread on two CPUs at once, every wakeup's thread later runs, and the
    model's states alternate as a scheduler's do (running, then blocked/suspended/preempted, then runnable)."""
    import numpy as np

    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.sched import RUNNABLE, RUNNING
    from fxscope.formats.fxt.reader import read_fxt

    out = tmp_path / "s.fxt"
    assert _run("generate", "-o", str(out), "--events", "8000", "--scheduling", "--seed", "7").returncode == 0
    sched = TraceModel(read_fxt(out)).sched
    cs = sched.cpu_slices
    assert len(cs) > 100 and len(sched.wakeups) > 100
    for tid in np.unique(cs.tid).tolist():  # a thread's CPU slices never overlap, whatever the CPU
        rows = np.flatnonzero(cs.tid == tid)
        rows = rows[np.argsort(cs.start[rows])]
        assert np.all(cs.start[rows][1:] >= cs.end[rows][:-1])
    states = sched.thread_states
    assert {RUNNING, RUNNABLE, 3} <= set(np.unique(states.state).tolist())  # 3: blocked
    woken = set(sched.wakeups.tid.tolist())
    assert woken <= set(cs.tid.tolist())


def test_generate_providers_in_turn(tmp_path):
    """``--providers-in-turn``: the same records, each provider's together (one provider after the other, as a
    one-shot Fuchsia trace is saved): the same counts, the events' times going back where a provider's records
    end and the next one's begin, and the same model once read."""
    from fxscope.core.trace.model import TraceModel
    from fxscope.formats.fxt.reader import read_fxt

    streamed, in_turn = tmp_path / "s.fxt", tmp_path / "t.fxt"
    assert _run("generate", "-o", str(streamed), "--events", "6000", "--seed", "5").returncode == 0
    r = _run("generate", "-o", str(in_turn), "--events", "6000", "--seed", "5", "--providers-in-turn")
    assert r.returncode == 0, r.stderr
    assert sorted(streamed.read_bytes()) == sorted(in_turn.read_bytes()) and streamed.read_bytes() != in_turn.read_bytes()
    a, b = (json.loads(_run("info", str(p), "--json").stdout) for p in (streamed, in_turn))
    assert a["events"] == b["events"] and a["records"] == b["records"]
    models = [TraceModel(read_fxt(str(p))) for p in (streamed, in_turn)]
    ts = [np.asarray(m.cols.ev_ts, np.int64) for m in models]
    assert np.all(np.diff(ts[0]) >= 0) and 1 <= np.count_nonzero(np.diff(ts[1]) < 0) <= 3
    sa, sb = (m.async_spans for m in models)  # (the same spans: the one-shot trace's by the merged walk)
    assert len(sa) == len(sb) > 100
    spans = [sorted(zip(s.start.tolist(), s.end.tolist(), strict=True)) for s in (sa, sb)]
    assert spans[0] == spans[1]
