"""``fxscope symbolize`` on the real crash log, as a user runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_crash_log_from_stdin(testdata: Path) -> None:
    demo = testdata / "markup" / "crash-demo"
    result = subprocess.run(
        [sys.executable, "-m", "fxscope", "symbolize", "--no-color",
         "--symbols", str(testdata / "gsym" / "crashdemo" / "binary.gsym"),
         "--symbols", str(testdata / "gsym" / "libdemo" / "binary.gsym"),
         "--debug-file-directory", str(demo)],
        input=(demo / "input.log").read_text(), capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (demo / "expected.llvm19.stdout").read_text()
    assert result.stderr == (demo / "expected.llvm19.stderr").read_text()


def test_missing_symbol_file_is_one_line_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fxscope", "symbolize", "--symbols", str(tmp_path / "nope.gsym")],
        input="", capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 2
    assert result.stderr.strip().endswith("nope.gsym: no such file or directory")


def test_ranges_symbfiles_are_a_symbol_source(testdata: Path, tmp_path: Path) -> None:
    """The crash log symbolized through ranges symbfiles (named by build ID) reads exactly as through
    llvm-gsymutil's GSYM files of the same binaries (neither has columns without the ELF at hand)."""
    from fxscope.core.symbfile_export.create import create_symbfiles
    from fxscope.formats.elf.reader import read_elf
    from fxscope.formats.symbfile.codec import write_symbfile

    demo = testdata / "markup" / "crash-demo"
    symbfiles = []
    for case in ("crashdemo", "libdemo"):
        binary = testdata / "gsym" / case / "binary"
        ranges, _pads = create_symbfiles(binary)
        path = tmp_path / f"{read_elf(binary).build_id.hex()}.ranges.symbfile"
        path.write_bytes(write_symbfile(ranges))
        symbfiles.append(path)

    def symbolize(*symbols: Path) -> subprocess.CompletedProcess:
        args = [a for s in symbols for a in ("--symbols", str(s))]
        return subprocess.run(
            [sys.executable, "-m", "fxscope", "symbolize", "--no-color", *args],
            input=(demo / "input.log").read_text(), capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip

    via_symbfile = symbolize(*symbfiles)
    via_gsym = symbolize(*(testdata / "gsym" / c / "binary.gsym" for c in ("crashdemo", "libdemo")))
    assert via_symbfile.returncode == 0, via_symbfile.stderr
    # Ranges files describe DWARF functions only; GSYM adds symbol-table-only functions without lines
    # (here ``_start``, printed as ``<invalid>:0:0``). Every other line is the same.
    ours, theirs = via_symbfile.stdout.splitlines(), via_gsym.stdout.splitlines()
    assert len(ours) == len(theirs)
    differing = [(a, b) for a, b in zip(ours, theirs, strict=True) if a != b]
    assert len(differing) <= 2
    for a, b in differing:
        assert "<invalid>:0:0" in b and a == b.replace(" _start <invalid>:0:0", ""), (a, b)
    assert via_symbfile.stderr == via_gsym.stderr
    assert "main" in via_symbfile.stdout and ".c:" in via_symbfile.stdout

    unnamed = tmp_path / "demo.ranges.symbfile"
    unnamed.write_bytes(symbfiles[0].read_bytes())
    result = symbolize(unnamed)
    assert result.returncode == 2 and "name it BUILDID.ranges.symbfile" in result.stderr


def test_diagnostics_echo_the_input_bytes(testdata: Path) -> None:
    """Issue 13 finding 6: bytes that are not UTF-8 are echoed in diagnostics as they came in (LLVM does),
    not as ``\\udce9`` text, and pass through stdout unchanged, whatever the locale."""
    case = testdata / "markup" / "diagnostics"
    for lang in ("C.UTF-8", "C"):
        result = subprocess.run(
            [sys.executable, "-m", "fxscope", "symbolize", "--no-color", str(case / "invalid-utf8.log")],
            capture_output=True, timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT), "LC_ALL": lang, "PYTHONIOENCODING": ""},
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == (case / "invalid-utf8.llvm19.stdout").read_bytes()
        assert result.stderr == (case / "invalid-utf8.llvm19.stderr").read_bytes()


def _symbolize(testdata: Path, *files: Path) -> subprocess.CompletedProcess:
    demo = testdata / "markup" / "crash-demo"
    return subprocess.run(
        [sys.executable, "-m", "fxscope", "symbolize", "--no-color",
         "--symbols", str(testdata / "gsym" / "crashdemo" / "binary.gsym"),
         "--symbols", str(testdata / "gsym" / "libdemo" / "binary.gsym"),
         "--debug-file-directory", str(demo), *map(str, files)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def test_compressed_logs_read_as_the_plain_one(testdata: Path, tmp_path: Path) -> None:
    """A crash.log.gz / .xz / .zst (what log collectors hand out) symbolizes as the plain log does, rather
    than as its compressed bytes passed through."""
    import gzip
    import lzma

    import zstandard

    demo = testdata / "markup" / "crash-demo"
    data = (demo / "input.log").read_bytes()
    for suffix, compress in ((".gz", gzip.compress), (".xz", lzma.compress),
                             (".zst", zstandard.ZstdCompressor().compress)):  # fmt: skip
        packed = tmp_path / f"crash.log{suffix}"
        packed.write_bytes(compress(data))
        result = _symbolize(testdata, packed)
        assert result.returncode == 0, result.stderr
        assert result.stdout == (demo / "expected.llvm19.stdout").read_text(), suffix
        assert result.stderr == (demo / "expected.llvm19.stderr").read_text(), suffix


def test_a_trace_gives_the_crash_reports_in_its_log_records(testdata: Path, tmp_path: Path) -> None:
    """A trace (not its bytes) gives each crash report of its log records under a line saying where it was
    logged, symbolized as llvm-symbolizer symbolizes the log; a trace without one says so on stderr."""
    from fxscope.core.synthetic_trace import generate_trace

    demo = testdata / "markup" / "crash-demo"
    log = (demo / "input.log").read_text()
    trace = tmp_path / "with-crash.fxt"
    trace.write_bytes(generate_trace(300, seed=7, crash_log=log))
    result = _symbolize(testdata, trace)
    assert result.returncode == 0, result.stderr
    # (the generated trace logs a small report of its own first: the demo's is the second)
    head = re.compile(rf"^--- {re.escape(str(trace))}: crash report (\d) of 2, process 1000 thread 1010, at \d+\.\d{{9}} s ---$",
                      re.MULTILINE)  # fmt: skip
    parts = head.split(result.stdout)
    assert parts[0] == "" and parts[1::2] == ["1", "2"], result.stdout[:300]
    expected = (demo / "expected.llvm19.stdout").read_text()
    assert parts[4] == "\n" + expected[expected.index("*** crashdemo: fatal"):]
    assert "[[[ELF module #0x0 \"libfoo.so\"" in parts[2]  # (the first one's, whose module has no symbols)
    result = _symbolize(testdata, testdata / "fxt" / "richiesams_fxt-python_trace.fxt")  # (magic-trace's: no logs)
    assert result.returncode == 0 and result.stdout == ""
    assert "richiesams_fxt-python_trace.fxt: no crash report (symbolizer markup) in its 0 log records" in result.stderr
