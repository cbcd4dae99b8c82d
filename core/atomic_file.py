"""Atomic output files: write to a temporary file beside the target, then rename over it.

A reader of the target never sees a half-written file, and a failed write leaves the old file intact. What
a killed writer leaves behind is cleaned up:

- SIGTERM (and SIGINT or SIGHUP where they would kill the process outright): while a temporary is live, the
  handler removes it before the process dies of the signal; a SIGINT that raises ``KeyboardInterrupt`` removes them as the
  exception unwinds;
- SIGKILL (nothing runs): temporaries are named ``.TARGET.fxscope-tmp-HOST-PID-RANDOM.EXT``, so the next write to
  the same target removes those of a dead process on this host, and any older than a day (and, in its
  directory, day-old temporaries of the earlier naming ``.fxscope-XXXXXXXX.EXT``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Iterator

TEMP_MARK = ".fxscope-tmp-"
STALE_AGE = 24 * 3600.0  # seconds: a temporary this old is abandoned whoever owns it
_NAME_KEEP = 100  # characters of the target's name kept in its temporaries' names (NAME_MAX is 255)

# earlier fxscope versions named temporaries ".fxscope-" + mkstemp's 8 random characters + the target's extension
_LEGACY = re.compile(r"\.fxscope-[a-z0-9_]{8}(\.[A-Za-z0-9]{1,16})?$")

_live: set[str] = set()
_live_lock = threading.Lock()
_handled_signals = ("SIGTERM", "SIGINT", "SIGHUP")


def _host_tag() -> str:
    """A short tag for this machine: a PID only says something about temporaries written on this host."""
    return hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def temp_prefix(target: str) -> str:
    """The name prefix of ``target``'s temporaries (in its directory)."""
    return f".{os.path.basename(target)[:_NAME_KEEP]}{TEMP_MARK}"


def temp_suffix(target: str) -> str:
    """The target's extension, kept at the end of its temporaries' names for tools that go by it."""
    return os.path.splitext(target)[1][:16]


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0  # someone else's process (or a number no process has)
    return True


def clean_stale_temporaries(target: str | os.PathLike[str], now: float | None = None) -> list[str]:
    """Remove ``target``'s temporaries that no live writer owns: from a dead process on this host, or older
    than :data:`STALE_AGE`. Returns the removed paths. Files of any other naming are never touched."""
    target = os.fspath(target)
    directory = os.path.dirname(os.path.abspath(target))
    prefix = temp_prefix(target)
    pattern = re.compile(re.escape(prefix) + r"([0-9a-f]{8})-([0-9]{1,10})-[A-Za-z0-9_]+"
                         + re.escape(temp_suffix(target)) + "$")
    now = time.time() if now is None else now
    host = _host_tag()
    removed = []
    try:
        names = [n for n in os.listdir(directory) if n.startswith((prefix, ".fxscope-"))]
    except OSError:
        return removed
    for name in names:
        match = pattern.match(name)
        if match is None:
            if _LEGACY.match(name):  # an earlier version's naming (no owner): only by age
                _remove_if_older(os.path.join(directory, name), now, removed)
            continue
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        dead_owner = match.group(1) == host and not _pid_alive(int(match.group(2)))
        if dead_owner or now - info.st_mtime > STALE_AGE:
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(path)
    return removed


def _remove_if_older(path: str, now: float, removed: list[str]) -> None:
    try:
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode) and now - info.st_mtime > STALE_AGE:
            os.unlink(path)
            removed.append(path)
    except OSError:
        pass


def _on_fatal_signal(signum: int, _frame) -> None:
    """Remove the live temporaries, then die of the signal as the process would have without us."""
    for path in list(_live):
        with contextlib.suppress(OSError):
            os.unlink(path)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_signal_cleanup() -> None:
    """Catch the signals that would kill the process outright (their handler is the default), from the main
    thread only (Python allows no other). Handlers someone else installed are left alone."""
    if threading.current_thread() is not threading.main_thread():
        return
    for name in _handled_signals:
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, _on_fatal_signal)


def _restore_default_signals() -> None:
    """Back to the default handlers once no temporary is live: a Python handler only runs when Python code
    does, so an idle Qt event loop would otherwise sit on a SIGTERM."""
    if threading.current_thread() is not threading.main_thread() or _live:
        return
    for name in _handled_signals:
        signum = getattr(signal, name, None)
        with contextlib.suppress(ValueError, OSError, TypeError):
            if signum is not None and signal.getsignal(signum) is _on_fatal_signal:
                signal.signal(signum, signal.SIG_DFL)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path in the target's directory; on success it replaces ``path``."""
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    clean_stale_temporaries(target)
    _install_signal_cleanup()
    fd, tmp = tempfile.mkstemp(prefix=f"{temp_prefix(target)}{_host_tag()}-{os.getpid()}-",
                               suffix=temp_suffix(target), dir=directory)
    os.close(fd)
    with _live_lock:
        _live.add(tmp)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the permissions a plain open would
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        with _live_lock:
            _live.discard(tmp)
        _restore_default_signals()


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_output(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
