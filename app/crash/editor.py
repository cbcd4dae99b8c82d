"""Which command opens a source file at a line in the user's editor.

A setting (Preferences > Editor) holds a command with ``{file}``, ``{line}`` and ``{column}`` placeholders,
e.g. ``code --goto {file}:{line}:{column}``; left empty, ``$VISUAL`` or ``$EDITOR`` is used with the
file:line syntax its program is known to understand. No editor at all is not an error: the crash view
says how to set one.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

#: editor program -> its arguments for a file at a line (and column, when it takes one)
KNOWN_EDITORS = {
    **dict.fromkeys(("code", "code-insiders", "codium", "cursor"), "--goto {file}:{line}:{column}"),
    **dict.fromkeys(("subl", "zed", "hx", "helix", "micro"), "{file}:{line}:{column}"),
    **dict.fromkeys(("vim", "nvim", "vi", "gvim", "nano", "emacs", "emacsclient", "kak", "gedit", "mousepad"),
                    "+{line} {file}"),
    "kate": "--line {line} --column {column} {file}",
    "idea": "--line {line} {file}",
    "clion": "--line {line} {file}",
}
#: what the Preferences field suggests
EXAMPLES = ("code --goto {file}:{line}:{column}", "vim +{line} {file}", "emacsclient -n +{line}:{column} {file}",
            "subl {file}:{line}:{column}")  # fmt: skip
NO_EDITOR = ("No editor is set: choose one in File > Preferences > Editor (e.g. "
             "'code --goto {file}:{line}:{column}' or 'vim +{line} {file}'), or set $VISUAL or $EDITOR.")


def _expand(argv: list[str], path: Path, line: int, column: int) -> list[str]:
    values = {"file": str(path), "line": str(line), "column": str(max(column, 1))}
    out = [arg.format_map(values) for arg in argv]
    if not any("{file}" in arg for arg in argv):
        out.append(str(path))
    return out


def editor_command(path: Path, line: int, column: int = 0, template: str = "") -> list[str] | None:
    """The argv that opens ``path`` at ``line`` (``column`` when known); None when no editor is configured."""
    if template.strip():
        try:
            return _expand(shlex.split(template), path, line, column)
        except (ValueError, KeyError, IndexError):
            return None
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        return None
    argv = shlex.split(editor)
    pattern = KNOWN_EDITORS.get(Path(argv[0]).name)
    if pattern is None:
        return [*argv, str(path)]
    if column <= 0:  # no column known: leave it out rather than claim column 1
        pattern = pattern.replace(":{column}", "").replace(" --column {column}", "")
    return _expand([*argv, *shlex.split(pattern)], path, line, column)
