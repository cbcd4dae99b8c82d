"""Call trees of an area's slices: the top-down tree (the flame graph), the bottom-up tree and the
callers/callees of one name (Perfetto's "butterfly").

A node stands for a call path: the names from a depth-0 slice down to it. The top-down tree is built
one depth level at a time: the slices at depth ``d`` take the node of their parent slice and their name
as a key, and ``np.unique`` of the keys gives the level's nodes; so the work is a few vectorized passes
over the slices whatever the number of distinct paths, and the per-slice result (:attr:`CallTree.node_of`)
says which node each slice stands in (a click on a frame selects those slices).

Node values: ``total`` is the wall time of the node's slices inside the range, ``self_ns`` their self time
inside the range, ``count`` how many of them overlap the range. The other trees are built from the top-down
nodes (never from the slices again):

- bottom-up: each top-down node's self time, filed under the reversed path (the name, its caller, the
  caller's caller, ...): a root is a name with all its self time, its children its callers;
- butterfly of name X: the callees are the top-down subtrees under the outermost X nodes (an X inside an X
  is counted once, in its outer one), merged; the callers are the reversed paths above those X nodes,
  weighted with their total time.

Node ids increase with depth: a node's parent has a smaller id, so a pass in id order visits parents first.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from fxscope.core.analysis.selection import (
    BLOCK,
    Area,
    AreaNames,
    AreaRows,
    FoundNodes,
    _node_columns,
    area_names,
    area_pass,
    area_rows,
    grouped_sums,
    in_two,
    local_parents,
    name_text,
    saturated_int64,
)
from fxscope.core.trace import compiled
from fxscope.core.trace.query_pages import later_query, whole_trace_query

if TYPE_CHECKING:
    from fxscope.core.trace.model import TraceModel


@dataclass
class CallTree:
    """Nodes as columns; ``parent`` is -1 for a root."""

    parent: np.ndarray  # int64
    name: np.ndarray  # int64 string id
    depth: np.ndarray  # int64
    total: np.ndarray  # int64 ns
    self_ns: np.ndarray  # int64 ns
    count: np.ndarray  # int64
    #: top-down trees only: the area's rows (:attr:`rows`) and the node each stands in (:attr:`node_of`), or
    #: the function that finds those when first asked for
    area: AreaRows | None = None
    node_of_made: np.ndarray | Callable[[], np.ndarray] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.parent)

    @property
    def node_of(self) -> np.ndarray | None:
        """int32 (int64 past 2**31 rows): the node each of the area's rows stands in, -1 for a row not in the
        range (top-down trees; None for the others). The compiled path finds the nodes without it (a pass
        over every row, 4 bytes a row: at 100M events 100 MB and ~0.3 s) and makes it when first asked for:
        a click on a frame, or the analysis panel's job right after the flame graph shows. Thread-safe: a
        click while that job makes it waits for it."""
        made = self.node_of_made
        if callable(made):
            with self._lock:
                made = self.node_of_made
                if callable(made):
                    made = self.node_of_made = made()
        return made

    @property
    def rows(self) -> np.ndarray | None:
        """The rows of :attr:`node_of` (top-down trees; made from the area when first asked for)."""
        return self.area.rows if self.area is not None else None

    def children(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR children lists: the children of node ``i`` are ``kids[ptr[i + 1]:ptr[i + 2]]`` (roots at
        ``kids[ptr[0]:ptr[1]]``), each list by total time, largest first."""
        order = np.lexsort((-self.total, self.parent))
        ptr = np.r_[0, np.cumsum(np.bincount(self.parent + 1, minlength=len(self) + 1))]
        return order, ptr

    def path(self, node: int, model: TraceModel) -> list[str]:
        """The names from the root down to ``node``."""
        out = []
        while node >= 0:
            out.append(name_text(model, int(self.name[node])))
            node = int(self.parent[node])
        return out[::-1]

    def slice_rows(self, node: int) -> np.ndarray:
        """Rows of the slices (overlapping the range) that ``node`` stands for (top-down trees)."""
        if self.area is None or self.node_of is None:
            return np.zeros(0, np.int64)
        if self.area.run is not None:  # (rows lo..hi - 1: not the area's row numbers made, 8 bytes a slice)
            return np.flatnonzero(self.node_of == node) + self.area.run[0]
        return self.rows[self.node_of == node]


