"""Test-wide configuration: Qt renders offscreen, per-user state is private to the run, shared test data is
located once."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# converted symbols and debuginfod downloads go to a throwaway cache, never the user's
os.environ["FXSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="fxscope-test-cache-")
os.environ.pop("DEBUGINFOD_URLS", None)
# a started GUI must never hand files to (or take files from) the user's running fxscope, nor write the
# user's settings
os.environ["FXSCOPE_INSTANCE"] = f"fxscope-test-{os.getpid()}"
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="fxscope-test-config-")

REPO_ROOT = Path(__file__).resolve().parent.parent
# The third-party test corpus is part of the repository (a copy of ../shared/testdata with its MANIFESTs and
# LICENSES), so a fresh clone tests fully; FXSCOPE_TESTDATA points the tests at another copy.
TESTDATA = Path(os.environ.get("FXSCOPE_TESTDATA", REPO_ROOT / "tests" / "data"))


@pytest.fixture(scope="session")
def testdata() -> Path:
    """Root of the test corpus (third-party files and reference tool outputs). A missing corpus is an error,
    not a skip: a test that cannot see its data has not passed."""
    if not (TESTDATA / "MANIFEST.md").is_file():
        raise FileNotFoundError(f"test data not found at {TESTDATA} (tests/data in the repository, or FXSCOPE_TESTDATA)")
    return TESTDATA


@pytest.fixture
def truncated_demo(tmp_path: Path) -> Path:
    """A copy of the bundled demo trace cut in the middle of a record (the reader warns "truncated final
    record" and returns what came before)."""
    from formats.fxt.reader import read_fxt
    from resources import DEMO_TRACE

    data = DEMO_TRACE.read_bytes()
    path = tmp_path / "truncated.fxt"
    for cut in range(len(data) // 2 // 8 * 8, len(data) // 2 + 4096, 8):  # the first cut inside a record
        path.write_bytes(data[:cut])
        if any("truncated final record" in w for w in read_fxt(path).warnings):
            return path
    raise AssertionError("no cut of the demo inside a record")


class HangGuardTimeout(BaseException):
    """Raised in the test's thread when a ``hang_guard`` test runs past its limit (a hang is a failure); a
    BaseException so that no ``except Exception`` fallback in the code under test swallows it."""


@pytest.fixture
def hang_guard():
    """Fails the test with :class:`HangGuardTimeout` instead of hanging the run when the code under test loops
    forever (regression tests for hangs: before the fix they fail, not stall). A call ``hang_guard(seconds)``
    sets the limit (default 60 s: far beyond any case's normal time, so no timing assertion)."""
    import signal

    def _raise(signum, frame):
        raise HangGuardTimeout("still running at the hang guard's limit: a hang")

    previous = signal.signal(signal.SIGALRM, _raise)

    def arm(seconds: float = 60.0) -> None:
        signal.setitimer(signal.ITIMER_REAL, seconds)

    arm()
    try:
        yield arm
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
