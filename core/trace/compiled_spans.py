"""The model's compiled span kernels (``span_kernels``, built from span_kernels.c) or None: one place decides.

The extension is optional (an install without a C compiler still works): every caller keeps its numpy
path and takes it when :data:`span_kernels` is None, or when a kernel reports that its input is outside
what it handles (then the numpy path decides what the result is). ``FXSCOPE_NO_COMPILED=1`` forces the
numpy paths, as for the reader's loops (:mod:`fxscope.formats.fxt.compiled`); tests switch by assigning
:data:`span_kernels`.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from fxscope.formats.fxt.compiled import optional_extension

span_kernels: ModuleType | None = optional_extension("fxscope.core.trace.span_kernels")


def plain(a: np.ndarray, dtype=None) -> np.ndarray:
    """``a`` as a C-contiguous, aligned, native-order array (of ``dtype`` when given): what the kernels
    read (a copy only when ``a`` is not one already)."""
    return np.ascontiguousarray(a, dtype=dtype or a.dtype.newbyteorder("="))
