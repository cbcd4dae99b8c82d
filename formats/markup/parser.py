"""Symbolizer markup parser: splits log lines into text, SGR and ``{{{tag:fields}}}`` element nodes.

The element boundaries and field values are exactly those of LLVM's ``MarkupParser`` (the reference
filter, ``../shared/specs/symbolizer-markup.md`` Part 2): an element runs from ``{{{`` to the first
``}}}`` after it, an empty tag is not an element, fields split at every ``:`` (keeping empty ones), and
only the SGR sequences ``ESC[0m``, ``ESC[1m`` and ``ESC[30m``..``ESC[37m`` are recognised in text.

Every node keeps its column in the line, so diagnostics can point at the exact character. Field values
are validated separately (:mod:`fxscope.formats.markup.fields`): the parser itself never fails.

``{{{hexdict:`` may span lines (the format allows it; LLVM's filter does not register it): a
:class:`MarkupParser` created with ``multiline=True`` accumulates such an element until its ``}}}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

SGR_RE = re.compile(r"\x1b\[([0-1]|3[0-7])m")
MULTILINE_TAGS = ("hexdict",)


@dataclass(frozen=True)
class Node:
    """A piece of a line. ``tag`` is empty for text and SGR nodes (``is_sgr`` tells which)."""

    text: str
    column: int
    tag: str = ""
    fields: tuple[str, ...] = ()
    field_columns: tuple[int, ...] = ()
    is_sgr: bool = False

    @property
    def is_element(self) -> bool:
        return bool(self.tag)

    @property
    def tag_end(self) -> int:
        """Column right after the tag (where LLVM points its field-count diagnostics)."""
        return self.column + 3 + len(self.tag)


def _text_nodes(text: str, column: int) -> Iterator[Node]:
    pos = 0
    for match in SGR_RE.finditer(text):
        if match.start() > pos:
            yield Node(text[pos : match.start()], column + pos)
        yield Node(match.group(0), column + match.start(), is_sgr=True)
        pos = match.end()
    if pos < len(text):
        yield Node(text[pos:], column + pos)


def _element(text: str, column: int) -> Node | None:
    content = text[3:-3]
    tag, sep, rest = content.partition(":")
    if not tag:
        return None
    if rest:
        fields = tuple(rest.split(":"))
    elif sep:  # "{{{reset:}}}" has one empty field
        fields = ("",)
    else:
        fields = ()
    columns = []
    col = column + 3 + len(tag) + 1
    for f in fields:
        columns.append(col)
        col += len(f) + 1
    return Node(text, column, tag, fields, tuple(columns))


def parse_line(line: str) -> list[Node]:
    """All nodes of one line (which may end with its line break), in order."""
    nodes: list[Node] = []
    pos = 0  # start of text not yet emitted
    search = 0
    while True:
        begin = line.find("{{{", search)
        if begin < 0:
            break
        end = line.find("}}}", begin + 3)
        if end < 0:
            break
        end += 3
        element = _element(line[begin:end], begin)
        search = end
        if element is None:
            continue  # not an element: stays part of the text
        nodes.extend(_text_nodes(line[pos:begin], pos))
        nodes.append(element)
        pos = end
    nodes.extend(_text_nodes(line[pos:], pos))
    return nodes


@dataclass
class MarkupParser:
    """Line-by-line parser; with ``multiline=True`` a ``{{{hexdict:`` element may span lines."""

    multiline: bool = False
    _pending: list[str] = field(default_factory=list)

    def feed(self, line: str) -> list[Node] | None:
        """Nodes of ``line``; ``None`` while a multi-line element is still open (the line is buffered)."""
        if not self.multiline:
            return parse_line(line)
        if self._pending:
            self._pending.append(line)
            if "}}}" not in line:
                return None
            text = "".join(self._pending)
            self._pending.clear()
            return parse_line(text)
        start = line.rfind("{{{")
        if start >= 0 and "}}}" not in line[start:] and line[start + 3 :].split(":", 1)[0] in MULTILINE_TAGS:
            self._pending.append(line)
            return None
        return parse_line(line)

    def flush(self) -> list[Node]:
        """At end of input an unterminated multi-line element is plain text."""
        if not self._pending:
            return []
        text = "".join(self._pending)
        self._pending.clear()
        return list(_text_nodes(text, 0))
