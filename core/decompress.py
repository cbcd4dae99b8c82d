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

from fxscope.core.units import format_bytes

#: bytes decompressed per step (between progress reports and cancel checks)
BLOCK = 1 << 20
#: a decompressed trace larger than this is refused (a decompression bomb would fill the disk)
MAX_DECOMPRESSED = 1 << 37
#: free space the decompression leaves on the temporary folder's disk, at least: this much, or a tenth of the
#: disk when that is less (a decompression bomb, or a trace larger than the disk has room for, stops with an
#: error before the disk is full, not when every other program's writes fail too)
KEEP_FREE = 1 << 30
#: bytes written between two looks at the free space (a statvfs call each: nothing next to the writes)
FREE_CHECK_BYTES = 64 << 20


class DecompressError(Exception):
    """The compressed stream is corrupt or truncated."""


class DecompressedTooLargeError(DecompressError):
    """The content decompresses to more than the caller's limit, or than the temporary folder's disk has room
    for (the content may be sound: the message says which)."""


def _room(folder: str) -> tuple[int, int]:
    """Bytes that may still be written to ``folder``'s disk, and the bytes kept free there (:data:`KEEP_FREE`,
    at most a tenth of the disk); (-1, 0) when the system does not say (no check then)."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return -1, 0
    keep = min(KEEP_FREE, st.f_blocks * st.f_frsize // 10)
    return max(st.f_bavail * st.f_frsize - keep, 0), keep


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
    it raises (a Cancel) removes the file and propagates. Raises :class:`DecompressError` for corrupt content,
    :class:`DecompressedTooLargeError` for content over ``limit`` or that would leave the temporary folder's
    disk less than :data:`KEEP_FREE` free (the file removed in every case)."""
    total = max(os.path.getsize(path), 1)
    fd, name = tempfile.mkstemp(prefix="fxscope-", suffix=".fxt")
    folder = os.path.dirname(name)
    try:
        with os.fdopen(fd, "wb") as out, open(path, "rb") as raw:
            stream = _wrap(raw, compression)
            written = 0
            (room, keep), since = _room(folder), 0  # (room: what may be written after byte ``since``)
            while True:
                try:
                    block = stream.read(BLOCK)
                except _errors() as exc:
                    raise DecompressError(str(exc) or type(exc).__name__) from exc
                if not block:
                    break
                written += len(block)
                if written > limit:
                    raise DecompressedTooLargeError(f"decompresses to more than {format_bytes(limit, False)}")
                if room >= 0 and (written - since > room or written - since > FREE_CHECK_BYTES):
                    (room, keep), since = _room(folder), written - len(block)  # (others write to the disk too)
                    if room >= 0 and written - since > room:
                        raise DecompressedTooLargeError(
                            f"needs more room than {folder} has: {format_bytes(since, False)} decompressed, and "
                            f"{format_bytes(keep, False)} of its disk are kept free (TMPDIR can name a folder on a "
                            "larger disk)")
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
