"""The reader's compiled loops (``record_scan``, built from record_scan.c) or None: one place decides.

The extension is optional (an install without a C compiler still works): every caller keeps a numpy
path and takes it when :data:`record_scan` is None. Setting ``FXSCOPE_NO_COMPILED=1`` forces the numpy
paths (to compare the two); tests switch by assigning :data:`record_scan`.
"""

from __future__ import annotations

from types import ModuleType

from fxscope.formats.compiled_extension import optional_extension

record_scan: ModuleType | None = optional_extension("fxscope.formats.fxt.record_scan")


def contiguous_words(words) -> bool:
    """Whether ``words`` can be handed to the compiled loops as is (one C-contiguous, aligned, native-order
    uint64 buffer); other arrays take the numpy paths."""
    d = words.dtype
    return d.itemsize == 8 and d.kind == "u" and d.isnative and words.flags.c_contiguous and words.flags.aligned
