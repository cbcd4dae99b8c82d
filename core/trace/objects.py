"""Names of kernel and userspace objects, for labelling koids and pointers in the details panel.

Kernel object records (spec E7) name processes and threads by koid; the same object may be described
several times (by several providers, the kernel's possibly truncated), so the longest name wins, as the
Chrome exporter does. A thread object's ``"process"`` koid argument assigns it to a process, which is how
scheduling records (they carry only tids) find their process. Userspace object records (spec O2) name a
pointer within one process: the key is (process koid, pointer). Both tables are small (one entry per
object record): plain dicts.
"""

from __future__ import annotations

import numpy as np

from formats.fxt.args import Arg, ArgType
from formats.fxt.columns import FxtColumns

PROCESS_OBJ = 1
THREAD_OBJ = 2


class ObjectLabels:
    def __init__(self, cols: FxtColumns) -> None:
        self.kernel: dict[int, tuple[int, str]] = {}  # koid -> (obj_type, name)
        self.thread_process: dict[int, int] = {}  # thread koid -> process koid
        for obj in cols.kernel_objects:
            old = self.kernel.get(obj.koid)
            if old is None or len(obj.name) > len(old[1]):
                self.kernel[obj.koid] = (obj.obj_type, obj.name)
            if obj.obj_type == THREAD_OBJ:
                for a in obj.args:
                    if a.name == "process" and a.type == ArgType.KOID:
                        self.thread_process[obj.koid] = int(a.value)
        self.userspace: dict[tuple[int, int], str] = {}
        for u in cols.userspace_objects:
            old_name = self.userspace.get((u.pid, u.pointer), "")
            if len(u.name) >= len(old_name):
                self.userspace[(u.pid, u.pointer)] = u.name
        # tid -> pid for the vectorized lookup: kernel objects first, then the event threads table
        pairs = dict(zip(cols.threads_tid.tolist(), cols.threads_pid.tolist(), strict=True))
        pairs.update(self.thread_process)
        tids = np.array(sorted(pairs), np.uint64)
        self._tids = tids
        self._pids = np.array([pairs[t] for t in tids.tolist()], np.uint64)

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
        if arg.value is None and arg.type != ArgType.NULL:
            return f"<unknown argument type {arg.type}>"
        return str(arg.value)

    def pids_of(self, tids: np.ndarray) -> np.ndarray:
        """uint64 process koid of each thread koid (kernel objects, then event threads; 0 if unknown)."""
        tids = np.asarray(tids, np.uint64)
        if len(self._tids) == 0:
            return np.zeros(len(tids), np.uint64)
        j = np.minimum(np.searchsorted(self._tids, tids), len(self._tids) - 1)
        return np.where(self._tids[j] == tids, self._pids[j], np.uint64(0))
