"""The allocator settings around a big build: held freed memory is reused by the next block's temporaries
instead of being faulted in again (what cost 1.4 million page faults in one 100M-event read), and
``return_freed_memory`` still gives it back."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fxscope.core import freed_memory

#: blocks of three 3 MB temporaries, allocated, written and freed together, as a reader block's arrays are
_BLOCKS = r"""
import resource, sys
import numpy as np
from fxscope.core.freed_memory import hold_freed_memory, return_freed_memory
if sys.argv[1] == "hold":
    assert hold_freed_memory()
np.ones(1, np.uint8)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    a, b, c = (np.ones(3 << 20, np.uint8) for _ in range(3))
    del a, b, c
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _BLOCKS, mode], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


@pytest.mark.skipif(freed_memory._mallopt is None, reason="not glibc: the allocator settings do not apply")
def test_held_memory_is_reused_by_the_next_blocks():
    default, held = _faults("default"), _faults("hold")
    # 20 blocks of 9 MB: ~46,000 faults of 4 KiB when each block faults its pages in again
    assert held * 5 < default, (held, default)


@pytest.mark.skipif(freed_memory._mallopt is None, reason="not glibc: the allocator settings do not apply")
def test_hold_then_return():
    assert freed_memory.hold_freed_memory()
    assert freed_memory.hold_freed_memory()  # idempotent
    freed_memory.return_freed_memory()  # (whether anything was free to return depends on the process)


#: a worker thread with a heap of its own (it allocates before the arena limit is set) makes a table, then
#: frees 50 MB of 1 MB temporaries above it, then gives the freed memory back: the resident size returns to
#: where it was (but for the table)
_THREAD_HEAP = r"""
import sys, threading
import numpy as np
from fxscope.core import freed_memory

def anon():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("RssAnon"))

out = []

def work():
    np.ones(1, np.uint8)  # (this thread's heap: made before the limit below)
    assert freed_memory.hold_freed_memory()
    before = anon()
    table = np.ones(1 << 20, np.uint8)  # (kept: the heap is not all free, as after a model step)
    arrays = [np.ones(1 << 20, np.uint8) for _ in range(50)]
    del arrays
    freed_memory.return_freed_memory()
    out.append((anon() - before - table.nbytes) / 1e6)

thread = threading.Thread(target=work)
thread.start()
thread.join()
print(out[0])
"""


