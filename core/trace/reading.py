"""Reading a trace file of any form the detector knows (:mod:`fxscope.core.filetype`): plain FXT in either byte
order, gzip/xz/zstd-compressed FXT (decompressed to a temporary file in blocks, then read as a plain one),
or FXT records without the magic record (read with a warning). Every command and the window read traces
through :func:`read_trace`, so a ``.fxt.gz`` opens wherever a ``.fxt`` does."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from fxscope.core.filetype import Kind, require_trace
from fxscope.core.freed_memory import hold_freed_memory, use_huge_pages, use_small_pages
from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.columns import FxtColumns
from fxscope.formats.fxt.reader import read_fxt

#: share of the progress given to decompressing (the rest: reading the decompressed trace)
DECOMPRESS_SHARE = 0.4
#: traces from this size on (their bytes, decompressed) are read and modelled with numpy's advice of huge pages
#: (:func:`~fxscope.core.freed_memory.use_huge_pages`); smaller ones with small pages. Measured on the
#: development machine (bench_scale, four rounds each way): at 100M events (3 GB) huge pages made the build
#: 7.5-7.6 s against 8.6-9.1 s, at 30M (906 MB) 2.27-2.31 s against 2.12-2.40 s, the window's peak alike
#: (1.09 / 1.21x the file against 1.08 / 1.18-1.19x); at 10M events (302 MB) the build 0.65-0.89 s against
#: 0.86-0.99 s (five runs), but the window's peak 453-458 MB (1.50-1.51x, the goal 1.5x) against 438-442 MB:
#: a few tens of MB of transient peaks that huge pages round up, which only a small trace's peak shows
HUGE_PAGES_FROM = 512 << 20

HEADERLESS_WARNING = (
    "offset 0x0: no magic record at the start: read as a stream of FXT records ({order}-endian), as a "
    "provider's buffer saved on its own would be"
)


def read_trace(path: str | os.PathLike[str], progress: Callable[[float], None] | None = None) -> FxtColumns:
    """The columns of the trace at ``path``. Raises :class:`~fxscope.formats.errors.FormatError` (a
    :class:`~fxscope.core.filetype.NotATraceOrLog` for other files) with a one-line message when it is not a
    trace or cannot be read. ``progress(fraction)`` as :func:`fxscope.formats.fxt.reader.read_fxt` calls it; an
    exception it raises (a Cancel) propagates, and a temporary file is removed."""
    spath = os.fspath(path)
    found = require_trace(spath)
    hold_freed_memory()  # block temporaries reused, not faulted in again block after block
    report = progress or (lambda _fraction: None)
    force: bool | str = False if found.kind == Kind.FXT else (found.byte_order or "little")
    if found.compression is None:
        _choose_pages(spath)
        cols = read_fxt(spath, force=force, progress=report)
    else:
        from fxscope.core.decompress import (
            DecompressedTooLargeError,
            DecompressError,
            decompress_to_temporary,
        )

        try:
            plain = decompress_to_temporary(spath, found.compression, lambda f: report(f * DECOMPRESS_SHARE))
        except DecompressedTooLargeError as exc:  # (sound data, maybe: too large for the limit or the disk)
            raise FormatError(f"cannot decompress: {exc}", path=spath) from exc
        except DecompressError as exc:
            raise FormatError(f"corrupt {found.compression} data: {exc}", path=spath) from exc
        except OSError as exc:
            raise FormatError(f"cannot decompress: {exc.strerror or exc}", path=spath) from exc
        try:
            _choose_pages(plain)  # (by the trace's own size, not the compressed file's)
            share = 1.0 - DECOMPRESS_SHARE
            cols = read_fxt(plain, force=force, progress=lambda f: report(DECOMPRESS_SHARE + f * share))
        finally:
            # the reader keeps a memory map of it: on POSIX the data stays until the map goes (Windows: an open
            # map keeps the file; it is left in the temporary folder)
            with contextlib.suppress(OSError):
                os.unlink(plain)
        cols.path = spath
        if cols.mapped_file is not None:  # the map is of the removed temporary file: no path to watch
            cols.mapped_file.path = None
            cols.mapped_file.shown_path = spath
    if found.kind == Kind.FXT_HEADERLESS:
        cols.warnings.insert(0, HEADERLESS_WARNING.format(order=found.byte_order))
    return cols


def _choose_pages(plain_path: str) -> None:
    """numpy's page advice for reading and building the (uncompressed) trace at ``plain_path``: huge pages from
    :data:`HUGE_PAGES_FROM` bytes on, small ones below (:mod:`fxscope.core.freed_memory`)."""
    try:
        large = os.path.getsize(plain_path) >= HUGE_PAGES_FROM
    except OSError:
        large = False
    if large:
        use_huge_pages()
    else:
        use_small_pages()
