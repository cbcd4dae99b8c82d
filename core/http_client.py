"""HTTP exchanges that a hostile or broken server cannot stretch, redirect elsewhere or flood.

Used by the symbol uploader (``push-symbols``) and the debuginfod downloads. What a server can do and what
happens:

- it answers slowly, or trickles a byte every few seconds: every exchange has a total deadline; a watchdog
  shuts the exchange's sockets down when it passes (a per-read timeout alone never fires on a trickle);
- it never answers: the connect timeout is short (10 s by default) and bounded by the deadline;
- it answers 429 or 503 (with or without ``Retry-After``), 500/502/504, or drops the connection: retried by
  urllib3's ``Retry`` (through ``requests``' ``HTTPAdapter``) a bounded number of times, waiting what the server
  asked for up to a cap, and never past the deadline;
- it redirects: POSTs follow only a same-origin, method-preserving redirect (307/308); anything else is an
  error, so a body never goes to another host and a POST never turns into a GET. GETs (no credentials) follow
  a few redirects but never from https to http;
- it sends a huge body: error bodies are read up to a few KB, downloads up to a size limit;
- it echoes a secret: every message built here has the secrets given to the client replaced.

Every failure is an :class:`HttpError`; nothing else escapes an exchange.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO
from urllib.parse import quote, urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

sleep = time.sleep  # the retry waits (a name of its own so tests can see what was waited for)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
CHUNK = 1 << 16


class HttpError(Exception):
    """An exchange failed: unreachable, refused, redirected elsewhere, too slow, too big. The message names
    the URL and what went wrong, with secrets redacted."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class DeadlineExceeded(Exception):
    """Raised inside urllib3 when the exchange's deadline has passed, so no retry starts after it."""


@dataclass(frozen=True)
class HttpLimits:
    """Timeouts, retries and sizes for one kind of exchange; the defaults fit an interactive tool."""

    connect_timeout: float = 10.0
    read_timeout: float = 30.0  # longest silence between two reads
    retries: int = 4  # per exchange, for connection errors and 429/5xx answers
    backoff: float = 0.5  # first wait between retries, doubled each time (without Retry-After)
    max_retry_after: float = 60.0  # a longer Retry-After is waited for this long
    max_error_body: int = 4096  # bytes of an error answer that are read (and shown in part)
    max_redirects: int = 3


class Deadline:
    """A point in time (monotonic clock) by which an exchange must be over; ``cancel``, when set, ends it
    at once (the user closed what the download was for)."""

    def __init__(self, seconds: float, what: str = "deadline", cancel: threading.Event | None = None) -> None:
        self.seconds = seconds
        self.what = what
        self.end = time.monotonic() + seconds
        self.cancel = cancel

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def expired(self) -> bool:
        return self.remaining() <= 0 or self.cancelled()

    def sooner(self, other: Deadline | None) -> Deadline:
        return self if other is None or self.end <= other.end else other

    def describe(self) -> str:
        return "cancelled" if self.cancelled() else f"{self.what} of {self.seconds:g} s exceeded"


