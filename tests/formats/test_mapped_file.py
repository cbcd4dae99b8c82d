"""A memory map survives the file changing on disk while open (mapped_file.py, mapping_guard.c): the trace here, GSYM files in tests/formats/gsym/test_changed_on_disk.py.

Each case runs in a child process: without the guard, a read of a page a truncation took away kills the
process with SIGBUS (exit 135 / -7), which a test in this process could not report. Both the compiled guard
and the pure-Python fallback (``FXSCOPE_NO_COMPILED=1``) are run.
"""

from __future__ import annotations

import errno
import gc
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest

from fxscope.formats import mapped_file
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.reader import read_fxt
from fxscope.formats.mapped_file import FileChange, map_error_message

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo" / "demo.fxt"

#: the child's preamble: a copy of the demo trace at sys.argv[1], read
PREAMBLE = """
import os, sys
import numpy as np
from fxscope.core.trace.reading import read_trace
from fxscope.core.trace.file_change import trace_file_change, changed_trace_warnings
path = sys.argv[1]
"""

MODES = [
    pytest.param({}, id="compiled"),
    pytest.param({"FXSCOPE_NO_COMPILED": "1"}, id="fallback"),
]


def _run(
    tmp_path: Path, body: str, env_extra: dict, faulthandler: bool = False, then: str = ""
) -> subprocess.CompletedProcess:
    """Run ``PREAMBLE``, ``body`` then ``then`` in a child over a copy of the demo trace."""
    trace = tmp_path / "trace.fxt"
    shutil.copy(DEMO, trace)
    script = tmp_path / "child.py"
    script.write_text(PREAMBLE + textwrap.dedent(body) + then)
    env = {key: value for key, value in os.environ.items() if key != "FXSCOPE_NO_COMPILED"} | env_extra
    flags = ["-X", "faulthandler"] if faulthandler else []
    return subprocess.run([sys.executable, *flags, str(script), str(trace)], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


#: (a child's end) read past a truncation (guarded: zeros), then a SIGBUS sent from outside (not guarded)
READ_CUT_THEN_KILL = """
import signal
os.truncate(path, 4096)
print("last", int(cols.ev_ts[-1]), flush=True)
os.kill(os.getpid(), signal.SIGBUS)
print("survived", flush=True)
"""


def _died_of_sigbus_once(got: subprocess.CompletedProcess) -> None:
    """The child ended by SIGBUS's default action after faulthandler's dump, once (not in a loop)."""
    assert got.returncode == -signal.SIGBUS
    assert got.stderr.count("Fatal Python error: Bus error") == 1


@pytest.mark.parametrize("env", MODES)
def test_reads_after_truncation_see_zeros_and_say_so(tmp_path, env):
    """The reported crash: read, truncate to 4 KB, read the last event's time (was: exit 135)."""
    got = _run(tmp_path, """
        cols = read_trace(path)
        os.truncate(path, 4096)
        print("last", int(cols.ev_ts[-1]), int(cols.ev_data[-1]))
        print("all", int(np.asarray(cols.ev_ts)[-100:].max()))
        print(trace_file_change(cols).message())
    """, env)
    assert got.returncode == 0, got.stderr
    assert "last 0 0" in got.stdout
    assert "all 0" in got.stdout
    size = DEMO.stat().st_size
    assert f"changed on disk while open (truncated from {size} to 4096 bytes" in got.stdout
    assert "may be incomplete — reload it" in got.stdout


@pytest.mark.parametrize("env", MODES)
def test_model_build_search_and_export_after_truncation(tmp_path, env):
    """Zeros are valid-looking FXT words: the model's whole build, a search, the statistics and the
    chrome export (every event's arguments decoded) run on them without a traceback or a hang."""
    got = _run(tmp_path, """
        from fxscope.core.trace.model import TraceModel
        from fxscope.core.trace.prepare import prepare_model
        from fxscope.core.trace.query import search
        from fxscope.core.trace.export_chrome import export_chrome_json
        cols = read_trace(path)
        os.truncate(path, 64 * 1024)
        model = TraceModel(cols)
        prepare_model(model)
        print("hits", len(search(model, "a")))
        export_chrome_json(model, path + ".json")
        from fxscope.core.sql.engine import TraceSQL
        from fxscope.core.trace.details import event_args
        sql = TraceSQL(model)
        print("sql", [sql.query(f"SELECT count(*) FROM {t}").num_rows for t in ("slice", "args", "counter", "instant", "flow")])
        for event in range(0, len(cols.ev_ts), 97):
            event_args(model, event, 0)
        print("\\n".join(changed_trace_warnings()))
    """, env)
    assert got.returncode == 0, got.stderr
    assert "hits" in got.stdout
    assert "warning: the trace file" in got.stdout and "truncated from" in got.stdout


@pytest.mark.parametrize("env", MODES)
def test_truncated_while_being_read(tmp_path, env):
    """The file cut to 4 KB in the middle of the read (from its progress callback): the reader frames
    zero words and ends with a partial result (without the compiled guard: the size check between blocks
    zero-maps the lost part)."""
    got = _run(tmp_path, """
        from fxscope.core.trace.model import TraceModel
        from fxscope.core.trace.prepare import prepare_model
        from fxscope.formats.fxt import assemble
        assemble.Decoder.BLOCK_RECORDS = 1024  # (progress between blocks: the cut lands inside the read)
        assemble.Decoder.PAGE_AHEAD_WORDS = 0  # (and the next block's pages are mapped ahead on a worker)
        cut = []
        def progress(fraction):
            if fraction > 0 and not cut:
                cut.append(fraction)
                os.truncate(path, 4096)
        cols = read_trace(path, progress=progress)
        prepare_model(TraceModel(cols))
        print("events", len(cols.ev_ts), trace_file_change(cols).kind, cut[0] < 0.5)
    """, env)
    assert got.returncode == 0, got.stderr
    events, kind, early = got.stdout.split()[1:]
    assert kind == "truncated" and early == "True"
    assert 0 < int(events) < 20000  # (the demo's 20,000: the rest of the file read as zeros, not events)


def test_guard_wins_over_faulthandler_and_passes_other_sigbus_on(tmp_path):
    """With faulthandler enabled before the trace is opened (as pytest does), a guarded fault reads zeros;
    a SIGBUS that is not a fault in a guarded map still ends the process (faulthandler's dump, then the
    default action), once, not in a loop."""
    got = _run(tmp_path, """
        cols = read_trace(path)
    """, {}, then=READ_CUT_THEN_KILL, faulthandler=True)
    assert "last 0" in got.stdout
    assert "survived" not in got.stdout
    _died_of_sigbus_once(got)


def test_a_fault_in_another_map_is_not_swallowed(tmp_path):
    """Only the trace's map is guarded: a truncated file mapped by someone else still faults (faulthandler's
    dump once, then the default action), neither read as zeros nor retried forever."""
    got = _run(tmp_path, """
        import mmap, shutil
        cols = read_trace(path)
        shutil.copy(path, path + ".other")
        f = open(path + ".other", "rb")
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        os.truncate(path + ".other", 4096)
        print("reading", flush=True)
        print(m[300000], flush=True)
    """, {}, faulthandler=True)
    assert got.stdout == "reading\n"
    _died_of_sigbus_once(got)


def test_guard_comes_first_again_after_faulthandler_is_enabled_later(tmp_path):
    """faulthandler enabled after the trace was opened puts its handler first; the next check of the file
    (the window's, a command's) puts the guard back in front, and a foreign SIGBUS still dies once."""
    got = _run(tmp_path, """
        import faulthandler
        from fxscope.formats.mapped_file import mapping_guard
        cols = read_trace(path)
        faulthandler.enable()
        print("shadowed", not mapping_guard.installed())
        trace_file_change(cols)
        print("first again", mapping_guard.installed())
    """, {}, then=READ_CUT_THEN_KILL)
    assert "shadowed True\nfirst again True\nlast 0\n" in got.stdout
    assert "survived" not in got.stdout
    _died_of_sigbus_once(got)


@pytest.mark.parametrize("env", MODES)
def test_grown_replaced_and_deleted_files_are_reported(tmp_path, env):
    """Appending, replacing by rename (an atomic write) and deleting fault nothing: the shown trace stays the
    opened file's, and the change is reported."""
    got = _run(tmp_path, """
        cols = read_trace(path)
        n = len(cols.ev_ts)
        with open(path, "ab") as f:
            f.write(bytes(8192))
        print(trace_file_change(cols).message())
        with open(path + ".new", "wb") as f:
            f.write(b"x" * 100)
        os.replace(path + ".new", path)
        print(trace_file_change(cols).kind, int(cols.ev_ts[n - 1]) > 0)
        os.unlink(path)
        print(trace_file_change(cols).kind)
    """, env)
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    size = DEMO.stat().st_size
    assert f"(grew from {size} to {size + 8192} bytes); what is shown is the file as it was when opened" in lines[0]
    # the old inode is still mapped: it grew, and its data is intact (the path names another file now)
    assert lines[1] in ("grew True", "replaced True")
    assert lines[2] in ("grew", "deleted")


def test_unchanged_file_reports_nothing(tmp_path):
    trace = tmp_path / "t.fxt"
    shutil.copy(DEMO, trace)
    cols = read_fxt(trace)
    assert cols.mapped_file.change() is None
    assert cols.mapped_file.guarded == (mapped_file.mapping_guard is not None)


def test_a_file_that_cannot_be_mapped_is_a_clear_error(monkeypatch, tmp_path):
    """A filesystem without mmap support (ENODEV): one line that says so, not a traceback."""
    trace = tmp_path / "t.fxt"
    shutil.copy(DEMO, trace)

    def no_mmap(*_args, **_kwargs):
        raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))

    monkeypatch.setattr(mapped_file.mmap, "mmap", no_mmap)
    with pytest.raises(FormatError, match="cannot memory-map it: its filesystem does not support mapping files"):
        read_fxt(trace)
    assert "cannot read" in map_error_message(OSError(errno.EACCES, "Permission denied"))


