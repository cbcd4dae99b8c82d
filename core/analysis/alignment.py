"""Two traces' timelines on one time axis (the Compare tab shows A above B): an offset that maps a time of
B to the time of A drawn at the same x, chosen so that two chosen moments line up, the traces' starts, a
selected slice in each, a mark in each, or the first or the longest slice of one name in each. The views then move
together: B shows A's visible range shifted by the offset, and the other way round.

Times are trace nanoseconds of each trace's own clock; the offset is ``A time - B time`` of the aligned
moments. Qt-free, so the arithmetic is tested without a window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel


@dataclass(frozen=True)
class Alignment:
    """``a_ns = b_ns + offset_ns`` for the moments drawn at the same x."""

    offset_ns: int = 0

    @classmethod
    def at(cls, a_ns: int, b_ns: int) -> Alignment:
        """The alignment that draws A's ``a_ns`` above B's ``b_ns``."""
        return cls(int(a_ns) - int(b_ns))

    def b_range(self, a_range: tuple[int, int]) -> tuple[int, int]:
        """B's view range under A's ``a_range``."""
        return a_range[0] - self.offset_ns, a_range[1] - self.offset_ns

    def a_range(self, b_range: tuple[int, int]) -> tuple[int, int]:
        """A's view range over B's ``b_range``."""
        return b_range[0] + self.offset_ns, b_range[1] + self.offset_ns


def starts(a: TraceModel, b: TraceModel) -> Alignment:
    """The traces' first events line up."""
    return Alignment.at(a.start_ns, b.start_ns)


def first_slice_named(model: TraceModel, name: str) -> int:
    """The row of the earliest slice whose name is ``name`` (by text: the traces' string tables differ),
    -1 when there is none."""
    return _named(model, name, longest=False)


def longest_slice_named(model: TraceModel, name: str) -> int:
    """The row of the longest slice named ``name`` (the earliest of equals), -1 when there is none: the
    outliers of a regressed name, side by side."""
    return _named(model, name, longest=True)


def _named(model: TraceModel, name: str, longest: bool) -> int:
    ids = [i for i, text in enumerate(model.strings) if text == name]  # per string, not per slice
    if not ids:
        return -1
    s = model.slices
    rows = np.flatnonzero(np.isin(s.name, np.asarray(ids, np.int64)))  # one pass over the name column
    if not len(rows):
        return -1
    if longest:
        return int(rows[np.lexsort((s.ts[rows], -s.dur[rows]))[0]])
    return int(rows[np.argmin(s.ts[rows])])
