"""`ctxi ui` is the dashboard's process: stopping it stops the server (issue 35: a child Streamlit
outlived a killed `ctxi ui` and kept serving)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and exec are POSIX")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.read().strip() == b"ok"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(proc.name))
    return out


def test_terminating_ctxi_ui_stops_the_dashboard(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXI_WORKSPACE": str(tmp_path / "ws")}
    env.pop("CTXI_OPEN", None)
    with open(tmp_path / "ui.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "ui", "--headless", "--port", str(port)],
                                cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 90
        while not _healthy(port):
            assert proc.poll() is None, (tmp_path / "ui.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the dashboard did not start"
            time.sleep(0.3)
        children = _children(proc.pid)
        assert children == []  # the server is this process, not a child of it
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        deadline = time.monotonic() + 10
        while _healthy(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _healthy(port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for pid in children:  # a child left behind (the defect this test is about) is stopped here
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
