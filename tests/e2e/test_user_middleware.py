"""Issue 12's check in Debian's Chromium: a YAML config naming LangChain's ContextEditingMiddleware and a
small user class, uploaded on the Config page, replayed, its events shown on the Timeline and the Layers page."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from engine.config.schema import EngineConfig  # noqa: E402
from engine.formats import load_thread  # noqa: E402
from engine.run.replay import replay  # noqa: E402
from tests.e2e.test_dashboard import TIMELINE, open_page, shot, wait_for_app  # noqa: E402

pytestmark = pytest.mark.e2e
TIMEOUT_MS = 120_000  # a ceiling, not a delay: the CI box may be shared by several suites

YAML = """\
preset: langchain
middleware:
  - use: langchain.agents.middleware:ContextEditingMiddleware
    kwargs:
      edits:
        - use: langchain.agents.middleware:ClearToolUsesEdit
          kwargs: {trigger: 1500, keep: 2}
  - use: tests.layers.test_user_middleware:KeepRecentResults
    kwargs: {keep: 2, note: "(hidden by my middleware)"}
"""
NAMES = ("ContextEditingMiddleware", "KeepRecentResults")


def expect_lane(page: Page, layer: str, events: int) -> None:
    """Poll until the timeline's lane for `layer` holds `events` markers."""
    page.wait_for_function("([layer, n, sel]) => { const gd = document.querySelector(sel);"
                           " return !!gd && !!gd.data && gd.data.some(t => t.meta && t.meta.layer === layer"
                           " && t.meta.events === n); }", arg=[layer, events, TIMELINE], timeout=TIMEOUT_MS)


def test_a_yaml_config_with_context_editing_and_a_user_class_shows_their_events(
        page: Page, app_url: str, e2e_samples: Path, screenshots: Path, tmp_path: Path) -> None:
    # what the engine says, independently of the pages
    run = replay(load_thread(e2e_samples / "a_demo.json"), EngineConfig.from_yaml(YAML))
    counts = {name: sum(1 for e in run.events if e.layer == name) for name in NAMES}
    assert all(n > 0 for n in counts.values()), counts

    open_page(page, f"{app_url}/config?thread=sample:a_demo")
    path = tmp_path / "my-middleware.yaml"
    path.write_text(YAML, encoding="utf-8")
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(path), timeout=TIMEOUT_MS)
    wait_for_app(page)
    expect(page.get_by_test_id("stException")).to_have_count(0, timeout=TIMEOUT_MS)
    # Python code: listed with the file each module comes from, applied only after the click (SECURITY.md)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("names middleware: Python code this server would import and run",
                            exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    expect(main.get_by_text("tests.layers.test_user_middleware:KeepRecentResults (imports", exact=False)
           ).to_be_visible(timeout=TIMEOUT_MS)
    shot(page, screenshots, "user-middleware-confirm")
    page.get_by_role("button", name="Import and run these").click()
    wait_for_app(page)
    expect(page.get_by_test_id("stException")).to_have_count(0, timeout=TIMEOUT_MS)

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Timeline").click()
    wait_for_app(page)
    for name, n in counts.items():
        expect_lane(page, name, n)
    shot(page, screenshots, "user-middleware-timeline")

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Layers").click()
    wait_for_app(page)
    page.get_by_text("Your middleware", exact=True).first.click()
    wait_for_app(page)
    expect(main.get_by_text("What each middleware changed", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    first = next(e for e in run.events if e.layer == NAMES[0])
    expect(main.get_by_text(f"Step {first.step} · {first.kind}", exact=False).first).to_be_visible(timeout=TIMEOUT_MS)
    shot(page, screenshots, "user-middleware-layers")
