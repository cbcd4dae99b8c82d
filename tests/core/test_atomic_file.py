"""Half-written outputs (issue 13 finding 5): a killed ``fxscope export`` leaves no temporary behind (SIGTERM,
SIGINT), and what SIGKILL leaves is removed by the next write to the same place."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fxscope.core.atomic_file import (
    _host_tag,
    atomic_output,
    clean_stale_temporaries,
    temp_prefix,
    write_atomic,
)

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory) -> Path:
    """A synthetic trace whose export takes seconds (time to catch the writer mid-write)."""
    path = tmp_path_factory.mktemp("trace") / "big.fxt"
    subprocess.run([sys.executable, "-m", "fxscope", "generate", "-o", str(path), "--events", "300000"],
                   check=True, env=ENV, capture_output=True, timeout=300)
    return path


def _temporaries(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if ".fxscope-tmp-" in p.name]


def _default_sigint() -> None:
    """In the export's process before it starts: SIGINT at its default, whatever the test run inherited (an
    ignored SIGINT, as a shell gives a background job, is inherited through exec, and the export would never
    see the signal: one CI run saw the export finish with status 0 after the SIGINT, not reproduced since)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _export_until_temporary(trace: Path, out: Path) -> subprocess.Popen:
    """Start an export and return once its temporary exists and has data in it."""
    # (its error output kept: what a signalled export said is the failure's message; one full-suite run saw
    # the SIGINT case fail, not reproduced in 14 runs of this file, alone, under load or after the app tests)
    proc = subprocess.Popen([sys.executable, "-m", "fxscope", "export", str(trace), "-o", str(out)], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_default_sigint)
    give_up = time.monotonic() + 120
    while time.monotonic() < give_up and proc.poll() is None:
        temps = _temporaries(out.parent)
        if temps and temps[0].stat().st_size > 0:
            return proc
        time.sleep(0.005)
    proc.kill()
    _, err = proc.communicate()
    pytest.fail(f"the export finished (or failed) before its temporary was seen: {err.decode(errors='replace')[-2000:]}")


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)])
def test_a_signalled_export_removes_its_temporary(big_trace: Path, tmp_path: Path, signum, status) -> None:
    out = tmp_path / "out.json"
    proc = _export_until_temporary(big_trace, out)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err.decode(errors="replace")[-2000:]
    assert list(tmp_path.iterdir()) == []  # no temporary, no half-written output


def test_what_sigkill_leaves_is_removed_by_the_next_write(big_trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    proc = _export_until_temporary(big_trace, out)
    proc.kill()
    proc.wait(timeout=60)
    left = _temporaries(tmp_path)
    assert len(left) == 1 and not out.exists()
    unrelated = tmp_path / ".fxscope-abc123.json"  # not our naming for this target: never touched
    unrelated.write_bytes(b"x")
    other_target = tmp_path / f"{temp_prefix(str(tmp_path / 'other.json'))}{left[0].name.split('-tmp-')[1]}"
    other_target.write_bytes(b"x")  # a dead writer's temporary, but of another target
    subprocess.run([sys.executable, "-m", "fxscope", "export", str(big_trace), "-o", str(out)], env=ENV,
                   check=True, capture_output=True, timeout=300)
    assert out.stat().st_size > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.json", unrelated.name, other_target.name])


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temporaries_by_owner_and_age(tmp_path: Path) -> None:
    target = tmp_path / "x.bin"
    prefix = temp_prefix(str(target))
    here, elsewhere = _host_tag(), "0badf00d" if _host_tag() != "0badf00d" else "0badf00e"
    now = time.time()
    files = {
        "dead owner": (f"{prefix}{here}-{_dead_pid()}-abc.bin", now, False),
        "live owner": (f"{prefix}{here}-{os.getppid()}-abc.bin", now, True),
        "live owner, old": (f"{prefix}{here}-{os.getppid()}-abd.bin", now - 3 * 86400, False),
        "other host": (f"{prefix}{elsewhere}-{_dead_pid()}-abc.bin", now, True),
        "other host, old": (f"{prefix}{elsewhere}-1-abe.bin", now - 3 * 86400, False),
        "not ours": (f"{prefix}notatag-1-abc.bin", now - 3 * 86400, True),
        "another suffix": (f"{prefix}{here}-{_dead_pid()}-abc.txt", now, True),
        "earlier naming, old": (".fxscope-k3j_9x0a.json", now - 3 * 86400, False),
        "earlier naming, fresh": (".fxscope-k3j_9x0b.json", now, True),
        "similar, old": (".fxscope-notours.json", now - 3 * 86400, True),
    }
    for name, mtime, _kept in files.values():
        (tmp_path / name).write_bytes(b"partial")
        os.utime(tmp_path / name, (mtime, mtime))
    (tmp_path / f"{prefix}{here}-{_dead_pid()}-dir.bin").mkdir()  # not a regular file: left alone
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    present = {p.name for p in tmp_path.iterdir()}
    for what, (name, _mtime, kept) in files.items():
        assert (name in present) == kept, what
    assert clean_stale_temporaries(target) == []


def test_atomic_output_from_a_worker_thread(tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            write_atomic(tmp_path / "t.bin", b"data")
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            errors.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors == [] and (tmp_path / "t.bin").read_bytes() == b"data"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_output(target) as tmp:
        Path(tmp).write_bytes(b"half")
        raise RuntimeError("writer failed")
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"] and target.read_bytes() == b"old"


def test_signal_handlers_are_back_to_default_after_a_write(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    seen = []
    with atomic_output(tmp_path / "x.bin") as tmp:
        seen.append(signal.getsignal(signal.SIGTERM))
        Path(tmp).write_bytes(b"x")
    assert signal.getsignal(signal.SIGTERM) == before
    if before == signal.SIG_DFL:
        assert seen[0] != signal.SIG_DFL  # caught while the temporary existed
