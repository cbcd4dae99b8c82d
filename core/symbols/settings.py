"""The user's symbol settings: where symbols, sources and dumps are looked for. Plain data, no Qt.

The app persists them with QSettings (``app/preferences.py``) and passes them to the crash view and the
symbol store; keeping the model here lets the command line and tests build the same lookups without Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SymbolSettings:
    #: directories with ``.build-id/xx/rest.debug`` trees, flat binaries, ``.gsym`` files or ``ids.txt``
    debug_dirs: list[str] = field(default_factory=list)
    #: debuginfod servers; ``None``: ``$DEBUGINFOD_URLS``, as the command line does
    debuginfod_urls: list[str] | None = None
    #: where downloads and DWARF -> GSYM conversions are cached; "" for the default (XDG cache)
    cache_dir: str = ""
    #: (recorded prefix, local directory): source paths of builds made elsewhere
    source_roots: list[tuple[str, str]] = field(default_factory=list)
    #: where dumpfile triggers' files are looked for, after the log's own directory
    dump_dirs: list[str] = field(default_factory=list)
    #: the command that opens a source file, with ``{file}``, ``{line}``, ``{column}``; "": $VISUAL/$EDITOR
    editor: str = ""


def parse_source_roots(text: str) -> list[tuple[str, str]]:
    """``PREFIX = LOCAL`` per line (blank lines and lines without ``=`` ignored)."""
    out = []
    for line in text.splitlines():
        prefix, sep, local = line.partition("=")
        if sep and prefix.strip():
            out.append((prefix.strip(), local.strip()))
    return out


def format_source_roots(roots: list[tuple[str, str]]) -> str:
    return "\n".join(f"{prefix} = {local}" for prefix, local in roots)
