"""Tick to nanosecond conversion (spec T1), exact in integers for every tick rate."""

from __future__ import annotations

import numpy as np

_U = np.uint64


def convert_rate(ticks: np.ndarray, rate: int) -> np.ndarray:
    """Exact ``ticks * 1e9 // rate`` (T1) for one tick rate, as int64."""
    if rate < (1 << 33):
        q, r = np.divmod(ticks, _U(rate))
        return (q * _U(1_000_000_000) + (r * _U(1_000_000_000)) // _U(rate)).view(np.int64)
    # exact in Python integers; such tick rates are exotic
    return np.array([min(v * 1_000_000_000 // rate, (1 << 63) - 1) for v in ticks.tolist()], np.int64)


def ticks_to_ns(ticks: np.ndarray, runs: list[tuple[int, int, int]]) -> np.ndarray:
    """Nanoseconds from ticks; ``runs`` gives the row ranges whose rate is not 1e9 (1 tick = 1 ns)."""
    out = ticks.astype(np.uint64, copy=bool(runs)).view(np.int64)
    for a, b, rate in runs:
        out[a:b] = convert_rate(ticks[a:b].astype(np.uint64, copy=False), rate)
    return out


def ticks_at_rates(ticks: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """Nanoseconds (int64) from ``ticks``, each at its own tick rate (``rates``, ticks per second)."""
    out = ticks.astype(np.uint64).view(np.int64)
    other = np.flatnonzero(rates != 1_000_000_000)
    if len(other):
        for rate in np.unique(rates[other]).tolist():
            sel = other[rates[other] == rate]
            out[sel] = convert_rate(ticks[sel].astype(np.uint64, copy=False), rate)
    return out
