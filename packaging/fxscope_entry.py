"""PyInstaller entry point of the standalone bundle: the same ``main`` as the ``fxscope`` console script.

A script rather than ``fxscope/__main__.py`` because PyInstaller runs its entry as ``__main__`` outside any
package, and ``__main__.py`` is meant to be run as ``python -m fxscope``.
"""

from fxscope.app.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
