"""The uploader against misbehaving servers (issue 13 finding 4): redirects, 429/503 with Retry-After,
trickling and silent servers, huge and oddly shaped error bodies, servers echoing the API key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fxscope.core import http_client
from fxscope.core.http_client import HttpLimits
from fxscope.core.symbfile_export.upload import UploadError, UploadLimits, upload
from fxscope.formats.symbfile.codec import Range, write_symbfile

ROOT = Path(__file__).resolve().parents[3]
KEY = "c2VjcmV0LWtleS0xMjM0NQ=="
DATA = write_symbfile([Range(0x10, 4, "f", None, None, None, 0)])
OK = json.dumps({"success": True, "status": 200}).encode()
FAST = HttpLimits(connect_timeout=2, read_timeout=5, retries=2, backoff=0.01, max_retry_after=0.2)


def _upload(url: str, limits: UploadLimits | None = None, data: bytes = DATA, chunk_size: int = 1 << 20):
    return upload(url, KEY, "A" * 22, "ranges", data, chunk_size=chunk_size,
                  limits=limits or UploadLimits(FAST, part_deadline=10, total_deadline=20))


def _ok(server, index, request, conn) -> None:
    server.reply(conn, 200, OK)


def test_redirect_to_another_host_is_an_error_and_sends_nothing_there(hostile_server) -> None:
    other = hostile_server(_ok)
    for status in (301, 302, 303, 307, 308):
        server = hostile_server(lambda s, i, r, c, st=status: s.reply(
            c, st, headers={"Location": f"{other.url}/api/symbols-ranges"}))
        with pytest.raises(UploadError, match=f"HTTP {status} redirect to another origin"):
            _upload(server.url)
        assert len(server.requests) == 1
    assert other.requests == []  # no body, no API key, not even a GET went to the other host


def test_same_origin_redirects(hostile_server) -> None:
    def respond(server, index, request, conn) -> None:
        if request.path == "/api/symbols-ranges":
            server.reply(conn, 307, headers={"Location": "/moved/ranges"})
        elif request.path == "/moved/ranges":
            server.reply(conn, 308, headers={"Location": f"{server.url}/final"})
        else:
            server.reply(conn, 200, OK)

    server = hostile_server(respond)
    assert _upload(server.url).parts == 1
    assert [(r.method, r.path) for r in server.requests] == [
        ("POST", "/api/symbols-ranges"), ("POST", "/moved/ranges"), ("POST", "/final")]
    assert all(r.body == DATA and r.headers["authorization"] == f"APIKey {KEY}" for r in server.requests)

    # a same-origin 302/303 would turn the POST into a GET: an error
    for status in (302, 303):
        bad = hostile_server(lambda s, i, r, c, st=status: s.reply(c, st, headers={"Location": "/elsewhere"}))
        with pytest.raises(UploadError, match=f"HTTP {status} redirect would turn the POST into a GET"):
            _upload(bad.url)
        assert [r.path for r in bad.requests] == ["/api/symbols-ranges"]

    loop = hostile_server(lambda s, i, r, c: s.reply(c, 307, headers={"Location": f"/hop{i}"}))
    with pytest.raises(UploadError, match="more than 3 redirects"):
        _upload(loop.url)
    assert len(loop.requests) == 4


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured_and_bounded(hostile_server, status: int, monkeypatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(http_client, "sleep", waits.append)
    def respond(server, index, request, conn) -> None:
        if index == 0:
            server.reply(conn, status, b'{"error": "slow down"}', {"Retry-After": "1"})
        elif index == 1:  # far beyond the cap (0.2 s in FAST): waited for the cap only
            server.reply(conn, status, b"", {"Retry-After": "86400"})
        elif index == 2:  # a malformed value: the backoff
            server.reply(conn, status, b"", {"Retry-After": "soon"})
        elif index == 3:  # an HTTP date long past: at once
            server.reply(conn, status, b"", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
        else:
            server.reply(conn, 200, OK)

    server = hostile_server(respond)
    limits = UploadLimits(HttpLimits(connect_timeout=2, read_timeout=5, retries=4, backoff=0.01,
                                     max_retry_after=1.0), part_deadline=30, total_deadline=60)
    assert _upload(server.url, limits).parts == 1
    assert len(server.requests) == 5
    assert waits == [1.0, 1.0, 0.01 * 2**2]  # as asked; capped at max_retry_after; the backoff; no wait

    # a Retry-After that ends past the part's deadline: an error at once, no sleeping into the deadline
    server = hostile_server(lambda s, i, r, c: s.reply(c, status, b"", {"Retry-After": "30"}))
    limits = UploadLimits(HttpLimits(retries=3, max_retry_after=60), part_deadline=2, total_deadline=60)
    with pytest.raises(UploadError, match=r"deadline per part"):
        _upload(server.url, limits)
    assert len(server.requests) == 1

    # retries run out: the last answer is reported with its status
    server = hostile_server(lambda s, i, r, c: s.reply(c, status, b'{"error": "busy"}', {"Retry-After": "0"}))
    with pytest.raises(UploadError, match=f"HTTP {status}: error: busy"):
        _upload(server.url)
    assert len(server.requests) == 3


def test_a_trickling_server_is_cut_off_by_the_part_deadline(hostile_server) -> None:
    server = hostile_server(lambda s, i, r, c: s.trickle(c, b"HTTP/1.1 200 OK\r\nX-Slow: ", 0.05))
    limits = UploadLimits(FAST, part_deadline=1.5, total_deadline=60)
    with pytest.raises(UploadError, match=r"deadline per part \(ranges part 1\) of 1.5 s exceeded"):
        _upload(server.url, limits)
    assert len(server.requests) == 1  # no retry after the deadline


def test_a_trickling_body_is_cut_off_and_the_whole_upload_has_a_deadline(hostile_server) -> None:
    def respond(server, index, request, conn) -> None:
        server.send(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        server.trickle(conn, b"{}", 0.05)

    server = hostile_server(respond)
    records = [Range(0x1000 + 16 * i, 16, f"f{i}", "/a.c", None, None, 0, [(0, i)]) for i in range(50)]
    limits = UploadLimits(FAST, part_deadline=60, total_deadline=1.5)
    with pytest.raises(UploadError, match=r"upload deadline of 1\.5 s exceeded"):
        _upload(server.url, limits, write_symbfile(records), chunk_size=256)


def test_a_silent_server_hits_the_read_timeout(hostile_server) -> None:
    server = hostile_server(lambda s, i, r, c: s.stopped.wait(30))
    limits = UploadLimits(HttpLimits(read_timeout=0.3, retries=1, backoff=0.01), part_deadline=20)
    with pytest.raises(UploadError, match=r"Read timed out.*gave up after 1 retries"):
        _upload(server.url, limits)
    assert len(server.requests) == 2


def test_defaults_fit_an_interactive_tool() -> None:
    from fxscope.app.cli import build_parser

    args = build_parser().parse_args(["push-symbols", "x", "--url", "http://h", "--api-key", "k"])
    assert args.connect_timeout == HttpLimits().connect_timeout <= 10
    assert args.read_timeout <= 60 and args.part_deadline < args.deadline <= 3600
    assert HttpLimits().max_error_body <= 16384


@pytest.mark.parametrize("status", [400, 503])
def test_a_huge_error_body_is_not_read(hostile_server, status: int) -> None:
    server = hostile_server(lambda s, i, r, c: s.endless(c, status, 1 << 30))
    with pytest.raises(UploadError, match=f"HTTP {status}: 'xxxx"):
        _upload(server.url)
    assert server.sent < 64 << 20  # the client stopped reading; the server never got far into its 1 GiB


@pytest.mark.parametrize("body, expected", [
    ({"success": False, "uuid": "u-1", "error": {"Code": "1000", "Text": "exists"}},
     "HTTP 400: error 1000: exists (request uuid u-1)"),
    ({"error": "plain string"}, "HTTP 400: error: plain string"),
    ({"error": ["a", 1]}, 'HTTP 400: error: ["a", 1]'),
    ({"error": {"Text": 5}}, "HTTP 400: error ?: 5"),
    (["not", "an", "object"], 'HTTP 400: ["not", "an", "object"]'),
    ("just a string", "HTTP 400: just a string"),
    (12, "HTTP 400: 12"),
    ({"uuid": {"x": 1}}, 'HTTP 400: {"uuid": {"x": 1}} (request uuid {"x": 1})'),
])
def test_error_bodies_of_any_shape(hostile_server, body, expected: str) -> None:
    server = hostile_server(lambda s, i, r, c: s.reply(c, 400, json.dumps(body).encode()))
    with pytest.raises(UploadError) as info:
        _upload(server.url)
    assert expected in str(info.value)


def test_odd_error_bodies(hostile_server) -> None:
    for body, expected in [(b"[" * 3000, "HTTP 400: '[[[["),
                           (b"\xff\xfe\x1b[31mred", "HTTP 400: '\ufffd\ufffd\\x1b[31mred'"),
                           (b"", "HTTP 400 (no body)")]:
        server = hostile_server(lambda s, i, r, c, b=body: s.reply(c, 400, b))
        with pytest.raises(UploadError) as info:
            _upload(server.url)
        assert expected in str(info.value) and "\x1b" not in str(info.value)


def test_the_api_key_is_redacted_from_every_message(hostile_server) -> None:
    quoted = KEY.replace("=", "%3D")
    answers = [
        lambda s, c: s.reply(c, 401, f"bad key {KEY}".encode()),
        lambda s, c: s.reply(c, 401, json.dumps({"error": {"Code": KEY, "Text": f"key {KEY}"}, "uuid": KEY}).encode()),
        lambda s, c: s.reply(c, 401, json.dumps({"error": f"APIKey {KEY}"}).encode()),
        lambda s, c: s.reply(c, 302, headers={"Location": f"http://example.invalid/?key={quoted}"}),
        lambda s, c: s.reply(c, 307, headers={"Location": f"http://[{KEY}"}),
    ]
    for answer in answers:
        server = hostile_server(lambda s, i, r, c, a=answer: a(s, c))
        with pytest.raises(UploadError) as info:
            _upload(server.url)
        message = str(info.value)
        assert KEY not in message and quoted not in message and "[redacted]" in message, message


def test_push_symbols_cli_refuses_a_cross_origin_redirect(hostile_server, testdata: Path) -> None:
    other = hostile_server(_ok)
    server = hostile_server(lambda s, i, r, c: s.reply(c, 302, headers={"Location": f"{other.url}/x?{KEY}"}))
    result = subprocess.run(
        [sys.executable, "-m", "fxscope", "push-symbols", str(testdata / "symbfile" / "inline-no-tco"),
         "--url", server.url, "--api-key", KEY, "--part-deadline", "10", "--deadline", "20"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "redirect to another origin" in result.stderr and "uploaded" not in result.stdout
    assert KEY not in result.stdout + result.stderr
    assert other.requests == []


@pytest.mark.parametrize("option, value", [("--deadline", "0"), ("--part-deadline", "nan"),
                                           ("--connect-timeout", "-1"), ("--read-timeout", "inf"),
                                           ("--retries", "1000")])
def test_push_symbols_rejects_senseless_limits(option: str, value: str, testdata: Path, capsys) -> None:
    from fxscope.app.cli import main

    argv = ["push-symbols", str(testdata / "symbfile" / "inline-no-tco"), "--url", "http://127.0.0.1:9",
            "--api-key", KEY, option, value]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert f"fxscope: error: {option} must be" in captured.err and "uploaded" not in captured.out


def test_a_server_reading_the_upload_slowly_is_cut_off(hostile_server) -> None:
    server = hostile_server(_ok, slow_body=0.05)  # ~20 KB/s
    records = [Range(0x1000 + 16 * i, 16, f"function_{i}_" + "x" * 2000, "/src/a.c", None, None, 0, [(0, i)])
               for i in range(2500)]
    data = write_symbfile(records)
    assert len(data) > 4 << 20  # more than the socket buffers hold: the client blocks in sending
    limits = UploadLimits(FAST, part_deadline=1.5, total_deadline=60)
    with pytest.raises(UploadError, match=r"deadline per part .* exceeded"):
        _upload(server.url, limits, data, chunk_size=16 << 20)
