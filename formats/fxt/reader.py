"""Read an FXT trace archive into :class:`~fxscope.formats.fxt.columns.FxtColumns`.

Design (why it is fast): the file is memory-mapped and viewed as a numpy array of 64-bit words.
:mod:`fxscope.formats.fxt.framing` finds every record start with vectorized chain walking. The rare records that
change how later ones are read (metadata, initialization, string, thread) and the rare descriptive ones
(objects, blobs, large records) are handled in Python in file order (:mod:`fxscope.formats.fxt.tables`). Events,
logs and scheduling records, the bulk of any trace, are decoded with vectorized gathers: field offsets
that inline strings/threads shift are computed as arrays, argument blocks are walked argument-by-argument
for all records at once, and indexed refs are resolved against the registration history.
Records are decoded in blocks (:mod:`fxscope.formats.fxt.assemble`). Where things are: header bit fields in
:mod:`~fxscope.formats.fxt.fields`, control records in :mod:`~fxscope.formats.fxt.records_control`, events, logs and
scheduling in ``records_events``/``records_log``/``records_sched``, shared vectorised ref resolution in
:mod:`~fxscope.formats.fxt.bulk_resolve`, lazy arguments in :mod:`~fxscope.formats.fxt.lazy_args`.

Robustness (spec Part 3): nothing but a missing magic raises; every anomaly becomes a warning naming the
byte offset of the record header, and whatever could be decoded is kept.

Choice for the c-cube/ocaml-trace quirk (a thread record before the provider-info record): the spec's
P2 rule is followed, so a provider-info record starts empty tables and thread ref 5 of that file's events
is unresolved (thread -1, one warning). The provider name honours the length field ("oc").
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable

import numpy as np

from fxscope.formats.errors import FormatError
from fxscope.formats.fxt.assemble import Decoder
from fxscope.formats.fxt.columns import FxtColumns
from fxscope.formats.fxt.diagnostics import Diagnostics
from fxscope.formats.fxt.fields import RECORD_TYPE_NAMES
from fxscope.formats.fxt.lazy_args import ArgDecoder
from fxscope.formats.fxt.magic import MAGIC_BE, MAGIC_LE
from fxscope.formats.fxt.mapped_column import MappedColumn
from fxscope.formats.mapped_file import MappedFile, map_error_message

__all__ = [
    "RECORD_COUNT_KEYS",
    "RECORD_TYPE_NAMES",
    "ArgDecoder",
    "Diagnostics",
    "read_fxt",
    "read_fxt_bytes",
]

RECORD_COUNT_KEYS = [*RECORD_TYPE_NAMES.values(), "unknown"]

#: the decoder class (the name tests patch block sizes on)
_Decoder = Decoder


def read_fxt(
    path: str | os.PathLike[str],
    *,
    force: bool | str = False,
    progress: Callable[[float], None] | None = None,
) -> FxtColumns:
    """Read the FXT file at ``path`` (memory-mapped; the file is never modified).

    Raises :class:`~fxscope.formats.errors.FormatError` only when the file is not an FXT trace at all (no magic
    record at its start, unless ``force`` assumes little-endian, or ``force="big"`` big-endian; see
    :func:`fxscope.formats.fxt.magic.headerless_byte_order`) or cannot be opened. ``progress`` is
    called with the fraction done (0..1) between blocks; an exception it raises (a Cancel button's)
    ends the read and propagates.
    """
    spath = os.fspath(path)
    try:
        with open(spath, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 8:
                raise FormatError("not an FXT trace (shorter than one record)", path=spath, offset=0)
            try:
                mapped = MappedFile(spath, f.fileno())  # guarded against the file shrinking while open
            except OSError as exc:
                raise FormatError(map_error_message(exc), path=spath) from exc
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path=spath) from exc
    cols = _decode(mapped.map, spath, force, progress if mapped.guarded else mapped.checking(progress))
    cols.mapped_file = mapped
    if not mapped.guarded:  # no compiled guard: the mapped columns check the file's size before reading
        for column in (cols.ev_ts, cols.ev_data):
            if isinstance(column, MappedColumn):
                column.before_read = mapped.check_before_read
    return cols


def read_fxt_bytes(data: bytes, path: str = "<bytes>", *, force: bool | str = False) -> FxtColumns:
    """Read an FXT trace held in memory (tests, fuzzing)."""
    if len(data) < 8:
        raise FormatError("not an FXT trace (shorter than one record)", path=path, offset=0)
    return _decode(bytes(data), path, force)


def _decode(buf, path: str, force: bool | str, progress: Callable[[float], None] | None = None) -> FxtColumns:
    head = bytes(memoryview(buf)[:8])
    if head == MAGIC_LE:
        big = False
    elif head == MAGIC_BE:
        big = True
    elif force:
        big = force == "big"
    else:
        raise FormatError("not an FXT trace (no magic record at the start)", path=path, offset=0)
    nbytes = len(buf)
    n = nbytes // 8
    raw = np.frombuffer(buf, dtype=np.uint8, count=n * 8)
    words = np.frombuffer(buf, dtype=">u8" if big else "<u8", count=n)
    if not words.dtype.isnative:
        words = words.astype(np.uint64)  # native order once; streams still come from ``raw``
    dec = _Decoder(words, raw, path, big, nbytes)
    dec.mm = buf if isinstance(buf, mmap.mmap) else None
    dec.progress = progress or (lambda _fraction: None)
    return dec.run()
