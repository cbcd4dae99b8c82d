"""Notes kept with a trace in a sidecar file, ``TRACE.fxscope.json``: pinned tracks, marked spans, named
bookmarks with text, the track filter and the view range, restored when the trace is opened again; and the
``TRACE#range=START:END&select=...`` links that open a trace at a view.

The sidecar names the file it belongs to (base name, size, SHA-256 of its first and last 64 KiB, cheap for
a multi-GB trace): a sidecar of another file (the trace was regenerated or replaced) is not applied, nor a
corrupt or foreign JSON file; :func:`load_notes` then says why in a message and the trace opens without
notes. The sidecar is written atomically (:mod:`fxscope.core.atomic_file`); the trace itself is never touched.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from urllib.parse import parse_qs, quote

from fxscope.core.atomic_file import write_atomic

SUFFIX = ".fxscope.json"
FORMAT = "fxscope-notes"
VERSION = 1
_EDGE = 64 * 1024
#: a sidecar bigger than this is not a notes file (nobody writes 16 MB of bookmarks)
MAX_SIDECAR_BYTES = 16 << 20


class NotesError(Exception):
    """A sidecar that cannot be used: the message says why (shown to the user, the trace still opens)."""


@dataclass
class Bookmark:
    ts_ns: int
    name: str
    text: str = ""


@dataclass
class Notes:
    """What the user left on a trace (all times in trace nanoseconds)."""

    pins: list[list] = field(default_factory=list)  # lane keys (JSON lists)
    marks: list[tuple[int, int]] = field(default_factory=list)
    bookmarks: list[Bookmark] = field(default_factory=list)
    track_filter: str = ""
    view: tuple[int, int] | None = None

    def is_empty(self) -> bool:
        return not (self.pins or self.marks or self.bookmarks or self.track_filter or self.view)


def sidecar_path(trace_path: str | os.PathLike[str]) -> str:
    return os.fspath(trace_path) + SUFFIX


def trace_identity(trace_path: str | os.PathLike[str]) -> dict:
    """Name, size and a hash of the first and last 64 KiB of the trace file."""
    path = os.fspath(trace_path)
    size = os.path.getsize(path)
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read(_EDGE))
        if size > _EDGE:
            fh.seek(max(size - _EDGE, _EDGE))
            h.update(fh.read(_EDGE))
    return {"name": os.path.basename(path), "size": size, "sha256_edges": h.hexdigest()}


def _int_pair(value, what: str) -> tuple[int, int]:
    if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)):
        raise NotesError(f"{what} is not a pair of integers")
    return value[0], value[1]


def _parse(doc) -> Notes:
    """The notes of a parsed sidecar, each field checked (a wrong type is an error, not a crash later)."""
    n = doc.get("notes")
    if not isinstance(n, dict):
        raise NotesError("no 'notes' object")
    pins = n.get("pins", [])
    if not (isinstance(pins, list) and all(isinstance(p, list) for p in pins)):
        raise NotesError("'pins' is not a list of track keys")
    marks = n.get("marks", [])
    if not isinstance(marks, list):
        raise NotesError("'marks' is not a list")
    bookmarks = []
    for b in n.get("bookmarks", []) if isinstance(n.get("bookmarks", []), list) else [None]:
        if not (isinstance(b, dict) and type(b.get("ts_ns")) is int and isinstance(b.get("name"), str)
                and isinstance(b.get("text", ""), str)):  # fmt: skip
            raise NotesError("a bookmark is not {ts_ns, name, text}")
        bookmarks.append(Bookmark(b["ts_ns"], b["name"], b.get("text", "")))
    track_filter = n.get("track_filter", "")
    if not isinstance(track_filter, str):
        raise NotesError("'track_filter' is not a string")
    view = n.get("view")
    return Notes([list(p) for p in pins], [_int_pair(m, "a mark") for m in marks], bookmarks, track_filter,
                 None if view is None else _int_pair(view, "'view'"))  # fmt: skip


def load_notes(trace_path: str | os.PathLike[str]) -> tuple[Notes | None, str | None]:
    """The notes of ``trace_path`` and a message: (notes, None) when a sidecar applies, (None, None) when
    there is none, (None, why) when there is one that cannot be used."""
    side = sidecar_path(trace_path)
    try:
        if not os.path.exists(side):
            return None, None
        if os.path.getsize(side) > MAX_SIDECAR_BYTES:
            raise NotesError(f"larger than {MAX_SIDECAR_BYTES >> 20} MB")
        with open(side, "rb") as fh:
            try:
                doc = json.loads(fh.read().decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise NotesError(f"not JSON ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise NotesError("not an fxscope notes file")
        if doc.get("version") != VERSION:
            raise NotesError(f"notes version {doc.get('version')!r}, this fxscope reads version {VERSION}")
        if doc.get("trace") != trace_identity(trace_path):
            raise NotesError("written for a different file (the trace was replaced or changed)")
        return _parse(doc), None
    except NotesError as exc:
        return None, f"Notes in {side} ignored: {exc}"
    except OSError as exc:
        return None, f"Notes in {side} ignored: {exc.strerror or exc}"


def save_notes(trace_path: str | os.PathLike[str], notes: Notes) -> str:
    """Write the sidecar of ``trace_path`` atomically; returns its path."""
    body = asdict(notes)
    body["marks"] = [list(m) for m in notes.marks]
    body["view"] = list(notes.view) if notes.view else None
    doc = {"format": FORMAT, "version": VERSION, "trace": trace_identity(trace_path), "notes": body}
    side = sidecar_path(trace_path)
    write_atomic(side, (json.dumps(doc, indent=1) + "\n").encode("utf-8"))
    return side


# ---------------------------------------------------------------------- links
@dataclass
class ViewLink:
    """``range``: the visible time range; ``select``: a slice named by its thread koid, start time and (to
    tell apart nested slices that start together) depth, -1 when the link gives none."""

    path: str
    range: tuple[int, int] | None = None
    select: tuple[int, int, int] | None = None  # (tid, ts_ns, depth)


def make_link(path: str, view: tuple[int, int] | None, select: tuple[int, int, int] | None) -> str:
    """The ``fxscope`` argument that opens ``path`` at ``view`` with the slice ``select`` selected."""
    parts = []
    if view:
        parts.append(f"range={view[0]}:{view[1]}")
    if select:
        parts.append("select=slice:" + ":".join(str(int(v)) for v in select))
    return quote(path, safe="/:._-~+,@=") + ("#" + "&".join(parts) if parts else "")


def parse_link(arg: str, exists=os.path.exists) -> ViewLink:
    """A command-line argument as a link. A path that exists as written is a path (a ``#`` in a file name
    stays); otherwise ``PATH#range=START:END&select=slice:TID:TS[:DEPTH]`` (ValueError naming what is
    wrong)."""
    if exists(arg) or "#" not in arg:
        return ViewLink(arg)
    from urllib.parse import unquote

    path, _, fragment = arg.rpartition("#")
    link = ViewLink(unquote(path))
    for key, values in parse_qs(fragment, keep_blank_values=True, strict_parsing=False).items():
        value = values[-1]
        try:
            if key == "range":
                a, b = (int(v) for v in value.split(":"))
                if b <= a:
                    raise ValueError
                link.range = (a, b)
            elif key == "select":
                kind, *fields = value.split(":")
                if kind != "slice" or len(fields) not in (2, 3):
                    raise ValueError
                link.select = (int(fields[0]), int(fields[1]), int(fields[2]) if len(fields) == 3 else -1)
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"{arg}: cannot use {key}={value} (expected range=START_NS:END_NS, "
                             f"select=slice:TID:TS_NS[:DEPTH])") from None  # fmt: skip
    return link
