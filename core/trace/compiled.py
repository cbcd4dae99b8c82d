"""The model build's compiled loops (``slice_kernels``, built from slice_kernels.c) or None: one place decides.

The extension is optional (an install without a C compiler still works): every caller keeps its numpy
path and takes it when :data:`slice_kernels` is None, or when its columns are not what the loops take
(:func:`plain`). Setting ``FXSCOPE_NO_COMPILED=1`` forces the numpy paths (to compare the two); tests
switch by assigning :data:`slice_kernels`.
"""

from __future__ import annotations

import os
from types import ModuleType

import numpy as np

slice_kernels: ModuleType | None
try:
    from fxscope.core.trace import slice_kernels
except ImportError:  # not built here: the numpy paths
    slice_kernels = None
if os.environ.get("FXSCOPE_NO_COMPILED"):
    slice_kernels = None


def plain(array, *dtypes) -> bool:
    """Whether ``array`` can be handed to the compiled loops as is: an ndarray of one of ``dtypes``, native
    order, C-contiguous and aligned (anything else, a lazily gathered column say, takes the numpy path)."""
    return (
        isinstance(array, np.ndarray)
        and any(array.dtype == np.dtype(d) for d in dtypes)
        and array.dtype.isnative
        and array.flags.c_contiguous
        and array.flags.aligned
    )
