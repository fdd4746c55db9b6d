"""A real Streamlit server and Debian's Chromium for the browser tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import CHROMIUM, ROOT
from tests.ui.builders import build_thread, demo_thread, write_samples

SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:  # pytest-playwright hook
    return {**browser_type_launch_args, "executable_path": CHROMIUM}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict) -> dict:
    return {**browser_context_args, "viewport": {"width": 1500, "height": 1000}}


@pytest.fixture(scope="session")
def e2e_samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("e2e-samples")
    return write_samples(folder, a_demo=demo_thread(), hostile=build_thread(12, hostile=True, thread_id="hostile",
                                                                               recorded_compaction_at=9))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(env_overrides: dict[str, str], log: Path) -> Iterator[str]:
    """A Streamlit server on a free port with these environment overrides; yields its URL, stops it after."""
    port = _free_port()
    env = {**os.environ, **env_overrides}
    env.pop("CTXI_OPEN", None)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless=true",
             f"--server.port={port}", "--server.address=127.0.0.1", "--server.fileWatcherType=none",
             "--browser.gatherUsageStats=false"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not become healthy:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def app_url(e2e_samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("e2e-server")
    # uploads are saved in the library of a workspace of the test run's own, never in ~/.context-inspector
    with serve({"CTXI_SAMPLES_DIR": str(e2e_samples), "CTXI_WORKSPACE": str(folder / "workspace")},
               folder / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


assert Path(CHROMIUM).name  # the path is configured even when the browser is absent (tests then skip)
