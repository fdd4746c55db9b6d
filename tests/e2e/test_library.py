"""The session library in Chromium across a server restart: a real Claude Code session uploaded with its
sub-agent files is saved, listed, reopened by its link on a new server, its sub-agent opened as a thread
and left again for the parent step, compared with a SWE-agent run, and deleted."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from engine.workspace.library import Library  # noqa: E402
from tests.conftest import trace_path  # noqa: E402
from tests.e2e.conftest import serve  # noqa: E402
from tests.e2e.test_dashboard import TIMEOUT_MS, open_page, shot, wait_for_app  # noqa: E402

pytestmark = pytest.mark.e2e
SESSION = "4d5611e5-241a-462a-8d15-5122611a9569"
CALL_ID = "toolu_017pLRuPHYTX5t99EnLyV53m"  # the Task call at step 3 whose transcript is agent-a2898e3.jsonl


@pytest.fixture
def servers(e2e_samples: Path, tmp_path: Path) -> Iterator[tuple[Path, object]]:
    """A workspace, and a way to start a server on it (each `with start():` is a fresh server process)."""
    workspace = tmp_path / "workspace"

    def start():  # noqa: ANN202 - a context manager yielding the URL
        return serve({"CTXI_SAMPLES_DIR": str(e2e_samples), "CTXI_WORKSPACE": str(workspace)}, tmp_path / "server.log")

    yield workspace, start


COLD_START_MS = 300_000  # a fresh server's first run imports the engine and replays: minutes on a loaded machine


def wait_long(page: Page) -> None:
    """Until a long script run is over (a fresh server's first, or saving and replaying a big upload)."""
    page.wait_for_timeout(250)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached",
                                                                                       timeout=COLD_START_MS)
    expect(page.get_by_test_id("stSpinner")).to_have_count(0, timeout=COLD_START_MS)
    wait_for_app(page)


def open_cold(page: Page, url: str) -> None:
    """The first page of a fresh server process."""
    page.goto(url)
    wait_long(page)
    expect(page.get_by_test_id("stException")).to_have_count(0, timeout=TIMEOUT_MS)


def sidebar_warnings(page: Page) -> str:
    return " ".join(page.get_by_test_id("stSidebar").get_by_test_id("stAlertContentWarning").all_inner_texts())


