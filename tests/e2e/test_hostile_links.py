"""Hostile links in Debian's Chromium against a fresh server that records every file and socket it touches.

The server runs with a Python audit hook (`sys.addaudithook`) that logs each open, directory
listing, mkdir/rename/remove and socket connect; API keys in its environment point at a local fake
provider. After every hostile link we check: nothing written or read outside the workspace and the
samples, no request to the provider, no key and no outside file's text on the page.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from engine.formats.native import dumps  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.e2e.test_dashboard import shot, wait_for_app  # noqa: E402
from tests.fake_provider import FakeProvider  # noqa: E402
from tests.ui.builders import build_thread  # noqa: E402

pytestmark = pytest.mark.e2e

OPENAI_KEY = "sk-proj-E2Etestkey0123456789abcdefXYZ"
ANTHROPIC_KEY = "sk-ant-api03-E2Etestkey0123456789abcdef"
CANARY = "CANARY-OUTSIDE-THE-SAMPLES"
TIMEOUT_MS = 120_000  # a ceiling for every expect, not a delay: the machine is shared

# Runs streamlit with an audit hook; every event is one JSON line [event, path, writes].
LAUNCHER = r'''
import json, os, sys
log = open(os.environ["CTXI_TEST_AUDIT_LOG"], "a", buffering=1, encoding="utf-8", errors="backslashreplace")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
PATH_EVENTS = {"open", "os.listdir", "os.scandir", "os.mkdir", "os.rename", "os.remove", "os.rmdir",
               "os.symlink", "os.link", "os.truncate", "os.chmod", "shutil.copyfile", "shutil.rmtree",
               "shutil.move", "sqlite3.connect", "glob.glob"}
busy = False
def hook(event, args):
    global busy
    if busy or (event not in PATH_EVENTS and event != "socket.connect"):
        return
    busy = True
    try:
        if event == "socket.connect":
            log.write(json.dumps([event, repr(args[1]), False]) + "\n")
            return
        path = args[0] if args else None
        if isinstance(path, int) or path is None:
            return
        path = os.fsdecode(path)
        writes = event != "open" and event not in ("os.listdir", "os.scandir", "glob.glob", "sqlite3.connect")
        if event == "open":
            mode, flags = (args[1], args[2]) if len(args) >= 3 else (None, 0)
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & WRITE_FLAGS)
        log.write(json.dumps([event, os.path.abspath(path), writes]) + "\n")
    finally:
        busy = False
sys.addaudithook(hook)
from streamlit.web import cli
sys.argv = ["streamlit", "run", *sys.argv[1:]]
sys.exit(cli.main())
'''


@dataclass
class Server:
    url: str
    port: int
    log: Path
    workspace: Path
    samples: Path
    outside: Path
    home: Path
    tmp: Path
    provider: FakeProvider

    def events_since(self, mark: int) -> list[tuple[str, str, bool]]:
        lines = self.log.read_text(encoding="utf-8").splitlines()[mark:]
        return [tuple(json.loads(line)) for line in lines if line.strip()]  # type: ignore[misc]

    def mark(self) -> int:
        return len(self.log.read_text(encoding="utf-8").splitlines())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("hostile")
    samples, outside, workspace, home, tmp = (base / n for n in ("samples", "outside", "workspace", "home", "tmp"))
    for folder in (samples, outside, workspace, home, tmp):
        folder.mkdir()
    for sample in ("memory-two-threads-1.json",):  # the project's own sample data
        shutil.copy(ROOT / "sample_threads" / sample, samples / sample)
    secret = build_thread(5, thread_id="outside")
    secret.title = CANARY
    (outside / "outside.json").write_text(dumps(secret), encoding="utf-8")
    (base / "outside.json").write_text(dumps(secret), encoding="utf-8")  # what sample:../outside names
    os.symlink(outside / "outside.json", samples / "escape.json")
    launcher = base / "launch.py"
    launcher.write_text(LAUNCHER, encoding="utf-8")
    port = _free_port()
    log = base / "audit.jsonl"
    with FakeProvider("echo") as provider:
        env = {**os.environ, "CTXI_SAMPLES_DIR": str(samples), "CTXI_WORKSPACE": str(workspace), "HOME": str(home),
               "TMPDIR": str(tmp), "OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
               "OPENAI_BASE_URL": provider.url, "ANTHROPIC_BASE_URL": provider.url.removesuffix("/v1"),
               "PYTHONDONTWRITEBYTECODE": "1", "CTXI_TEST_AUDIT_LOG": str(log)}
        env.pop("CTXI_OPEN", None)
        # no --server.address: the project's .streamlit/config.toml must keep it on 127.0.0.1
        with open(base / "streamlit.out", "wb") as out:
            proc = subprocess.Popen([sys.executable, str(launcher), str(ROOT / "app.py"), "--server.headless=true",
                                     f"--server.port={port}", "--server.fileWatcherType=none",
                                     "--browser.gatherUsageStats=false"],
                                    cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"streamlit exited: {(base / 'streamlit.out').read_text()[-3000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.read().strip() == b"ok":
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail("streamlit did not become healthy")
                time.sleep(0.3)
            yield Server(url, port, log, workspace, samples, outside, home, tmp, provider)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on `port`, from /proc/net/tcp and tcp6."""
    found = set()
    for name in ("tcp", "tcp6"):
        table = Path("/proc/net") / name
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.rsplit(":", 1)
            if state == "0A" and int(port_hex, 16) == port:  # 0A = LISTEN
                found.add(address)
    return found


