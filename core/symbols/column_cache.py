"""The column numbers of a module's frames, cached beside its GSYM file (``BUILDID.columns``).

GSYM stores no columns, but llvm-symbolizer prints them: the line row's column for the innermost frame and
DW_AT_call_column of each inlined call around it. Without this file every run would decode the module's whole
DWARF again just for them (45 ms for the crash demo, seconds for a real library), which defeats the GSYM
cache. The file holds exactly what :meth:`fxscope.formats.dwarf.model.DwarfModel.frame_columns` reads from the
DWARF model, laid out so that the same lookups (same sort orders,
same tie-breaks) give the same answers:

- the line sequences (sorted by low address, stably), each with its rows' addresses and columns;
- the function spans ``(lo, hi, function)`` sorted as ``DwarfModel.function_at`` sorts them, each
  function's first top-level inline node, and the inline nodes (pre-order) with their first child, next
  sibling, ranges and call column.

Format (little-endian): ``FXCOLUMN`` magic, u32 version, u32 build-ID length, u32 CRC-32 of what follows the
build ID, the build ID, then the lengths (u64) of the arrays ``_ARRAYS`` lists, and the arrays. A file that is missing, truncated, of another version or build ID, or whose
arrays do not hang together reads as None: the caller decodes DWARF as before (a cache file is input too).
A model this format cannot reproduce exactly (rows out of order, values past 64 bits) is not written.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.atomic_file import write_atomic
from fxscope.formats.gsym.model import SourceFile

if TYPE_CHECKING:
    from fxscope.formats.dwarf.model import DwarfModel
    from fxscope.formats.gsym.model import InlineNode

MAGIC = b"FXCOLUMN"
VERSION = 1
_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1
#: array names and dtypes, in file order
_ARRAYS = (
    ("seq_low", "<u8"), ("seq_high", "<u8"), ("seq_start", "<u8"),  # per sequence; rows [start, next start)
    ("row_addr", "<u8"), ("row_col", "<u4"), ("row_line", "<u4"),
    ("row_file", "<i4"), ("row_end", "<u1"),  # file: index into the file table, -1 for none; end: end_sequence
    ("file_text", "<u1"),  # the file table: directory and base name of each file, UTF-8, each ending in NUL
    ("span_lo", "<u8"), ("span_hi", "<u8"), ("span_fn", "<i8"),
    ("fn_top", "<i8"),  # per function: first top-level inline node, -1 for none
    # per inline node: first child, next sibling (-1 for none), call column, first range (ranges up to the next)
    ("node_links", "<i8"), ("node_col", "<u4"), ("node_range_start", "<u8"),
    ("range_lo", "<u8"), ("range_hi", "<u8"),
)


class ColumnTable:
    """The cached columns of one module; :meth:`columns` answers as ``DwarfModel.frame_columns`` does."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self._a = arrays
        self._seq_low = arrays["seq_low"]
        self._row_addr = arrays["row_addr"]
        self._span_lo = arrays["span_lo"]
        self._files: list[SourceFile] | None = None

    def _file(self, index: int) -> SourceFile | None:
        """File ``index`` of the table (decoded on first use: only frames without a function need names)."""
        if self._files is None:
            try:
                parts = bytes(self._a["file_text"]).decode().split("\0")
            except UnicodeDecodeError:
                parts = []
            self._files = [SourceFile(d, b) for d, b in zip(parts[0:-1:2], parts[1::2], strict=False)]
        return self._files[index] if 0 <= index < len(self._files) else None

    def row_at(self, address: int) -> tuple[SourceFile, int, int] | None:
        """``DwarfModel.row_at``: (file, line, column) of the row in force in the nearest sequence covering
        ``address``, None when none does (or the row is an end of sequence, or has no file)."""
        a = self._a
        if not 0 <= address <= _U64:
            return None
        k = _nearest_covering(self._seq_low, a["seq_high"], address)
        if k < 0:
            return None
        i = self._row_index(k, address)
        file = self._file(int(a["row_file"][i]))
        if file is None or a["row_end"][i]:
            return None
        return file, int(a["row_line"][i]), int(a["row_col"][i])

    def _row_index(self, k: int, address: int) -> int:
        """The row in force at ``address`` in sequence ``k`` (which starts at or before it)."""
        start = int(self._a["seq_start"][k])
        stop = int(self._a["seq_start"][k + 1]) if k + 1 < len(self._a["seq_start"]) else len(self._row_addr)
        found = self._row_addr[start:stop].searchsorted(np.uint64(address), side="right")
        return max(start + int(found) - 1, start)

    def row_column(self, address: int) -> int:
        """``DwarfModel.row_column``: the column of the row in force in the last sequence starting at or
        before ``address``, 0 when that sequence does not cover it."""
        a = self._a
        k = int(self._seq_low.searchsorted(np.uint64(address), side="right")) - 1
        if k < 0 or not address < int(a["seq_high"][k]):
            return 0
        return int(a["row_col"][self._row_index(k, address)])

    def _function_at(self, address: int) -> int:
        """``DwarfModel.function_at``: the function's index, -1 for none."""
        k = _nearest_covering(self._span_lo, self._a["span_hi"], address)
        return int(self._a["span_fn"][k]) if k >= 0 else -1

    def _node_contains(self, node: int, address: int) -> bool:
        a = self._a
        start = int(a["node_range_start"][node])
        stop = int(a["node_range_start"][node + 1]) if node + 1 < len(a["node_range_start"]) else len(a["range_lo"])
        lo, hi = a["range_lo"][start:stop], a["range_hi"][start:stop]
        key = np.uint64(address)
        return bool(np.any((lo <= key) & (hi > key)))

    def columns(self, address: int, count: int) -> list[int]:
        """Columns of a ``count``-frame inline stack at ``address``, innermost first (0s when the DWARF's
        inline chain there is not ``count`` frames deep)."""
        zeros = [0] * count
        if not 0 <= address <= _U64:
            return zeros
        links, node_col = self._a["node_links"], self._a["node_col"]
        fn = self._function_at(address)
        node = int(self._a["fn_top"][fn]) if fn >= 0 else -1
        chain: list[int] = []
        while node >= 0:
            if self._node_contains(node, address):
                chain.append(node)
                node = int(links[node, 0])
            else:
                node = int(links[node, 1])
        if len(chain) + 1 != count:
            return zeros
        return [self.row_column(address)] + [int(node_col[n]) for n in reversed(chain)]


