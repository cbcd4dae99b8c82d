"""Both implementations of the reader's sequential loops: the compiled one (record_scan.c) and the numpy
fallback that an install without a C compiler uses."""

from __future__ import annotations

import pytest

from fxscope.formats.fxt import compiled


@pytest.fixture(params=["compiled", "numpy"])
def fxt_loops(request, monkeypatch) -> str:
    """Run the test once with the compiled loops and once with the numpy ones."""
    if request.param == "numpy":
        monkeypatch.setattr(compiled, "record_scan", None)
    elif compiled.record_scan is None:
        raise RuntimeError(
            "fxscope.formats.fxt.record_scan was not built (no C compiler at install time?): "
            "reinstall with `pip install -e .` on a machine with gcc and the Python headers"
        )
    return request.param
