"""Fixtures of the core tests: a hostile HTTP server on 127.0.0.1 for the uploader's and the debuginfod
client's tests, and a counter of DWARF decodes (:func:`decodes`) for the symbolizer's.

It speaks raw bytes (so it can send what no well-behaved server library would: trickles, lies about lengths,
malformed headers), answers each request with a scripted function, and is bounded on every side: it serves
at most ``max_requests`` requests, lives at most ``lifetime`` seconds, and every loop it runs (trickling,
streaming a huge body) stops when the client goes away or the server stops.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class HostileServer:
    respond: Callable[[HostileServer, int, Request, socket.socket], None]
    max_requests: int = 200
    lifetime: float = 120.0
    requests: list[Request] = field(default_factory=list)
    sent: int = 0  # bytes written by the response helpers
    slow_body: float = 0.0  # when set, read request bodies 1 KB per this many seconds (a slow reader)
    tls: ssl.SSLContext | None = None  # serve https with this server context

    def __post_init__(self) -> None:
        self.stopped = threading.Event()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        if self.tls is not None:
            self._sock = self.tls.wrap_socket(self._sock, server_side=True)
            self.url = f"https://127.0.0.1:{self.port}"
        self._sock.settimeout(0.1)
        self._end = time.monotonic() + self.lifetime
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ serving
    def alive(self) -> bool:
        return not self.stopped.is_set() and time.monotonic() < self._end

    def _serve(self) -> None:
        served = 0
        while self.alive() and served < self.max_requests:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            served += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
        self._sock.close()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                while self.alive():  # keep-alive: several requests per connection, bounded by max_requests
                    request = self._read_request(conn)
                    if request is None:
                        return
                    with self._lock:
                        index = len(self.requests)
                        self.requests.append(request)
                        if index >= self.max_requests:
                            return
                    self.respond(self, index, request, conn)
                    if request.headers.get("connection", "").lower() == "close":
                        return
            except OSError:
                return

    def _read_request(self, conn: socket.socket) -> Request | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk or len(data) > 1 << 16:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = min(int(headers.get("content-length", "0") or 0), 64 << 20)
        body = rest
        while len(body) < length:
            if self.slow_body:
                if not self.alive():
                    return None
                time.sleep(self.slow_body)
            chunk = conn.recv(min(1024 if self.slow_body else 65536, length - len(body)))
            if not chunk:
                return None
            body += chunk
        return Request(method, path, headers, body[:length])

    # ------------------------------------------------------------------ answers
    def send(self, conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        self.sent += len(data)

    def reply(self, conn: socket.socket, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              reason: str = "X") -> None:
        head = [f"HTTP/1.1 {status} {reason}"]
        all_headers = {"Content-Length": str(len(body)), **(headers or {})}
        head += [f"{k}: {v}" for k, v in all_headers.items()]
        self.send(conn, ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def trickle(self, conn: socket.socket, data: bytes, every: float) -> None:
        """One byte of ``data`` every ``every`` seconds (then the same again), until the client leaves."""
        while self.alive():
            for byte in data:
                if not self.alive():
                    return
                self.send(conn, bytes([byte]))
                time.sleep(every)

    def endless(self, conn: socket.socket, status: int, announced: int) -> None:
        """An answer announcing ``announced`` bytes, streamed until the client closes (or all are sent)."""
        self.send(conn, f"HTTP/1.1 {status} X\r\nContent-Length: {announced}\r\n\r\n".encode())
        block = b"x" * 65536
        while self.alive() and self.sent < announced:
            self.send(conn, block)

    def stop(self) -> None:
        self.stopped.set()
        self._thread.join(timeout=5)


@pytest.fixture
def hostile_server():
    """``hostile_server(respond, **bounds)`` starts a server; all are stopped after the test."""
    servers: list[HostileServer] = []

    def start(respond, **kwargs) -> HostileServer:
        server = HostileServer(respond, **kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        with contextlib.suppress(Exception):
            server.stop()


@pytest.fixture
def decodes(monkeypatch):
    """read_dwarf calls per ELF file name, wherever the GSYM conversion or the resolver calls it from: a
    module's DWARF is to be decoded once per resolver, and not at all with a warm symbol cache."""
    from collections import Counter
    from pathlib import Path

    from fxscope.core.symbols import gsym_convert
    from fxscope.formats.dwarf import functions

    counts: Counter = Counter()
    real = functions.read_dwarf

    def counting(path, *args, **kwargs):
        counts[Path(path).name] += 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(functions, "read_dwarf", counting)
    monkeypatch.setattr(gsym_convert, "read_dwarf", counting)
    return counts