def _nearest_covering(lows: np.ndarray, highs: np.ndarray, address: int) -> int:
    """The index of the last interval starting at or before ``address`` that contains it, looking back no
    further than the first one that starts more than 16 MiB before it, -1 for none: the walk-back of
    ``DwarfModel.row_at`` and ``function_at`` (intervals sorted by start), done on the whole window at once."""
    key = np.uint64(address)  # a Python int would make numpy convert the whole array to compare with it
    end = int(lows.searchsorted(key, side="right"))
    if end == 0:
        return -1
    far = address - (1 << 24)
    first = max(int(lows.searchsorted(np.uint64(far), side="left")) - 1, 0) if far > 0 else 0
    covering = np.flatnonzero(highs[first:end] > key)
    return first + int(covering[-1]) if len(covering) else -1


def _flatten(model: DwarfModel) -> dict[str, object] | None:
    """The model's column facts as flat lists, or None when the format cannot reproduce its lookups."""
    seqs = sorted((s for cu in model.sequences for s in cu), key=lambda s: s.low)
    seq_low, seq_high, seq_start, row_addr, row_col, row_line, row_file, row_end = [], [], [], [], [], [], [], []
    file_index: dict[SourceFile, int] = {}
    for seq in seqs:
        addrs = seq.addresses
        if any(addrs[i] > addrs[i + 1] for i in range(len(addrs) - 1)):
            return None  # bisect on unsorted rows: not reproducible by a sorted search
        if not len(seq.files) == len(seq.lines) == len(seq.end) == len(addrs):
            return None
        seq_low.append(seq.low)
        seq_high.append(seq.high)
        seq_start.append(len(row_addr))
        row_addr.extend(addrs)
        row_col.extend(seq.columns if seq.columns else [0] * len(addrs))
        if len(row_col) != len(row_addr):
            return None
        row_line.extend(seq.lines)
        row_file.extend(-1 if f is None else file_index.setdefault(f, len(file_index)) for f in seq.files)
        row_end.extend(1 if e else 0 for e in seq.end)
    names = [part for f in file_index for part in (f.directory, f.base)]
    if any(type(n) is not str or "\0" in n for n in names):
        return None
    try:
        file_text = np.frombuffer(b"".join(n.encode() + b"\0" for n in names), dtype=np.uint8)
    except UnicodeEncodeError:
        return None
    spans = sorted((lo, hi, i) for i, fn in enumerate(model.functions) for lo, hi in fn.ranges)
    fn_top: list[int] = []
    links: list[list[int]] = []
    node_col: list[int] = []
    range_lo: list[int] = []
    range_hi: list[int] = []
    node_range_start: list[int] = []

    def add(nodes: list[InlineNode]) -> int:
        """Append ``nodes`` and their subtrees (pre-order); the index of the first, -1 for none."""
        first = previous = -1
        for n in nodes:
            index = len(links)
            links.append([-1, -1])
            node_col.append(n.call_column)
            node_range_start.append(len(range_lo))
            for lo, hi in n.ranges:
                range_lo.append(lo)
                range_hi.append(hi)
            if previous >= 0:
                links[previous][1] = index
            else:
                first = index
            previous = index
            links[index][0] = add(n.children)
        return first

    for fn in model.functions:
        fn_top.append(add(fn.inlines))
    facts = {
        "seq_low": seq_low, "seq_high": seq_high, "seq_start": seq_start, "row_addr": row_addr, "row_col": row_col,
        "row_line": row_line, "row_file": row_file, "row_end": row_end, "file_text": file_text,
        "span_lo": [s[0] for s in spans], "span_hi": [s[1] for s in spans], "span_fn": [s[2] for s in spans],
        "fn_top": fn_top, "node_links": links, "node_col": node_col,
        "range_lo": range_lo, "range_hi": range_hi, "node_range_start": node_range_start,
    }  # fmt: skip
    for name in ("seq_low", "seq_high", "row_addr", "span_lo", "span_hi", "range_lo", "range_hi"):
        if any(type(v) is not int or not 0 <= v <= _U64 for v in facts[name]):
            return None
    for name in ("row_col", "row_line", "node_col"):
        if any(type(v) is not int or not 0 <= v <= _U32 for v in facts[name]):
            return None
    return facts


