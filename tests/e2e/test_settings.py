"""The sidebar in Chromium: a rerun never draws a widget's minimum (or first option) for a moment."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from tests.e2e.test_dashboard import TIMEOUT_MS, open_page, shot, wait_for_app  # noqa: E402

pytestmark = pytest.mark.e2e

# Records every value each sidebar input shows, on every DOM change and every 5 ms, until read.
RECORD = """() => { window.__shown = {}; const rec = () => {
  for (const i of document.querySelectorAll('[data-testid=stSidebar] input')) {
    const label = i.getAttribute('aria-label') || ''; const seen = (window.__shown[label] ||= []);
    if (seen[seen.length - 1] !== i.value) seen.push(i.value); } };
  new MutationObserver(rec).observe(document.body, {subtree: true, childList: true, attributes: true,
                                                    characterData: true});
  setInterval(rec, 5); rec(); }"""


def test_reruns_never_flash_minimum_values_in_the_sidebar(page: Page, app_url: str, screenshots: Path) -> None:
    open_page(page, f"{app_url}/?thread=sample:a_demo&preset=stress")
    page.evaluate(RECORD)
    sidebar = page.get_by_test_id("stSidebar")
    trigger = sidebar.get_by_label("trigger value 0")
    trigger.fill("0.5")
    trigger.press("Enter")
    wait_for_app(page)
    expect(trigger).to_have_value("0.50", timeout=TIMEOUT_MS)
    for name in ("Step", "Timeline"):  # a page switch reruns the whole frame
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=name).click()
        wait_for_app(page)
    keep = sidebar.get_by_label("keep value")
    keep.fill("0.6")
    keep.press("Enter")
    wait_for_app(page)
    expect(keep).to_have_value("0.60", timeout=TIMEOUT_MS)
    expect(sidebar.get_by_text("≥ trigger fraction:0.5", exact=False)).to_be_visible(timeout=TIMEOUT_MS)  # keep ≥ trigger
    shot(page, screenshots, "sidebar-keep-warning")
    shown = page.evaluate("() => window.__shown")
    # every value each input showed, in order: the old value, then the new one, never the minimum
    assert shown["trigger value 0"] == ["0.25", "0.5", "0.50"]
    assert shown["keep value"] == ["0.05", "0.6", "0.60"]
    assert shown["Window (tokens)"] == ["100000"]
    assert shown["Preset"] == ["stress"]