class _Watchdog:
    """Shuts down the sockets of one exchange when its deadline passes: the blocked read or write in the
    requesting thread then returns at once instead of waiting for the next trickled byte."""

    #: how often a watchdog with a cancel flag looks at it
    CANCEL_POLL_S = 0.05

    def __init__(self, deadline: Deadline) -> None:
        self.sockets: list[socket.socket] = []
        self.fired = False
        self._lock = threading.Lock()
        if deadline.cancel is None:
            self._timer = threading.Timer(max(deadline.remaining(), 0.0), self._fire)
        else:  # the deadline, or the cancel flag if it comes first
            self._timer = threading.Thread(target=self._watch_cancel, args=(deadline,))
            self._over = threading.Event()
        self._timer.daemon = True
        self._timer.start()

    def _watch_cancel(self, deadline: Deadline) -> None:
        while not self._over.wait(min(self.CANCEL_POLL_S, max(deadline.remaining(), 0.0))):
            if deadline.expired():
                self._fire()
                return

    def add(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            if self.fired:
                _shutdown(sock)
            self.sockets.append(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self.sockets:
                _shutdown(sock)

    def cancel(self) -> None:
        if isinstance(self._timer, threading.Timer):
            self._timer.cancel()
        else:
            self._over.set()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


_watchdogs = threading.local()


def _watch(sock: socket.socket | None) -> None:
    watchdog = getattr(_watchdogs, "current", None)
    if watchdog is not None:
        watchdog.add(sock)


def _check_deadline() -> None:
    watchdog = getattr(_watchdogs, "current", None)
    deadline = getattr(_watchdogs, "deadline", None)
    if (watchdog is not None and watchdog.fired) or (deadline is not None and deadline.expired()):
        raise DeadlineExceeded()


class _WatchedHTTPConnection(HTTPConnection):
    """Registers its socket with the running exchange's watchdog (new and reused connections alike)."""

    def _new_conn(self) -> socket.socket:
        _check_deadline()
        sock = super()._new_conn()
        _watch(sock)
        return sock

    def request(self, *args, **kwargs) -> None:  # type: ignore[override]
        _check_deadline()
        _watch(self.sock)
        super().request(*args, **kwargs)


class _WatchedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        _check_deadline()
        sock = super()._new_conn()
        _watch(sock)  # the raw socket: the TLS handshake is covered too
        return sock

    def request(self, *args, **kwargs) -> None:  # type: ignore[override]
        _check_deadline()
        _watch(self.sock)
        super().request(*args, **kwargs)


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class BoundedRetry(urllib3.util.Retry):
    """urllib3's retry policy with three changes: a Retry-After is capped (and a malformed one falls back to
    the backoff), no wait or attempt goes past the exchange's deadline, and the answer being retried is
    closed rather than drained (urllib3 would read a hostile error body to its end first)."""

    max_retry_after: float = 60.0

    def new(self, **kw) -> BoundedRetry:
        retry = super().new(**kw)
        retry.max_retry_after = self.max_retry_after
        return retry

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        _check_deadline()
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        if response is not None:  # retried: its body is not wanted (when not retried, it is the answer)
            with contextlib.suppress(Exception):
                response.close()
        return retry

    def _retry_after(self, response) -> float | None:
        value = response.headers.get("Retry-After") if response is not None else None
        if value is None:
            return None
        try:
            seconds = float(self.parse_retry_after(value))
        except (urllib3.exceptions.InvalidHeader, ValueError, TypeError, OverflowError):
            return None
        return min(max(seconds, 0.0), self.max_retry_after)

    def sleep(self, response=None) -> None:
        wait = self._retry_after(response) if self.respect_retry_after_header else None
        if wait is None:
            wait = self.get_backoff_time()
        deadline = getattr(_watchdogs, "deadline", None)
        if deadline is not None and wait >= deadline.remaining():
            raise DeadlineExceeded()
        note = getattr(_watchdogs, "note", None)
        if note is not None and self.history:
            last = self.history[-1]
            why = f"HTTP {last.status}" if last.status else _describe_exception(last.error) if last.error else "?"
            note(f"{why}, retrying in {wait:.1f} s")
        if wait > 0 and deadline is not None and deadline.cancel is not None:
            if deadline.cancel.wait(wait):  # cancelled while waiting to retry
                raise DeadlineExceeded()
        elif wait > 0:
            sleep(wait)


class _WatchedAdapter(HTTPAdapter):
    """``requests``' adapter with the watched connection pools (plain, TLS and through a proxy)."""

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}

    def proxy_manager_for(self, proxy, **proxy_kwargs):
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}
        return manager


@dataclass
class Answer:
    """A final (non-redirect) answer, its body not yet read: read it with :meth:`HttpClient.read_body` or
    :meth:`HttpClient.copy_body` inside the exchange."""

    url: str
    status: int
    headers: Mapping[str, str]  # case-insensitive (requests' CaseInsensitiveDict)
    raw: object  # urllib3 response


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


