"""Shared fixtures: the real public transcripts in ../shared/traces (skipped when absent), a PostgreSQL server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg_cluster import Cluster, ClusterUnavailable, start_cluster

ROOT = Path(__file__).resolve().parents[1]
TRACES = Path(os.environ.get("CTXI_TRACES", ROOT.parent / "shared" / "traces"))
SAMPLES = ROOT / "sample_threads"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    if not TRACES.is_dir():
        pytest.skip(f"shared traces folder not present at {TRACES}")
    return TRACES


def trace_path(*parts: str) -> Path:
    """A path under the shared traces; skips the calling test when it is absent."""
    p = TRACES.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared trace {p} not present")
    return p


# Every browser expectation waits up to this long — a ceiling, not a delay: a 2-core CI box shared by
# several suites made Playwright's 5 s default flake. Set as Playwright's global default so no `expect`
# (in tests/e2e or elsewhere) can forget it; a file may still pass its own.
E2E_TIMEOUT_MS = 120_000


@pytest.fixture(scope="session", autouse=True)
def _caches_in_temporary_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Nothing a test runs writes outside its temporary folders (issue 35): tiktoken's loader caches
    even a local file it reads (`tiktoken/load.py` `read_file_cached`: TIKTOKEN_CACHE_DIR, else
    DATA_GYM_CACHE_DIR, else $TMPDIR/data-gym-cache, 5.1 MB a run)."""
    folder = tmp_path_factory.mktemp("tiktoken-cache")
    saved = {k: os.environ.get(k) for k in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    os.environ.pop("DATA_GYM_CACHE_DIR", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def pytest_configure(config: pytest.Config) -> None:
    try:
        from playwright.sync_api import expect
    except ImportError:  # the browser tests skip themselves
        return
    expect.set_options(timeout=E2E_TIMEOUT_MS)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--no-e2e", action="store_true", help="skip the real-browser tests")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Browser tests run whenever Debian's chromium is installed (.ci/run installs it);
    # without it they are reported as skipped, never as passed.
    if not config.getoption("--no-e2e") and Path(CHROMIUM).exists():
        return
    reason = "--no-e2e given" if config.getoption("--no-e2e") else f"needs Debian chromium at {CHROMIUM}"
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """One private PostgreSQL server per test session (per xdist worker), stopped and removed at the end."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[test]')")
    try:
        cluster = start_cluster()
    except ClusterUnavailable as exc:
        pytest.skip(f"no PostgreSQL server can start here: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()
