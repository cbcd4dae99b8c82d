"""Importing an optional compiled extension: one place decides whether the C loops are used.

Why: every extension (the FXT reader's record scan, the SIGBUS guard of mapped files, the model's kernels)
is optional, so that an install without a C compiler still works; each caller keeps a pure numpy/Python
path and takes it when its module is None. ``FXSCOPE_NO_COMPILED=1`` forces those paths (to compare the two).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def optional_extension(name: str) -> ModuleType | None:
    """The compiled extension module ``name``, or None when it was not built here or
    ``FXSCOPE_NO_COMPILED`` is set (its callers then take their numpy paths)."""
    if os.environ.get("FXSCOPE_NO_COMPILED"):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:  # not built here: the numpy paths
        return None
