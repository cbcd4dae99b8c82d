"""``python -m fxscope`` is the same as the ``fxscope`` console script."""

from fxscope.app.cli import main

raise SystemExit(main())
