"""The model's compiled span kernels (``span_kernels``, built from span_kernels.c) or None: one place decides.

The extension is optional (an install without a C compiler still works): every caller keeps its numpy
path and takes it when :data:`span_kernels` is None, or when a kernel reports that its input is outside
what it handles (then the numpy path decides what the result is). ``FXSCOPE_NO_COMPILED=1`` forces the
numpy paths, as for the reader's loops (:mod:`fxscope.formats.fxt.compiled`); tests switch by assigning
:data:`span_kernels`.
"""

from __future__ import annotations

import os
from types import ModuleType

import numpy as np

span_kernels: ModuleType | None
try:
    from fxscope.core.trace import span_kernels
except ImportError:  # not built here: the numpy paths
    span_kernels = None
if os.environ.get("FXSCOPE_NO_COMPILED"):
    span_kernels = None


def plain(a: np.ndarray, dtype=None) -> np.ndarray:
    """``a`` as a C-contiguous, aligned, native-order array (of ``dtype`` when given): what the kernels
    read (a copy only when ``a`` is not one already)."""
    return np.ascontiguousarray(a, dtype=dtype or a.dtype.newbyteorder("="))
