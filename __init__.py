"""fxscope: a trace (FXT) and crash-report viewer with the symbol tooling around it.

This folder is installed as the ``fxscope`` package (``package-dir`` in pyproject.toml maps ``fxscope`` to
the project root), so the layout stays ``formats/``, ``core/``, ``app/``, ``resources/`` at the top of the
repository while the installed names are ``fxscope.formats``, ``fxscope.core``, ``fxscope.app`` and
``fxscope.resources``: one top-level name in site-packages, none that another distribution could clash
with. Imports flow one way: ``app -> core -> formats``.
"""