#: depths up to this many levels are grouped by one comparison pass per level (a few passes beat a sort)
FEW_LEVELS = 8


def levels(depth: np.ndarray) -> list[np.ndarray]:
    """The indexes of ``depth`` grouped by value, one ascending array per depth 0..max. A few levels are
    found by one comparison per level; more by one stable sort (a radix sort for 16-bit depths), then
    views: a loop over levels costs the items once, not once per level, so a hostile trace 65,535 levels
    deep stays linear."""
    depth = np.asarray(depth)
    if not len(depth):
        return []
    top = int(depth.max())
    if top < FEW_LEVELS:
        return [np.flatnonzero(depth == d) for d in range(top + 1)]
    order = np.argsort(depth.astype(np.uint16) if top < 1 << 16 else depth, kind="stable")
    bounds = np.r_[0, np.cumsum(np.bincount(depth))].tolist()
    return [order[a:b] for a, b in itertools.pairwise(bounds)]


def _empty() -> CallTree:
    z = np.zeros(0, np.int64)
    return CallTree(z, z.copy(), z.copy(), z.copy(), z.copy(), z.copy(), None, z.copy())


def _level_nodes(parent_node: np.ndarray | None, name: np.ndarray, base: int) -> tuple[np.ndarray, ...]:
    """Nodes of one level: a node per distinct (parent node, name), numbered from ``base`` in ascending
    (parent, name) order. Returns the node of each item and, per new node, its parent node and name
    (``parent_node`` None: the roots, parent -1).

    The pair is one integer key; when the keys' range is small (it is: a few thousand paths) the nodes are
    numbered by a bincount over that range, a linear pass; otherwise by ``np.unique`` (a sort)."""
    width = int(name.max()) + 2 if len(name) else 1
    if parent_node is None:
        key = np.add(name, 1, dtype=np.int64)  # (names may be int16: no overflow at 32,767)
    else:
        key = parent_node.astype(np.int64)
        key += 1
        key *= width
        key += name
        key += 1
    top = int(key.max()) + 1 if len(key) else 0
    if top <= 4 * len(key) + (1 << 20):
        used = np.bincount(key, minlength=top) > 0
        uniq = np.flatnonzero(used)
        inv = (np.cumsum(used) - 1)[key]
    else:
        uniq, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    inv += base
    return inv, uniq // width - 1, uniq % width - 1


#: a level's (parent node, name) keys are numbered in blocks of rows when there are at most this many
#: possible keys (a table of as many entries); more go through :func:`_level_nodes` over the whole level
MAX_KEYS_IN_BLOCKS = 1 << 22


def _level_rows(depth: np.ndarray, top: int, in_blocks: bool) -> list[np.ndarray | None]:
    """Per depth 0..top, its rows (:func:`levels`), or None for each when the levels go in blocks (the rows
    of a level are then found block by block: no index array of the whole table)."""
    return [None] * (top + 1) if in_blocks else levels(depth)


