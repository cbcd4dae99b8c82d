"""A file's memory map, guarded against the file changing on disk while it is open (trace files, GSYM files).

Why: the FXT reader keeps the trace mapped and the columns read event times, data words and arguments from
the map on demand; the GSYM reader keeps its file mapped for lookups. When another program truncates the file
in place (a tracer re-run with the same output path opens it with O_TRUNC, then writes; a tool rebuilding a
GSYM file in place), a read of a page past the new end raises SIGBUS: the process would die.

- With the compiled guard (:mod:`mapping_guard`, built from mapping_guard.c) the map's address range is
  registered with a SIGBUS handler that maps zero pages over the map from a faulting page to its end: the
  read sees zeros and the fault is counted. Nothing is checked per read (no cost on the hot paths).
- Without it (not built, or ``FXSCOPE_NO_COMPILED``), :meth:`MappedFile.check_before_read` (the mapped columns
  call it before each read) compares the file's size with the map's and, when shorter, maps zero pages over
  the part past the new end (``mmap(MAP_FIXED)`` through ctypes, Linux), so later reads see zeros. A read
  racing the truncation can still fault: the compiled guard is the one that closes every path.

Either way :meth:`MappedFile.change` tells what happened (truncated, grew, replaced, deleted, rewritten, unreadable) and
:meth:`FileChange.message` says it in one line for the window and the commands. A file replaced by a rename
(an atomic write) keeps the old inode mapped: nothing faults, the change is only reported.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import mmap
import os
import sys
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fxscope.formats.compiled_extension import optional_extension

mapping_guard = optional_extension("fxscope.formats.mapping_guard")

#: every map made here that is still open (the commands report their changes when they end)
_open: weakref.WeakSet[MappedFile] = weakref.WeakSet()
#: changes of maps already closed, reported by :func:`changes_seen` (a command's model may be gone by then)
_closed_changes: list[tuple[int, FileChange]] = []  # (the map's serial, its change)
#: how many maps were made: each map's serial number is the count before it (a command reports only the
#: maps it made, :func:`maps_made`)
_made = 0
_closed_lock = threading.Lock()


@dataclass(frozen=True)
class FileIdentity:
    """What says a file is the one that was opened, unchanged."""

    size: int
    mtime_ns: int
    inode: int
    device: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


@dataclass(frozen=True)
class FileChange:
    """How the mapped file differs from when it was opened. ``kind``: "truncated", "grew", "rewritten"
    (same size, new modification time), "replaced" (the path names another file now), "deleted",
    "unreadable" (reads faulted with the file unchanged: an I/O error)."""

    path: str
    kind: str
    old_size: int
    #: the smallest size seen since opened (the size after a truncation: what was lost is past it)
    new_size: int
    #: reads that found their page gone from the file and read zeros (the compiled guard's count of faults)
    zeroed_reads: int = 0
    #: the size now, when it differs from ``new_size`` (truncated, then written again: a re-run tracer)
    size_now: int | None = None
    #: what the file is to the user, as the message names it
    noun: str = "trace file"

    def message(self) -> str:
        """One line for a user: what happened and what to do."""
        what = {
            "truncated": f"truncated from {self.old_size} to {self.new_size} bytes"
            + (f", now {self.size_now} bytes" if self.size_now is not None else ""),
            "grew": f"grew from {self.old_size} to {self.new_size} bytes",
            "rewritten": "rewritten in place",
            "replaced": "replaced by another file",
            "deleted": "deleted",
            "unreadable": "part of it could not be read",
        }[self.kind]
        if self.zeroed_reads:
            what += "; what was past its new end reads as zeros"
        if self.kind == "grew" and not self.zeroed_reads:
            tail = "what is shown is the file as it was when opened — reload it to see the rest"
        elif self.kind in ("replaced", "deleted") and not self.zeroed_reads:
            tail = "what is shown is the file as it was when opened — reload it to see the new one"
        else:
            tail = "what is shown may be incomplete — reload it"
        return f"the {self.noun} {self.path} changed on disk while open ({what}); {tail}"


@dataclass
class _Watched:
    """What a map's change is found from: shared by its :class:`MappedFile` and the finalizer that reports
    the change when the map goes (which must not hold the MappedFile)."""

    path: str | None  # the path checked for a replacement (None: not checked)
    shown_path: str  # the path a message names
    opened: FileIdentity
    fd: int  # a descriptor of the mapped file: its size after the path changed, without a path lookup
    slot: int  # the guard's slot (-1: not guarded)
    smallest: int  # the smallest size seen: a truncation stays reported after the file is written again
    serial: int  # (:func:`maps_made`)
    noun: str  # (:attr:`FileChange.noun`)


class MappedFile:
    """A read-only map of one open file and what is known about the file since it was mapped."""

    def __init__(self, path: str, fileno: int, noun: str = "trace file") -> None:
        """Map the file open as ``fileno`` (all of it) and guard the map. Raises OSError when the file
        cannot be mapped (:func:`map_error_message` words it). ``noun``: what a change's message calls it."""
        st = os.fstat(fileno)
        try:
            self.map = mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)
        except ValueError as exc:  # (emptied since the caller looked at its size)
            raise OSError(errno.ENODATA, "the file is empty") from exc
        slot = -1
        if mapping_guard is not None:
            with contextlib.suppress(OSError):  # (sigaction refused: unguarded, checked before reads instead)
                slot = mapping_guard.register(self.map)
        self._watched = _Watched(path, path, FileIdentity.of(st), os.dup(fileno), slot, st.st_size, _next_serial(),
                                 noun)
        self.opened = self._watched.opened
        #: whether a fault anywhere in the map reads zeros (else :meth:`check_before_read` patches)
        self.guarded = slot >= 0
        self._address = int(np.frombuffer(self.map, np.uint8, count=1).__array_interface__["data"][0])
        self._zeroed_from: int | None = None  # (fallback) first byte mapped to zeros so far
        self._patch_lock = threading.Lock()
        weakref.finalize(self.map, _closed, self._watched)
        _open.add(self)

    @property
    def path(self) -> str | None:
        """The path checked for a replacement (None: not checked, e.g. a removed decompressed copy)."""
        return self._watched.path

    @path.setter
    def path(self, value: str | None) -> None:
        self._watched.path = value

    @property
    def shown_path(self) -> str:
        """The path a message names."""
        return self._watched.shown_path

    @shown_path.setter
    def shown_path(self, value: str) -> None:
        self._watched.shown_path = value

    def faults(self) -> int:
        """Reads of the map the guard turned into zeros so far (faults: each zero-maps the rest of the map)."""
        return _faults(self._watched.slot)

    def change(self) -> FileChange | None:
        """What changed on disk since the map was made, or None (also zero-maps a truncated end when not
        guarded, as :meth:`check_before_read` does)."""
        if not self.guarded:
            self.check_before_read()
        else:  # a SIGBUS handler installed since (faulthandler.enable()) would come first: ours again
            with contextlib.suppress(OSError):
                mapping_guard.install()
        return _change_of(self._watched)

    def check_before_read(self) -> None:
        """(Without the compiled guard.) When the file is now shorter than the map, map zeros over the
        map's pages past the file's end, so reads there see zeros rather than raise SIGBUS."""
        try:
            size = os.fstat(self._watched.fd).st_size
        except OSError:
            return
        if size < self.opened.size and (self._zeroed_from is None or size < self._zeroed_from):
            self._zero_from(size)

    def checking(self, progress: Callable[[float], None] | None) -> Callable[[float], None]:
        """(Without the compiled guard.) ``progress`` followed by :meth:`check_before_read`: the reader
        calls it between blocks, so a truncation during the read zero-maps the lost part before the next."""

        def checked(fraction: float) -> None:
            if progress is not None:
                progress(fraction)
            self.check_before_read()

        return checked

    def _zero_from(self, size: int) -> None:
        with self._patch_lock:
            page = mmap.PAGESIZE
            first = -(-size // page) * page  # the page holding the new end stays mapped (it reads zeros past it)
            end = -(-self.opened.size // page) * page
            if first < end and _map_zeros(self._address + first, end - first):
                self._zeroed_from = size


def _faults(slot: int) -> int:
    return int(mapping_guard.faults(slot)) if slot >= 0 and mapping_guard is not None else 0


def _change_of(watched: _Watched) -> FileChange | None:
    opened, path, shown = watched.opened, watched.path, watched.shown_path
    zeroed = _faults(watched.slot)
    try:
        now = FileIdentity.of(os.fstat(watched.fd))
    except OSError:
        now = opened
    watched.smallest = smallest = min(watched.smallest, now.size)
    kind = None
    if smallest < opened.size:
        kind = "truncated"
    elif now.size > opened.size:
        kind = "grew"
    elif now.mtime_ns != opened.mtime_ns:
        kind = "rewritten"
    elif zeroed:
        kind = "unreadable"  # faults with the file as it was: an I/O error (a failing disk, a network filesystem)
    if kind is None and path is not None:
        try:
            there = os.stat(path)
        except OSError:
            kind = "deleted"
        else:
            if (there.st_ino, there.st_dev) != (opened.inode, opened.device):
                kind = "replaced"
    if kind is None:
        return None
    if kind == "truncated":
        size_now = now.size if now.size != smallest else None
        return FileChange(shown, kind, opened.size, smallest, zeroed, size_now, watched.noun)
    return FileChange(shown, kind, opened.size, now.size, zeroed, noun=watched.noun)


def _closed(watched: _Watched) -> None:
    """When a map goes: note its change (for :func:`changes_seen`), stop guarding it, close its descriptor."""
    found = _change_of(watched)
    if found is not None:
        with _closed_lock:
            _closed_changes.append((watched.serial, found))
    if watched.slot >= 0 and mapping_guard is not None:
        mapping_guard.unregister(watched.slot)
    with contextlib.suppress(OSError):
        os.close(watched.fd)


def maps_made() -> int:
    """How many maps this process has made so far: :func:`changes_seen` from this number on reports only
    the maps made after now (a command's own, not an earlier one's still alive in the same process)."""
    with _closed_lock:
        return _made


def _next_serial() -> int:
    global _made
    with _closed_lock:
        _made += 1
        return _made - 1


def changes_seen(since: int = 0) -> list[FileChange]:
    """The changes of every map made in this process (open or since closed) whose serial is ``since`` or
    later (:func:`maps_made`), once each: a command reports them when it ends."""
    with _closed_lock:
        found = [change for serial, change in _closed_changes if serial >= since]
        _closed_changes[:] = [(serial, change) for serial, change in _closed_changes if serial < since]
    for mapped in list(_open):
        change = mapped.change() if mapped._watched.serial >= since else None
        if change is not None:
            found.append(change)
    return found


def map_error_message(exc: OSError) -> str:
    """The one-line reason a file could not be mapped (ENODEV: its filesystem cannot map files)."""
    if exc.errno in (errno.ENODEV, errno.EOPNOTSUPP):
        return (
            f"cannot memory-map it: its filesystem does not support mapping files ({exc.strerror or exc}); "
            "copy it to a local disk"
        )
    return f"cannot read: {exc.strerror or exc}"


_libc = None


def _map_zeros(address: int, length: int) -> bool:
    """Map private zero pages over ``[address, address + length)`` (page-aligned), Linux only."""
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mmap.restype = ctypes.c_void_p
        _libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    map_fixed = 0x10
    got = _libc.mmap(address, length, mmap.PROT_READ, map_fixed | mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    return got == address
