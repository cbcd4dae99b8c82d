"""Per-row lookups into the reader's thread table, vectorized."""

from __future__ import annotations

import numpy as np

from fxscope.formats.fxt.columns import FxtColumns


def thread_pids(cols: FxtColumns, thread: np.ndarray) -> np.ndarray:
    """uint64 process koid of each thread index (0 for -1, an unresolved thread reference)."""
    thread = np.asarray(thread)
    if len(cols.threads_pid) == 0:
        return np.zeros(len(thread), np.uint64)
    return np.where(thread >= 0, cols.threads_pid[np.maximum(thread, 0)], 0).astype(np.uint64, copy=False)


def thread_tids(cols: FxtColumns, thread: np.ndarray) -> np.ndarray:
    """uint64 thread koid of each thread index (0 for -1)."""
    thread = np.asarray(thread)
    if len(cols.threads_tid) == 0:
        return np.zeros(len(thread), np.uint64)
    return np.where(thread >= 0, cols.threads_tid[np.maximum(thread, 0)], 0).astype(np.uint64, copy=False)
