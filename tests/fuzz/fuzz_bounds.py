"""Bounds and counters of the fuzz harnesses (see conftest.py for how to run them longer)."""

from __future__ import annotations

import os
import signal
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings

from fxscope.formats.errors import FormatError

SCALE = float(os.environ.get("FXSCOPE_FUZZ_SCALE", "1"))
CASE_SECONDS = float(os.environ.get("FXSCOPE_FUZZ_CASE_SECONDS", "20"))
MEMORY_FACTOR = int(os.environ.get("FXSCOPE_FUZZ_MEMORY_FACTOR", "64"))
MEMORY_CONSTANT = 32 << 20


def fuzz_settings(cases: int) -> settings:
    """Hypothesis settings for a harness of ``cases`` cases in the normal run (times FXSCOPE_FUZZ_SCALE)."""
    return settings(
        max_examples=max(1, round(cases * SCALE)),
        deadline=None,  # the case bound below is the time limit; hypothesis' deadline would flake on load
        derandomize=SCALE == 1,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


class CaseTimeout(BaseException):
    """A case ran past FXSCOPE_FUZZ_CASE_SECONDS: a hang (or near enough) to be fixed. A BaseException, like
    KeyboardInterrupt, so that no ``except Exception`` fallback in the code under test swallows it."""


class CaseMemory(AssertionError):
    """A case's traced allocations peaked above the memory bound."""


@dataclass
class Campaign:
    """One harness's counters: cases run, how they ended, the slowest case and the largest memory peak."""

    name: str
    cases: int = 0
    ok: int = 0
    format_errors: int = 0
    max_seconds: float = 0.0
    max_peak: int = 0
    max_ratio: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)

    def run(self, input_size: int, case: Callable[[], Any]) -> Any:
        """Run one case within the bounds; returns its result, or None when it ended in a FormatError. Anything
        else it raises (and CaseTimeout, CaseMemory) fails the test."""
        def _timeout(signum, frame):
            raise CaseTimeout(f"{self.name}: a case ran past {CASE_SECONDS:.0f} s")

        previous = signal.signal(signal.SIGALRM, _timeout)
        started_tracing = not tracemalloc.is_tracing()
        if started_tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
        self.cases += 1
        try:
            result = case()
            self.ok += 1
        except FormatError as exc:
            result = None
            self.format_errors += 1
            kind = type(exc).__name__
            self.errors[kind] = self.errors.get(kind, 0) + 1
            if os.environ.get("FXSCOPE_FUZZ_VERBOSE"):
                print(f"{self.name}: {exc}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            elapsed = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1] - base
            if started_tracing:
                tracemalloc.stop()
        self.max_seconds = max(self.max_seconds, elapsed)
        self.max_peak = max(self.max_peak, peak)
        self.max_ratio = max(self.max_ratio, peak / max(input_size, 1))
        bound = MEMORY_FACTOR * input_size + MEMORY_CONSTANT
        if peak > bound:
            raise CaseMemory(f"{self.name}: a case of {input_size} bytes allocated {peak} bytes at its peak "
                             f"(bound {bound})")
        return result

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.errors.items()))
        return (f"{self.name}: {self.cases} cases, {self.ok} read, {self.format_errors} format errors"
                f"{f' ({kinds})' if kinds else ''}; slowest {self.max_seconds * 1000:.0f} ms, "
                f"largest peak {self.max_peak / 1e6:.1f} MB ({self.max_ratio:.0f}x its input at most)")


