"""The fuzz harnesses' bounds: every case runs under a time limit and a memory limit, and may end only in a
result or a :class:`fxscope.formats.errors.FormatError`; each harness reports its counts at the end of the run.

Case counts are small in the normal test run (the whole fuzz set takes well under a minute) and derandomized,
so CI tests the same inputs every time. A developer starts a longer, random run by hand with
``FXSCOPE_FUZZ_SCALE`` (a multiplier of every harness's case count), e.g.
``FXSCOPE_FUZZ_SCALE=200 .venv/bin/python -m pytest -q tests/fuzz``.

Bounds (per case): ``FXSCOPE_FUZZ_CASE_SECONDS`` (default 20 s: a hang, not a slow machine) and a
tracemalloc peak of at most 64 times the input plus 32 MiB (``FXSCOPE_FUZZ_MEMORY_FACTOR``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the harnesses import fuzz_bounds and fuzz_mutations

from fuzz_bounds import Campaign

_CAMPAIGNS: list[Campaign] = []


@pytest.fixture
def campaign(request) -> Campaign:
    """The counters of the requesting harness, reported in the terminal summary."""
    found = Campaign(request.node.name)
    _CAMPAIGNS.append(found)
    return found


def pytest_terminal_summary(terminalreporter) -> None:
    if _CAMPAIGNS:
        terminalreporter.section("fuzz harnesses")
        for c in _CAMPAIGNS:
            terminalreporter.write_line(c.summary())