def _kept_mb() -> float:
    out = subprocess.run([sys.executable, "-c", _THREAD_HEAP], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return float(out.stdout)


@pytest.mark.skipif(freed_memory._mallopt is None, reason="not glibc: the allocator settings do not apply")
def test_a_worker_threads_freed_memory_is_given_back():
    """The model's steps run on worker threads (fxscope.core.concurrent_steps), each step's temporaries freed
    in the heap that thread allocates from: the trim after the step gives them back."""
    assert _kept_mb() < 10  # (of the 50 MB freed)


#: reads a trace and writes a 64 MB array, then builds its model and writes another: numpy's huge-page advice
#: before the read, after it and after the build, and the huge pages each array got (AnonHugePages, in kB)
_PAGES = r"""
import sys
import numpy as np
from fxscope.core.trace.model import TraceModel
from fxscope.core.trace.prepare import prepare_model
from fxscope.core.trace import reading
from fxscope.core.trace.reading import read_trace

def huge_kb():
    with open("/proc/self/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("AnonHugePages"))

def written_huge_kb():
    base = huge_kb()
    array = np.empty(64 << 20, np.uint8)
    array[:] = 1
    return huge_kb() - base

try:
    from numpy._core import multiarray
except ImportError:  # numpy 1
    from numpy.core import multiarray
before = multiarray._get_madvise_hugepage()
reading.HUGE_PAGES_FROM = int(sys.argv[2])  # (the trace as a large one, or not)
cols = read_trace(sys.argv[1])
after_read = multiarray._get_madvise_hugepage()
huge_in_load = written_huge_kb()
prepare_model(TraceModel(cols))
after_build = multiarray._get_madvise_hugepage()
print(int(before), int(after_read), int(after_build), huge_in_load, written_huge_kb())
"""


def _thp_mode() -> str:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        return ""


def _demo():
    from pathlib import Path

    return Path(freed_memory.__file__).resolve().parents[1] / "resources" / "demo" / "demo.fxt"


def _pages(env_value: str | None, huge_from: int = 0, trace=None) -> tuple[int, ...]:
    import os

    env = {k: v for k, v in os.environ.items() if k != freed_memory.HUGE_PAGES_ENV}
    if env_value is not None:
        env[freed_memory.HUGE_PAGES_ENV] = env_value
    trace = trace or _demo()
    out = subprocess.run([sys.executable, "-c", _PAGES, str(trace), str(huge_from)], capture_output=True, text=True,
                         timeout=120, env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return tuple(int(v) for v in out.stdout.split())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy advises huge pages on Linux only")
def test_a_load_has_huge_pages_and_what_comes_after_it_small_ones():
    """A large trace's read and build with numpy's advice of huge pages (its default), off once the model's
    tables are built: an array written during the load gets huge pages (where the kernel advises them only when
    asked and has them), one written after it none."""
    before, after_read, after_build, huge_in_load, huge_after = _pages(None)
    assert (before, after_read, after_build) == (1, 1, 0)
    if _thp_mode() == "madvise":  # (only advised memory gets huge pages)
        assert huge_in_load > 0
        assert huge_after == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy advises huge pages on Linux only")
def test_a_small_trace_loads_on_small_pages():
    """Below reading.HUGE_PAGES_FROM bytes the read turns numpy's advice off (a small trace's window peak
    shows the transient peaks huge pages round up)."""
    from fxscope.core.trace import reading

    before, after_read, after_build, huge_in_load, huge_after = _pages(None, reading.HUGE_PAGES_FROM)
    assert (before, after_read, after_build) == (1, 0, 0)
    if _thp_mode() == "madvise":
        assert huge_in_load == 0 and huge_after == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy advises huge pages on Linux only")
def test_a_compressed_trace_is_sized_by_its_own_bytes(tmp_path):
    """A gzip-compressed trace whose file is below the size and whose decompressed trace is not: read on huge
    pages (the choice is made on the decompressed temporary)."""
    import gzip

    raw = _demo().read_bytes()
    packed = tmp_path / "demo.fxt.gz"
    packed.write_bytes(gzip.compress(raw))
    assert packed.stat().st_size < len(raw)
    assert _pages(None, len(raw), packed)[:3] == (1, 1, 0)
    assert _pages(None, len(raw) + 1, packed)[:3] == (1, 0, 0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy advises huge pages on Linux only")
def test_the_environment_keeps_numpys_huge_page_advice():
    before, after_read, after_build, huge_in_load, huge_after = _pages("1")
    assert (before, after_read, after_build) == (1, 1, 1)
    if _thp_mode() == "madvise":  # (advised: the written 64 MB arrays are mostly huge pages, where the kernel has them)
        assert huge_in_load > 0 and huge_after > 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy advises huge pages on Linux only")
def test_the_environment_asks_for_small_pages_throughout():
    before, after_read, after_build, huge_in_load, huge_after = _pages("0")
    assert (before, after_read, after_build) == (1, 0, 0)
    if _thp_mode() == "madvise":
        assert huge_in_load == 0 and huge_after == 0



#: arrays of 4 MB and more in the allocator's heap with numpy's advice of huge pages on (as during a load),
#: then use_small_pages: the VmFlags of the heap's mappings before ("hg": huge pages advised) and after
_HEAP_FLAGS = r"""
import json
import numpy as np
from fxscope.core import freed_memory

def heap_flags():
    flags, in_heap = [], False
    with open("/proc/self/smaps") as f:
        for line in f:
            if "-" in line.split(" ", 1)[0] and ":" not in line.split(" ", 1)[0]:
                in_heap = line.rstrip().endswith("[heap]")
            elif in_heap and line.startswith("VmFlags:"):
                flags.append(line.split()[1:])
    return flags

freed_memory.hold_freed_memory()  # (arrays below 32 MB from the heap, as in a load)
freed_memory.use_huge_pages()
kept = [np.ones((4 << 20) // 8 + 512 * i) for i in range(3)]
before = heap_flags()
freed_memory.use_small_pages()
print(json.dumps([before, heap_flags()]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or freed_memory.madvise is None,
                    reason="the advice is Linux's")  # fmt: skip
def test_small_pages_take_the_huge_page_advice_off_the_heap():
    """numpy's advice on an array it placed in the allocator's heap outlives the array: use_small_pages
    marks the whole heap for small pages (VmFlags "nh"), so the next arrays placed there get no huge pages
    either."""
    import json
    import os

    env = {k: v for k, v in os.environ.items() if k != freed_memory.HUGE_PAGES_ENV}
    out = subprocess.run([sys.executable, "-c", _HEAP_FLAGS], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    before, after = json.loads(out.stdout)
    assert any("hg" in flags for flags in before)  # (the test means something: numpy advised parts of it)
    assert after and all("nh" in flags and "hg" not in flags for flags in after)
