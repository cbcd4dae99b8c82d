"""Both implementations of the reader's sequential loops: the compiled one (record_scan.c) and the numpy
fallback that an install without a C compiler uses."""

from __future__ import annotations

import pytest

from fxscope.formats.fxt import compiled
from tests.compiled_loops import choose_loops


@pytest.fixture(params=["compiled", "numpy"])
def fxt_loops(request, monkeypatch) -> str:
    """Run the test once with the compiled loops and once with the numpy ones."""
    return choose_loops(request.param, monkeypatch, compiled, "record_scan")
