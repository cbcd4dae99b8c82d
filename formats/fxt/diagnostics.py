"""The reader's warnings: bad input is normal input, so every anomaly is a line naming its byte offset.

A corrupt file can have millions of bad records; the same kind of problem is listed at most
``WARN_CAP`` times, then summarised with a count, so the warnings stay readable and bounded.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

WARN_CAP = 20  # individual warnings shown per kind; the rest are summarised with a count


class Diagnostics:
    """Warnings, each "offset 0x..: message"; at most a few per kind, then one summary line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._count: Counter[str] = Counter()
        self._first: dict[str, int] = {}

    def warn(self, kind: str, offset: int, message: str) -> None:
        self._count[kind] += 1
        self._first.setdefault(kind, offset)
        if self._count[kind] <= WARN_CAP:
            self.lines.append(f"offset 0x{offset:x}: {message}")

    def warn_many(self, kind: str, offsets: np.ndarray, message: str) -> None:
        """The same problem at many records (``message`` may contain ``{}`` for nothing else)."""
        for off in offsets[: max(0, WARN_CAP - self._count[kind])].tolist():
            self.lines.append(f"offset 0x{off:x}: {message}")
        if len(offsets):
            self._first.setdefault(kind, int(offsets[0]))
        self._count[kind] += len(offsets)

    def finish(self) -> list[str]:
        for kind, count in self._count.items():
            if count > WARN_CAP:
                self.lines.append(
                    f"offset 0x{self._first[kind]:x}: {count - WARN_CAP} more warnings of this kind: {kind}"
                )
        return self.lines


class ShortRecord(Exception):
    """A record's fields run past its size (F5): the record is dropped with a warning."""