@pytest.mark.skipif(not Path("/sys/kernel/mm/transparent_hugepage/enabled").exists(), reason="no sysfs file")
def test_a_sysfs_file_is_a_clear_error():
    """A real file whose filesystem cannot map it (sysfs attributes)."""
    with pytest.raises(FormatError, match="cannot memory-map it"):
        read_fxt("/sys/kernel/mm/transparent_hugepage/enabled", force=True)


def test_message_wording():
    change = FileChange("/t/a.fxt", "truncated", 1000, 10, zeroed_reads=1)
    assert change.message() == (
        "the trace file /t/a.fxt changed on disk while open (truncated from 1000 to 10 bytes; what was past its "
        "new end reads as zeros); what is shown may be incomplete — reload it"
    )
    assert FileChange("/t/a.fxt", "grew", 1000, 2000).message() == (
        "the trace file /t/a.fxt changed on disk while open (grew from 1000 to 2000 bytes); what is shown is "
        "the file as it was when opened — reload it to see the rest"
    )


def test_truncation_stays_reported_after_the_file_is_written_again(tmp_path):
    """A tracer re-run: O_TRUNC, then it writes a longer file. The map's pages now hold other data: the
    truncation is still what is reported (not "grew")."""
    trace = tmp_path / "t.fxt"
    shutil.copy(DEMO, trace)
    cols = read_fxt(trace)
    size = DEMO.stat().st_size
    with open(trace, "r+b") as f:
        f.truncate(0)
        assert cols.mapped_file.change().kind == "truncated"
        f.write(bytes(size + 100))
    change = cols.mapped_file.change()
    assert (change.kind, change.old_size, change.new_size, change.size_now) == ("truncated", size, 0, size + 100)
    assert f"(truncated from {size} to 0 bytes, now {size + 100} bytes)" in change.message()


