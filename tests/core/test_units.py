"""Durations in one unit style and counter values in engineering units (issue 12, defect 12)."""

from __future__ import annotations

from fxscope.core.units import format_duration_ns, format_quantity


def test_durations_use_one_microsecond_sign() -> None:
    assert format_duration_ns(1_500) == "1.500 µs"
    assert format_duration_ns(2_500_000) == "2.500 ms"
    assert format_duration_ns(7_200 * 10**9) == "7200.000 s"
    assert format_duration_ns(999) == "999 ns" and format_duration_ns(-1_500) == "-1.500 µs"


def test_counter_values_in_engineering_units() -> None:
    assert format_quantity(8388608) == "8.389 M"
    assert format_quantity(-4.6e18) == "-4.600 E"
    assert format_quantity(1 << 63) == "9.223 E"
    assert format_quantity(12) == "12" and format_quantity(0.265) == "0.265" and format_quantity(-3.5) == "-3.5"
    assert format_quantity(0) == "0" and format_quantity(9999) == "9999" and format_quantity(10_000) == "10.000 k"
    assert format_quantity(999_999.9) == "1.000 M"  # rounding carries to the next prefix
    assert format_quantity(2.5e-6) == "2.500 µ"
    assert format_quantity(float("nan")) == "nan" and format_quantity(float("inf")) == "inf"
