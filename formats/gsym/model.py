"""The function/line/inline model that GSYM files hold, independent of string and file table offsets.

The writer encodes it, the reader can decode a file back into it, and a DWARF converter produces it: paths
and names are plain strings here, the tables are the writer's business.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


@dataclass(frozen=True)
class SourceFile:
    directory: str
    base: str


class LineRow(NamedTuple):
    """One line-table row (a named tuple: a large conversion makes hundreds of thousands of them)."""

    address: int
    file: SourceFile
    line: int


@dataclass
class InlineNode:
    """An inlined call (or the function itself at the root), with the address ranges its code covers.

    ``call_file``/``call_line`` locate the call in the parent; the converter's root has no call site.
    """

    name: str
    ranges: list[tuple[int, int]]  # [start, end) absolute addresses
    call_file: SourceFile | None = None
    call_line: int = 0
    children: list[InlineNode] = field(default_factory=list)
    #: DW_AT_call_column when known (DWARF has it, GSYM does not store it)
    call_column: int = 0


@dataclass
class FunctionInfo:
    start: int
    size: int
    name: str
    lines: list[LineRow] | None = None  # sorted by address; None = no line table
    inline: InlineNode | None = None
