"""Presenter mode in Chromium: big type and chart text, no sidebar, keys work at once, URL survives a reload."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from tests.e2e.test_dashboard import TIMEOUT_MS, open_page, shot, wait_for_app  # noqa: E402

pytestmark = pytest.mark.e2e

FONT_PX = "(sel) => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize)"
CHART_FONT = "() => document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot')._fullLayout.font.size"


def bullets(page: Page) -> int:
    return page.locator("[data-testid=stMainBlockContainer] [data-testid=stMarkdownContainer] li").count()


def test_presenter_mode_is_projector_ready_and_keeps_its_place(page: Page, app_url: str, screenshots: Path) -> None:
    open_page(page, f"{app_url}/workshop?thread=sample:a_demo&lesson=summarization")
    expect(page.get_by_role("heading", name="L2 Summarization: trigger, keep and mode")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stSidebar")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stMetricValue").first).to_be_visible(timeout=TIMEOUT_MS)  # the lesson has replayed
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(1, timeout=TIMEOUT_MS)
    page.wait_for_function("() => document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot')?._fullLayout",
                           timeout=TIMEOUT_MS)
    normal_metric = page.evaluate(FONT_PX, "[data-testid=stMetricValue] p")
    normal_chart = page.evaluate(CHART_FONT)

    page.get_by_text("Presenter mode").click()
    wait_for_app(page)
    expect(page.get_by_role("button", name="Next slide")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stSidebar")).to_be_hidden(timeout=TIMEOUT_MS)
    assert bullets(page) == 1
    # no click on the page first: the keys work right after the toggle
    page.keyboard.press("ArrowRight")
    wait_for_app(page)
    expect(page.locator("[data-testid=stMainBlockContainer] [data-testid=stMarkdownContainer] li")).to_have_count(
        2, timeout=TIMEOUT_MS)
    for _ in range(3):  # the remaining points, then the try-this part with its chart and metrics
        page.keyboard.press("ArrowRight")
        wait_for_app(page)
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(1, timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stMetricValue").first).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_function(f"() => ({CHART_FONT})() >= 1.5 * {normal_chart}", timeout=TIMEOUT_MS)
    page.wait_for_function(f"() => ({FONT_PX})('[data-testid=stMetricValue] p') >= 1.5 * {normal_metric}",
                           timeout=TIMEOUT_MS)
    shot(page, screenshots, "workshop-presenter-try-this")
    expect(page).to_have_url(re.compile(r"(?=.*[?&]lesson=summarization)(?=.*[?&]presenter=true)(?=.*[?&]slide=5)"),
                             timeout=TIMEOUT_MS)

    page.reload()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="L2 Summarization: trigger, keep and mode")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stSidebar")).to_be_hidden(timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(1, timeout=TIMEOUT_MS)  # still on slide 5
    page.keyboard.press("PageDown")  # the page has the focus after a reload too
    wait_for_app(page)
    expect(page.get_by_role("heading", name="L3 Todo")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("[data-testid=stMainBlockContainer] [data-testid=stMarkdownContainer] li")).to_have_count(
        1, timeout=TIMEOUT_MS)
    shot(page, screenshots, "workshop-presenter-next-lesson")


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)])
def test_one_slide_is_one_screen_with_the_controls_beside_the_chart(page: Page, app_url: str, screenshots: Path,
                                                                    width: int, height: int) -> None:
    """Issue 35: at projector sizes the lesson's controls and its chart were never on screen together
    (pages of 2,100-2,200 px), a grey focus frame surrounded every slide, and the lesson select, the slide
    box and the radio dots stayed at ~13 px beside 25 px text."""
    page.set_viewport_size({"width": width, "height": height})
    open_page(page, f"{app_url}/workshop?thread=sample:a_demo&lesson=summarization&presenter=true&slide=1")
    main = "document.querySelector('[data-testid=stMain]')"
    for slide in range(1, 7):  # four points, try this, check
        expect(page).to_have_url(re.compile(rf"[?&]slide={slide}\b" if slide > 1 else r"workshop"), timeout=TIMEOUT_MS)
        assert page.evaluate(f"{main}.scrollHeight") <= height, f"slide {slide} runs past the screen"
        assert page.evaluate("document.activeElement.dataset.testid") != "stMain"  # no focus frame around the slide
        if slide == 5:
            expect(page.get_by_test_id("stPlotlyChart")).to_have_count(1, timeout=TIMEOUT_MS)
            boxes = page.evaluate("""() => {
                const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
                return {chart: box(document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot')),
                        radios: [...document.querySelectorAll('[data-testid=stMain] [role=radiogroup]')].map(box)};
            }""")
            for _left, top, right, bottom in [boxes["chart"], *boxes["radios"]]:
                assert 0 <= top and bottom <= height and right <= width, boxes
            assert all(r[2] <= boxes["chart"][0] for r in boxes["radios"])  # the controls beside (left of) the chart
            # and the chart is readable: its plot was 75 px tall at 1280×720, curves and level labels piled up
            plot = page.evaluate("() => document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot')"
                                 "._fullLayout._size.h")
            assert plot >= 0.18 * height, plot
            shot(page, screenshots, f"workshop-try-this-{width}x{height}")
            # every control reads at the size of the text beside it
            assert page.evaluate(FONT_PX, "[data-testid=stMain] [data-testid=stSelectbox] input") >= 22
            assert page.evaluate(FONT_PX, "[data-testid=stMain] [data-testid=stNumberInputField]") >= 22
            dot = page.evaluate("""() => document.querySelector('[data-testid=stMain] [role=radiogroup] label > div')
                                   .firstElementChild.getBoundingClientRect().width""")
            assert dot >= 22
        page.keyboard.press("ArrowRight")
        wait_for_app(page)
