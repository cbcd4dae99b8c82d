"""The comparison of two traces (A, the baseline, against B): per name, count, total, p50 and p99 in both,
with deltas and ratios, sorted by the largest regression, and the names that regressed past a threshold.

Names are matched by text (the two traces' string tables differ). A name's *regression* is the change of
its total time from A to B, in percent of A's (``+inf`` for a name only in B with time); the table is
sorted by the change in nanoseconds, largest increase first, so the name that costs the most extra time
leads. ``fxscope diff`` exits 1 when some name's change is above the threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fxscope.core.analysis.stats import NameStats

FIELDS = ("count", "total_ns", "p50_ns", "p99_ns")


@dataclass
class DiffRow:
    name: str
    a: dict[str, int]  # FIELDS -> value in A (zeros when the name is not in A)
    b: dict[str, int]
    in_a: bool
    in_b: bool

    @property
    def delta_ns(self) -> int:
        return self.b["total_ns"] - self.a["total_ns"]

    @property
    def change_pct(self) -> float:
        """Change of the total time in percent of A's (+inf: new time; 0 when both are 0)."""
        a, b = self.a["total_ns"], self.b["total_ns"]
        if a == 0:
            return math.inf if b > 0 else 0.0
        return (b - a) * 100.0 / a

    def record(self) -> dict:
        """The ``fxscope diff --json`` object of this row (ratios B/A, null where A is 0)."""
        out: dict = {"name": self.name, "in_a": self.in_a, "in_b": self.in_b}
        for f in FIELDS:
            a, b = self.a[f], self.b[f]
            out[f"{f}_a"], out[f"{f}_b"] = a, b
            out[f"{f}_delta"] = b - a
            out[f"{f}_ratio"] = (b / a) if a else None
        pct = self.change_pct
        out["change_pct"] = None if math.isinf(pct) else pct
        return out


def _by_name(stats: NameStats) -> dict[str, dict[str, int]]:
    cols = {f: getattr(stats, f).tolist() for f in FIELDS}
    return {n: {f: cols[f][i] for f in FIELDS} for i, n in enumerate(stats.names)}


def compare(a: NameStats, b: NameStats) -> list[DiffRow]:
    """One row per name in A or B, by ``delta_ns`` (largest first), then name."""
    da, db = _by_name(a), _by_name(b)
    zero = dict.fromkeys(FIELDS, 0)
    rows = [DiffRow(n, da.get(n, zero), db.get(n, zero), n in da, n in db) for n in sorted(set(da) | set(db))]
    rows.sort(key=lambda r: (-r.delta_ns, r.name))
    return rows


def regressions(rows: list[DiffRow], threshold_pct: float) -> list[DiffRow]:
    """The rows whose total time grew by more than ``threshold_pct`` percent."""
    return [r for r in rows if r.delta_ns > 0 and r.change_pct > threshold_pct]
