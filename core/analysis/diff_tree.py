"""The differential flame graph of two traces: B's top-down tree, each node with the change of its total time
against the node of A with the same call path (names matched by text, as the traces' string tables differ).
Paths are joined per node (a few thousand), never per slice."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.analysis.call_tree import CallTree
from fxscope.core.analysis.selection import name_text

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel


def node_paths(tree: CallTree, model: TraceModel) -> list[tuple[str, ...]]:
    """Each node's call path as names (parents come first in id order)."""
    paths: list[tuple[str, ...]] = []
    texts: dict[int, str] = {}
    for parent, name in zip(tree.parent.tolist(), tree.name.tolist(), strict=True):
        text = texts.get(name)
        if text is None:
            text = texts[name] = name_text(model, name)
        paths.append((text,) if parent < 0 else (*paths[parent], text))
    return paths


def total_deltas(a: CallTree, model_a: TraceModel, b: CallTree, model_b: TraceModel) -> np.ndarray:
    """For each node of ``b``: its total time minus that of A's node with the same path (0 in A when A has
    no such path), int64 ns."""
    in_a = dict(zip(node_paths(a, model_a), a.total.tolist(), strict=True))
    before = np.array([in_a.get(p, 0) for p in node_paths(b, model_b)], np.int64)
    return b.total - before
