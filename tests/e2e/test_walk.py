"""Defects the repeated browser walk-through of issue 35 found on the merged main (issue 35, Checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page  # noqa: E402

from tests.e2e.test_dashboard import TIMELINE, open_page, shot  # noqa: E402

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("size", [(1280, 720), (1600, 1000)])
def test_the_timeline_legend_shows_every_entry_without_scrolling(page: Page, app_url: str, screenshots: Path,
                                                                size: tuple[int, int]) -> None:
    """With every layer acting, the side legend was taller than the plot: plotly made it scroll, and its last
    entries (the trigger and keep lines, the levels the chart is about) were out of sight."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_page(page, f"{app_url}/?thread=sample:a_demo&preset=stress")
    legend = page.evaluate("""(sel) => { const gd = document.querySelector(sel);
        const bar = gd.querySelector('.legend .scrollbar');
        const box = gd.querySelector('.legend .bg').getBoundingClientRect(), fig = gd.getBoundingClientRect();
        return {bar: bar ? bar.getBBox().height : 0, top: box.top - fig.top, bottom: box.bottom - fig.top,
                height: gd._fullLayout.height, names: gd._fullLayout.shapes.filter(s => s.showlegend).length}; }""",
                           TIMELINE)
    assert legend["names"] >= 2  # the trigger and keep lines are legend entries
    assert legend["bar"] == 0, legend  # no scrollbar: every entry is drawn
    assert 0 <= legend["top"] and legend["bottom"] <= legend["height"], legend  # inside the figure
    # the chart grew only by what its legend, wrapped narrow for a 1024 px projector (ui.figures.LABEL_LINE_CHARS),
    # needs: the event lanes stay near the first screen
    assert 620 <= legend["height"] <= 680
    shot(page, screenshots, f"timeline-legend-{size[0]}")
