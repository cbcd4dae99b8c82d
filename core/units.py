"""Numbers as a reader wants them: durations in one unit style (``µs``, as the time axis writes it, never a
mix of ``us`` and ``µs``), counter values in engineering units (``8.389 M``, not ``8.38861e+06``) and sizes in
binary units (``641.4 KiB``)."""

from __future__ import annotations

import math

#: SI prefixes by power of 1000, for engineering notation
_PREFIXES = {-4: "p", -3: "n", -2: "µ", -1: "m", 0: "", 1: "k", 2: "M", 3: "G", 4: "T", 5: "P", 6: "E"}


def format_duration_ns(ns: int) -> str:
    """A duration in the unit a reader wants: 1.234 ms rather than 1234000 ns."""
    value = float(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3f} {unit}"
    return f"{ns} ns"


def format_bytes(n: int, exact: bool = True) -> str:
    """A size in GiB, MiB or KiB with one decimal, and (``exact``) the byte count after it:
    ``641.4 KiB  (656,760 bytes)``; below 1 KiB the bytes alone."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}  ({n:,} bytes)" if exact else f"{n / scale:.1f} {unit}"
    return f"{n:,} bytes"


def format_quantity(value: float) -> str:
    """A counter value: plain below 10,000 (``12``, ``0.265``, ``-3.5``), else engineering units with
    three decimals (``8.389 M``, ``-4.600 E``); tiny non-zero values too (``2.500 µ``)."""
    v = float(value)
    if not math.isfinite(v):
        return str(v)
    a = abs(v)
    if a == 0 or 1e-3 <= a < 1e4:
        text = f"{v:.4g}"
        return text if "e" not in text else f"{v:.4f}"
    group = max(min(math.floor(math.log10(a) / 3), 6), -4)
    scaled = v / 1000.0**group
    if abs(scaled) >= 999.9995 and group < 6:  # rounding reached the next prefix
        group += 1
        scaled = v / 1000.0**group
    return f"{scaled:.3f} {_PREFIXES[group]}".rstrip()