def encode_columns(model: DwarfModel, build_id: bytes) -> bytes | None:
    """The columns file for ``model`` (the DWARF of the module ``build_id``), or None when it cannot be exact."""
    facts = _flatten(model)
    if facts is None:
        return None
    arrays = [np.asarray(facts[name], dtype=dtype).reshape(-1, 2) if name == "node_links"
              else np.asarray(facts[name], dtype=dtype) for name, dtype in _ARRAYS]  # fmt: skip
    body = struct.pack(f"<{len(arrays)}Q", *(len(x) for x in arrays)) + b"".join(x.tobytes() for x in arrays)
    return MAGIC + struct.pack("<III", VERSION, len(build_id), zlib.crc32(body)) + build_id + body


def decode_columns(data: bytes, build_id: bytes) -> ColumnTable | None:
    """The table in a columns file, or None for anything but a consistent file of this version for ``build_id``."""
    layout = _ARRAYS
    fixed = len(MAGIC) + 12
    if len(data) < fixed or data[: len(MAGIC)] != MAGIC:
        return None
    version, id_len, crc = struct.unpack_from("<III", data, len(MAGIC))
    if version != VERSION or id_len != len(build_id) or data[fixed : fixed + id_len] != build_id:
        return None
    offset = fixed + id_len
    if zlib.crc32(memoryview(data)[offset:]) != crc:
        return None  # a damaged file: its columns could be wrong without looking inconsistent
    if len(data) < offset + 8 * len(layout):
        return None
    lengths = struct.unpack_from(f"<{len(layout)}Q", data, offset)
    offset += 8 * len(layout)
    arrays: dict[str, np.ndarray] = {}
    for (name, dtype), length in zip(layout, lengths, strict=True):
        width = np.dtype(dtype).itemsize * (2 if name == "node_links" else 1)
        if length > (len(data) - offset) // width:
            return None
        array = np.frombuffer(data, dtype=dtype, count=length * (2 if name == "node_links" else 1), offset=offset)
        arrays[name] = array.reshape(-1, 2) if name == "node_links" else array
        offset += width * length
    if offset != len(data) or not _consistent(arrays):
        return None
    return ColumnTable(arrays)


