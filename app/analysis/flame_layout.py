"""Where each node of a call tree is drawn in an icicle graph: x and width in [0, 1] of the zoomed frame's
total, row by depth. Qt-free arithmetic over the node columns (parents come before children in id order),
so the view only paints rectangles."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fxscope.core.analysis.call_tree import CallTree


@dataclass
class FlameLayout:
    x: np.ndarray  # float64 left edge, fraction of the root span
    w: np.ndarray  # float64 width, fraction
    row: np.ndarray  # int64 row (0 at the top)
    visible: np.ndarray  # bool: inside the zoomed frame's subtree (or its ancestors)


def layout(tree: CallTree, zoom: int = -1) -> FlameLayout:
    """Children side by side under their parent, largest first, widths by total time; ``zoom`` >= 0 makes
    that node span the whole width (its ancestors too, drawn above it as full-width bars)."""
    n = len(tree)
    x = np.zeros(n)
    w = np.zeros(n)
    if n == 0:
        return FlameLayout(x, w, np.zeros(0, np.int64), np.zeros(0, bool))
    order, ptr = tree.children()
    total = tree.total.astype(np.float64)
    # roots share the width
    root_sum = float(total[tree.parent < 0].sum()) or 1.0
    kids_of = [order[ptr[i + 1] : ptr[i + 2]] for i in range(-1, n)]  # per node, not per slice
    cursor = 0.0
    for r in kids_of[0]:
        x[r], w[r] = cursor, total[r] / root_sum
        cursor += w[r]
    for i in range(n):  # ids grow with depth: a parent is placed before its children
        kids = kids_of[i + 1]
        if not len(kids):
            continue
        scale = w[i] / total[i] if total[i] > 0 else 0.0
        widths = total[kids] * scale
        x[kids] = x[i] + np.r_[0.0, np.cumsum(widths)[:-1]]
        w[kids] = widths
    row = tree.depth.copy()
    visible = np.ones(n, bool)
    if 0 <= zoom < n and w[zoom] > 0:
        x0, w0 = x[zoom], w[zoom]
        inside = (x >= x0 - 1e-12) & (x + w <= x0 + w0 + 1e-12) & (tree.depth >= tree.depth[zoom])
        ancestors = np.zeros(n, bool)
        p = zoom
        while p >= 0:
            ancestors[p] = True
            p = int(tree.parent[p])
        x = np.where(inside, (x - x0) / w0, 0.0)
        w = np.where(inside, w / w0, np.where(ancestors, 1.0, 0.0))
        visible = inside | ancestors
    return FlameLayout(x, w, row, visible)
