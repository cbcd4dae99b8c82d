"""pyqtgraph imported without making every PySide6 class the application never uses.

PySide6 (6.8 on) makes a binding's Python classes when one is first asked for: a window that uses a few
hundred of Qt's classes pays for those only. pyqtgraph's ``pyqtgraph.Qt`` mirrors ``QtCore``, ``QtGui`` and
``QtWidgets`` into modules of its own by copying every name of ``dir()`` (``_copy_attrs``), which asks
for all ~720 of them: ~9.5 MB of anonymous memory that every window kept (the largest part of importing
pyqtgraph: 25 MB; measured with PySide6 6.11 and pyqtgraph 0.14, the window's RssAnon before a trace
67.8 -> 62.8 MiB, about half of the classes made in the end).

:func:`import_pyqtgraph` gives pyqtgraph those three mirror modules made here first, which look a name up
in PySide6's module when it is asked for (a module ``__getattr__``), and hides the names from ``dir()``
while pyqtgraph copies them: what pyqtgraph and the application use is made as they use it, the same
class objects as PySide6's own. Should that ever fail (another pyqtgraph), pyqtgraph is imported as it
comes.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types

#: the PySide6 modules that ``pyqtgraph.Qt`` copies wholesale
MIRRORED = ("QtCore", "QtGui", "QtWidgets")
_MIRROR_PACKAGE = "pyqtgraph.Qt"


def import_pyqtgraph() -> types.ModuleType:
    """The ``pyqtgraph`` module, imported (on its first import) with mirrors that look names up on demand."""
    loaded = sys.modules.get("pyqtgraph")
    if loaded is not None:
        return loaded
    sources = {name: importlib.import_module(f"PySide6.{name}") for name in MIRRORED}
    hidden = {name: source.__dict__.get("__dir__") for name, source in sources.items()}
    mirrors = {}
    for name, source in sources.items():
        mirror = types.ModuleType(f"{_MIRROR_PACKAGE}.{name}", f"PySide6.{name}'s names, looked up when asked for")
        mirror.__path__ = []  # (a package, as pyqtgraph's own mirror)
        mirror.__getattr__ = functools.partial(getattr, source)  # type: ignore[attr-defined]
        mirrors[mirror.__name__] = mirror
    try:
        sys.modules.update(mirrors)
        for source in sources.values():
            source.__dir__ = list  # type: ignore[method-assign]  # (dir() -> []: nothing to copy)
        import pyqtgraph
    except Exception:  # noqa: BLE001 - any failure of this way in: pyqtgraph as it comes instead
        _restore(sources, hidden)
        for name in [name for name in sys.modules if name == "pyqtgraph" or name.startswith("pyqtgraph.")]:
            del sys.modules[name]
        import pyqtgraph
    else:
        _restore(sources, hidden)
        package = sys.modules[_MIRROR_PACKAGE]
        for name in MIRRORED:  # (the package's attributes, as an import of its own modules sets them)
            setattr(package, name, mirrors[f"{_MIRROR_PACKAGE}.{name}"])
    return pyqtgraph


def _restore(sources: dict[str, types.ModuleType], hidden: dict[str, object]) -> None:
    """PySide6's modules' own ``dir()`` again."""
    for name, source in sources.items():
        if hidden[name] is None:
            source.__dict__.pop("__dir__", None)
        else:
            source.__dir__ = hidden[name]  # type: ignore[method-assign]


#: the pyqtgraph module (``from fxscope.app.pyqtgraph_import import pg``: the application's one way in)
pg = import_pyqtgraph()