def _consistent(a: dict[str, np.ndarray]) -> bool:
    """Every index in the file points inside its array and every sorted array is sorted: lookups on a
    hostile file can then neither fail nor loop."""
    seqs, rows, nodes, ranges = len(a["seq_low"]), len(a["row_addr"]), len(a["node_col"]), len(a["range_lo"])
    if len(a["seq_high"]) != seqs or len(a["seq_start"]) != seqs:
        return False
    if any(len(a[name]) != rows for name in ("row_col", "row_line", "row_file", "row_end")):
        return False
    if len(a["span_hi"]) != len(a["span_lo"]) or len(a["span_fn"]) != len(a["span_lo"]):
        return False
    if len(a["node_links"]) != nodes or len(a["node_range_start"]) != nodes or len(a["range_hi"]) != ranges:
        return False
    if seqs and (int(a["seq_start"][0]) != 0 or not _ascending(a["seq_start"]) or not _ascending(a["seq_low"])
                 or int(a["seq_start"][-1]) >= rows or np.any(a["seq_start"][1:] == a["seq_start"][:-1])):  # fmt: skip
        return False  # rows in order and every sequence has some (its low address is its first row's)
    if not _ascending(a["span_lo"]) or np.any((a["span_fn"] < 0) | (a["span_fn"] >= len(a["fn_top"]))):
        return False
    if np.any((a["fn_top"] < -1) | (a["fn_top"] >= nodes)):
        return False
    if np.any((a["row_file"] < -1) | (a["row_file"] >= len(a["file_text"]) // 2 + 1)):
        return False  # (the exact bound is checked when the names are decoded)
    # pre-order: a node's first child and next sibling come after it, so following links always ends
    links = a["node_links"]
    order = np.arange(nodes).reshape(-1, 1)
    if nodes and np.any(((links != -1) & (links <= order)) | (links < -1) | (links >= nodes)):
        return False
    starts = a["node_range_start"]
    return not nodes or (int(starts[0]) == 0 and _ascending(starts) and int(starts[-1]) <= ranges)


def _ascending(values: np.ndarray) -> bool:
    """Sorted (ties allowed); compared, not differenced, so unsigned values cannot wrap."""
    return not np.any(values[1:] < values[:-1])


def save_columns(path: Path, model: DwarfModel, build_id: bytes) -> bool:
    """Write the columns file atomically; False when the model cannot be stored exactly or the write failed
    (the cache is an optimisation: a read-only cache directory is not an error)."""
    data = encode_columns(model, build_id)
    if data is None:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    except OSError:
        return False
    return True


def load_columns(path: Path, build_id: bytes) -> ColumnTable | None:
    """The cached columns of ``build_id``, or None (missing, unreadable, corrupt, another version)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return decode_columns(data, build_id)

