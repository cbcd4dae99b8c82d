"""``python -m app`` is the same as the ``fxscope`` console script."""

from app.cli import main

raise SystemExit(main())
