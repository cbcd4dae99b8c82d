"""The HTTP client's TLS paths: the deadline covers the TLS handshake, and a GET never follows a redirect
from https to http."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

from fxscope.core.http_client import Deadline, HttpClient, HttpError, HttpLimits


def test_a_silent_tls_handshake_is_cut_off_by_the_deadline() -> None:
    # a plain TCP server that accepts and never answers the ClientHello
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        client = HttpClient(HttpLimits(connect_timeout=30, read_timeout=30, retries=0))
        url = f"https://127.0.0.1:{listener.getsockname()[1]}/buildid/ab/debuginfo"
        with pytest.raises(HttpError, match="deadline of 1 s exceeded"), \
                client.exchange("GET", url, Deadline(1.0), same_origin_only=False):
            pass
    finally:
        stop.set()
        thread.join()
        listener.close()
        for sock in held:
            sock.close()


@pytest.fixture
def tls_server(tmp_path: Path, hostile_server):
    """The hostile server behind TLS with a throwaway self-signed certificate for 127.0.0.1."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True, timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    return (lambda respond: hostile_server(respond, tls=context)), str(cert)


def test_a_get_never_follows_https_to_http(tls_server, hostile_server) -> None:
    start, cert = tls_server
    plain = hostile_server(lambda s, i, r, c: s.reply(c, 200, b"debug file"))
    secure = start(lambda s, i, r, c: s.reply(c, 302, headers={"Location": f"{plain.url}/file"}))
    client = HttpClient(HttpLimits(retries=0), verify=cert)
    with pytest.raises(HttpError, match="redirect from https to http://"), \
            client.exchange("GET", f"{secure.url}/buildid/ab/debuginfo", Deadline(10), same_origin_only=False):
        pass
    assert len(secure.requests) == 1 and plain.requests == []

    # the same server over TLS answering itself: fetched (the certificate verified against the given CA)
    same = start(lambda s, i, r, c: s.reply(c, 200, b"debug file"))
    with client.exchange("GET", f"{same.url}/x", Deadline(10), same_origin_only=False) as answer:
        assert answer.status == 200 and client.read_body(answer) == b"debug file"
