"""Small random traces with deep, recursive call stacks, written with the FXT writer, for the analysis
tests (the synthetic trace of ``fxscope generate`` is only two levels deep).

Each thread runs a random call tree: a node has a name, some time of its own before, between and after
its children. ``slow={name: factor}`` multiplies the own time of every call of ``name`` (the "one name
made slower" variant of a trace), so both variants share their structure and differ in that name only.
"""

from __future__ import annotations

import random

from fxscope.formats.fxt.columns import EventKind as K
from fxscope.formats.fxt.writer import FxtWriter

NAMES = ["main", "parse", "eval", "alloc", "render", "io;wait", "eval"]  # eval twice: more recursion


def _tree(rng: random.Random, depth: int) -> tuple:
    """(name, own time pieces, children): own time comes before each child and after the last."""
    name = rng.choice(NAMES)
    n_kids = rng.choice([0, 0, 1, 2, 3]) if depth < 7 else 0
    kids = [_tree(rng, depth + 1) for _ in range(n_kids)]
    own = [rng.choice([0, rng.randint(1, 5000)]) for _ in range(n_kids + 1)]
    return name, own, kids


def _emit(w: FxtWriter, node: tuple, t: int, thread: tuple[int, int], slow: dict[str, int], complete: bool) -> int:
    """Write ``node`` starting at ``t``; returns its end. Leaves are complete events when ``complete``."""
    name, own, kids = node
    factor = slow.get(name, 1)
    if complete and not kids:
        end = t + own[0] * factor
        w.event(K.DURATION_COMPLETE, t, thread, "cat", name, data=end)
        return end
    w.event(K.DURATION_BEGIN, t, thread, "cat", name)
    for piece, kid in zip(own, [*kids, None], strict=True):
        t += piece * factor
        if kid is not None:
            t = _emit(w, kid, t, thread, slow, complete)
    w.event(K.DURATION_END, t, thread, "cat", name)
    return t


def nested_trace(seed: int, threads: int = 3, roots: int = 30, slow: dict[str, int] | None = None) -> bytes:
    """The bytes of a trace of ``threads`` threads (pid 1 and 2), each running ``roots`` random call trees
    with gaps between them; odd threads write their leaves as complete events."""
    rng = random.Random(seed)
    w = FxtWriter()
    w.initialization(1_000_000_000)
    for th in range(threads):
        thread = (1 + th % 2, 100 + th)
        t = 1000 + th * 7
        for _ in range(roots):
            t = _emit(w, _tree(rng, 0), t, thread, slow or {}, complete=th % 2 == 1) + rng.randint(0, 3000)
    return w.getvalue()
