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
