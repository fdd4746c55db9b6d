"""DNS rebinding: the dashboard accepts only the Host names it listens on.

#39.1: `server.allowedHosts` was empty, so a WebSocket upgrade with `Host: attacker.example` (what a
page on a domain rebound to 127.0.0.1 sends) got `101 Switching Protocols`, and that page could upload
a config and start runs. Streamlit refuses such a handshake (403) once the list is set: from
.streamlit/config.toml for `streamlit run app.py` in the project, from `ctxi ui` wherever it starts.
"""

from __future__ import annotations

import argparse
import base64
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine.cli import ui as ui_command

ROOT = Path(__file__).resolve().parents[2]


def _ui(monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[list[str], dict[str, str]]:
    seen: list[tuple[list[str], dict[str, str]]] = []
    # `launch` execs into Streamlit on POSIX (the test process would become the server): replaced here
    monkeypatch.setattr(ui_command, "launch", lambda cmd, env: seen.append((cmd, env)) or 0)
    parser = argparse.ArgumentParser()
    ui_command.add_arguments(parser)
    assert ui_command.run(parser.parse_args(list(argv))) == 0
    return seen[0]


def _hosts(cmd: list[str]) -> list[str]:
    return [cmd[i + 1] for i, word in enumerate(cmd) if word == "--server.allowedHosts"]


def test_the_project_config_allows_only_this_machines_names() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["allowedHosts"] == ["127.0.0.1", "localhost"]


def test_ctxi_ui_passes_the_names_it_listens_on(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(ui_command.NETWORK_CODE_ENV, "1")  # inherited from a shell: not the flag
    cmd, env = _ui(monkeypatch)
    assert _hosts(cmd) == ["127.0.0.1", "localhost"]
    assert ui_command.NETWORK_CODE_ENV not in env
    cmd, env = _ui(monkeypatch, "--host", "192.168.1.20", "--allowed-host", "Dash.Lan", "--allow-middleware")
    assert _hosts(cmd) == ["127.0.0.1", "localhost", "192.168.1.20", "dash.lan"]
    assert env[ui_command.NETWORK_CODE_ENV] == "1"
    assert capsys.readouterr().err.endswith("browsers may reach it as 127.0.0.1, localhost, 192.168.1.20, dash.lan "
                                            "(add others with --allowed-host)\n")
    cmd, _ = _ui(monkeypatch, "--host", "0.0.0.0")  # every address: this machine's own names
    assert _hosts(cmd) == ui_command.allowed_hosts("0.0.0.0")
    assert socket.gethostname().lower() in _hosts(cmd) and "0.0.0.0" not in _hosts(cmd)


# -- a real server, a raw WebSocket handshake ------------------------------------------------------
def handshake(port: int, host: str) -> str:
    """The status line the server answers a WebSocket upgrade to /_stcore/stream with this Host header."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        key = base64.b64encode(os.urandom(16)).decode()
        conn.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://{host}\r\n\r\n").encode())
        return conn.recv(4096).split(b"\r\n", 1)[0].decode()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(argv: list[str], cwd: Path, log: Path) -> Iterator[int]:
    """Start a server on a free port (its own process group, stopped after), yield the port once it answers."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("CTXI_OPEN", None)
    with open(log, "ab") as out:
        proc = subprocess.Popen([*argv, str(port)], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.3)
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.parametrize("how", ["streamlit run in the project", "ctxi ui elsewhere"])
def test_a_websocket_with_a_foreign_host_is_refused(tmp_path: Path, how: str) -> None:
    if how == "streamlit run in the project":  # reads .streamlit/config.toml
        argv = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless=true",
                "--browser.gatherUsageStats=false", "--server.fileWatcherType=none", "--server.port"]
        cwd = ROOT
    else:  # started from another folder: no config.toml, only what ctxi ui passes
        argv = [sys.executable, "-m", "engine.cli", "ui", "--headless", "--port"]
        cwd = tmp_path
    with server(argv, cwd, tmp_path / "server.log") as port:
        assert handshake(port, f"127.0.0.1:{port}") == "HTTP/1.1 101 Switching Protocols"
        assert handshake(port, f"localhost:{port}") == "HTTP/1.1 101 Switching Protocols"
        for foreign in (f"attacker.example:{port}", f"127.0.0.1.attacker.example:{port}", "attacker.example"):
            assert handshake(port, foreign) == "HTTP/1.1 403 Forbidden", foreign
