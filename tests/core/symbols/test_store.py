"""Symbol discovery by build ID: directory layouts, ids.txt, the GSYM cache, and a real debuginfod server."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
import requests

from fxscope.core.http_client import HttpLimits
from fxscope.core.symbols.store import MissCache, SymbolStore, read_build_id
from fxscope.formats.gsym.reader import GsymReader

CRASHDEMO = "3d3a85572513e6cff897b8e9637d480eeb092027"
LIBDEMO = "5c7743dceebb74fe9bb07feedcededf0da0e852d"


def test_build_id_tree_next_to_the_crash_log(testdata: Path, tmp_path: Path) -> None:
    store = SymbolStore([testdata / "markup" / "crash-demo"], debuginfod_urls=[], cache_dir=tmp_path)
    found = store.find_elf(bytes.fromhex(CRASHDEMO))
    assert found is not None and found.name == CRASHDEMO[2:] + ".debug"
    assert store.find_elf(bytes.fromhex("abad1d")) is None


def test_flat_directory_ids_txt_and_gsym_files(testdata: Path, tmp_path: Path) -> None:
    flat = tmp_path / "flat"
    flat.mkdir()
    shutil.copy(testdata / "gsym" / "libdemo" / "binary", flat / "libdemo.so")  # found by reading its note
    listed = tmp_path / "listed"
    listed.mkdir()
    (listed / "ids.txt").write_text(f"{CRASHDEMO} {testdata / 'gsym' / 'crashdemo' / 'binary'}\nnot-hex x\n")
    gsyms = tmp_path / "gsyms"
    gsyms.mkdir()
    shutil.copy(testdata / "gsym" / "tiny" / "binary.gsym", gsyms / "whatever.gsym")
    store = SymbolStore([flat, listed, gsyms], debuginfod_urls=[], cache_dir=tmp_path / "cache")
    assert store.find_elf(bytes.fromhex(LIBDEMO)) == flat / "libdemo.so"
    assert store.find_elf(bytes.fromhex(CRASHDEMO)) == testdata / "gsym" / "crashdemo" / "binary"
    tiny_id = GsymReader(testdata / "gsym" / "tiny" / "binary.gsym").uuid
    assert read_build_id(gsyms / "whatever.gsym") == tiny_id
    assert store.find_gsym(tiny_id) == gsyms / "whatever.gsym"


def test_gsym_is_converted_once_and_cached(testdata: Path, tmp_path: Path) -> None:
    store = SymbolStore([testdata / "markup" / "crash-demo"], debuginfod_urls=[], cache_dir=tmp_path)
    first = store.find_gsym(bytes.fromhex(CRASHDEMO))
    assert first == tmp_path / "gsym" / f"{CRASHDEMO}.gsym"
    stamp = first.stat().st_mtime_ns
    again = SymbolStore([], debuginfod_urls=[], cache_dir=tmp_path).find_gsym(bytes.fromhex(CRASHDEMO))
    assert again == first and first.stat().st_mtime_ns == stamp  # reused, not converted again
    assert GsymReader(first).lookup(0x13FF).locations[0].name == "payload_weight"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def debuginfod_server(testdata: Path, tmp_path: Path):
    exe = shutil.which("debuginfod")
    if exe is None:
        pytest.skip("debuginfod is not installed (apt-get install debuginfod)")
    served = tmp_path / "served"
    served.mkdir()
    shutil.copy(testdata / "gsym" / "crashdemo" / "binary", served / "crashdemo")
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "-F", "-p", str(port), "-d", str(tmp_path / "db.sqlite"), "-t", "0", "-g", "0", str(served)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{url}/buildid/{CRASHDEMO}/executable", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if proc.poll() is not None:
                pytest.skip("debuginfod exited at start")
            time.sleep(0.3)
        else:
            pytest.skip("debuginfod did not index the test directory within 30 s")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_debuginfod_fetch_and_cache(debuginfod_server: str, testdata: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    store = SymbolStore([], debuginfod_urls=[debuginfod_server], cache_dir=cache)
    found = store.find_elf(bytes.fromhex(CRASHDEMO))
    assert found is not None and found.is_relative_to(cache)
    assert found.read_bytes() == (testdata / "gsym" / "crashdemo" / "binary").read_bytes()
    assert store.find_elf(bytes.fromhex("00" * 20)) is None  # 404 from the server
    offline = SymbolStore([], debuginfod_urls=["http://127.0.0.1:9"], cache_dir=cache)
    assert offline.find_elf(bytes.fromhex(CRASHDEMO)) == found  # served from the cache


def test_unreachable_debuginfod_is_an_error_note_not_a_crash(tmp_path: Path) -> None:
    store = SymbolStore([], debuginfod_urls=["http://127.0.0.1:9"], cache_dir=tmp_path, timeout=2)
    assert store.find_elf(bytes.fromhex(CRASHDEMO)) is None
    assert store.errors and "127.0.0.1:9" in store.errors[0]


def _fast_store(cache: Path, url: str, **kwargs) -> SymbolStore:
    limits = HttpLimits(connect_timeout=2, read_timeout=5, retries=2, backoff=0.01, max_retry_after=0.2)
    return SymbolStore([], debuginfod_urls=[url], cache_dir=cache, http_limits=limits, **kwargs)


def test_debuginfod_retries_and_follows_redirects(hostile_server, testdata: Path, tmp_path: Path) -> None:
    binary = (testdata / "gsym" / "crashdemo" / "binary").read_bytes()
    mirror = hostile_server(lambda s, i, r, c: s.reply(c, 200, binary))

    def respond(server, index, request, conn) -> None:
        if index == 0:
            server.reply(conn, 429, b"busy", {"Retry-After": "1"})
        elif index == 1:
            server.reply(conn, 503, b"busy")
        else:
            server.reply(conn, 302, headers={"Location": f"{mirror.url}{request.path}"})

    server = hostile_server(respond)
    found = _fast_store(tmp_path, server.url).find_elf(bytes.fromhex(CRASHDEMO))
    assert found is not None and found.read_bytes() == binary
    assert len(server.requests) == 3 and [r.path for r in mirror.requests] == [
        f"/buildid/{CRASHDEMO}/debuginfo"]


def test_debuginfod_trickle_is_cut_by_the_deadline(hostile_server, tmp_path: Path) -> None:
    def respond(server, index, request, conn) -> None:
        server.send(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
        server.trickle(conn, b"\x7fELF", 0.05)

    server = hostile_server(respond, lifetime=60)
    store = _fast_store(tmp_path, server.url, download_deadline=1.0)
    assert store.find_elf(bytes.fromhex(CRASHDEMO)) is None
    assert len(store.errors) == 2 and all("debuginfod download deadline of 1 s exceeded" in e for e in store.errors)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))  # nothing cached, no temporary left


@pytest.mark.parametrize("announce", [True, False])
def test_debuginfod_size_limit(hostile_server, tmp_path: Path, announce: bool) -> None:
    def respond(server, index, request, conn) -> None:
        if announce:
            server.endless(conn, 200, 1 << 30)
        else:  # no length: the body runs until the connection closes
            server.send(conn, b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
            while server.alive() and server.sent < 1 << 30:
                server.send(conn, b"x" * 65536)

    server = hostile_server(respond)
    store = _fast_store(tmp_path, server.url, max_download=100_000)
    assert store.find_elf(bytes.fromhex(CRASHDEMO)) is None
    assert store.errors and all("limit of 100000" in e for e in store.errors)
    assert server.sent < 64 << 20
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def _not_found(server, index, request, conn) -> None:
    server.reply(conn, 404, b"not found")


def test_debuginfod_misses_are_asked_once_per_session(hostile_server, testdata: Path, tmp_path: Path) -> None:
    """A crash report's frames in modules no server has: each (server, build ID, kind) is asked once, by the
    first report's store; the next reports' stores (one per report in the crash view) ask nothing."""
    from fxscope.core.symbolize.crash_report import build_report
    from fxscope.core.symbolize.resolver import SymbolFileResolver

    server = hostile_server(_not_found)
    misses = MissCache()
    text = (testdata / "markup" / "crash-demo" / "input.log").read_text()
    demo = testdata / "markup" / "crash-demo"

    def report():
        store = _fast_store(tmp_path / "cache", server.url, miss_cache=misses)
        store.directories = [demo]
        return build_report(text, SymbolFileResolver(debug_file_directories=[demo], store=store)), store

    first, store = report()
    asked = [r.path for r in server.requests]
    absent = {m.build_id.hex() for m in first.modules if not first.symbols_found[m.build_id]}
    assert absent and "93ac61ec5a8eb1396f9fbd350e3169a558528a40" in absent  # libc.so.6
    # libc has frames #6 and #7, and its registers are looked up too: still two requests per missing module
    assert sorted(asked) == sorted(f"/buildid/{h}/{kind}" for h in absent for kind in ("debuginfo", "executable"))
    libc = bytes.fromhex("93ac61ec5a8eb1396f9fbd350e3169a558528a40")
    assert f"{server.url}: 404 (debuginfo)" in store.misses[libc]
    second, again = report()
    assert len(server.requests) == len(asked)  # remembered: nothing asked again
    assert second.text == first.text and second.missing == first.missing  # the same explanations
    assert set(again.misses[libc]) == {f"{server.url}: 404 (debuginfo)", f"{server.url}: 404 (executable)"}


def test_debuginfod_errors_are_remembered_too(hostile_server, tmp_path: Path) -> None:
    server = hostile_server(lambda s, i, r, c: s.reply(c, 500, b"broken"))
    misses = MissCache()
    missing = bytes.fromhex("ab" * 20)
    store = _fast_store(tmp_path, server.url, miss_cache=misses)
    assert store.find_elf(missing) is None
    asked = len(server.requests)
    assert asked == 2 * 3 and len(store.errors) == 2  # two kinds, each tried 1 + 2 retries, then an error
    for _ in range(3):
        assert store.find_elf(missing) is None
    assert len(server.requests) == asked and len(store.errors) == 8  # each lookup notes the error again
    assert all("HTTP 500" in e for e in store.errors)


def test_the_session_cache_is_shared_by_default(hostile_server, tmp_path: Path) -> None:
    server = hostile_server(_not_found)
    missing = bytes.fromhex("cd" * 20)
    for _ in range(3):
        assert _fast_store(tmp_path, server.url).find_elf(missing) is None
    assert len(server.requests) == 2


def test_a_cancelled_store_asks_nothing_and_cuts_a_download(hostile_server, tmp_path: Path, hang_guard) -> None:
    """The crash view closed while its report was downloading symbols: the download in progress ends at
    once (not at its 10-minute deadline), nothing more is asked, nothing is remembered as a miss."""
    def respond(server, index, request, conn) -> None:
        server.send(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
        server.trickle(conn, b"\x7fELF", 0.2)

    hang_guard(60)  # the download's deadline is 600 s: a store deaf to the cancel would hang here
    server = hostile_server(respond, lifetime=600)
    cancel = threading.Event()
    misses = MissCache()
    store = _fast_store(tmp_path, server.url, miss_cache=misses, cancel=cancel)
    threading.Timer(0.5, cancel.set).start()
    assert store.find_elf(bytes.fromhex(CRASHDEMO)) is None
    assert len(server.requests) == 1 and store.errors == [] and store.misses == {}
    assert misses.get(server.url, bytes.fromhex(CRASHDEMO), "debuginfo") is None
    assert not any(p.is_file() for p in tmp_path.rglob("*"))
    assert store.find_gsym(bytes.fromhex(LIBDEMO)) is None and len(server.requests) == 1
