"""The cost views in Debian's Chromium: Timeline's cumulative cost, Step's bill, Compare's cost table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from engine.config.schema import preset  # noqa: E402
from engine.cost.run_cost import run_cost  # noqa: E402
from engine.formats import load_thread  # noqa: E402
from engine.run.replay import replay  # noqa: E402
from tests.e2e.test_dashboard import TIMEOUT_MS, open_page, shot, wait_for_app  # noqa: E402

pytestmark = pytest.mark.e2e
PRICED = "thread=sample:a_demo&preset=stress&cost.model=claude-sonnet-4-5"


def compactions(e2e_samples: Path) -> list[int]:
    """The engine's own compaction steps for the page's run (the page is checked against it, not a constant)."""
    run = replay(load_thread(e2e_samples / "a_demo.json"), preset("stress").with_overrides(["cost.model=claude-sonnet-4-5"]))
    return [c.step for c in run_cost(run).compactions]


def test_the_timeline_shows_cumulative_dollars_and_paybacks(page: Page, app_url: str, screenshots: Path,
                                                             e2e_samples: Path) -> None:
    steps = compactions(e2e_samples)
    assert len(steps) >= 3
    open_page(page, f"{app_url}/?{PRICED}")
    expect(page.get_by_text("Dollars (modelled)")).to_have_count(0, timeout=TIMEOUT_MS)  # a lazy section: priced once opened
    page.get_by_text("Cost: modelled dollars", exact=False).click()
    wait_for_app(page)
    expect(page.get_by_text("Dollars (modelled)")).to_be_visible(timeout=TIMEOUT_MS)
    chart = page.get_by_test_id("stPlotlyChart").first  # the Timeline's own chart is a component (ui/timeline_chart.py)
    names = chart.evaluate("c => c.querySelector('.js-plotly-plot').data.map(t => t.name)")
    assert "cumulative (modelled)" in names and "hit rate (modelled)" in names
    labels = chart.evaluate("c => c.querySelector('.js-plotly-plot').layout.annotations"
                            ".filter(a => a.hovertext).map(a => a.hovertext)")
    assert [label.split(" ")[4] for label in labels] == [str(k) for k in steps]  # "the compaction at step K …"
    expect(page.get_by_text("Compactions: did they pay for themselves?")).to_be_visible(timeout=TIMEOUT_MS)
    shot(page, screenshots, "cost-timeline")


def test_the_step_page_shows_the_bill(page: Page, app_url: str, screenshots: Path, e2e_samples: Path) -> None:
    first = compactions(e2e_samples)[0]
    open_page(page, f"{app_url}/step?{PRICED}&step={first}")
    page.get_by_text("This step's bill: tokens and dollars", exact=False).click()  # a lazy section
    wait_for_app(page)
    expect(page.get_by_text(re.compile(r"^This step's bill: .* modelled"))).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("Summarizer call before this step", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text(f"The compaction at step {first}", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    shot(page, screenshots, "cost-step")


def test_compare_shows_both_cumulative_costs(page: Page, app_url: str, screenshots: Path) -> None:
    open_page(page, f"{app_url}/config?{PRICED}&tab=Compare+runs")
    page.get_by_role("tab", name="Compare runs").click()
    page.get_by_role("button", name="Pin current run as A").click()
    wait_for_app(page)
    value = page.get_by_test_id("stSidebar").get_by_label("trigger value 0")
    value.fill("0.5")
    value.press("Enter")
    wait_for_app(page)
    page.get_by_role("tab", name="Compare runs").click()
    wait_for_app(page)
    expect(page.get_by_text("dollars (calls + summarizer)").first).to_be_attached(timeout=TIMEOUT_MS)
    names = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(p => p.data.map(t => t.name))")
    assert "A: cumulative dollars" in names and "B: cumulative dollars" in names
    shot(page, screenshots, "cost-compare")
