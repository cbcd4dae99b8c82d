"""Compressed traces (gzip, xz, zstd) read as a stream: the first bytes to detect what is inside, or the
whole content into a temporary file in blocks, so that memory stays bounded whatever the size (the reader
then memory-maps the temporary file as it does a plain trace)."""

from __future__ import annotations

import gzip
import lzma
import os
import tempfile
import zlib
from collections.abc import Callable
from typing import BinaryIO

#: bytes decompressed per step (between progress reports and cancel checks)
BLOCK = 1 << 20
#: a decompressed trace larger than this is refused (a decompression bomb would fill the disk)
MAX_DECOMPRESSED = 1 << 37


class DecompressError(Exception):
    """The compressed stream is corrupt or truncated."""


class DecompressedTooLargeError(DecompressError):
    """The content decompresses to more than the caller's limit."""


_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)


def _errors() -> tuple[type[BaseException], ...]:
    try:
        import zstandard

        return (*_ERRORS, zstandard.ZstdError)
    except ImportError:  # pragma: no cover - a dependency
        return _ERRORS


def decompressed_head(path: str, compression: str, n: int) -> tuple[bytes, int | None]:
    """The first ``n`` decompressed bytes, and the decompressed size when the content ends within them
    (else None)."""
    try:
        with open(path, "rb") as raw:
            head = _read_exactly(_wrap(raw, compression), n + 1)
    except _errors() as exc:
        raise DecompressError(str(exc) or type(exc).__name__) from exc
    return (head, len(head)) if len(head) <= n else (head[:n], None)


def _read_exactly(stream: BinaryIO, n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        part = stream.read(n - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def decompress_to_temporary(
    path: str, compression: str, progress: Callable[[float], None] | None = None, limit: int = MAX_DECOMPRESSED
) -> str:
    """Decompress ``path`` into a new temporary file and return its name (the caller removes it).
    ``progress(fraction)`` gets the share of the compressed input consumed after each block; an exception
    it raises (a Cancel) removes the file and propagates. Raises :class:`DecompressError` for corrupt or
    oversized content."""
    total = max(os.path.getsize(path), 1)
    fd, name = tempfile.mkstemp(prefix="fxscope-", suffix=".fxt")
    try:
        with os.fdopen(fd, "wb") as out, open(path, "rb") as raw:
            stream = _wrap(raw, compression)
            written = 0
            while True:
                try:
                    block = stream.read(BLOCK)
                except _errors() as exc:
                    raise DecompressError(str(exc) or type(exc).__name__) from exc
                if not block:
                    break
                written += len(block)
                if written > limit:
                    raise DecompressError(f"decompresses to more than {limit >> 30} GiB")
                out.write(block)
                if progress is not None:
                    progress(min(raw.tell() / total, 1.0))
    except BaseException:
        os.unlink(name)
        raise
    return name


def read_decompressed(path: str, compression: str, limit: int) -> bytes:
    """The whole decompressed content of ``path`` in memory (a crash log: the reports need its bytes), at
    most ``limit`` bytes. Raises :class:`DecompressError` for corrupt content or content over the limit
    (read in blocks, so a decompression bomb stops at the limit)."""
    parts, got = [], 0
    try:
        with open(path, "rb") as raw:
            stream = _wrap(raw, compression)
            while block := stream.read(BLOCK):
                got += len(block)
                if got > limit:
                    raise DecompressedTooLargeError(f"decompresses to more than {limit:,} bytes")
                parts.append(block)
    except _errors() as exc:
        raise DecompressError(str(exc) or type(exc).__name__) from exc
    return b"".join(parts)


def _wrap(raw: BinaryIO, compression: str) -> BinaryIO:
    """A decompressing reader over the open compressed file ``raw`` (whose position tells the progress)."""
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "xz":
        return lzma.LZMAFile(raw, "rb")
    if compression == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    raise ValueError(f"unknown compression {compression!r}")