def test_the_server_listens_on_localhost_only(server: Server) -> None:
    assert listening_addresses(server.port) == {"0100007F"}  # 127.0.0.1, little-endian hex


# Files Streamlit and the standard library read for every session (its anonymous machine id, the time zone).
SYSTEM_READS = frozenset({"/etc/machine-id", "/var/lib/dbus/machine-id", "/etc/localtime"})


def _inside(path: str, *roots: Path) -> bool:
    return any(path == str(r) or path.startswith(str(r) + os.sep) for r in roots)


# Every link below is refused and so must leave the same traces: none. Each entry: the page, the
# query parameters ({outside}: the folder beside the samples holding a canary file; {provider}: the
# fake provider's URL, so an endpoint taken from the link would be called and seen), and the notices
# the sidebar must show, exactly one per refused parameter.
HOSTILE_LINKS: list[tuple[str, list[tuple[str, str]], list[str]]] = [
    # a workspace from a link: the memory layer would write /memories/ files there
    ("/", [("thread", "sample:memory-two-threads-1"), ("memory.workspace", "{outside}/ws")],
     ["memory.workspace: not taken from a link"]),
    # sample names that leave the samples folder
    ("/", [("thread", "sample:../outside")], ["from the link is not available here"]),
    ("/", [("thread", "sample:{outside}/outside")], ["from the link is not available here"]),
    ("/", [("thread", "sample:escape")], ["from the link is not available here"]),  # a symlink out
    ("/step", [("thread", "file:{outside}/outside.json"), ("step", "2")], ["from the link is not available here"]),
    ("/", [("thread", "library:../../outside")], ["from the link is not available here"]),
    ("/", [("thread", "sub:call_1@file:{outside}/outside.json")], ["from the link is not available here"]),
    # a summarizer model, with a trigger that fires on this thread, so a model taken from the link would be called
    ("/layers", [("thread", "sample:memory-two-threads-1"), ("summarization.trigger", "messages:4"),
                 ("summarization.summarizer", "openai:gpt-4o-mini"), ("summarization.history_dir", "{outside}"),
                 ("memory.sources", "[{outside}/outside.json]")],
     ["summarization.summarizer: not taken from a link", "summarization.history_dir: not taken from a link",
      "memory.sources: not taken from a link"]),
    ("/layers", [("thread", "sample:memory-two-threads-1"), ("compaction.summarizer", "openai:gpt-4o-mini"),
                 ("summarization.model_name", "gpt-4o"), ("cost.prices", "[{prefix: claude, input: 0, output: 0}]")],
     ["compaction.summarizer: not taken from a link", "summarization.model_name: not taken from a link",
      "cost.prices: not taken from a link"]),
    # API endpoints and keys (no such keys today: refused as unknown, whatever a later version adds)
    ("/layers", [("thread", "sample:memory-two-threads-1"), ("summarization.trigger", "messages:4"),
                 ("model.base_url", "{provider}"), ("summarization.base_url", "{provider}"),
                 ("openai_base_url", "{provider}"), ("model.api_key", "sk-from-the-link-0123456789abcdef")],
     ["model.base_url: not taken from a link", "summarization.base_url: not taken from a link",
      "openai_base_url: not taken from a link", "model.api_key: not taken from a link"]),
    # user middleware: Python code the server would import and run
    ("/", [("thread", "sample:memory-two-threads-1"),
           ("middleware", "[{use: 'os:system', kwargs: {command: 'touch {outside}/pwned'}}]")],
     ["middleware: not taken from a link"]),
    ("/layers", [("thread", "sample:memory-two-threads-1"), ("middleware.0.use", "os:system"),
                 ("middleware.0.kwargs.command", "touch {outside}/pwned")],
     ["middleware.0.use: not taken from a link", "middleware.0.kwargs.command: not taken from a link"]),
    # disk and network keys a later version might add: refused because they are not on the allow-list
    ("/", [("thread", "sample:memory-two-threads-1"), ("export.path", "{outside}/export.json"),
           ("summarization.output_dir", "{outside}"), ("workspace", "{outside}"), ("memory.url", "{provider}")],
     ["export.path: not taken from a link", "summarization.output_dir: not taken from a link",
      "workspace: not taken from a link", "memory.url: not taken from a link"]),
]
NEVER_IN_URL = ("summarizer=", "workspace=", "history_dir=", "base_url=", "api_key=", "middleware", "export.path",
                "output_dir=", "memory.url=", "cost.prices=", "model_name=", "memory.sources=")


