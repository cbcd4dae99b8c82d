"""What the reader's computed columns share with a 1-D numpy array, so consumers index them as they would one.

Some event columns are not stored as arrays (:mod:`~fxscope.formats.fxt.mapped_column`: read from the mapped
file; :mod:`~fxscope.formats.fxt.coded_column`: one byte a row). A subclass gives ``__len__`` and
``__getitem__`` (an integer array, a boolean mask, a slice or a scalar, returning numpy values); this adds the
rest of the read-only array surface its consumers use: ``shape``, ``np.asarray(col)``, numpy functions on it
(ufuncs see its values), iteration, ``tolist``, ``astype``, ``view``. A column that mixes in numpy's
``NDArrayOperatorsMixin`` also compares and computes with operators.
"""

from __future__ import annotations

import numpy as np


class ColumnView:
    """A read-only 1-D column whose values a subclass computes in ``__getitem__``."""

    ndim = 1

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, key):
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int]:
        return (len(self),)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(np.asarray(x) if isinstance(x, ColumnView) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __iter__(self):
        return iter(np.asarray(self))

    def tolist(self) -> list:
        return np.asarray(self).tolist()

    def astype(self, dtype, copy: bool = True) -> np.ndarray:
        return np.asarray(self).astype(dtype)

    def view(self, dtype) -> np.ndarray:
        return np.asarray(self).view(dtype)
