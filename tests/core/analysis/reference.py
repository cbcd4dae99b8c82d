"""Brute-force references for the analysis tests: one Python pass per slice over the model's columns,
written from the definitions (core/analysis docstrings), sharing no code with core/analysis."""

from __future__ import annotations

import math
from collections import defaultdict


def slice_facts(model, t0: int, t1: int, threads=None) -> list[dict]:
    """Per slice of ``threads`` in the range: path (names root..slice), full duration, clipped, self."""
    s = model.slices
    strings = model.strings
    ts, dur, thread, parent = s.ts.tolist(), s.dur.tolist(), s.thread.tolist(), s.parent.tolist()
    names = [strings[i] if 0 <= i < len(strings) else "<unresolved>" for i in s.name[:].tolist()]
    want = None if threads is None else set(threads)
    clip = [max(min(a + d, t1) - max(a, t0), 0) for a, d in zip(ts, dur, strict=True)]
    child = [0] * len(ts)
    for i, p in enumerate(parent):
        if p >= 0:
            child[p] += clip[i]
    out = []
    for i in range(len(ts)):
        if want is not None and thread[i] not in want:
            continue
        end = ts[i] + dur[i]
        if not (ts[i] < t1 and (end > t0 or (dur[i] == 0 and ts[i] >= t0))):
            continue
        path, j = [], i
        while j >= 0:
            path.append(names[j])
            j = parent[j]
        out.append({"path": tuple(path[::-1]), "dur": dur[i], "clip": clip[i], "self": max(clip[i] - child[i], 0)})
    return out


def ref_stats(facts: list[dict]) -> dict[str, dict]:
    by = defaultdict(list)
    for f in facts:
        by[f["path"][-1]].append(f)
    out = {}
    for name, fs in by.items():
        d = sorted(f["dur"] for f in fs)
        n = len(d)
        rank = {p: d[max(math.ceil(n * p / 100) - 1, 0)] for p in (50, 90, 99)}
        out[name] = {"count": n, "total_ns": sum(f["clip"] for f in fs), "self_ns": sum(f["self"] for f in fs),
                     "min_ns": d[0], "p50_ns": rank[50], "p90_ns": rank[90], "p99_ns": rank[99], "max_ns": d[-1]}
    return out


def _add(tree: dict, key: tuple, total: int, self_ns: int, count: int) -> None:
    node = tree.setdefault(key, [0, 0, 0])
    node[0] += total
    node[1] += self_ns
    node[2] += count


def ref_top_down(facts: list[dict]) -> dict[tuple, list[int]]:
    tree: dict = {}
    for f in facts:
        _add(tree, f["path"], f["clip"], f["self"], 1)
    return tree


def ref_bottom_up(facts: list[dict]) -> dict[tuple, list[int]]:
    tree: dict = {}
    for f in facts:
        rev = f["path"][::-1]
        for k in range(1, len(rev) + 1):
            _add(tree, rev[:k], f["self"], f["self"] if k == 1 else 0, 1)
    return tree


def ref_callees(facts: list[dict], name: str) -> dict[tuple, list[int]]:
    tree: dict = {}
    for f in facts:
        if name in f["path"]:
            j = f["path"].index(name)
            _add(tree, f["path"][j:], f["clip"], f["self"], 1)
    return tree


def ref_callers(facts: list[dict], name: str) -> dict[tuple, list[int]]:
    tree: dict = {}
    for f in facts:
        p = f["path"]
        if p[-1] == name and name not in p[:-1]:
            rev = p[::-1]
            for k in range(1, len(rev) + 1):
                _add(tree, rev[:k], f["clip"], f["self"] if k == 1 else 0, 1)
    return tree


def tree_dict(tree, model) -> dict[tuple, list[int]]:
    """A CallTree as {path: [total, self, count]}, without nodes that hold nothing."""
    out = {}
    for i in range(len(tree)):
        if tree.count[i] == 0 and tree.total[i] == 0:
            continue
        out[tuple(tree.path(i, model))] = [int(tree.total[i]), int(tree.self_ns[i]), int(tree.count[i])]
    return out
