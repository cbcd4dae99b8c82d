"""The model build's compiled loops (``slice_kernels``, built from slice_kernels.c) and span kernels
(``span_kernels``, from span_kernels.c: flows, async spans), sums (``summary_kernels``, from
summary_kernels.c: Info counts, the analysis panel's self times and call paths) and the scheduling replay
(``sched_kernels``, from sched_kernels.c), each a module or None: one place decides.

The extensions are optional (an install without a C compiler still works): every caller keeps its numpy
path and takes it when its module is None, or when its columns are not what the loops take
(:func:`plain`), or when a kernel reports that its input is outside what it handles (the numpy path then
decides what the result is). Setting ``FXSCOPE_NO_COMPILED=1`` forces the numpy paths (to compare the two;
:func:`fxscope.formats.compiled_extension.optional_extension`); tests switch by assigning the module attributes.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from fxscope.formats.compiled_extension import optional_extension
from fxscope.formats.fxt.column_view import ColumnView

slice_kernels: ModuleType | None = optional_extension("fxscope.core.trace.slice_kernels")
span_kernels: ModuleType | None = optional_extension("fxscope.core.trace.span_kernels")
summary_kernels: ModuleType | None = optional_extension("fxscope.core.trace.summary_kernels")
sched_kernels: ModuleType | None = optional_extension("fxscope.core.trace.sched_kernels")


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


def contiguous(a: np.ndarray, dtype=None) -> np.ndarray:
    """``a`` as a C-contiguous, aligned, native-order array (of ``dtype`` when given), what the span kernels
    read: a copy only when ``a`` is not one already."""
    return np.ascontiguousarray(a, dtype=dtype or a.dtype.newbyteorder("="))


def values(column, *dtypes) -> np.ndarray | None:
    """``column`` as the compiled loops take it: itself when :func:`plain`; a column the reader computes
    (:class:`~fxscope.formats.fxt.column_view.ColumnView`: event times read from the mapped file, a one-byte
    code column) of one of ``dtypes`` as its whole values, built for the call (a temporary: 8 bytes an event
    for the times, 2 for codes); None otherwise (the numpy path)."""
    if plain(column, *dtypes):
        return column
    if isinstance(column, ColumnView) and any(column.dtype == np.dtype(d) for d in dtypes):
        return np.ascontiguousarray(np.asarray(column))
    return None


def key_values(column) -> np.ndarray | None:
    """``column`` for a loop that only tells its values apart (hash keys, equality: never orders or prints
    them): a one-byte code column (:class:`~fxscope.formats.fxt.coded_column.CodedColumn`) as its uint8 index
    as it is (one index a value, one value an index: the same keys), not expanded to its values (2 bytes an
    event built, ~10 ms at 10M events); else :func:`values` as int16 or int32."""
    index = getattr(column, "index", None)
    if isinstance(column, ColumnView) and plain(index, np.uint8) and len(index) == len(column):
        return index
    return values(column, np.int16, np.int32)
