"""push-symbols against a server on 127.0.0.1 that implements the documented upload API."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fxscope.core.http_client import HttpLimits
from fxscope.core.symbfile_export.fileid import file_id, file_id_header
from fxscope.core.symbfile_export.upload import UploadError, UploadLimits, split_parts, upload
from fxscope.formats.symbfile.codec import Range, read_symbfile, write_symbfile

ROOT = Path(__file__).resolve().parents[3]
KEY = "c2VjcmV0LWtleS0xMjM0NQ=="


class _Service:
    """Checks headers, reassembles parts per (endpoint, FileID), decodes them; can fail on request."""

    def __init__(self) -> None:
        self.parts: dict[tuple[str, str], dict[int, bytes]] = {}
        self.expected: dict[tuple[str, str], int] = {}
        self.fail_next = 0  # answer 503 this many times
        self.reject = False  # answer a documented 400 error
        self.requests = 0

    def handler(self):
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                service.requests += 1
                length = int(self.headers["Content-Length"])
                body = self.rfile.read(length)
                if self.headers.get("Authorization") != f"APIKey {KEY}":
                    return self._answer(401, {"success": False, "uuid": "u-401", "status": 401,
                                              "error": {"Code": "401", "Text": "bad key"}})
                if service.fail_next:
                    service.fail_next -= 1
                    return self._answer(503, {"success": False, "uuid": "u-503", "status": 503,
                                              "error": {"Code": "503", "Text": "busy"}})
                if service.reject:
                    return self._answer(400, {"success": False, "uuid": "1234-abcd", "status": 400,
                                              "error": {"Code": "1000", "Text": "symbols already exist"}})
                fid = self.headers["FileID"]
                raw = base64.urlsafe_b64decode(fid + "==")
                assert len(raw) == 16 and len(fid) == 22
                part, total = int(self.headers["FilePart"]), int(self.headers["FileParts"])
                assert 0 <= part < total
                key = (self.path, fid)
                service.expected[key] = total
                service.parts.setdefault(key, {})[part] = body
                return self._answer(200, {"success": True, "status": 200})

        return Handler

    def records(self, path: str) -> list:
        out = []
        for (endpoint, _fid), parts in self.parts.items():
            if endpoint == path:
                assert sorted(parts) == list(range(self.expected[(endpoint, _fid)]))
                for n in sorted(parts):
                    decoded = read_symbfile(parts[n])
                    assert decoded.error is None
                    out.extend(decoded.records)
        return out


@pytest.fixture
def service():
    svc = _Service()
    server = ThreadingHTTPServer(("127.0.0.1", 0), svc.handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    svc.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield svc
    server.shutdown()
    server.server_close()


def test_file_id_matches_the_documented_computation(testdata: Path) -> None:
    import hashlib

    path = testdata / "symbfile" / "inline-no-tco"
    data = path.read_bytes()
    expected = hashlib.sha256(data[:4096] + data[-4096:] + len(data).to_bytes(8, "big")).digest()[:16]
    assert file_id(path) == expected
    assert len(file_id_header(expected)) == 22 and "=" not in file_id_header(expected)


def test_parts_are_complete_symbfiles() -> None:
    records = [Range(0x1000 + 16 * i, 16, f"f{i % 5}", "/a.c", None, None, 0, [(0, i)]) for i in range(200)]
    data = write_symbfile(records)
    parts = split_parts(data, 512)
    assert len(parts) > 3 and all(len(p) <= 512 for p in parts)
    decoded = [r for p in parts for r in read_symbfile(p).records]
    assert [(r.elf_va, r.func) for r in decoded] == [(r.elf_va, r.func) for r in records]


def test_push_symbols_end_to_end(service, testdata: Path) -> None:
    service.fail_next = 2  # two 503s: retried
    result = subprocess.run(
        [sys.executable, "-m", "fxscope", "push-symbols", str(testdata / "symbfile" / "inline-no-tco"),
         "--url", service.url, "--api-key", KEY, "--chunk-size", "128"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert KEY not in result.stdout + result.stderr
    assert result.stderr.count("HTTP 503, retrying in") == 2  # each retry is told
    ranges = service.records("/api/symbols-ranges")
    upstream = read_symbfile((testdata / "symbfile" / "inline-no-tco.ranges.symbfile").read_bytes()).ranges
    assert sorted((r.elf_va, r.depth, r.func) for r in ranges) == sorted((r.elf_va, r.depth, r.func) for r in upstream)
    assert len(service.records("/api/symbols-returnpads")) == 6


def test_server_errors_are_reported(service) -> None:
    data = write_symbfile([Range(0x10, 4, "f", None, None, None, 0)])
    service.reject = True
    with pytest.raises(UploadError) as info:
        upload(service.url, KEY, "A" * 22, "ranges", data, limits=UploadLimits(HttpLimits(backoff=0.01)))
    message = str(info.value)
    assert "error 1000: symbols already exist (request uuid 1234-abcd)" in message and KEY not in message
    service.reject = False
    service.fail_next = 10
    with pytest.raises(UploadError, match="HTTP 503"):
        upload(service.url, KEY, "A" * 22, "ranges", data, limits=UploadLimits(HttpLimits(retries=2, backoff=0.01)))
    assert service.requests == 1 + 3


def test_unreachable_server() -> None:
    data = write_symbfile([Range(0x10, 4, "f", None, None, None, 0)])
    with pytest.raises(UploadError, match=r"Connection refused.*gave up after 1 retries"):
        upload("http://127.0.0.1:9", KEY, "A" * 22, "ranges", data,
               limits=UploadLimits(HttpLimits(retries=1, backoff=0.01, connect_timeout=2)))
