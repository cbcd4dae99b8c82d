"""LEB128 encoders: values the field cannot hold are a format error, never an endless loop."""

from __future__ import annotations

import pytest

from fxscope.formats.errors import FormatError
from fxscope.formats.gsym.leb128 import Cursor
from fxscope.formats.leb128 import encode_sleb, encode_uleb


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**32, 2**64 - 1])
def test_uleb_round_trip(value: int) -> None:
    data = encode_uleb(value)
    assert Cursor(data, 0, len(data)).uleb() == value


@pytest.mark.parametrize("value", [0, -1, 63, -64, 64, -65, 2**62, -(2**63), 2**63 - 1])
def test_sleb_round_trip(value: int) -> None:
    data = encode_sleb(value)
    assert Cursor(data, 0, len(data)).sleb() == value


@pytest.mark.parametrize("value", [-1, -4853, 2**64])
def test_uleb_rejects_out_of_range_values(hang_guard, value: int) -> None:
    # -1 >> 7 is -1 forever: before the range check this looped and grew its buffer without end
    with pytest.raises(FormatError, match="out of range"):
        encode_uleb(value)


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_sleb_rejects_out_of_range_values(value: int) -> None:
    with pytest.raises(FormatError, match="out of range"):
        encode_sleb(value)