def _level_in_blocks(depth: np.ndarray, d: int, par: np.ndarray, dense: np.ndarray, node_of: np.ndarray,
                     base: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:  # fmt: skip
    """The nodes of level ``d`` as :func:`_level_nodes` numbers them (ascending (parent node, name) from
    ``base``), written into ``node_of``, in two passes over blocks of rows with no whole-level temporary:
    the first marks the keys used and leaves each row's key in ``node_of`` (as ``-2 - key``, which reads
    as "no node yet" to a row whose parent is on the same level, as in the whole-level pass), the second
    turns the keys into node numbers. Returns the new nodes' parents, names (dense ids) and row counts
    (the first pass counts the keys when they are fewer than a block's rows, else None: no pass over the
    rows for the counts of a tree of the whole area)."""
    n = len(depth)
    counted = (base + 1) * width <= BLOCK  # (a bincount per block costs the keys' range)
    seen = np.zeros((base + 1) * width, np.int64 if counted else bool)
    for a in range(0, n, BLOCK):
        rows = np.flatnonzero(depth[a : a + BLOCK] == d)
        if not len(rows):
            continue
        rows += a
        key = np.add(dense[rows], 1, dtype=np.int64)  # (a root: parent node -1)
        if d:
            pn = node_of[par[rows]].astype(np.int64)
            np.maximum(pn, -1, out=pn)  # (a key left by this level is no node yet)
            pn += 1
            pn *= width
            key += pn
        if counted:
            seen += np.bincount(key, minlength=len(seen))
        else:
            seen[key] = True
        np.subtract(-2, key, out=key)
        node_of[rows] = key
    used = seen > 0
    uniq = np.flatnonzero(used)
    # one lookup turns every value of node_of into its final one: at ``v + top + 1`` the node of key
    # ``-2 - v`` for a key left by this level (v <= -2), v itself for the others (-1, earlier levels' nodes)
    top = len(used)
    lookup = np.empty(top + 1 + base, node_of.dtype)
    lookup[top - 1 :: -1][: top] = np.cumsum(used, dtype=np.int64) + (base - 1)  # v = -2 - key -> key
    lookup[top:] = np.arange(-1, base)
    del used
    count = seen[uniq] if counted else None
    del seen
    slot = np.empty(min(n, BLOCK), np.int64)
    for a in range(0, n, BLOCK):
        part = node_of[a : a + BLOCK]
        at = slot[: len(part)]
        np.add(part, top + 1, out=at)
        np.take(lookup, at, out=part)
    return uniq // width - 1, uniq % width - 1, count


@whole_trace_query
def top_down(model: TraceModel, area: Area | None = None, ar: AreaRows | None = None,
             names: AreaNames | None = None) -> CallTree:  # fmt: skip
    """The flame graph of ``area`` (the whole trace when None): see the module docstring. ``names``:
    :func:`~fxscope.core.analysis.selection.area_names` of ``ar``, when the caller made it for the statistics too."""
    if ar is None:
        ar = area_rows(model, area or Area())
    if not len(ar):
        return _empty()
    s = model.slices
    par = ar.parent if ar.parent is not None else local_parents(model, ar.rows)
    if names is None:
        names = area_names(model, ar)
    depth = ar.take(s.depth)
    tree = _compiled_tree(ar, par, depth, names)
    if tree is not None:
        tree = _drop_empty(tree)
        if callable(tree.node_of_made):  # (made later: on the query's pages too)
            tree.node_of_made = later_query(model, tree.node_of_made)
        return tree
    self_clip, dense, ids = names.self_clip, names.dense, names.ids
    orphan = par < 0
    orphan &= depth > 0
    if orphan.any():  # a slice whose parent is missing (never from area_rows) is a root
        depth = np.where(orphan, 0, depth)
    del orphan
    # (int32 while the rows fit: half the fresh memory of the largest array the tree makes)
    node_of = np.full(len(ar), -1, np.int32 if len(ar) < 1 << 31 else np.int64)
    n_parent, n_name, n_depth, n_count = [], [], [], []
    base = 0
    top = int(depth.max())
    width = int(dense.max()) + 2
    in_blocks = top < FEW_LEVELS and len(ar) > BLOCK
    for d, idx in enumerate(_level_rows(depth, top, in_blocks)):
        if in_blocks and (base + 1) * width <= MAX_KEYS_IN_BLOCKS:
            new_parent, new_name, new_count = _level_in_blocks(depth, d, par, dense, node_of, base, width)
            n_count.append(new_count)  # (None: not counted)
        else:
            idx = np.flatnonzero(depth == d) if idx is None else idx
            if not len(idx):
                continue
            nodes, new_parent, new_name = _level_nodes(node_of[par[idx]] if d else None, dense[idx], base)
            node_of[idx] = nodes
            n_count.append(None)
        if not len(new_name):
            continue
        n_parent.append(new_parent)
        n_name.append(new_name)
        n_depth.append(np.full(len(new_name), d, np.int64))
        base += len(new_name)
    del dense
    parent = np.concatenate(n_parent)
    if ar.all_hit:  # every row is in the range: no mask, no compressed copies
        nh, clipped = node_of, ar.clipped
    else:
        hit = ar.hit
        nh, clipped, self_clip = node_of[hit], ar.clipped[hit], self_clip[hit]
        node_of[~hit] = -1
    total = grouped_sums(nh, clipped, base)  # (blockwise: no float64 copy of the int64 times)
    self_ns = grouped_sums(nh, self_clip, base)
    if ar.all_hit and all(c is not None for c in n_count):  # counted as the levels were numbered
        count = np.concatenate(n_count) if n_count else np.zeros(0, np.int64)
    else:
        count = grouped_sums(nh, None, base)
    tree = CallTree(parent, ids[np.concatenate(n_name)], np.concatenate(n_depth), saturated_int64(total),
                    saturated_int64(self_ns), count.astype(np.int64), ar, node_of)  # fmt: skip
    return _drop_empty(tree)


def _compiled_tree(ar: AreaRows, par: np.ndarray, depth: np.ndarray, names: AreaNames) -> CallTree | None:
    """:func:`top_down`'s tree (before :func:`_drop_empty`) by the compiled loops (summary_kernels.c): one
    forward pass over the rows finds each row's node (parent row's node, name) in a hash table and sums the
    nodes' times and counts (made by :func:`~fxscope.core.analysis.selection.area_names` with the per-name
    sums when it could: taken from ``names``); the nodes (a few thousand) are then numbered as the levels of
    the numpy path number them. Each row's node (:attr:`CallTree.node_of`) is found when first asked for (a
    click on a frame; the analysis panel's job after the flame graph shows): the pass again over the same
    parts, keeping each row's node, then renumbered (each part on its own thread). None when the loops are not
    built, do not take these columns, or the rows are not one forward pass (a parent after its child: the
    levels decide)."""
    kernels = compiled.summary_kernels
    found, names.call_nodes = names.call_nodes, None  # (renumbered in place below: used once)
    if kernels is None:
        return None
    if found is None:
        found = _found_nodes(ar, par, depth, names)
    if found is None:
        return None
    (parent, name, node_depth, count, total, self_ns), where = _merged_parts([p[2] for p in found.parts])
    new = _level_numbers(parent, name, node_depth)
    if found.node_of is not None:
        node_of: np.ndarray | Callable[[], np.ndarray] = _renumbered_rows(kernels, ar, found, new, where)
    else:  # (the rows' nodes made when asked for: the columns it needs are the area's and the model's)
        dense, k = names.dense, len(names.ids)
        node_of = lambda: _rows_nodes(kernels, ar, par, depth, dense, k, found, new, where)  # noqa: E731
    order = np.empty_like(new)
    order[new] = np.arange(len(new))  # the found node at each final number
    parent = parent[order]
    parent = np.where(parent >= 0, new[np.maximum(parent, 0)], -1)
    return CallTree(parent, names.ids[name[order]], node_depth[order], saturated_int64(total[order]),
                    saturated_int64(self_ns[order]), count[order], ar, node_of)  # fmt: skip


def _renumbered_rows(kernels, ar: AreaRows, found: FoundNodes, new: np.ndarray,
                     where: list[np.ndarray | None]) -> np.ndarray:  # fmt: skip
    """``found.node_of`` in the final numbers ``new`` (each part's found numbers through ``where``), -1 for a
    row out of the range; renumbered in place by the compiled ``kernels``, each part of the rows on a thread
    of its own."""
    node_of = found.node_of
    wide = node_of.dtype == np.int64
    hit = None if ar.all_hit else ar.hit.view(np.uint8)

    def renumbered(lo: int, hi: int, at: np.ndarray | None) -> None:
        kernels.renumber(node_of[lo:hi], wide, new if at is None else new[at], b"" if hit is None else hit[lo:hi])

    jobs = [lambda lo=lo, hi=hi, at=at: renumbered(lo, hi, at) for (lo, hi, _), at in zip(found.parts, where, strict=True)]
    if len(jobs) == 2:
        in_two(*jobs)
    else:
        for job in jobs:
            job()
    return node_of


def _rows_nodes(kernels, ar: AreaRows, par: np.ndarray, depth: np.ndarray, dense: np.ndarray, k: int,
                found: FoundNodes, new: np.ndarray, where: list[np.ndarray | None]) -> np.ndarray:  # fmt: skip
    """Each row's node in the final numbers ``new`` of the nodes ``found`` (found without the rows' nodes):
    the compiled pass again over the same parts of the rows, which finds the same nodes in the same numbers
    (first encounter in each part), then renumbered."""
    swept = area_pass(ar, par, depth, dense, k, bounds=[(lo, hi) for lo, hi, _ in found.parts], kernels=kernels)
    again = None if swept is None else swept[2]
    if again is None or [len(p[2][0]) for p in again.parts] != [len(p[2][0]) for p in found.parts]:
        raise RuntimeError("the call-path pass found other nodes the second time")  # (the columns changed)
    return _renumbered_rows(kernels, ar, again, new, where)


def _merged_parts(parts: list[tuple[np.ndarray, ...]]) -> tuple[tuple[np.ndarray, ...], list[np.ndarray | None]]:
    """The nodes of the parts of the rows (each in its own numbers) as one set of nodes, in the first part's
    numbers then new ones, and where each part's nodes are among them (None for the first: the same)."""
    merged, where = parts[0], [None]
    for other in parts[1:]:
        merged, at = _merged_nodes(merged, other)
        where.append(at)
    return merged, where


def _merged_nodes(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Nodes ``b`` (parent, name, depth, count, total, self; found in another part of the rows) merged into
    nodes ``a``: a node of ``b`` is the node of ``a`` with the same (merged parent, name), else a new one.
    Level by level (parents first), one search of the level's keys: a few passes over the nodes. Returns the
    merged columns and where each node of ``b`` is among them."""
    pa, na, da = a[:3]
    pb, nb, db = b[:3]
    width = int(max(na.max(initial=-1), nb.max(initial=-1))) + 2
    where = np.full(len(pb), -1, np.int64)
    parent, name, depth = [pa], [na], [da]
    base = len(pa)
    a_levels = levels(da)
    for d, lvl in enumerate(levels(db)):
        if not len(lvl):
            continue
        up = pb[lvl]
        up = np.where(up >= 0, where[np.maximum(up, 0)], -1)
        key = (up + 1) * width + nb[lvl]
        mine = a_levels[d] if d < len(a_levels) else np.zeros(0, np.int64)
        theirs = (pa[mine] + 1) * width + na[mine]
        order = np.argsort(theirs, kind="stable")
        at = np.minimum(np.searchsorted(theirs[order], key), max(len(order) - 1, 0))
        same = theirs[order][at] == key if len(order) else np.zeros(len(key), bool)
        where[lvl[same]] = mine[order[at[same]]]
        fresh = ~same
        m = int(np.count_nonzero(fresh))
        where[lvl[fresh]] = np.arange(base, base + m)
        parent.append(up[fresh])
        name.append(nb[lvl][fresh])
        depth.append(np.full(m, d, np.int64))
        base += m
    sums = []
    for x, y in zip(a[3:], b[3:], strict=True):
        s = np.zeros(base, x.dtype)
        s[: len(x)] = x
        s[where] += y  # (distinct nodes of b go to distinct merged nodes)
        sums.append(s)
    return (np.concatenate(parent), np.concatenate(name), np.concatenate(depth), *sums), where


def _found_nodes(ar: AreaRows, par: np.ndarray, depth: np.ndarray, names: AreaNames) -> FoundNodes | None:
    """The rows' call-path nodes in first-encounter numbers: by the one-pass walk (area_pass) when the rows
    are a depth-first walk, else by call_nodes over the rows' self times; None when neither takes them."""
    swept = area_pass(ar, par, depth, names.dense, len(names.ids), rows_nodes=False)
    if swept is not None and swept[2] is not None:
        return swept[2]
    kernels = compiled.summary_kernels
    dense, clipped = names.dense, ar.clipped
    if not (compiled.plain(par, np.int32, np.int64) and compiled.plain(depth, np.uint16)
            and compiled.plain(dense, np.int16, np.int32) and compiled.plain(clipped, np.int64)
            and (ar.all_hit or compiled.plain(ar.hit, np.bool_))):  # fmt: skip
        return None
    self_clip = names.self_clip
    if not compiled.plain(self_clip, np.float64):
        return None
    wide = len(ar) >= 1 << 31
    node_of = np.empty(len(ar), np.int64 if wide else np.int32)
    hit = b"" if ar.all_hit else ar.hit.view(np.uint8)
    try:
        out = kernels.call_nodes(par, par.dtype == np.int64, depth, dense, dense.dtype == np.int32, hit, clipped,
                                 self_clip, node_of, wide, len(names.ids))  # fmt: skip
    except ValueError:  # (a parent or name out of range)
        return None
    return None if out is None else FoundNodes(node_of, [(0, len(ar), _node_columns(out))])


def _level_numbers(parent: np.ndarray, name: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """The final number of each node found in any order (``parent``: found numbers, -1 for a root): level by
    level, ascending (parent's final number, name) within a level, as :func:`_level_nodes` numbers them."""
    new = np.empty(len(parent), np.int64)
    base = 0
    for lvl in levels(depth):  # (per level of nodes, not of rows)
        if not len(lvl):
            continue
        p = parent[lvl]
        order = np.lexsort((name[lvl], np.where(p >= 0, new[np.maximum(p, 0)], -1)))
        new[lvl[order]] = np.arange(base, base + len(lvl))
        base += len(lvl)
    return new


def _drop_empty(tree: CallTree) -> CallTree:
    """Without the nodes no slice in the range stands in (ancestors of a range's slices that end exactly at
    its start, say), renumbered in the same order. The ancestors of a kept node are kept, also with no
    slice of their own in the range (one ending at the range's start above a zero-length slice there)."""
    keep = tree.count > 0
    if keep.all():
        return tree
    for lvl in levels(tree.depth)[:0:-1]:  # deepest first: children pass keep upwards
        lvl = lvl[keep[lvl]]
        keep[tree.parent[lvl]] = True
    new = np.cumsum(keep) - 1
    parent = tree.parent[keep]
    parent = np.where(parent >= 0, new[np.maximum(parent, 0)], -1)
    made = tree.node_of_made
    if callable(made):  # (not made yet: renumbered when it is)
        node_of = lambda: _kept_numbers(made(), new)  # noqa: E731
    else:
        node_of = None if made is None else _kept_numbers(made, new)
    return CallTree(parent, tree.name[keep], tree.depth[keep], tree.total[keep], tree.self_ns[keep],
                    tree.count[keep], tree.area, node_of)  # fmt: skip


def _kept_numbers(node_of: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Rows' nodes in the numbers ``new`` of the nodes :func:`_drop_empty` kept (-1 stays -1)."""
    return np.where(node_of >= 0, new[np.maximum(node_of, 0)], -1)


#: reversed (caller) paths are followed this many levels up at most: a reversed tree of a chain N calls
#: deep has N * (N + 1) / 2 nodes, so a hostile trace 65,535 levels deep would not fit in memory; the
#: roots' values stay exact, only callers deeper than this are left out
MAX_CALLER_LEVELS = 256


def _ancestor_walk(tree: CallTree, start: np.ndarray, weight: np.ndarray, count: np.ndarray,
                   self_w: np.ndarray | None = None) -> CallTree:  # fmt: skip
    """The tree of reversed paths: for each top-down node in ``start``, its name, its parent's name, ...
    up to its root (at most :data:`MAX_CALLER_LEVELS`), carrying ``weight`` (and ``count``) into every
    node on the way; ``self_w`` (default ``weight``) goes to the first node only."""
    cur = start.astype(np.int64)
    prev = np.full(len(cur), -1, np.int64)
    w, c = weight.astype(np.float64), count.astype(np.int64)
    sw = w if self_w is None else self_w.astype(np.float64)
    parents, names, depths, totals, selfs, counts = [], [], [], [], [], []
    base = 0
    level = 0
    while len(cur) and level < MAX_CALLER_LEVELS:
        nodes, new_parent, new_name = _level_nodes(prev, tree.name[cur], base)
        k = len(new_name)
        parents.append(new_parent)
        names.append(new_name)
        depths.append(np.full(k, level, np.int64))
        totals.append(np.bincount(nodes - base, weights=w, minlength=k))
        selfs.append(np.bincount(nodes - base, weights=sw, minlength=k) if level == 0 else np.zeros(k))
        counts.append(np.bincount(nodes - base, weights=c, minlength=k))
        base += k
        up = tree.parent[cur]
        more = up >= 0
        cur, prev, w, c = up[more], nodes[more], w[more], c[more]
        level += 1
    if not parents:
        return _empty()
    return CallTree(np.concatenate(parents), np.concatenate(names), np.concatenate(depths),
                    saturated_int64(np.concatenate(totals)), saturated_int64(np.concatenate(selfs)),
                    np.concatenate(counts).astype(np.int64))  # fmt: skip


def bottom_up(tree: CallTree) -> CallTree:
    """The bottom-up tree of a top-down ``tree``: roots are names with their self time, children their
    callers (each with the part of that self time spent when called from there)."""
    start = np.flatnonzero((tree.self_ns > 0) | (tree.count > 0))
    return _ancestor_walk(tree, start, tree.self_ns[start], tree.count[start])


def outermost(tree: CallTree, name_id: int) -> np.ndarray:
    """For every top-down node, the outermost node named ``name_id`` on its path (itself included), or -1."""
    anchor = np.full(len(tree), -1, np.int64)
    is_x = tree.name == name_id
    for lvl in levels(tree.depth):
        p = tree.parent[lvl]
        inherited = np.where(p >= 0, anchor[np.maximum(p, 0)], -1)
        anchor[lvl] = np.where(inherited >= 0, inherited, np.where(is_x[lvl], lvl, -1))
    return anchor


def callees(tree: CallTree, name_id: int) -> CallTree:
    """The merged subtrees under the outermost nodes named ``name_id``: one root (that name)."""
    anchor = outermost(tree, name_id)
    inside = np.flatnonzero(anchor >= 0)
    if not len(inside):
        return _empty()
    merged = np.full(len(tree), -1, np.int64)
    parents, names, depths = [], [], []
    base = 0
    rel = tree.depth[inside] - tree.depth[anchor[inside]]
    for d, at in enumerate(levels(rel)):
        lvl = inside[at]
        pm = np.full(len(lvl), -1, np.int64) if d == 0 else merged[tree.parent[lvl]]
        nodes, new_parent, new_name = _level_nodes(pm, tree.name[lvl], base)
        merged[lvl] = nodes
        parents.append(new_parent)
        names.append(new_name)
        depths.append(np.full(len(new_name), d, np.int64))
        base += len(new_name)
    m = merged[inside]

    def total_of(col: np.ndarray) -> np.ndarray:
        return saturated_int64(np.bincount(m, weights=col[inside], minlength=base))

    return CallTree(np.concatenate(parents), np.concatenate(names), np.concatenate(depths), total_of(tree.total),
                    total_of(tree.self_ns), total_of(tree.count))  # fmt: skip


def callers(tree: CallTree, name_id: int) -> CallTree:
    """The reversed paths above the outermost nodes named ``name_id``, weighted with their total time: one
    root (that name, its total time), its children its callers."""
    anchor = outermost(tree, name_id)
    start = np.flatnonzero(anchor == np.arange(len(tree)))
    return _ancestor_walk(tree, start, tree.total[start], tree.count[start], tree.self_ns[start])
