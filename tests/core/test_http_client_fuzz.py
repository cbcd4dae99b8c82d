"""Fuzzing the HTTP client (uploads and debuginfod downloads) against a hostile loopback server.

Every case scripts the server's answers to the next requests: random status codes (also outside 100-599),
headers (Retry-After, Location, Content-Length, Transfer-Encoding, ... with random or adversarial values),
bodies, and ways of sending them (whole, cut off, trickled, garbage instead of a status line, nothing). The
client may succeed or raise its documented error; anything else, a case running past a hang bound, or
allocating more than a bound fails the test.

CI runs 40 fixed cases per target; ``FXSCOPE_FUZZ_EXAMPLES=N`` runs N new random ones; a longer run by hand:
``FXSCOPE_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest -q -s tests/core/test_http_client_fuzz.py``.
"""

from __future__ import annotations

import collections
import io
import os
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxscope.core.http_client import Deadline, HttpClient, HttpError, HttpLimits
from fxscope.core.symbfile_export.upload import UploadError, UploadLimits, upload
from fxscope.formats.symbfile.codec import Range, write_symbfile

EXAMPLES = int(os.environ.get("FXSCOPE_FUZZ_EXAMPLES", "40"))
FIXED = "FXSCOPE_FUZZ_EXAMPLES" not in os.environ  # CI: the same cases every run; by hand: new ones
KEY = "ZnV6ei1rZXktOTg3Ng=="
DATA = write_symbfile([Range(0x10 + 8 * i, 8, f"f{i}", "/a.c", None, None, 0, [(0, i)]) for i in range(20)])
LIMITS = HttpLimits(connect_timeout=1, read_timeout=0.5, retries=2, backoff=0.001, max_retry_after=0.05,
                    max_redirects=2)
HANG_BOUND = 30.0  # seconds: a hang detector, 10x the longest deadline below; not a speed test
MEMORY_BOUND = 32 << 20  # bytes allocated by the client per case (the server sends at most ~2 MB)

HEADER_VALUES = st.one_of(
    st.sampled_from(["0", "1", "-1", "0.5", "99999999999999999999", "chunked", "gzip", "close", "keep-alive",
                     "/", "/api/symbols-ranges", "//127.0.0.1:1/x", "http://127.0.0.1:1/", "https://[::1",
                     "javascript:x", "Wed, 21 Oct 2015 07:28:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "",
                     KEY, f"http://x/?k={KEY}"]),
    st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=40),
)
HEADERS = st.lists(st.tuples(st.sampled_from(["Retry-After", "Location", "Content-Length", "Transfer-Encoding",
                                              "Content-Type", "Connection", "Content-Encoding", "X-Junk"]),
                             HEADER_VALUES), max_size=5)
STATUS = st.one_of(st.sampled_from([200, 201, 204, 301, 302, 303, 307, 308, 400, 401, 404, 413, 429, 500, 502,
                                    503, 504]), st.integers(100, 999))
BODY = st.one_of(st.binary(max_size=300), st.sampled_from([b'{"error": "x"}', b"[1,2]", b'{"error": {"Code": 1}}',
                                                           b"[" * 5000, KEY.encode(), b"x" * 2_000_000]))
MODE = st.sampled_from(["whole", "whole", "whole", "cut", "trickle", "garbage", "nothing"])
ANSWER = st.tuples(STATUS, HEADERS, BODY, MODE)


class _Script:
    """The answers for the running case, taken in request order (then 200 OK)."""

    def __init__(self) -> None:
        self.answers: collections.deque = collections.deque()

    def respond(self, server, index, request, conn) -> None:
        if not self.answers:
            return server.reply(conn, 200, b'{"success": true}')
        status, headers, body, mode = self.answers.popleft()
        head = f"HTTP/1.1 {status} X\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
        if not any(k == "Content-Length" for k, _ in headers):
            head += f"Content-Length: {len(body)}\r\n"
        data = head.encode("latin-1") + b"\r\n" + body
        if mode == "whole":
            server.send(conn, data)
        elif mode == "cut":
            server.send(conn, data[: len(data) // 2])
            conn.close()
        elif mode == "trickle":
            for byte in data[:40]:
                if not server.alive():
                    return
                server.send(conn, bytes([byte]))
                time.sleep(0.05)
        elif mode == "garbage":
            server.send(conn, body or b"\x00garbage")
            conn.close()
        else:
            conn.close()


def _bounded(case) -> None:
    """Run ``case`` within the hang and memory bounds; only the documented error may escape it."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        case()
    finally:
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert elapsed < HANG_BOUND, f"case ran {elapsed:.1f} s"
    assert peak < MEMORY_BOUND, f"case allocated {peak} bytes"


@pytest.fixture
def script_server(hostile_server):
    script = _Script()
    server = hostile_server(script.respond, max_requests=100_000, lifetime=3600)
    return script, server


def test_fuzz_upload(script_server) -> None:
    script, server = script_server
    outcomes: collections.Counter = collections.Counter()

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=FIXED, database=None,
              suppress_health_check=list(HealthCheck))
    @given(answers=st.lists(ANSWER, min_size=1, max_size=4), chunk=st.sampled_from([128, 1 << 20]))
    def case(answers, chunk) -> None:
        script.answers = collections.deque(answers)

        def run() -> None:
            try:
                upload(server.url, KEY, "A" * 22, "ranges", DATA, chunk_size=chunk,
                       limits=UploadLimits(LIMITS, part_deadline=1.5, total_deadline=3.0))
                outcomes["uploaded"] += 1
            except UploadError as exc:
                assert KEY not in str(exc)
                outcomes["UploadError"] += 1

        _bounded(run)

    case()
    print(f"\nupload fuzz: {EXAMPLES} cases, {len(server.requests)} requests, outcomes {dict(outcomes)}")
    assert sum(outcomes.values()) >= EXAMPLES


def test_fuzz_download(script_server) -> None:
    script, server = script_server
    client = HttpClient(LIMITS)
    outcomes: collections.Counter = collections.Counter()

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=FIXED, database=None,
              suppress_health_check=list(HealthCheck))
    @given(answers=st.lists(ANSWER, min_size=1, max_size=4), limit=st.sampled_from([100, 1 << 20]))
    def case(answers, limit) -> None:
        script.answers = collections.deque(answers)

        def run() -> None:
            sink = io.BytesIO()
            try:
                with client.exchange("GET", f"{server.url}/buildid/ab/debuginfo", Deadline(1.5),
                                     same_origin_only=False) as answer:
                    if answer.status == 200:
                        client.copy_body(answer, sink, limit)
                    else:
                        client.read_body(answer)
                outcomes[f"HTTP {answer.status // 100}xx"] += 1
            except HttpError:
                outcomes["HttpError"] += 1
            assert len(sink.getvalue()) <= limit

        _bounded(run)

    case()
    print(f"\ndownload fuzz: {EXAMPLES} cases, {len(server.requests)} requests, outcomes {dict(outcomes)}")
    assert sum(outcomes.values()) >= EXAMPLES
