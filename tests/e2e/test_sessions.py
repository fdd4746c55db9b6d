"""The Sessions page in Chromium: list the roots' sessions, open one and follow it while lines are appended,
and the Config page's export dialog."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import trace_path
from tests.e2e.conftest import serve
from tests.sessions import trees

pytestmark = pytest.mark.e2e
TIMEOUT = 120_000
SESSION = "77777777-2222-4333-8444-555555555555"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sessions-root")
    trees.make_all(folder)
    return folder


@pytest.fixture(scope="module")
def sessions_url(root: Path, e2e_samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("sessions-server")
    with serve({"CTXI_SAMPLES_DIR": str(e2e_samples), "CTXI_WORKSPACE": str(folder / "workspace"),
                "CTXI_SESSIONS": str(root)}, folder / "streamlit.log") as url:
        yield url


def test_follow_a_session_while_lines_are_appended(page: Page, sessions_url: str, root: Path, screenshots: Path) -> None:
    lines = trace_path("claude-code", "subagent.jsonl").read_bytes().split(b"\n")
    live = root / ".claude" / "projects" / "-home-u-proj" / f"{SESSION}.jsonl"
    live.write_bytes(b"\n".join(lines[:40]) + b"\n")
    page.goto(f"{sessions_url}/sessions")
    expect(page.get_by_role("heading", name="Sessions")).to_be_visible(timeout=TIMEOUT)
    page.get_by_placeholder("title, project, model, path…").fill("handgemacht")
    page.keyboard.press("Enter")
    expect(page.get_by_text("1 of 7 sessions under")).to_be_visible(timeout=TIMEOUT)
    grid = page.locator("[data-testid='stDataFrame']").first
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 10, box["y"] + 35 + 18)  # the first row's selection box
    expect(page.get_by_role("button", name="Open and follow live")).to_be_visible(timeout=TIMEOUT)
    page.screenshot(path=str(screenshots / "sessions-page.png"), full_page=True)
    page.get_by_role("button", name="Open and follow live").click()
    expect(page.get_by_text("Following live")).to_be_visible(timeout=TIMEOUT)
    steps = page.locator("[data-testid='stMetricValue']").first
    expect(steps).to_have_text("6", timeout=TIMEOUT)
    with live.open("ab") as fh:  # the agent writes on
        rest = b"\n".join(lines[40:])
        fh.write(rest)
    expect(steps).to_have_text("12", timeout=TIMEOUT)
    expect(page.get_by_text("12 steps · 32 messages")).to_be_visible(timeout=TIMEOUT)
    page.screenshot(path=str(screenshots / "sessions-followed.png"), full_page=True)


def test_the_export_dialog_shows_an_agents_own_configuration(page: Page, sessions_url: str, screenshots: Path) -> None:
    page.goto(f"{sessions_url}/config?tab=YAML&preset=claude-code&compaction.trigger=fraction%3A0.6")
    page.get_by_role("button", name="Export for an agent…").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_text("export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=60")).to_be_visible(timeout=TIMEOUT)
    expect(dialog.get_by_text("What Claude Code does not take")).to_be_visible(timeout=TIMEOUT)
    page.screenshot(path=str(screenshots / "export-dialog.png"), full_page=True)