def test_a_compressed_trace_is_not_reported_as_deleted(tmp_path):
    """A .fxt.gz is read from a decompressed temporary file, removed at once: that is no change."""
    import gzip

    from fxscope.core.trace.file_change import trace_file_change
    from fxscope.core.trace.reading import read_trace

    packed = tmp_path / "t.fxt.gz"
    packed.write_bytes(gzip.compress(DEMO.read_bytes()))
    cols = read_trace(packed)
    assert cols.mapped_file.path is None and cols.mapped_file.shown_path == str(packed)
    assert trace_file_change(cols) is None
    mapped_file.changes_seen()  # (what other tests left)
    the_map = weakref.ref(cols.mapped_file.map)
    del cols
    gc.collect()  # the map goes: its finalizer does not report it as deleted either
    assert the_map() is None
    assert mapped_file.changes_seen() == []


@pytest.mark.skipif(mapped_file.mapping_guard is None, reason="the compiled guard is not built here")
def test_slots_are_released_with_the_map_and_a_full_table_falls_back(tmp_path):
    """A closed map gives its guard slot back (80 traces opened one after the other are all guarded); with
    every slot taken, a map is still protected, by the size check before reads."""
    from fxscope.core.synthetic_trace import generate_trace

    trace = tmp_path / "t.fxt"
    trace.write_bytes(generate_trace(50, seed=1))
    for i in range(80):
        cols = read_fxt(trace)
        assert cols.mapped_file.guarded
        del cols
        if i % 16 == 15:
            gc.collect()  # (what a cycle holds)
    held = [read_fxt(trace) for _ in range(70)]
    unguarded = [cols for cols in held if not cols.mapped_file.guarded]
    assert unguarded  # (64 slots)
    assert all(cols.ev_ts.before_read == cols.mapped_file.check_before_read for cols in unguarded)
    assert all(cols.ev_ts.before_read is None for cols in held if cols.mapped_file.guarded)
