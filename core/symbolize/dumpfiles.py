"""What a ``{{{dumpfile:TYPE:NAME}}}`` trigger refers to, and which handler opens it.

The markup names a dump by type and name only; the file itself is wherever the crashing system put it. It is
looked for next to the log and in the dump directories the user gave. Handlers are a small registry: each says
whether it can open a found file (by content, not by the free-form type name). The built-in one recognises
FXT traces (either byte order), which the app opens in its timeline; anything else is listed with its type,
name and the module context a tool for it would need (the modules the log declared, with build IDs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fxscope.core.symbolize.crash_report import CrashReport, Dump
from fxscope.formats.fxt.magic import MAGIC_BE, MAGIC_LE

FXT_MAGIC = (MAGIC_LE, MAGIC_BE)


@dataclass(frozen=True)
class DumpHandler:
    name: str  # what the app does with it, e.g. "trace"
    label: str  # shown to the user, e.g. "FXT trace: opens in the timeline"
    matches: Callable[[Path], bool]


def _is_fxt(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) in FXT_MAGIC
    except OSError:
        return False


#: the registry, first match wins; ``register_handler`` adds to it
HANDLERS: list[DumpHandler] = [DumpHandler("trace", "FXT trace: opens in the timeline", _is_fxt)]


def register_handler(handler: DumpHandler) -> None:
    HANDLERS.insert(0, handler)


@dataclass
class DumpTarget:
    dump: Dump
    path: Path | None  # None: not found in any place looked at
    handler: DumpHandler | None  # None: no handler for this content (or not found)
    modules: list[str] = field(default_factory=list)  # "name (build ID)" of the modules in context
    looked_in: list[Path] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.path is None:
            return "not found in " + ", ".join(str(p) for p in self.looked_in)
        if self.handler is None:
            return f"no handler for this content ({self.path})"
        return self.handler.label


def locate(name: str, places: Sequence[Path]) -> Path | None:
    """The dump file ``name`` in the first place that has it (the name may not leave that directory)."""
    if not name or Path(name).name != name or name in (".", ".."):
        return None
    for place in places:
        candidate = place / name
        if candidate.is_file():
            return candidate
    return None


def resolve_dumps(report: CrashReport, log_dir: Path, dump_dirs: Sequence[str | Path] = ()) -> list[DumpTarget]:
    """Every dumpfile trigger of ``report`` with its file and handler."""
    places = [log_dir, *(Path(d) for d in dump_dirs)]
    context = [f"{m.name} ({m.build_id.hex()})" for m in report.modules]
    out = []
    for dump in report.dumps:
        path = locate(dump.name, places)
        handler = next((h for h in HANDLERS if h.matches(path)), None) if path is not None else None
        out.append(DumpTarget(dump, path, handler, context, places))
    return out
