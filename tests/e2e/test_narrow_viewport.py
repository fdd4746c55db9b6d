"""A 1024×768 projector: nothing the Timeline, Step and Compare pages show is cut off or squeezed (walk-through r2).

These are widths the browser lays out (Streamlit's flex rows, plotly's margins), so only a browser can check them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page  # noqa: E402

from tests.e2e.test_dashboard import TIMELINE, open_page, shot  # noqa: E402

pytestmark = pytest.mark.e2e

PROJECTOR = {"width": 1024, "height": 768}
# elements whose text the browser cut with an ellipsis (or clipped): their content is wider than their box
CUT = """(sel) => [...document.querySelectorAll(sel)].filter(e => e.scrollWidth > e.clientWidth + 1)
                                               .map(e => e.innerText)"""
# each plotly chart's plot width, its legend's width, and whether its notes (above the plot) stay in the figure
PLOTS = """(sel) => [...document.querySelectorAll(sel)].filter(gd => gd.offsetParent !== null).map(gd => {
    const fig = gd.getBoundingClientRect(), legend = gd.querySelector('.legend');
    const notes = [...gd.querySelectorAll('.annotation')].map(a => a.getBoundingClientRect());
    return {plot: gd._fullLayout._size.w, legend: legend ? legend.getBoundingClientRect().width : 0,
            legendLeft: legend ? legend.getBoundingClientRect().left - fig.left : 1e9,
            notesRight: Math.max(0, ...notes.map(n => n.right - fig.left)), width: fig.width}; })"""


def test_the_timeline_fits_a_projector(page: Page, app_url: str, screenshots: Path) -> None:
    """Metrics read "Peak raw (…" and "83% of 2…", the exports "Ta…" and "Ch…", the plot was narrower than
    its side legend, and the note above the plot ran over the legend's first entries."""
    page.set_viewport_size(PROJECTOR)
    open_page(page, f"{app_url}/?thread=sample:a_demo&preset=stress")
    assert page.evaluate(CUT, "[data-testid=stMetricLabel] *, [data-testid=stMetricDelta] *") == []
    assert page.evaluate(CUT, "[data-testid=stDownloadButton] button *") == []
    [chart] = page.evaluate(PLOTS, TIMELINE)
    assert chart["plot"] >= 260 and chart["plot"] > 1.4 * chart["legend"], chart
    assert chart["notesRight"] <= chart["legendLeft"], chart  # the notes end before the legend starts
    shot(page, screenshots, "narrow-timeline-1024")


def test_the_step_navigation_is_one_row_on_a_projector(page: Page, app_url: str, screenshots: Path) -> None:
    """The five controls stacked into three rows beside the title."""
    page.set_viewport_size(PROJECTOR)
    open_page(page, f"{app_url}/step?thread=sample:a_demo&step=5")
    tops = [page.locator(f".st-key-{key}").first.bounding_box()["y"]  # type: ignore[index]
            for key in ("step_prev_event", "step_prev", "step_next", "step_next_event")]
    assert max(tops) - min(tops) < 2, tops
    shot(page, screenshots, "narrow-step-1024")


def test_compare_stacks_its_charts_on_a_projector(page: Page, app_url: str, screenshots: Path) -> None:
    """Side by side, chart A's plot was ~75 px wide and chart B's note was cut off at the figure's edge."""
    page.set_viewport_size(PROJECTOR)
    open_page(page, f"{app_url}/compare?thread=sample:a_demo&vs=sample:hostile&preset=stress")
    charts = page.evaluate(PLOTS, "[data-testid=stPlotlyChart] .js-plotly-plot")
    assert len(charts) == 2, charts
    for chart in charts:
        assert chart["plot"] >= 250, chart
        assert chart["notesRight"] <= chart["width"], chart
    shot(page, screenshots, "narrow-compare-1024")


def test_the_step_pages_category_table_is_whole_on_a_projector(page: Page, app_url: str, screenshots: Path) -> None:
    """In a 3/5 column (~330 px at 1024) the 290 px category column read "toker" and first digits, and
    "% of window" was out of sight (ui/step_view.py budget_panel): the table now wraps under the budget."""
    from ui.step_view import CATEGORY_TABLE_PX

    page.set_viewport_size(PROJECTOR)
    open_page(page, f"{app_url}/step?thread=sample:a_demo&step=5")
    table = page.get_by_test_id("stDataFrame").first
    table.wait_for()
    box = table.bounding_box()
    assert box is not None and box["width"] >= CATEGORY_TABLE_PX - 20, box
    assert box["x"] + box["width"] <= PROJECTOR["width"], box
    shot(page, screenshots, "narrow-step-table-1024")


def test_the_compaction_account_card_is_whole_on_a_projector(page: Page, app_url: str, screenshots: Path) -> None:
    """Four fixed columns cut the card's values and labels at 1024 px ("95 of …", "not …", "cache written agai…")."""
    page.set_viewport_size(PROJECTOR)
    open_page(page, f"{app_url}/layers?thread=sample:a_demo&preset=stress&tab=Summaries")
    card = page.locator("[class*=st-key-account_metrics_]").first
    card.wait_for()
    labels = card.get_by_test_id("stMetricLabel").all_inner_texts()
    assert "cache written again (tokens)" in labels, labels
    assert page.evaluate(CUT, "[class*=st-key-account_metrics_] [data-testid=stMetricLabel] *, "
                              "[class*=st-key-account_metrics_] [data-testid=stMetricValue] *") == []
    shot(page, screenshots, "narrow-account-card-1024")