def test_the_library_survives_a_server_restart(page: Page, servers, screenshots: Path) -> None:  # noqa: ANN001
    workspace, start = servers
    main = trace_path("claude-code", f"{SESSION}.jsonl")
    agents = sorted((main.parent / SESSION / "subagents").glob("agent-*.jsonl"))
    swe = trace_path("swe-agent", "pydicom__pydicom-1458.traj")

    with start() as url:
        open_cold(page, f"{url}/threads")
        expect(page.get_by_test_id("stFileUploaderDropzoneInput")).to_have_count(1, timeout=TIMEOUT_MS)
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files([str(main), *map(str, agents)],
                                                                          timeout=TIMEOUT_MS)
        wait_long(page)
        expect(page).to_have_url(re.compile(r"thread=library%3A[0-9a-f]{24}|thread=library:[0-9a-f]{24}"),
                                 timeout=TIMEOUT_MS)
        [entry] = Library(workspace).entries()
        assert entry.files == (main.name, "agent-a2898e3.jsonl", "agent-acompact-e1f845.jsonl")
        open_page(page, f"{url}/threads")  # a new browser session, an empty upload box: the SWE-agent run
        expect(page.get_by_test_id("stFileUploaderDropzoneInput")).to_have_count(1, timeout=TIMEOUT_MS)
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(swe), timeout=TIMEOUT_MS)
        wait_long(page)
        expect(page.get_by_test_id("stSidebar").get_by_text("Pixel Representation attribute", exact=False)
               ).to_be_visible(timeout=TIMEOUT_MS)
        assert len(Library(workspace).entries()) == 2
    swe_entry = next(e for e in Library(workspace).entries() if e.source_format == "swe_agent")
    link = f"/timeline?thread=library:{entry.id}"

    with start() as url:  # a new server process: nothing but the workspace is shared
        open_cold(page, url + link)
        expect(page.get_by_test_id("stSidebar").get_by_text(entry.title[:40], exact=False)).to_be_visible(
            timeout=TIMEOUT_MS)
        expect(page.get_by_test_id("stMetricValue").first).to_have_text("139", timeout=TIMEOUT_MS)
        assert "not available" not in sidebar_warnings(page)

        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Threads").click()
        wait_for_app(page)
        row = page.get_by_text(f"claude_code · 139 steps · peak {entry.peak_tokens:,} tokens (recorded)", exact=False)
        expect(row).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.get_by_text("swe_agent · 12 steps", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
        shot(page, screenshots, "threads-library")

        # the sub-agent's own transcript, from the Task call at step 3, and back
        open_page(page, f"{url}/step?thread=library:{entry.id}&step=3")
        button = page.get_by_role("button", name=re.compile("as a thread"))
        expect(button).to_have_count(1, timeout=TIMEOUT_MS)
        shot(page, screenshots, "step-subagent-button")
        button.click()
        wait_long(page)  # a thread no one has replayed yet
        expect(page.get_by_role("heading", name="Timeline")).to_be_visible(timeout=TIMEOUT_MS)
        expect(page).to_have_url(re.compile(rf"thread=sub(%3A|:){CALL_ID}(%40|@)library"), timeout=TIMEOUT_MS)
        expect(page.get_by_test_id("stMetricValue").first).to_have_text("12", timeout=TIMEOUT_MS)
        expect(page.get_by_test_id("stSidebar").get_by_text("spawned by the Task call at step 3", exact=False)
               ).to_be_visible(timeout=TIMEOUT_MS)
        shot(page, screenshots, "subagent-timeline")
        page.reload()  # the sub-agent's link opens on its own too
        wait_long(page)
        expect(page.get_by_test_id("stMetricValue").first).to_have_text("12", timeout=TIMEOUT_MS)
        page.get_by_test_id("stSidebar").get_by_role("button", name=re.compile("Back to the parent step 3")).click()
        wait_long(page)
        expect(page.get_by_role("heading", name="Step 3")).to_be_visible(timeout=TIMEOUT_MS)
        expect(page).to_have_url(re.compile(rf"thread=library(%3A|:){entry.id}"), timeout=TIMEOUT_MS)

        # two sessions side by side
        page.goto(f"{url}/compare?thread=library:{entry.id}&vs=library:{swe_entry.id}")
        wait_long(page)  # two replays
        expect(page.get_by_role("heading", name="Compare sessions")).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.get_by_test_id("stPlotlyChart")).to_have_count(2, timeout=TIMEOUT_MS)
        shot(page, screenshots, "compare-sessions")

        # delete: gone from the list and from the link
        open_page(page, f"{url}/threads?thread=library:{entry.id}")
        bin_button = page.locator(f".st-key-lib_bin_{entry.id} button").first  # (its tooltip wraps it)
        expect(bin_button).to_be_visible(timeout=COLD_START_MS)
        bin_button.click()
        wait_for_app(page)
        page.locator(f".st-key-lib_delete_{entry.id} button").first.click(timeout=TIMEOUT_MS)
        wait_for_app(page)
        expect(page.get_by_text("claude_code · 139 steps", exact=False)).to_have_count(0, timeout=TIMEOUT_MS)
        assert [e.id for e in Library(workspace).entries()] == [swe_entry.id]
        open_page(page, url + link)
        expect(page.get_by_test_id("stSidebar").get_by_test_id("stAlertContentWarning").filter(
            has_text="not in this workspace's library")).to_have_count(1, timeout=TIMEOUT_MS)
