"""``PREFIX.ranges.symbfile`` and ``PREFIX.returnpads.symbfile`` written and checked as one unit.

Two files cannot be renamed into place at once, so a writer killed between the two renames would leave a new
ranges file beside an old return-pads file (or the other way round), and nothing would look wrong. The pair
therefore gets a manifest, ``PREFIX.symbfiles.json``, with the size and SHA-256 of both files. It is written
after both temporaries are complete and before either rename, so every state a kill can leave is one of:
old pair with its manifest (kill before the manifest), or a manifest that names at least one file not in
place (kill after it) -- which :func:`check_pair` reports. Files without a manifest (written by other tools)
are not judged.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from fxscope.core.atomic_file import atomic_output, write_atomic

KINDS = ("ranges", "returnpads")
MANIFEST_FORMAT = "fxscope symbfile pair"
_MAX_MANIFEST = 1 << 16


def pair_paths(prefix: str) -> dict[str, str]:
    return {kind: f"{prefix}.{kind}.symbfile" for kind in KINDS}


def manifest_path(prefix: str) -> str:
    return f"{prefix}.symbfiles.json"


def _digest(path: str) -> tuple[int, str]:
    sha = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            sha.update(chunk)
            size += len(chunk)
    return size, sha.hexdigest()


def write_pair(prefix: str, ranges: bytes, returnpads: bytes, file_id: str | None = None) -> dict[str, str]:
    """Write both files and their manifest; returns the paths written. Both go to temporaries first; the
    manifest (naming the new contents) is written before the renames."""
    paths = pair_paths(prefix)
    contents = {"ranges": ranges, "returnpads": returnpads}
    with atomic_output(paths["ranges"]) as tmp_ranges, atomic_output(paths["returnpads"]) as tmp_pads:
        for tmp, kind in ((tmp_ranges, "ranges"), (tmp_pads, "returnpads")):
            with open(tmp, "wb") as fh:
                fh.write(contents[kind])
                fh.flush()
                os.fsync(fh.fileno())
        manifest = {"format": MANIFEST_FORMAT, "version": 1, "file_id": file_id}
        for kind in KINDS:
            manifest[kind] = {"name": os.path.basename(paths[kind]), "size": len(contents[kind]),
                              "sha256": hashlib.sha256(contents[kind]).hexdigest()}
        write_atomic(manifest_path(prefix), (json.dumps(manifest, indent=1) + "\n").encode())
    return paths


def split_pair_path(path: str | os.PathLike[str]) -> tuple[str, str] | None:
    """``(prefix, kind)`` of a path named like one file of a pair, else None."""
    text = os.fspath(path)
    for kind in KINDS:
        suffix = f".{kind}.symbfile"
        if text.endswith(suffix):
            return text[: -len(suffix)], kind
    return None


def check_pair(path: str | os.PathLike[str]) -> str | None:
    """A warning when ``path`` belongs to a pair whose manifest does not describe the files in place (an
    interrupted ``symbfile create``, or one file replaced by hand); None when they match or there is no
    manifest to go by."""
    split = split_pair_path(path)
    if split is None:
        return None
    prefix, _kind = split
    manifest_file = Path(manifest_path(prefix))
    try:
        if manifest_file.stat().st_size > _MAX_MANIFEST:
            return f"{manifest_file}: larger than a pair manifest can be; the pair was not checked"
        manifest = json.loads(manifest_file.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        return f"{manifest_file}: unreadable ({type(exc).__name__}); the pair was not checked"
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        return f"{manifest_file}: not a symbfile pair manifest; the pair was not checked"
    wrong = []
    for kind, file_path in pair_paths(prefix).items():
        entry = manifest.get(kind)
        if not isinstance(entry, dict):
            wrong.append(f"{kind} (not in the manifest)")
            continue
        try:
            size, sha = _digest(file_path)
        except FileNotFoundError:
            wrong.append(f"{kind} (missing)")
            continue
        except OSError as exc:
            wrong.append(f"{kind} ({exc.strerror or exc})")
            continue
        if size != entry.get("size") or sha != entry.get("sha256"):
            wrong.append(kind)
    if not wrong:
        return None
    return (f"{prefix}: {', '.join(wrong)} not as written with the rest of the pair (per {manifest_file.name}); "
            "an interrupted `symbfile create`? Create the pair again")
