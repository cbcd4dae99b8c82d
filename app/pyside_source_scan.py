"""PySide6's check of every imported module for "PySide6", made without keeping each module's source.

PySide6 (6.4 on, PYSIDE-2029) hooks every import after its own to decide whether the new module may switch
PySide's ``__feature__`` options: ``shibokensupport.feature._mod_uses_pyside`` takes the module's whole
source through :func:`inspect.getsource` and looks for the text "PySide6" in it. ``inspect`` reads the source
through :mod:`linecache`, which keeps every line of it for the life of the process: the window imports ~420
modules after PySide6 (numpy's, pyqtgraph's, the application's), so it kept all their sources, ~17 MB of
anonymous memory (measured with PySide6 6.11: the window's RssAnon before a trace 65.0 -> 47.6 MiB; the
start of ``fxscope screenshot`` no faster or slower, 1.3-1.5 s either way). At a trace of 10M events (302 MB)
that was 6% of the file's size in the window's peak, which issue 18 bounds at 1.5x the file (bench_scale
--frame at 10M: 437-440 -> 419 MB, 1.45 -> 1.39x the file; the window's own before the trace 70.5 -> 52.1 MB).

:func:`scan_sources_uncached` puts in PySide's place a check that gives the same answer for a module with a
``.py`` source (the bytes "PySide6" in its file, read and dropped) and leaves every other module (no file,
compiled only) to PySide's own check. It changes nothing else of PySide: where the hook is missing (another
PySide6), nothing is replaced.
"""

from __future__ import annotations

import sys
import types

#: PySide6's module holding the check (loaded with shiboken6, before any PySide6 module)
FEATURE_MODULE = "shibokensupport.feature"


def scan_sources_uncached() -> bool:
    """Replace PySide6's import-time source check by :func:`_uses_pyside` (once a process; importing
    shiboken6 first if needed); True when the check is ours now."""
    import shiboken6  # noqa: F401 - loads shibokensupport, where the check lives

    feature = sys.modules.get(FEATURE_MODULE)
    pyside_check = getattr(feature, "_mod_uses_pyside", None)
    if pyside_check is None:
        return False
    if getattr(pyside_check, "_reads_file", False):
        return True

    def uses_pyside(module: types.ModuleType) -> bool:
        return _uses_pyside(module, pyside_check)

    uses_pyside._reads_file = True  # type: ignore[attr-defined]
    uses_pyside.pyside_check = pyside_check  # type: ignore[attr-defined]  # (PySide's own: the tests compare)
    feature._mod_uses_pyside = uses_pyside  # type: ignore[union-attr]
    return True


def _uses_pyside(module: types.ModuleType, pyside_check) -> bool:
    """Whether ``module``'s source names PySide6 (PySide's own test), read from its ``.py`` file without
    :mod:`linecache`; ``pyside_check(module)`` for a module without one."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return pyside_check(module)
    try:
        with open(path, "rb") as f:
            return b"PySide6" in f.read()
    except OSError:
        return pyside_check(module)
