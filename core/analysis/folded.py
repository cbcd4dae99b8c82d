"""Folded stacks (``root;child;leaf WEIGHT`` per line), the input format of flamegraph.pl, inferno and
speedscope, from a top-down call tree: one line per node with self time, its weight the self time in ns.

The format has no escaping: a ``;`` inside a name would split the frame, and a line break would end the
line, so names are written with ``;`` replaced by ``:`` and control characters by spaces (noted in the
README). The lines' weights add up to the depth-0 slices' wall time inside the range (self times of a
tree telescope to its roots' totals).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from fxscope.core.analysis.call_tree import CallTree
from fxscope.core.analysis.selection import name_text

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def frame_name(text: str) -> str:
    """A name as one folded-stack frame: no ``;`` and no control characters; never empty."""
    return _CONTROL.sub(" ", text.replace(";", ":")) or "<empty>"


def folded_lines(tree: CallTree, model: TraceModel) -> Iterator[str]:
    """The folded lines of ``tree`` (one per node with self time > 0), sorted by stack text. Node paths
    are built once per node (parents come first in id order), not per slice."""
    texts: dict[int, str] = {}
    paths: list[str] = []
    for parent, name in zip(tree.parent.tolist(), tree.name.tolist(), strict=True):
        frame = texts.get(name)
        if frame is None:
            frame = texts[name] = frame_name(name_text(model, name))
        paths.append(frame if parent < 0 else f"{paths[parent]};{frame}")
    lines = [f"{paths[i]} {w}" for i, w in enumerate(tree.self_ns.tolist()) if w > 0]
    lines.sort()
    yield from lines


def parse_folded(text: str) -> dict[tuple[str, ...], int]:
    """Stacks and weights of folded text (summed when a stack repeats): what the tests read back."""
    out: dict[tuple[str, ...], int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        stack, sep, weight = line.rpartition(" ")
        if not sep or not weight.isdigit():
            raise ValueError(f"line {n}: not 'stack weight': {line!r}")
        key = tuple(stack.split(";"))
        out[key] = out.get(key, 0) + int(weight)
    return out
