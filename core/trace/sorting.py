"""``np.lexsort`` for the model's sort keys, in one or two passes instead of one indirect sort per key.

Every table of the model is sorted by a few integer keys: a thread, lane or process first, then a time,
then tie-breaks. ``np.lexsort`` does one stable indirect sort per key, each ``n log n`` however ordered the
rows already are; the keys here are small ranges (a few thousand threads, depths of a few dozen) and
nanosecond times spanning far less than 2**63, and the rows mostly come in time order per thread (a
thread's events are written as they happen). So :func:`lexsort`

- leaves out the least significant keys that are non-decreasing in row order already (a file position, the
  time of events written as they happen): the stable sort by the others keeps them in order,
- packs the leading keys into one int64 wherever their ranges allow (``(thread, depth, ts)`` in one key),
- returns at once when the packed key is in order already (a table sorted before: one comparison pass),
  and sorts it by timsort alone when it is nearly so (few rows below the one before them: long runs),
- groups rows by the leading keys first when they take at most 2**16 values (numpy sorts 8- and 16-bit
  keys with a radix sort, one linear pass per byte), so that what is left is in order or nearly, which the
  stable sort of the packed key (timsort) then costs about one linear pass,
- and orders rows equal in the packed key by the remaining keys (only those rows: there are few).

The result is exactly ``np.lexsort(keys)`` (the last key primary, ties in row order): numpy's sort is used
for anything else (floats, keys whose ranges cannot be packed), and stays the reference in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_INT64_SPAN = 1 << 63  # packed keys take values 0 .. 2**63 - 1
_RADIX_SPAN = 1 << 16  # numpy's stable argsort of (u)int8/16 keys is a radix sort
_SMALL = 256  # below this many rows np.lexsort is as fast
#: a packed key with fewer than one descent (a row below the one before it) per this many rows is sorted
#: by timsort directly: its runs in order are long, and merging them costs less than grouping the rows by
#: radix first (7.5M async events of one key each 3 rows long: 0.12 s against 0.49 s)
_FEW_DESCENTS = 64


def lexsort(keys: Sequence[np.ndarray]) -> np.ndarray:
    """The int64 row order of ``np.lexsort(keys)``: by ``keys[-1]``, then ``keys[-2]``, ..., then row."""
    order = lexsort_unless_sorted(keys)
    return np.arange(len(keys[0])) if order is None else order


def lexsort_unless_sorted(keys: Sequence[np.ndarray]) -> np.ndarray | None:
    """:func:`lexsort`, or None when every key is non-decreasing in row order (the rows are in that order
    already: the caller's gathers by the order would be copies, ~10 ms for each column of 2.5M async events
    at 10M events; their times come in file order as a rule)."""
    keys = [np.asarray(k) for k in keys]
    n = len(keys[0]) if keys else 0
    if n < _SMALL:
        return np.lexsort(keys) if keys else np.zeros(0, np.int64)
    # least significant keys already non-decreasing in row order (file positions, times of events written
    # as they happen) order the rows as the rows' own order does: a stable sort by the others is the same
    in_order = 0
    while in_order < len(keys) and not np.any(keys[in_order][1:] < keys[in_order][:-1]):
        in_order += 1
    if in_order == len(keys):
        return None
    keys = keys[in_order:]
    major = keys[::-1]  # primary first
    ranges = _packable_ranges(major)
    if not ranges:
        return np.lexsort(keys)
    packed = _pack(major, ranges)
    rest = keys[: len(keys) - len(ranges)]  # least significant first, as np.lexsort takes them
    descents = int(np.count_nonzero(packed[1:] < packed[:-1]))
    if not descents:  # in order already (a table sorted before, say)
        order = np.arange(n)
    else:
        order = _sort_packed(packed, *_radix_prefix(ranges), descents)
        if rest:
            packed = packed[order]
    if rest:
        _order_ties(order, packed, rest)
    return order


def _packable_ranges(major: list[np.ndarray]) -> list[tuple[int, int]]:
    """(min, number of values) of the leading integer keys whose ranges multiply to at most 2**63."""
    out: list[tuple[int, int]] = []
    total = 1
    for k in major:
        if k.dtype.kind not in "biu":
            break
        lo, hi = int(k.min()), int(k.max())
        span = hi - lo + 1
        if total * span > _INT64_SPAN:
            break
        out.append((lo, span))
        total *= span
    return out


def offset_int64(values: np.ndarray, lo: int) -> np.ndarray:
    """int64 ``values - lo`` for integer ``values`` not below ``lo`` whose differences fit int64 (exact for
    uint64 values past the int64 range too)."""
    if values.dtype.kind == "u" and values.dtype.itemsize == 8:
        return (values - np.uint64(lo)).view(np.int64)
    return np.subtract(values, lo, dtype=np.int64)


def _pack(major: list[np.ndarray], ranges: list[tuple[int, int]]) -> np.ndarray:
    """The leading keys as one int64, ordered as they are lexicographically (keys of one value add
    nothing and are skipped)."""
    packed = None
    for key, (lo, span) in zip(major, ranges, strict=False):
        if span == 1:
            continue
        if packed is None:
            packed = offset_int64(key, lo)
        else:
            packed *= span
            packed += offset_int64(key, lo)
    return packed if packed is not None else np.zeros(len(major[0]), np.int64)


def _radix_prefix(ranges: list[tuple[int, int]]) -> tuple[int, int]:
    """(values of the leading packed keys worth grouping by radix first, values of the packed keys after
    them): at most 2**16 groups, and more than one (one group is no grouping); (1, all) for none."""
    groups, count = 1, 0
    for _lo, span in ranges:
        if groups * span > _RADIX_SPAN:
            break
        groups, count = groups * span, count + 1
    rest = 1
    for _lo, span in ranges[count:]:
        rest *= span
    return groups, rest


def _sort_packed(packed: np.ndarray, groups: int, rest_span: int, descents: int) -> np.ndarray:
    """Stable order of ``packed`` (``groups`` leading values times ``rest_span`` trailing ones; ``descents``
    rows below the one before them). With a few groups, rows are grouped with a radix sort first (linear),
    and the groups, mostly in order already, then sorted by timsort (about linear on ordered runs). One
    scratch column, reused. The grouping is skipped when it would not remove most of the disorder (most
    descents are within a group: rows of one thread out of order, not threads interleaved): timsort alone
    then costs less than the grouping's passes."""
    if groups == 1 or descents * _FEW_DESCENTS < len(packed):
        return np.argsort(packed, kind="stable")
    if rest_span == 1:
        return np.argsort(packed.astype(np.uint8 if groups <= 256 else np.uint16), kind="stable")
    scratch = np.floor_divide(packed, rest_span)
    within_group = packed[1:] < packed[:-1]
    within_group &= scratch[1:] == scratch[:-1]
    if 4 * int(np.count_nonzero(within_group)) >= descents:
        del scratch, within_group
        return np.argsort(packed, kind="stable")
    del within_group
    order = np.argsort(scratch.astype(np.uint8 if groups <= 256 else np.uint16), kind="stable")
    np.take(packed, order, out=scratch)  # grouped
    within = np.argsort(scratch, kind="stable")
    del scratch
    return order[within]


