"""Crash logs compressed with gzip, xz or zstd (what log collectors hand out) read as the plain log does,
and corrupt or oversized compressed logs are a clear error, not a traceback or unbounded memory."""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

import pytest
import zstandard

import fxscope.core.reports.crash_log as crash_log
from fxscope.core.reports.crash_log import CrashLog, LogReadError, LogTooLargeError

PACK = {"gz": gzip.compress, "xz": lzma.compress, "zst": zstandard.ZstdCompressor().compress}


@pytest.mark.parametrize("ext", sorted(PACK))
def test_a_compressed_log_has_the_reports_of_the_plain_one(testdata: Path, tmp_path: Path, ext: str) -> None:
    plain = testdata / "markup" / "crash-demo" / "input.log"
    packed = tmp_path / f"crash.log.{ext}"
    packed.write_bytes(PACK[ext](plain.read_bytes()))
    want, got = CrashLog.from_path(plain), CrashLog.from_path(packed)
    assert got.data == want.data
    assert got.reports == want.reports and len(got.reports) >= 1


def test_a_corrupt_compressed_log_is_a_read_error(testdata: Path, tmp_path: Path) -> None:
    packed = gzip.compress((testdata / "markup" / "crash-demo" / "input.log").read_bytes())
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(LogReadError, match="gzip data"):
        CrashLog.from_path(cut)


def test_a_compressed_log_stops_at_the_size_limit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(crash_log, "MAX_LOG_BYTES", 1 << 20)
    bomb = tmp_path / "bomb.log.xz"
    bomb.write_bytes(lzma.compress(b"{{{reset}}}\n" + b"x" * (8 << 20)))  # 8 MB of log in a few kB
    with pytest.raises(LogTooLargeError, match="more than 1,048,576 bytes"):
        CrashLog.from_path(bomb)
