"""The Evals and Workshop pages in Debian's Chromium: screenshots, a sweep click, presenter keys."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from tests.e2e.test_dashboard import open_page, shot, wait_for_app  # noqa: E402

pytestmark = pytest.mark.e2e


def test_evals_page_needles_stress_and_a_sweep_click(page: Page, app_url: str, screenshots: Path) -> None:
    open_page(page, f"{app_url}/evals?thread=sample:a_demo&preset=stress")
    expect(page.get_by_role("heading", name="Evals")).to_be_visible()
    expect(page.get_by_test_id("stMetricValue").first).to_have_text("100%")
    shot(page, screenshots, "evals-needle")
    page.get_by_role("tab", name="Stress mode").click()
    wait_for_app(page)
    shot(page, screenshots, "evals-stress")
    page.get_by_role("tab", name="Sweep").click()  # the default executor: a process pool inside the server
    page.get_by_role("button", name="Run sweep").click()
    wait_for_app(page)
    chart = page.get_by_test_id("stPlotlyChart").last
    expect(chart.locator(".scatterlayer .points path").first).to_be_visible()
    shot(page, screenshots, "evals-sweep")
    chart.locator(".scatterlayer .points path").first.click(force=True)
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Timeline")).to_be_visible()


def test_workshop_page_and_presenter_keys(page: Page, app_url: str, screenshots: Path) -> None:
    open_page(page, f"{app_url}/workshop?thread=sample:a_demo")
    expect(page.get_by_role("heading", name="Overview: what the model actually sees")).to_be_visible()
    shot(page, screenshots, "workshop-overview")
    page.get_by_text("Presenter mode").click()
    wait_for_app(page)
    expect(page.get_by_role("button", name="Next slide")).to_be_visible()
    page.get_by_role("heading").first.click()  # focus the page, not the toggle (shortcuts skip inputs)
    page.keyboard.press("PageDown")  # next lesson
    wait_for_app(page)
    expect(page.get_by_role("heading", name="L0 Filesystem: offload large tool results")).to_be_visible()
    for _ in range(len(("p2", "p3", "p4", "try"))):  # slide 1 shows p1; slide 5 is "Try this" (one slide a screen)
        page.keyboard.press("ArrowRight")
        wait_for_app(page)
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(1)
    shot(page, screenshots, "workshop-presenter")
