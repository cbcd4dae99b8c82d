"""GUI entry point. Until the timeline lands, the main job prints what is in the given trace(s)."""

from __future__ import annotations

from collections.abc import Sequence


def launch(paths: Sequence[str]) -> int:
    from app.cli import main as cli_main
    from resources import DEMO_TRACE

    targets = list(paths) or [str(DEMO_TRACE)]
    status = 0
    for path in targets:
        status = max(status, cli_main(["info", path]))
    return status