def _order_ties(order: np.ndarray, packed_sorted: np.ndarray, rest: list[np.ndarray]) -> None:
    """Reorder, in place, the runs of rows equal in the packed keys by the ``rest`` keys (np.lexsort's
    order: least significant first), ties in row order (the runs hold their rows ascending)."""
    same = packed_sorted[1:] == packed_sorted[:-1]
    if not same.any():
        return
    in_run = np.zeros(len(order), bool)
    in_run[:-1] = same
    in_run[1:] |= same
    at = np.flatnonzero(in_run)
    vals = packed_sorted[at]
    run = np.zeros(len(at), np.int64)
    np.cumsum(vals[1:] != vals[:-1], out=run[1:])
    rows = order[at]
    order[at] = rows[np.lexsort([k[rows] for k in rest] + [run])]


def identity_if_sorted(lane: np.ndarray, ts: np.ndarray) -> np.ndarray | None:
    """The rows' own order (int32 rows where they fit) when they are sorted by (``lane``, ``ts``) already,
    which is then ``lexsort((ts, lane))``; else None (the caller sorts). Two comparison passes, where the
    sort's check packs both keys into an int64 first (a table built sorted by its lane key and start: the
    scheduling tables, ~0.1 s at 2M thread states)."""
    n = len(lane)
    if n > 1:
        if np.any(lane[1:] < lane[:-1]):
            return None
        down = ts[1:] < ts[:-1]
        down &= lane[1:] == lane[:-1]
        if down.any():
            return None
    return np.arange(n, dtype=np.int32 if n < 1 << 31 else np.int64)
