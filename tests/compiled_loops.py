"""The switch between the compiled loops and their numpy fallbacks that the tests' ``*_loops`` fixtures share
(tests/formats/fxt/conftest.py, tests/core/trace/conftest.py)."""

from __future__ import annotations

import os

import pytest


def choose_loops(param: str, monkeypatch, holder, attr: str) -> str:
    """For a fixture that runs a test with both implementations of some loops: ``param`` "numpy" sets
    ``holder.attr`` (the compiled extension, or None) to None for the test; "compiled" needs the extension.
    Not built is a failure (an install that silently runs only the fallback has not tested the compiled
    loops), unless ``FXSCOPE_NO_COMPILED`` asks for the numpy paths: then the compiled case is skipped."""
    if param == "numpy":
        monkeypatch.setattr(holder, attr, None)
    elif os.environ.get("FXSCOPE_NO_COMPILED"):
        pytest.skip("FXSCOPE_NO_COMPILED is set: the compiled loops are off")
    elif getattr(holder, attr) is None:
        raise RuntimeError(
            f"{holder.__name__}.{attr} was not built (no C compiler at install time?): "
            "reinstall with `pip install -e .` on a machine with gcc and the Python headers"
        )
    return param
