"""What a file is, by its content: the one place the window and every command ask.

An FXT trace in either byte order (its magic record), an FXT trace compressed with gzip, xz or zstd
(users get ``.fxt.gz`` from their tools), a stream of FXT records saved without the magic record (a
provider's buffer on its own: Fuchsia's reader does not require the magic, so it opens with a warning), a
log with symbolizer markup (a crash report), or other text; anything else is "not a trace or crash log".
File names are not trusted: a big-endian trace named ``.log`` is a trace, a PNG named ``.fxt`` is not.
"""

from __future__ import annotations

import enum
import os
import re
from dataclasses import dataclass

from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.magic import headerless_byte_order, magic_byte_order

#: bytes looked at: the markup of a crash report starts near the top of its log
HEAD_BYTES = 65536

#: compression -> its magic bytes
COMPRESSION_MAGIC = {
    "gzip": b"\x1f\x8b",
    "xz": b"\xfd7zXZ\x00",
    "zstd": b"\x28\xb5\x2f\xfd",
}

#: elements of a crash report in symbolizer markup, with their fields as LLVM's format writes them (a
#: document that only mentions ``{{{bt:...}}}``, like our README, is not a crash log)
MARKUP_ELEMENT = re.compile(
    rb"\{\{\{(?:reset(?::(?:begin|end))?\}\}\}|module:(?:0x)?[0-9a-fA-F]+:|mmap:0x[0-9a-fA-F]+:"
    rb"|bt:\d+:0x[0-9a-fA-F]+|pc:0x[0-9a-fA-F]+|data:0x[0-9a-fA-F]+)"
)


class Kind(enum.Enum):
    FXT = "FXT trace"
    FXT_HEADERLESS = "FXT records without the magic record"
    MARKUP_LOG = "log with symbolizer markup"
    TEXT = "text without symbolizer markup"
    UNKNOWN = "not a trace or crash log"


@dataclass(frozen=True)
class FileType:
    """What :func:`detect` found. ``byte_order`` ("little"/"big") for FXT kinds; ``compression`` ("gzip",
    "xz", "zstd") when the content is compressed (the kind is that of the decompressed content)."""

    kind: Kind
    byte_order: str | None = None
    compression: str | None = None

    @property
    def is_trace(self) -> bool:
        return self.kind in (Kind.FXT, Kind.FXT_HEADERLESS)

    def describe(self) -> str:
        order = f", {self.byte_order}-endian" if self.byte_order else ""
        packed = f", {self.compression}-compressed" if self.compression else ""
        return f"{self.kind.value}{order}{packed}"


class NotATraceOrLog(FormatError):
    """The file is neither an FXT trace (plain or compressed) nor a text log."""


def classify(head: bytes, total_size: int) -> FileType:
    """The type of uncompressed content that starts with ``head`` and is ``total_size`` bytes long."""
    order = magic_byte_order(head)
    if order:
        return FileType(Kind.FXT, order)
    if _is_text(head):
        if MARKUP_ELEMENT.search(head):
            return FileType(Kind.MARKUP_LOG)
        return FileType(Kind.TEXT)
    order = headerless_byte_order(head, total_size)
    if order:
        return FileType(Kind.FXT_HEADERLESS, order)
    return FileType(Kind.UNKNOWN)


def _is_text(head: bytes) -> bool:
    """UTF-8 (a multi-byte character cut at the end of the head is fine) without NUL bytes, or empty."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and exc.reason.startswith("unexpected end")
    return True


def compression_of(head: bytes) -> str | None:
    for name, magic in COMPRESSION_MAGIC.items():
        if head.startswith(magic):
            return name
    return None


def detect(path: str | os.PathLike[str]) -> FileType:
    """The type of the file at ``path`` by its first bytes (decompressing the start of a compressed one).
    Raises :class:`FormatError` when the file cannot be read or its compressed stream is corrupt."""
    from fxscope.core.decompress import DecompressError, decompressed_head

    spath = os.fspath(path)
    try:
        with open(spath, "rb") as f:
            head = f.read(HEAD_BYTES)
            size = os.fstat(f.fileno()).st_size
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path=spath) from exc
    compression = compression_of(head)
    if compression is None:
        return classify(head, size)
    try:
        inner, inner_size = decompressed_head(spath, compression, HEAD_BYTES)
    except DecompressError as exc:
        raise FormatError(f"corrupt {compression} data: {exc}", path=spath) from exc
    # (size unknown until the end: a head cut at HEAD_BYTES is a prefix of a longer stream)
    found = classify(inner, inner_size if inner_size is not None else 1 << 62)
    return FileType(found.kind, found.byte_order, compression)


def require_trace(path: str | os.PathLike[str]) -> FileType:
    """:func:`detect`, raising :class:`NotATraceOrLog` (a clear one-line message) unless it is a trace."""
    found = detect(path)
    if found.is_trace:
        return found
    if found.kind == Kind.MARKUP_LOG:
        message = f"not a trace: a {found.describe()} (the window opens it as a crash report; fxscope symbolize reads it)"
    elif found.kind == Kind.TEXT:
        message = f"not a trace or crash log ({found.describe()})"
    else:
        message = "not a trace or crash log (neither FXT records, in either byte order, plain or gzip/xz/zstd-compressed, nor text)"
    raise NotATraceOrLog(message, path=os.fspath(path))
