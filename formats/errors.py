"""The one exception type format decoders raise for input they cannot read at all.

Partial input (a truncated tail, an unknown record) is not an error: decoders keep what they could read
and report warnings. ``FormatError`` is for "this is not an X file" or "the header is unusable", and it
carries the path and byte offset so the command line can print one clear line.
"""

from __future__ import annotations


class FormatError(Exception):
    """Input that cannot be decoded; ``str()`` names the file and offset when they are known."""

    def __init__(self, message: str, *, path: str | None = None, offset: int | None = None) -> None:
        self.message = message
        self.path = path
        self.offset = offset
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = []
        if self.path:
            where.append(str(self.path))
        if self.offset is not None:
            where.append(f"offset 0x{self.offset:x}")
        return f"{': '.join(where)}: {self.message}" if where else self.message
