"""A second ``fxscope FILE`` hands FILE to the running window (new tab); opt-outs and stale sockets."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
from PySide6.QtCore import QDir

from fxscope.app import gui, single_instance
from fxscope.app.main_window import MainWindow
from fxscope.resources import DEMO_CRASH_LOG, DEMO_TRACE

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def instance_name(monkeypatch) -> str:
    """A socket name of this test's own (inherited by the ``fxscope`` subprocesses it starts)."""
    name = f"fxscope-test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("FXSCOPE_INSTANCE", name)
    monkeypatch.delenv("FXSCOPE_NEW_INSTANCE", raising=False)
    return name


@pytest.fixture
def first_instance(qtbot, monkeypatch, instance_name):
    """``fxscope`` started as the first instance (launch() up to the event loop), yielding its window."""
    windows: list[MainWindow] = []
    real_build = gui.build_window

    def build(paths, background=False):
        windows.append(real_build(paths, background=background))
        qtbot.addWidget(windows[-1])
        return windows[-1]

    monkeypatch.setattr(gui, "build_window", build)
    app = gui.application()
    monkeypatch.setattr(app, "exec", lambda: 0)
    assert gui.launch([str(DEMO_TRACE)]) == 0
    yield windows[0]
    for server in app.findChildren(single_instance.InstanceServer):
        server.close()
        server.setParent(None)


def _second_fxscope(qtbot, *args: str, cwd: Path) -> subprocess.Popen:
    """Run ``python -m app ARGS`` the way a file manager would, and wait for it while serving its request."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "fxscope", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=30000)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc


def test_second_fxscope_opens_a_relative_path_as_a_tab_of_the_running_window(qtbot, first_instance, tmp_path):
    window = first_instance
    qtbot.waitUntil(lambda: window.tabs.count() == 1, timeout=30000)  # the demo, loaded in the background
    (tmp_path / "logs").mkdir()
    shutil.copy(DEMO_CRASH_LOG, tmp_path / "logs" / "second.log")
    received: list[list[str]] = []
    server = gui.application().findChildren(single_instance.InstanceServer)[0]
    server.pathsReceived.connect(received.append)

    proc = _second_fxscope(qtbot, "logs/second.log", cwd=tmp_path)

    assert proc.returncode == 0, proc.stderr.read().decode()
    qtbot.waitUntil(lambda: window.tabs.count() == 2, timeout=10000)
    assert window.tabs.tabText(1) == "second.log" and window.tabs.currentIndex() == 1
    assert received == [[str(tmp_path / "logs" / "second.log")]]  # made absolute by the sender


def test_new_window_opts_out_from_the_command_line_to_launch(qtbot, monkeypatch, instance_name, tmp_path):
    from fxscope.app import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.fxt").write_bytes(b"")  # (a first argument that is no file nor command is an error)

    calls: list[tuple[list[str], bool]] = []
    monkeypatch.setattr(gui, "launch", lambda paths, new_window=False: calls.append((list(paths), new_window)) or 0)
    assert cli.main(["--new-window", "a.fxt"]) == 0
    assert cli.main(["b.fxt"]) == 0
    assert calls == [(["a.fxt"], True), (["b.fxt"], False)]


def test_new_window_neither_hands_over_nor_listens(qtbot, monkeypatch, instance_name):

    def no_hand_over(paths, name=None):
        raise AssertionError("--new-window must not contact a running instance")

    monkeypatch.setattr(single_instance, "send_to_running", no_hand_over)
    app = gui.application()
    monkeypatch.setattr(app, "exec", lambda: 0)
    monkeypatch.setattr(gui, "build_window", lambda paths, **_: qtbot.addWidget(w := MainWindow()) or w)
    assert gui.launch([], new_window=True) == 0
    assert not [s for s in app.findChildren(single_instance.InstanceServer) if s.is_listening()]


def test_no_running_instance_means_no_hand_over(instance_name):
    assert single_instance.send_to_running([str(DEMO_TRACE)]) is False


def test_stale_socket_of_a_crashed_instance_is_replaced(qtbot, instance_name):
    path = os.path.join(QDir.tempPath(), instance_name)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(path)  # a socket file nobody listens on, as a killed fxscope leaves behind
    stale.close()
    server = single_instance.InstanceServer()
    try:
        assert server.listen()
        assert server.is_listening()
    finally:
        server.close()


def test_a_second_server_does_not_steal_the_name(qtbot, instance_name):
    first, second = single_instance.InstanceServer(), single_instance.InstanceServer()
    try:
        assert first.listen()
        assert not second.listen()
        assert first.is_listening()
    finally:
        first.close()
        second.close()


def test_garbage_gets_no_reply_and_opens_nothing(qtbot, instance_name):
    server = single_instance.InstanceServer()
    received: list = []
    server.pathsReceived.connect(received.append)
    assert server.listen()
    replies: list[bytes] = []

    def client() -> None:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(os.path.join(QDir.tempPath(), instance_name))
            s.sendall(b'{"open": "/etc/passwd"}\n')
            replies.append(s.recv(100))

    thread = threading.Thread(target=client)
    thread.start()
    qtbot.waitUntil(lambda: not thread.is_alive(), timeout=15000)
    server.close()
    assert replies == [b""] and received == []


def test_paths_are_made_absolute_and_urls_local(tmp_path):
    assert single_instance.absolute_paths(["a.fxt", "../b.log", "/x/c.fxt", "file:///x/d%20e.fxt"],
                                          cwd=str(tmp_path / "w")) == [
        str(tmp_path / "w" / "a.fxt"), str(tmp_path / "b.log"), "/x/c.fxt", "/x/d e.fxt"]


def test_opt_outs(monkeypatch):
    monkeypatch.delenv("FXSCOPE_NEW_INSTANCE", raising=False)
    assert single_instance.enabled()
    assert not single_instance.enabled(new_window=True)
    monkeypatch.setenv("FXSCOPE_NEW_INSTANCE", "1")
    assert not single_instance.enabled()


def test_server_name_is_per_user_unless_overridden(monkeypatch):
    monkeypatch.delenv("FXSCOPE_INSTANCE", raising=False)
    assert single_instance.server_name() == f"fxscope-{os.getuid()}"
    monkeypatch.setenv("FXSCOPE_INSTANCE", "elsewhere")
    assert single_instance.server_name() == "elsewhere"
