"""FileID of an executable as the profiler computes it (``libpf/fileid.go``): SHA-256 of the first and last
4 KiB and the size, truncated to 16 bytes; sent as unpadded URL-safe base64."""

from __future__ import annotations

import base64
import hashlib
import os


def file_id(path: str | os.PathLike[str]) -> bytes:
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(min(4096, size))
        fh.seek(max(0, size - 4096))
        tail = fh.read(min(4096, size))
    return hashlib.sha256(head + tail + size.to_bytes(8, "big")).digest()[:16]


def file_id_header(fid: bytes) -> str:
    return base64.urlsafe_b64encode(fid).rstrip(b"=").decode("ascii")


def file_id_hex(fid: bytes) -> str:
    return fid.hex()
