"""Whether an open trace's file changed on disk, in the words the window and the commands show.

Why: the trace stays memory-mapped while open (:mod:`fxscope.formats.mapped_file`). When another program
truncates it in place, the reads past the new end see zeros instead of killing the process; what is shown
from then on may be incomplete, and the user should be told to reload. A file that grew, was replaced by
a rename or deleted does no harm to what is shown, but it is no longer the file on disk: also said.
"""

from __future__ import annotations

from fxscope.formats.fxt.columns import FxtColumns
from fxscope.formats.mapped_file import FileChange, changes_seen


def trace_file_change(cols: FxtColumns) -> FileChange | None:
    """How the file ``cols`` were read from changed on disk since, or None (also None for columns read
    from memory). Cheap (two ``stat`` calls): the window asks on every file-watcher signal."""
    mapped = getattr(cols, "mapped_file", None)
    return None if mapped is None else mapped.change()


def changed_trace_warnings(since: int = 0) -> list[str]:
    """One line for every trace file read in this process (its map's serial ``since`` or later,
    :func:`~fxscope.formats.mapped_file.maps_made`) that changed on disk while it was open (each once): a
    command prints them when it ends, so a result computed from a truncated file says so."""
    return [f"warning: {change.message()}" for change in changes_seen(since)]
