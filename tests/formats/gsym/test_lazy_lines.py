"""Lazy line-table decoding in GSYM lookups."""

from __future__ import annotations

from pathlib import Path

import pytest

from fxscope.formats.gsym.reader import GsymReader


@pytest.mark.parametrize("case", ["crashdemo", "libdemo", "textstats", "tiny"])
def test_line_tables_decoded_only_as_far_as_needed_give_the_same_lookups(testdata: Path, case: str) -> None:
    """Batch and single lookups decode a function's line table up to the highest address asked for (as
    LLVM's LineTable::lookup does); the answers equal those from fully decoded tables at every byte."""
    from fxscope.formats.gsym.reader import format_lookup

    path = testdata / "gsym" / case / "binary.gsym"
    lazy, full = GsymReader(path), GsymReader(path)
    decode = full._line_columns
    full._line_columns = lambda data_off, length, func_start, upto=None, errors=None: decode(
        data_off, length, func_start, errors=errors)
    addresses = [full.address(i) + k for i in range(len(full)) for k in range(0, 96, 3)]
    expected = [format_lookup(r) for r in full.lookup_many(addresses)]
    assert [format_lookup(r) for r in lazy.lookup_many(addresses)] == expected
    assert [format_lookup(GsymReader(path).lookup(a)) for a in addresses[::7]] == expected[::7]
