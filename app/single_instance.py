"""One fxscope window per user: a second ``fxscope FILE`` hands its files to the running instance.

Desktop viewers are expected to behave this way: double-clicking a second trace in a file manager opens
it next to the first (a new tab) instead of starting another process with another window. The running GUI
listens on a per-user local socket (``QLocalServer``, a Unix socket only the user can connect to); a new
``fxscope`` first tries to connect, sends the absolute paths as one JSON line and exits when the server
acknowledges them. If nobody answers it becomes the server itself.

Opt out with ``fxscope --new-window`` or ``FXSCOPE_NEW_INSTANCE=1``. ``FXSCOPE_INSTANCE`` names the socket,
so tests (and anyone running two independent sessions) never talk to a user's running viewer.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

#: how long a starting fxscope waits for a running one before starting on its own
CONNECT_TIMEOUT_MS = 500
#: how long it waits for the running one to confirm it took the files
REPLY_TIMEOUT_MS = 3000
_ACK = b"ok\n"
_MAX_MESSAGE = 1 << 20


def server_name() -> str:
    """``$FXSCOPE_INSTANCE``, else ``fxscope-<uid>`` (per user, so users never see each other's files)."""
    override = os.environ.get("FXSCOPE_INSTANCE")
    if override:
        return override
    user = str(os.getuid()) if hasattr(os, "getuid") else getpass.getuser()
    return f"fxscope-{user}"


def enabled(new_window: bool = False) -> bool:
    """False when the user asked for a separate instance (flag or ``FXSCOPE_NEW_INSTANCE=1``)."""
    return not new_window and os.environ.get("FXSCOPE_NEW_INSTANCE", "") not in ("1", "true", "yes")


def absolute_paths(paths: Sequence[str], cwd: str | None = None) -> list[str]:
    """Paths as the running instance must see them: absolute (its working directory differs), and
    ``file://`` URLs (what some launchers pass) turned into local paths."""
    base = Path(cwd or os.getcwd())
    result = []
    for p in paths:
        if p.startswith("file:"):
            p = QUrl(p).toLocalFile() or p
        result.append(str(base / p) if not os.path.isabs(p) else p)
    return [os.path.normpath(p) for p in result]


def send_to_running(paths: Sequence[str], name: str | None = None) -> bool:
    """Hand ``paths`` to a running instance; True when it confirmed, False when none answered.

    An empty list asks the running window to come to the front.
    """
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    message = json.dumps({"open": absolute_paths(paths)}).encode() + b"\n"
    socket.write(message)
    if not socket.waitForBytesWritten(REPLY_TIMEOUT_MS):
        return False
    reply = b""
    while not reply.endswith(b"\n") and socket.waitForReadyRead(REPLY_TIMEOUT_MS):
        reply += bytes(socket.readAll().data())
    socket.disconnectFromServer()
    return reply == _ACK


class InstanceServer(QObject):
    """Listens for later ``fxscope`` starts; emits ``pathsReceived(list_of_paths)`` for each."""

    pathsReceived = Signal(list)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._server = QLocalServer(self)
        # only this user may connect: the socket carries file paths to open
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self, name: str | None = None) -> bool:
        """Start listening unless another instance answers on the name.

        The probe comes first because with ``UserAccessOption`` Qt binds in a private directory and renames
        the socket over the name, silently taking it from a live instance. A socket file left by a crashed
        instance (nobody answers) is removed.
        """
        name = name or server_name()
        probe = QLocalSocket()
        probe.connectToServer(name)
        if probe.waitForConnected(CONNECT_TIMEOUT_MS):
            probe.abort()
            return False
        QLocalServer.removeServer(name)
        return self._server.listen(name)

    def is_listening(self) -> bool:
        return self._server.isListening()

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._forget(s))

    def _forget(self, socket: QLocalSocket) -> None:
        self._buffers.pop(socket, None)
        socket.deleteLater()

    def _read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        if b"\n" not in data:
            if len(data) > _MAX_MESSAGE:
                socket.abort()
            else:
                self._buffers[socket] = data
            return
        line = data.split(b"\n", 1)[0]
        self._buffers[socket] = b""
        try:
            paths = json.loads(line)["open"]
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                raise ValueError("open must be a list of strings")
        except (ValueError, KeyError, TypeError):
            socket.abort()  # not one of ours: no reply, the sender starts on its own
            return
        socket.write(_ACK)
        socket.flush()
        self.pathsReceived.emit(paths)