def link_url(server: Server, path: str, params: list[tuple[str, str]]) -> str:
    fill = {"{outside}": str(server.outside), "{provider}": server.provider.url}
    values = []
    for key, value in params:
        for placeholder, real in fill.items():
            value = value.replace(placeholder, real)
        values.append((key, value))
    return server.url + path + "?" + urllib.parse.urlencode(values, quote_via=urllib.parse.quote)


def _label(entry: tuple[str, list[tuple[str, str]], list[str]]) -> str:
    path, params, _ = entry
    return path + "?" + "&".join(k for k, _ in params)


@pytest.mark.parametrize("path,params,notices", HOSTILE_LINKS, ids=[_label(e) for e in HOSTILE_LINKS])
def test_a_hostile_link_touches_nothing_outside_and_calls_no_provider(
        page: Page, server: Server, path: str, params: list[tuple[str, str]], notices: list[str],
        screenshots: Path) -> None:
    mark = server.mark()
    page.goto(link_url(server, path, params), timeout=TIMEOUT_MS)
    wait_for_app(page)
    expect(page.get_by_test_id("stException")).to_have_count(0, timeout=TIMEOUT_MS)
    sidebar = page.get_by_test_id("stSidebar")
    warnings = sidebar.get_by_test_id("stAlertContentWarning")
    expect(warnings).to_have_count(len(notices), timeout=TIMEOUT_MS)  # one notice per refused parameter
    for notice in notices:
        expect(warnings.filter(has_text=notice)).to_have_count(1, timeout=TIMEOUT_MS)
    body = page.locator("body")
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, CANARY):
        expect(body).not_to_contain_text(secret, timeout=TIMEOUT_MS)
    for fragment in NEVER_IN_URL:  # refused parameters are dropped from the address bar
        expect(page).not_to_have_url(re.compile(".*" + re.escape(fragment) + ".*"), timeout=TIMEOUT_MS)
    check_nothing_touched(server, mark)
    if path == "/" and params[-1][0] == "memory.workspace":
        shot(page, screenshots, "hostile-link-refused")
        page.reload(timeout=TIMEOUT_MS)  # the refused parameter was dropped from the URL: no second notice
        wait_for_app(page)
        expect(warnings).to_have_count(0, timeout=TIMEOUT_MS)
        check_nothing_touched(server, mark)


def settled_events(server: Server, mark: int, quiet_s: float = 1.5) -> list[tuple[str, str, bool]]:
    """The audit events since `mark`, read once the log has stopped growing for `quiet_s` (polled,
    up to TIMEOUT_MS): a late write or connect of this page's runs is in it."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    size, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        now = server.mark()
        if now != size:
            size, since = now, time.monotonic()
        elif now > mark and time.monotonic() - since >= quiet_s:
            break
        time.sleep(0.2)
    return server.events_since(mark)


def check_nothing_touched(server: Server, mark: int) -> None:
    """Since `mark`: no provider request, no write outside the workspace, no read outside what the app may read."""
    events = settled_events(server, mark)
    assert events, "the audit hook logged nothing: the check would be blind"
    assert server.provider.requests == []  # the fake provider saw no request at all
    touched_outside = [e for e in events if _inside(e[1], server.outside, server.outside.parent / "outside.json")]
    assert touched_outside == []
    writes = [e for e in events if e[2] and not _inside(e[1], server.workspace, server.tmp, server.home, Path("/dev"))]
    assert writes == []
    reads = [e for e in events if not e[2] and e[0] != "socket.connect" and e[1] not in SYSTEM_READS and not _inside(
        e[1], server.samples, server.workspace, server.tmp, server.home, ROOT, Path(sys.prefix), Path(sys.base_prefix),
        Path("/proc"), Path("/sys"), Path("/dev"), Path("/usr/share/zoneinfo"))]
    assert reads == [], reads
    assert [e for e in events if e[0] == "socket.connect"] == []
    assert sorted(p.name for p in server.samples.iterdir()) == ["escape.json", "memory-two-threads-1.json"]
    assert sorted(p.name for p in server.outside.iterdir()) == ["outside.json"]  # no pwned, no ws, no export
    assert list(server.workspace.rglob("*")) == []
