"""Upload symbfiles to a symbolization service (Elastic's documented REST API, spec Part 6).

Each file is split into parts of at most ``chunk_size`` bytes; every part is a complete symbfile (magic,
header, its own string table, an absolute first address), so the server can decode parts on their own. Parts go
to ``/api/symbols-ranges`` or ``/api/symbols-returnpads`` with the ``FileID``, ``FilePart``, ``FileParts``,
``Content-Length`` and ``Authorization: APIKey ...`` headers. The exchange is :mod:`fxscope.core.http_client`'s: 429
and 5xx answers and connection errors retried a bounded number of times (``Retry-After`` honoured up to a
cap), a deadline per part and for the whole upload, no redirect to another origin or one that changes the
method, error bodies read up to a few KB; the API key never appears in messages or logs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from fxscope.core.http_client import Deadline, HttpClient, HttpError, HttpLimits
from fxscope.formats.symbfile.codec import MAGIC, read_symbfile, write_symbfile

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


@dataclass(frozen=True)
class UploadLimits:
    """Timeouts and deadlines of an upload (the CLI's options); the defaults fit an interactive tool."""

    http: HttpLimits = field(default_factory=HttpLimits)
    part_deadline: float = 300.0  # one part, retries and waits included
    total_deadline: float = 1800.0  # the whole upload (both files)


def upload(
    url: str,
    api_key: str,
    fid_header: str,
    kind: str,
    data: bytes,
    chunk_size: int = 1 << 20,
    limits: UploadLimits | None = None,
    verify: bool | str = True,
    total: Deadline | None = None,
    log: Callable[[str], None] = lambda _m: None,
    client: HttpClient | None = None,
) -> UploadResult:
    """Upload one symbfile in parts. ``total`` is the whole upload's deadline (shared by the ranges and
    return-pads uploads); each part also has its own. Redirects, retries and limits are
    :mod:`fxscope.core.http_client`'s; every message has the API key redacted."""
    limits = limits or UploadLimits()
    client = client or HttpClient(limits.http, verify=verify, secrets=[api_key])
    total = total or Deadline(limits.total_deadline, "upload deadline")
    parts = split_parts(data, chunk_size)
    endpoint = url.rstrip("/") + ENDPOINTS[kind]
    for number, body in enumerate(parts):
        headers = {
            "FileID": fid_header,
            "FilePart": str(number),
            "FileParts": str(len(parts)),
            "Content-Length": str(len(body)),
            "Authorization": f"APIKey {api_key}",
            "Content-Type": "application/octet-stream",
        }
        deadline = Deadline(limits.part_deadline, f"deadline per part ({kind} part {number + 1})").sooner(total)
        try:
            with client.exchange("POST", endpoint, deadline, headers, body, same_origin_only=True,
                                 note=lambda text, n=number: log(f"{kind} part {n + 1}/{len(parts)}: {text}")) as answer:
                text = client.read_body(answer)
                if answer.status != 200:
                    raise UploadError(client.redact(describe_error(endpoint, answer.status, text)))
        except HttpError as exc:
            raise UploadError(str(exc)) from None
        log(client.redact(f"{kind} part {number + 1}/{len(parts)}: uploaded {len(body)} bytes"))
    return UploadResult(kind, len(parts), sum(len(p) for p in parts))


def describe_error(endpoint: str, status: int, body: bytes) -> str:
    """The service's error answer in one line: code, text and request uuid when the body has the
    documented shape, whatever part of it is there otherwise (any JSON, or the first bytes of text)."""
    text = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        parsed = None
    if isinstance(parsed, dict):
        err = parsed.get("error")
        uuid = parsed.get("uuid")
        if isinstance(err, dict):
            detail = f"error {_short(err.get('Code', '?'))}: {_short(err.get('Text', '(no text)'))}"
        elif err is not None:
            detail = f"error: {_short(err)}"
        else:
            detail = _short(parsed)
        if uuid is not None:
            detail += f" (request uuid {_short(uuid)})"
        return f"{endpoint}: HTTP {status}: {detail}"
    if parsed is not None:
        return f"{endpoint}: HTTP {status}: {_short(parsed)}"
    shown = text[:200] + ("..." if len(text) > 200 else "")
    return f"{endpoint}: HTTP {status}: {shown!r}" if shown else f"{endpoint}: HTTP {status} (no body)"


def _short(value: object) -> str:
    try:
        text = value if isinstance(value, str) else json.dumps(value)
    except (ValueError, RecursionError):
        text = repr(type(value))
    return text[:200] + ("..." if len(text) > 200 else "")
