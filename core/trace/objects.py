"""Names of kernel and userspace objects: the one table every view and export reads them from.

Kernel object records (spec E7) name processes and threads by koid; the same object may be described several
times (by several providers, or again after a rename). The rule, used by the thread and process tracks, the
details panel, the scheduling details and the Chrome export alike:

* the **last** non-empty name recorded for an object wins, as in Perfetto's FXT importer (a thread renamed
  during the trace is shown with its newest name);
* except that a name that is a **prefix** of the name already held does not replace it: the kernel truncates
  object names to 31 bytes (``ZX_MAX_NAME_LEN``), so a later, truncated copy of the same name would otherwise
  hide the full one that a provider recorded.

A thread object's ``"process"`` koid argument assigns it to a process, which is how scheduling records (they
carry only tids) find their process. Userspace object records (spec O2) name a pointer within one process:
the key is (process koid, pointer), and the same rule applies. Both tables are small (one entry per object
record): plain dicts.
"""

from __future__ import annotations

import numpy as np

from fxscope.formats.fxt.args import Arg, ArgType
from fxscope.formats.fxt.columns import FxtColumns

PROCESS_OBJ = 1
THREAD_OBJ = 2


def _replaces(new: str, held: str) -> bool:
    """Whether a later record's name ``new`` replaces the ``held`` one (the module's rule)."""
    return bool(new) and not (held.startswith(new) and len(new) < len(held))


#: :meth:`ObjectLabels.pids_of` reads a table of the koids when they are all below this (and there are more
#: of them to look up)
_DENSE_LOOKUP = 1 << 16


class ObjectLabels:
    def __init__(self, cols: FxtColumns) -> None:
        self.kernel: dict[int, tuple[int, str]] = {}  # koid -> (obj_type, name)
        self.thread_process: dict[int, int] = {}  # thread koid -> process koid
        for obj in cols.kernel_objects:
            old = self.kernel.get(obj.koid)
            if old is None or _replaces(obj.name, old[1]):
                self.kernel[obj.koid] = (obj.obj_type, obj.name if old is None or obj.name else old[1])
            if obj.obj_type == THREAD_OBJ:
                for a in obj.args:
                    # (a value too short for its type reads as None, with the reader's warning: no process)
                    if a.name == "process" and a.type == ArgType.KOID and isinstance(a.value, int):
                        self.thread_process[obj.koid] = a.value
        self.userspace: dict[tuple[int, int], str] = {}
        for u in cols.userspace_objects:
            old_name = self.userspace.get((u.pid, u.pointer))
            if old_name is None or _replaces(u.name, old_name):
                self.userspace[(u.pid, u.pointer)] = u.name if old_name is None or u.name else old_name
        # tid -> pid for the vectorized lookup: kernel objects first, then the event threads table
        pairs = dict(zip(cols.threads_tid.tolist(), cols.threads_pid.tolist(), strict=True))
        pairs.update(self.thread_process)
        tids = np.array(sorted(pairs), np.uint64)
        self._tids = tids
        self._pids = np.array([pairs[t] for t in tids.tolist()], np.uint64)

    def name(self, koid: int, obj_type: int | None = None) -> str:
        """The object's name by the module's rule, or ``""`` (also when it is not of ``obj_type``)."""
        found = self.kernel.get(koid)
        if found is None or (obj_type is not None and found[0] != obj_type):
            return ""
        return found[1]

    def thread_label(self, tid: int) -> str:
        """A thread as every view names it: ``"name tid"``, else ``"thread tid"``."""
        name = self.name(tid, THREAD_OBJ)
        return f"{name} {tid}" if name else f"thread {tid}"

    def process_label(self, pid: int) -> str:
        """A process as every view names it: ``"name pid"``, else ``"process pid"``."""
        name = self.name(pid, PROCESS_OBJ)
        return f"{name} {pid}" if name else f"process {pid}"

    def koid_label(self, koid: int) -> str:
        """``"name (koid)"`` for a named kernel object, else the koid."""
        found = self.kernel.get(koid)
        return f"{found[1]} ({koid})" if found and found[1] else str(koid)

    def pointer_label(self, pid: int, pointer: int) -> str:
        """``"name (0x...)"`` for a pointer named by a userspace object of process ``pid``, else hex."""
        name = self.userspace.get((pid, pointer))
        return f"{name} (0x{pointer:x})" if name else f"0x{pointer:x}"

    def label_arg(self, arg: Arg, pid: int) -> str:
        """How the details panel shows an argument's value (of an event of process ``pid``)."""
        if arg.type == ArgType.KOID and isinstance(arg.value, int):
            return self.koid_label(arg.value)
        if arg.type == ArgType.POINTER and isinstance(arg.value, int):
            return self.pointer_label(pid, arg.value)
        if isinstance(arg.value, bytes):
            head = arg.value[:32].hex(" ")
            return f"<{len(arg.value)} bytes: {head}{' ...' if len(arg.value) > 32 else ''}>"
        if arg.value is None and isinstance(arg.type, ArgType) and arg.type != ArgType.NULL:
            return f"<{arg.type.name.lower()} argument shorter than its type needs>"  # (the reader warned)
        if arg.value is None and arg.type != ArgType.NULL:
            return f"<unknown argument type {arg.type}>"
        return str(arg.value)

    def pids_of(self, tids: np.ndarray) -> np.ndarray:
        """uint64 process koid of each thread koid (kernel objects, then event threads; 0 if unknown)."""
        if len(self._tids) == 0:
            return np.zeros(len(tids), np.uint64)
        tids = np.asarray(tids)
        if tids.dtype.kind in "ui" and len(tids) > _DENSE_LOOKUP and int(self._tids[-1]) < _DENSE_LOOKUP:
            # small koids (as a rule): a table of every koid up to the largest known one, one gather (a
            # binary search per record cost ~0.1 s per column of 2M scheduling records)
            table = np.zeros(int(self._tids[-1]) + 2, np.uint64)  # (the last slot: koids past the table)
            table[self._tids.astype(np.intp)] = self._pids
            top = len(table) - 1
            lo = int(tids.min()) if len(tids) else 0
            if lo >= 0:
                return table[np.minimum(tids, top).astype(np.intp, copy=False)]
        tids = np.asarray(tids, np.uint64)
        j = np.minimum(np.searchsorted(self._tids, tids), len(self._tids) - 1)
        return np.where(self._tids[j] == tids, self._pids[j], np.uint64(0))
