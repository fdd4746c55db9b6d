"""The Step page in Debian's Chromium: keys j/k/n/p, search, filters, pages, collapse/expand all.

The synthetic demo (sample a_demo) on its default preset has 86 messages in the view at step 40,
two of them offloaded stubs, and events at steps 0, 4, 8, 29, 49, 50, 54, 68, ...
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Locator, Page, expect  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # noqa: E402

from tests.e2e.test_dashboard import shot, wait_for_app  # noqa: E402

pytestmark = pytest.mark.e2e
TIMEOUT_MS = 120_000  # a ceiling, not a delay: the CI box may be shared by several suites


def open_step(page: Page, app_url: str, step: int, thread: str = "sample:a_demo") -> None:
    page.goto(f"{app_url}/step?thread={thread}&step={step}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name=f"Step {step}", exact=True)).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stException")).to_have_count(0, timeout=TIMEOUT_MS)


def messages(page: Page) -> Locator:
    """The headers of the view's messages on this page (`#12 tool · …`)."""
    return page.locator("[data-testid=stExpander] summary").filter(has_text=re.compile(r"#\d+ (system|human|ai|tool) "))


def expect_step(page: Page, step: int) -> None:
    expect(page.get_by_role("heading", name=f"Step {step}", exact=True)).to_be_visible(timeout=TIMEOUT_MS)
    wait_for_app(page)
    expect(page).to_have_url(re.compile(rf"[?&]step={step}(&|$)"), timeout=TIMEOUT_MS)


def press_outside_fields(page: Page, key: str) -> None:
    """A key press with the focus on the page itself, where a user reading it has it."""
    page.evaluate("() => document.activeElement && document.activeElement.blur && document.activeElement.blur()")
    page.keyboard.press(key)


def test_keys_step_through_steps_and_events(page: Page, app_url: str, screenshots: Path) -> None:
    open_step(page, app_url, 10)
    press_outside_fields(page, "j")
    expect_step(page, 11)
    press_outside_fields(page, "k")
    expect_step(page, 10)
    press_outside_fields(page, "n")
    expect_step(page, 29)  # the next step with events
    press_outside_fields(page, "p")
    expect_step(page, 8)
    shot(page, screenshots, "step-keys")
    # typing in the search box is text, not navigation
    box = page.get_by_label("Search the view")
    box.click()
    box.press_sequentially("jk")
    box.press("Enter")
    wait_for_app(page)
    expect(page.get_by_text("for “jk”", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_role("heading", name="Step 8", exact=True)).to_be_visible(timeout=TIMEOUT_MS)


def test_search_filters_and_pages(page: Page, app_url: str, screenshots: Path) -> None:
    open_step(page, app_url, 40)
    # a call and its results share a card (issue 35): 42 cards hold the view's 86 messages
    expect(page.get_by_text("Cards 1–10 of 42 (86 messages in the view", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS)
    expect(messages(page)).to_have_count(10, timeout=TIMEOUT_MS)
    page.get_by_role("button", name="page ▶").click()
    wait_for_app(page)
    expect(page.get_by_text("Cards 11–20 of 42 (86 messages in the view", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS)
    expect(messages(page).first).to_contain_text("#22 ", timeout=TIMEOUT_MS)

    box = page.get_by_label("Search the view")
    box.fill("GAUGE")
    box.press("Enter")
    wait_for_app(page)
    expect(page.get_by_text("matches for “GAUGE” in 39 cards", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("Cards 1–10 of 39 (of 42; 86 messages in the view", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS)
    expect(messages(page)).to_have_count(10, timeout=TIMEOUT_MS)
    expect(messages(page).first).to_contain_text("match", timeout=TIMEOUT_MS)
    shot(page, screenshots, "step-search")
    box.fill("")
    box.press("Enter")
    wait_for_app(page)

    # the search box's rerun may redraw the filters after the click and close the menu: open it until it shows
    # the filters sit in a popover (drawn only while open)
    kind = page.get_by_test_id("stMultiSelect").filter(has_text="Kind").locator("input")
    option = page.get_by_role("option", name=re.compile(r"^offloaded stub \(2\)"))
    for _ in range(20):
        if not kind.is_visible():
            page.get_by_test_id("stPopoverButton").filter(has_text="Filter by role, tool, kind").click(timeout=TIMEOUT_MS)
        kind.click(timeout=TIMEOUT_MS)
        try:
            option.wait_for(timeout=5_000)
            break
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
    option.click(timeout=TIMEOUT_MS)
    page.keyboard.press("Escape")
    wait_for_app(page)
    expect(page.get_by_text("Cards 1–2 of 2 (of 42; 86 messages in the view", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS)
    expect(messages(page)).to_have_count(2, timeout=TIMEOUT_MS)
    # the calls whose results were offloaded: each call and its stub in one card
    expect(messages(page).first).to_contain_text("#8 ", timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stPopoverButton")).to_contain_text("Filters: kind", timeout=TIMEOUT_MS)


def test_collapse_and_expand_all(page: Page, app_url: str) -> None:
    open_step(page, app_url, 40)
    opened = page.locator("[data-testid=stExpander] details[open]")
    expect(messages(page)).to_have_count(10, timeout=TIMEOUT_MS)
    expect(opened).to_have_count(0, timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Expand all").click()
    wait_for_app(page)
    expect(opened).to_have_count(10, timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stCode").first).to_be_visible(timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Collapse all").click()
    wait_for_app(page)
    expect(opened).to_have_count(0, timeout=TIMEOUT_MS)
    height = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
    assert height < 6000, height  # headers only: a page of 10 messages stays short


def test_tokens_per_tool_holds_its_place_until_the_chart_is_drawn(page: Page, app_url: str) -> None:
    """The tab's chart is Streamlit's plotly chart, whose plotly.js loads on first use: a placeholder
    as tall as the chart stands in (ui/chart_placeholder.py) and is hidden once the chart is drawn."""
    open_step(page, app_url, 40)
    page.get_by_role("tab", name="Tokens per tool").click()
    wait_for_app(page)
    placeholder = page.locator(".ctxi-drawing")
    expect(placeholder).to_have_count(1, timeout=TIMEOUT_MS)
    expect(placeholder).to_have_text("Drawing the chart…", timeout=TIMEOUT_MS)
    chart = page.get_by_test_id("stPlotlyChart").locator(".main-svg").first
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)
    expect(placeholder).to_be_hidden(timeout=TIMEOUT_MS)
    # hidden with its element container: no gap is left above the chart
    gap = page.evaluate("""() => {
      const el = document.querySelector('.ctxi-drawing').closest('[data-testid=stElementContainer]');
      return getComputedStyle(el).display;
    }""")
    assert gap == "none"
