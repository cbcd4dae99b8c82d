"""Upload symbfiles to a symbolization service (Elastic's documented REST API, spec Part 6).

Each file is split into parts of at most ``chunk_size`` bytes; every part is a complete symbfile (magic,
header, its own string table, an absolute first address), so the server can decode parts on their own. Parts go
to ``/api/symbols-ranges`` or ``/api/symbols-returnpads`` with the ``FileID``, ``FilePart``, ``FileParts``,
``Content-Length`` and ``Authorization: APIKey ...`` headers. 5xx answers and connection errors are retried
a bounded number of times with exponential backoff; the API key never appears in messages or logs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from formats.symbfile.codec import MAGIC, read_symbfile, write_symbfile

ENDPOINTS = {"ranges": "/api/symbols-ranges", "returnpads": "/api/symbols-returnpads"}
_PREFIX = MAGIC + b"\x00\x01"


class UploadError(Exception):
    """The service refused a part (its error code, text and uuid are in the message) or was unreachable."""


@dataclass
class UploadResult:
    kind: str
    parts: int
    bytes: int


def split_parts(data: bytes, chunk_size: int) -> list[bytes]:
    """Parts of at most ``chunk_size`` bytes, each a complete symbfile that decodes on its own: records are
    regrouped and re-encoded per part (so each starts with an absolute address and has its own string
    table). A single record larger than ``chunk_size`` gets a part of its own."""
    records = read_symbfile(data).records
    if not records:
        return [data]
    groups: list[list] = []
    current: list = []
    estimate = 0
    for record in records:
        size = len(write_symbfile([record])) - len(_PREFIX)
        if current and estimate + size > chunk_size - len(_PREFIX):
            groups.append(current)
            current, estimate = [], 0
        current.append(record)
        estimate += size
    groups.append(current)
    parts: list[bytes] = []

    def emit(group: list) -> None:
        encoded = write_symbfile(group)
        if len(encoded) > chunk_size and len(group) > 1:
            emit(group[: len(group) // 2])
            emit(group[len(group) // 2 :])
        else:
            parts.append(encoded)

    for group in groups:
        emit(group)
    return parts


def upload(
    url: str,
    api_key: str,
    fid_header: str,
    kind: str,
    data: bytes,
    chunk_size: int = 1 << 20,
    retries: int = 4,
    backoff: float = 0.5,
    verify: bool | str = True,
    timeout: float = 60.0,
    log: Callable[[str], None] = lambda _m: None,
) -> UploadResult:
    import requests

    parts = split_parts(data, chunk_size)
    endpoint = url.rstrip("/") + ENDPOINTS[kind]
    session = requests.Session()
    for number, body in enumerate(parts):
        headers = {
            "FileID": fid_header,
            "FilePart": str(number),
            "FileParts": str(len(parts)),
            "Content-Length": str(len(body)),
            "Authorization": f"APIKey {api_key}",
            "Content-Type": "application/octet-stream",
        }
        for attempt in range(retries + 1):
            try:
                response = session.post(endpoint, data=body, headers=headers, timeout=timeout, verify=verify)
            except requests.RequestException as exc:
                if attempt == retries:
                    raise UploadError(f"{endpoint}: {type(exc).__name__} after {retries + 1} attempts") from None
                log(f"{kind} part {number + 1}/{len(parts)}: connection failed, retrying")
                time.sleep(backoff * 2**attempt)
                continue
            if response.status_code >= 500 and attempt < retries:
                log(f"{kind} part {number + 1}/{len(parts)}: HTTP {response.status_code}, retrying")
                time.sleep(backoff * 2**attempt)
                continue
            if response.status_code != 200:
                raise UploadError(_describe(endpoint, response))
            break
        log(f"{kind} part {number + 1}/{len(parts)}: uploaded {len(body)} bytes")
    return UploadResult(kind, len(parts), sum(len(p) for p in parts))


def _describe(endpoint: str, response) -> str:
    try:
        body = response.json()
        err = body.get("error") or {}
        return (f"{endpoint}: HTTP {response.status_code}: error {err.get('Code', '?')}: "
                f"{err.get('Text', '(no text)')} (request uuid {body.get('uuid', '?')})")
    except ValueError:
        return f"{endpoint}: HTTP {response.status_code}: {response.text[:200]!r}"
