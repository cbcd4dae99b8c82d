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


#: reads a trace, then allocates and writes a 64 MB array: numpy's huge-page advice before and after the read,
#: and the huge pages that array got (AnonHugePages of the process, in kB)
_PAGES = r"""
import sys
import numpy as np
from fxscope.core.trace.reading import read_trace

def huge_kb():
    with open("/proc/self/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("AnonHugePages"))

try:
    from numpy._core import multiarray
except ImportError:  # numpy 1
    from numpy.core import multiarray
before = multiarray._get_madvise_hugepage()
read_trace(sys.argv[1])
after = multiarray._get_madvise_hugepage()
base = huge_kb()
array = np.empty(64 << 20, np.uint8)
array[:] = 1
print(int(before), int(after), huge_kb() - base)
"""


def _thp_mode() -> str:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        return ""


def _pages(env_value: str | None) -> tuple[int, int, int]:
    import os
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k != freed_memory.HUGE_PAGES_ENV}
    if env_value is not None:
        env[freed_memory.HUGE_PAGES_ENV] = env_value
    demo = Path(freed_memory.__file__).resolve().parents[1] / "resources" / "demo" / "demo.fxt"
    out = subprocess.run([sys.executable, "-c", _PAGES, str(demo)], capture_output=True, text=True, timeout=120,
                         env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr
    before, after, huge = (int(v) for v in out.stdout.split())
    return before, after, huge


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy advises huge pages on Linux only")
def test_a_read_turns_numpys_huge_page_advice_off():
    before, after, huge = _pages(None)
    assert (before, after) == (1, 0)
    if _thp_mode() == "madvise":  # (only advised memory gets huge pages: the array got none)
        assert huge == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy advises huge pages on Linux only")
def test_the_environment_keeps_numpys_huge_page_advice():
    before, after, huge = _pages("1")
    assert (before, after) == (1, 1)
    if _thp_mode() == "madvise":  # (advised: the written 64 MB array is mostly huge pages, where the kernel has them)
        assert huge > 0
