"""key_rows: a key's row range in a sorted narrow column, as np.searchsorted gives it, keys out of the
dtype's range included."""

from __future__ import annotations

import numpy as np
import pytest

from fxscope.core.trace.segments import key_rows


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.uint16, np.uint32, np.uint64, np.int64])
def test_key_rows_matches_searchsorted(dtype):
    rng = np.random.default_rng(3)
    column = np.sort(rng.integers(0, 50, 2000)).astype(dtype)
    wide = column.astype(np.float64)  # the reference: every key comparable, no cast of the key
    for key in [*range(-2, 53), int(np.iinfo(dtype).max)]:
        want = (int(np.searchsorted(wide, key, "left")), int(np.searchsorted(wide, key, "right")))
        assert key_rows(column, key) == want, key


def test_key_rows_outside_the_dtype_has_no_rows():
    column = np.array([0, 1, 65535], np.uint16)
    assert key_rows(column, -1) == (0, 0)
    assert key_rows(column, 65536) == (3, 3)
    assert key_rows(column, 65535) == (2, 3)