class HttpClient:
    """One client per tool run: pooled connections, the retry policy, the secrets to redact."""

    def __init__(self, limits: HttpLimits | None = None, verify: bool | str = True,
                 secrets: Sequence[str] = ()) -> None:
        self.limits = limits or HttpLimits()
        self.verify = verify
        self.secrets = [s for s in secrets if s]
        retry = BoundedRetry(
            total=self.limits.retries, connect=self.limits.retries, read=self.limits.retries,
            status=self.limits.retries, other=0, redirect=0, allowed_methods=None,
            status_forcelist=RETRY_STATUSES, backoff_factor=self.limits.backoff, backoff_max=30.0,
            raise_on_status=False, respect_retry_after_header=True,
        )
        retry.max_retry_after = self.limits.max_retry_after
        self.adapter = _WatchedAdapter(max_retries=retry)

    def redact(self, text: str) -> str:
        """``text`` without the client's secrets (as sent, and URL-quoted), and without control characters a
        server could use to rewrite the user's terminal."""
        for secret in self.secrets:
            for form in {secret, quote(secret, safe=""), quote(secret)}:
                text = text.replace(form, "[redacted]")
        return "".join(c if c.isprintable() or c == " " else "?" for c in text)

    def error(self, message: str, status: int | None = None) -> HttpError:
        return HttpError(self.redact(message), status)

    @contextlib.contextmanager
    def exchange(self, method: str, url: str, deadline: Deadline, headers: dict[str, str] | None = None,
                 body: bytes | None = None, same_origin_only: bool = True,
                 note: Callable[[str], None] | None = None) -> Iterator[Answer]:
        """Send the request (following the redirects allowed for it), yield the final answer; the body is
        read inside the ``with``. The watchdog and deadline cover the whole block. ``note`` is told (redacted)
        about every retry."""
        watchdog = _Watchdog(deadline)
        previous = (getattr(_watchdogs, "current", None), getattr(_watchdogs, "deadline", None),
                    getattr(_watchdogs, "note", None))
        _watchdogs.current, _watchdogs.deadline = watchdog, deadline
        _watchdogs.note = (lambda text: note(self.redact(f"{url}: {text}"))) if note else None
        response = None
        try:
            try:
                response = self._send_following(method, url, deadline, headers or {}, body, same_origin_only)
                yield Answer(response.url, response.status_code, response.headers, response.raw)
            except HttpError:
                raise
            except (DeadlineExceeded, requests.RequestException, urllib3.exceptions.HTTPError, OSError,
                    ValueError) as exc:
                if watchdog.fired or deadline.expired() or isinstance(exc, DeadlineExceeded):
                    raise self.error(f"{url}: {deadline.describe()}") from None
                gave_up = f" (gave up after {self.limits.retries} retries)" if _gave_up(exc) else ""
                raise self.error(f"{url}: {_describe_exception(exc)}{gave_up}") from None
        finally:
            watchdog.cancel()
            _watchdogs.current, _watchdogs.deadline, _watchdogs.note = previous
            if response is not None:
                with contextlib.suppress(Exception):
                    response.close()

    def _send_following(self, method: str, url: str, deadline: Deadline, headers: dict[str, str],
                        body: bytes | None, same_origin_only: bool) -> requests.Response:
        current = url
        for _hop in range(self.limits.max_redirects + 1):
            response = self._send_once(method, current, deadline, headers, body)
            if response.status_code not in REDIRECT_STATUSES:
                return response
            location = response.headers.get("Location")
            response.close()
            if not location:
                raise self.error(f"{current}: HTTP {response.status_code} redirect without a Location",
                                 response.status_code)
            try:
                target = urljoin(current, location.strip())
                same = origin(target) == origin(current)
                scheme = origin(target)[0]
            except ValueError:
                raise self.error(f"{current}: HTTP {response.status_code} redirect to an invalid URL "
                                 f"{location[:200]!r}", response.status_code) from None
            if scheme not in ("http", "https"):
                raise self.error(f"{current}: HTTP {response.status_code} redirect to {target[:200]!r}: "
                                 "not an http(s) URL", response.status_code)
            if same_origin_only:
                if not same:
                    raise self.error(f"{current}: HTTP {response.status_code} redirect to another origin "
                                     f"({target[:200]}): not followed", response.status_code)
                if response.status_code not in (307, 308):
                    raise self.error(f"{current}: HTTP {response.status_code} redirect would turn the "
                                     f"{method} into a GET: not followed", response.status_code)
            elif origin(current)[0] == "https" and scheme != "https":
                raise self.error(f"{current}: redirect from https to {target[:200]}: not followed",
                                 response.status_code)
            current = target
        raise self.error(f"{url}: more than {self.limits.max_redirects} redirects")

    def _send_once(self, method: str, url: str, deadline: Deadline, headers: dict[str, str],
                   body: bytes | None) -> requests.Response:
        _check_deadline()
        remaining = max(deadline.remaining(), 0.001)
        request = requests.Request(method, url, headers={"Accept-Encoding": "identity", **headers},
                                   data=body).prepare()
        timeout = (min(self.limits.connect_timeout, remaining), min(self.limits.read_timeout, remaining))
        proxies = requests.utils.get_environ_proxies(url)
        # the adapter, not a Session: a Session reads a redirect's whole body to find the next request
        return self.adapter.send(request, stream=True, timeout=timeout, verify=self.verify, proxies=proxies)

    def read_body(self, answer: Answer, limit: int | None = None) -> bytes:
        """At most ``limit`` bytes (default: the error-body limit) of the answer's body; the rest is dropped."""
        limit = self.limits.max_error_body if limit is None else limit
        out = bytearray()
        with contextlib.suppress(urllib3.exceptions.HTTPError, OSError, ValueError):
            while len(out) < limit:
                chunk = answer.raw.read(min(CHUNK, limit - len(out)), decode_content=False)  # type: ignore[attr-defined]
                if not chunk:
                    break
                out += chunk
        _check_deadline_as(self, answer.url)
        return bytes(out)

    def copy_body(self, answer: Answer, out: IO[bytes], max_bytes: int) -> int:
        """Copy the whole body to ``out``; more than ``max_bytes`` (announced or sent) is an error."""
        announced = answer.headers.get("Content-Length", "").strip()
        if announced.isdigit() and int(announced) > max_bytes:
            raise self.error(f"{answer.url}: {int(announced)} bytes announced, more than the limit of "
                             f"{max_bytes}")
        total = 0
        try:
            while True:
                chunk = answer.raw.read(CHUNK, decode_content=False)  # type: ignore[attr-defined]
                if not chunk:
                    break
                total += len(chunk)
                if total > max_bytes:
                    raise self.error(f"{answer.url}: more than the limit of {max_bytes} bytes sent")
                out.write(chunk)
        except (urllib3.exceptions.HTTPError, ValueError, ConnectionError, TimeoutError) as exc:
            _check_deadline_as(self, answer.url)
            raise self.error(f"{answer.url}: transfer broken after {total} bytes "
                             f"({_describe_exception(exc)})") from None
        _check_deadline_as(self, answer.url)
        if announced.isdigit() and total != int(announced):
            raise self.error(f"{answer.url}: {total} of {int(announced)} bytes received")
        return total


def _check_deadline_as(client: HttpClient, url: str) -> None:
    """A read that ended because the watchdog shut the socket is a deadline error, not a short body."""
    watchdog = getattr(_watchdogs, "current", None)
    deadline = getattr(_watchdogs, "deadline", None)
    if (watchdog is not None and watchdog.fired) or (deadline is not None and deadline.expired()):
        raise client.error(f"{url}: {deadline.describe() if deadline else 'deadline exceeded'}")


def _gave_up(exc: BaseException) -> bool:
    """Whether urllib3 ran out of retries on the way to this error."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, urllib3.exceptions.MaxRetryError):
            return True
        seen = seen.args[0] if seen.args and isinstance(seen.args[0], BaseException) else None
    return False


def _describe_exception(exc: BaseException) -> str:
    """A one-line reason: the innermost cause's type and text (requests nests urllib3's errors)."""
    reason = exc
    for _ in range(5):
        inner = getattr(reason, "reason", None) or (reason.args[0] if reason.args and isinstance(
            reason.args[0], BaseException) else None)
        if inner is None or inner is reason:
            break
        reason = inner
    text = str(reason)
    return f"{type(reason).__name__}: {text[:300]}" if text else type(reason).__name__
