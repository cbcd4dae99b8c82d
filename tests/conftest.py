"""Test-wide configuration: Qt renders offscreen, per-user state is private to the run, shared test data is
located once."""

from __future__ import annotations

import atexit
import os
import shutil
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
# windows opened by tests keep no notes beside the traces they open (the corpus, the demo); the notes tests
# turn this off for their own copies
os.environ["FXSCOPE_NO_NOTES"] = "1"
# the run's private directories go when it ends (each test process makes its own), not pile up in /tmp
for _private in (os.environ["FXSCOPE_CACHE_DIR"], os.environ["XDG_CONFIG_HOME"]):
    atexit.register(shutil.rmtree, _private, ignore_errors=True)

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
    from fxscope.formats.fxt.reader import read_fxt
    from fxscope.resources import DEMO_TRACE

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


#: first timestamps of the boot-stamped test traces: 2 hours after boot (past 2**32 and 2**33 ns), and as late
#: as 64-bit ticks allow (near 2**63 ns)
BOOT_STARTS = {"2h-after-boot": 2 * 3600 * 10**9, "near-2^63": (1 << 63) - (1 << 40) - 10**12}


@pytest.fixture(scope="session")
def boot_trace_files(tmp_path_factory) -> dict[str, Path]:
    """Generated traces stamped as real ones are: from boot, hours (or nearly 2**63 ns) after it. Three
    providers at 1 and 2 GHz tick rates, a busy four-CPU schedule, logs with markup, counters, flows, and
    300 more threads (315 thread tracks in 18 processes). Keyed by :data:`BOOT_STARTS`."""
    from fxscope.core.synthetic_trace import write_trace

    out = {}
    folder = tmp_path_factory.mktemp("boot-traces")
    for name, start in BOOT_STARTS.items():
        path = folder / f"{name}.fxt"
        write_trace(path, 4000, seed=7, scheduling=True, start_ns=start, extra_threads=300)
        out[name] = path
    return out


@pytest.fixture(params=sorted(BOOT_STARTS))
def boot_trace(request, boot_trace_files):
    """The prepared model of each boot-stamped trace in turn (parametrized: window and model tests run on
    both)."""
    from fxscope.core.trace.model import TraceModel
    from fxscope.core.trace.prepare import prepare_model
    from fxscope.formats.fxt.reader import read_fxt

    model = TraceModel(read_fxt(boot_trace_files[request.param]))
    prepare_model(model)
    assert model.start_ns >= BOOT_STARTS[request.param]
    return model


@pytest.fixture(scope="session")
def partial_80() -> bytes:
    """Issue 12, defect 2: an 80-byte trace whose argument's inline name runs past the end of the file (the
    reader warns; the search index once read past the buffer)."""
    return bytes.fromhex(
        "1000044678541600420000000000000000000000000000000000000000000000000000000000000054002201000000000000000000"
        "000000270000ff0000000000000000000000000000000000000000"
    )


def _mutate_fxt(data: bytes, rng) -> bytes:
    """A damaged copy of an FXT trace (the magic kept): flipped bytes, overwritten words, a spliced range,
    or string refs turned into long inline ones (names and values running past their record)."""
    b = bytearray(data)
    mode = rng.choice(["bytes", "words", "splice", "lengths"])
    if mode == "bytes":
        for _ in range(rng.randrange(1, 64)):
            b[rng.randrange(8, len(b))] = rng.randrange(256)
    elif mode == "words":  # whole 64-bit words: headers, timestamps, string refs
        for _ in range(rng.randrange(1, 16)):
            i = rng.randrange(1, len(b) // 8) * 8
            b[i : i + 8] = rng.randrange(1 << 64).to_bytes(8, "little")
    elif mode == "splice":
        a, c = rng.randrange(8, len(b)), rng.randrange(len(b))
        b[a:a] = b[c : c + rng.randrange(1, 512)]
    else:
        for _ in range(rng.randrange(1, 16)):
            i = rng.randrange(8, len(b) - 1) & ~1
            b[i : i + 2] = (0x8000 | rng.randrange(0x8000)).to_bytes(2, "little")
    return bytes(b)


def _cut_and_flip(data: bytes, rng, flips: int, shortest: int = 0) -> bytes:
    """A damaged copy of a trace: cut at a random length from ``shortest`` bytes to whole, then up to
    ``flips - 1`` bytes overwritten anywhere (the magic too: headerless and wrong-order files included)."""
    d = bytearray(data[: rng.randrange(shortest, len(data) + 1)])
    for _ in range(rng.randrange(flips)):
        if d:
            d[rng.randrange(len(d))] = rng.randrange(256)
    return bytes(d)


@pytest.fixture(scope="session")
def cut_and_flip():
    """``cut_and_flip(data, rng, flips, shortest=0)``: a cut, byte-flipped copy of a trace (see
    :func:`_cut_and_flip`); the hostile variants the compiled-against-numpy tests read."""
    return _cut_and_flip


@pytest.fixture(scope="session")
def mutate_fxt():
    """``mutate_fxt(data, rng)``: a damaged copy of an FXT trace (see :func:`_mutate_fxt`)."""
    return _mutate_fxt


def _damaged_models(rng, generated_events: int, seed: int, copies: int, originals: bool = True,
                    extra: tuple[bytes, ...] = ()):  # fmt: skip
    """The models of ``copies`` cut-and-flipped and ``copies`` mutated copies of the real FXT traces and of
    a generated one (``generated_events``, ``seed``), of those traces themselves (``originals``) and of
    ``extra``; a file the reader refuses (FormatError) is left out."""
    from fxscope.core.synthetic_trace import generate_trace
    from fxscope.core.trace.model import TraceModel
    from fxscope.formats.errors import FormatError
    from fxscope.formats.fxt.reader import read_fxt_bytes

    sources = [p.read_bytes() for p in sorted((TESTDATA / "fxt").glob("*.fxt"))]
    sources.append(generate_trace(generated_events, seed=seed))
    variants = list(extra)
    for data in sources:
        variants += [data] if originals else []
        variants += [_cut_and_flip(data, rng, 6) for _ in range(copies)]
        variants += [_mutate_fxt(data, rng) for _ in range(copies)]
    for data in variants:
        try:
            model = TraceModel(read_fxt_bytes(data))
        except FormatError:
            continue
        yield model


@pytest.fixture(scope="session")
def damaged_models():
    """``damaged_models(rng, generated_events, seed, copies, originals=True, extra=())``: models of the real traces, a
    generated one and damaged copies of them (see :func:`_damaged_models`), for the compiled-against-reference
    tests on hostile input."""
    return _damaged_models
