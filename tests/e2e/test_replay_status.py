"""The replay's "Replaying…" status moves nothing on the page (ui/replay_status.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from engine.formats.native import dumps  # noqa: E402
from tests.e2e.conftest import serve  # noqa: E402
from tests.e2e.test_dashboard import TIMELINE, TIMEOUT_MS, open_page, shot, wait_for_app  # noqa: E402

pytestmark = pytest.mark.e2e
# A replay of this many steps on `stress` takes ~1 s CPU here (a 1,000-step one 0.25-0.4 s): well past
# Streamlit's 0.5 s spinner delay (streamlit/elements/spinner.py DELAY_SECS), so the spinner shows.
LONG_STEPS = 3000


@pytest.fixture(scope="module")
def long_thread_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from engine.synthetic import synthetic_thread

    folder = tmp_path_factory.mktemp("long-thread")
    (folder / "samples").mkdir()
    (folder / "samples" / "long.json").write_text(dumps(synthetic_thread(LONG_STEPS, seed=0)), encoding="utf-8")
    with serve({"CTXI_SAMPLES_DIR": str(folder / "samples"), "CTXI_WORKSPACE": str(folder / "workspace")},
               folder / "streamlit.log") as url:
        yield url


def _top(page: Page, selector: str) -> float:
    return float(page.evaluate("(sel) => document.querySelector(sel).getBoundingClientRect().top", selector))


def test_the_replay_status_moves_nothing_while_a_new_config_replays(page: Page, long_thread_url: str,
                                                                    screenshots: Path) -> None:
    open_page(page, f"{long_thread_url}/?thread=sample:long&preset=stress")
    chart_top, title_top = _top(page, TIMELINE), _top(page, "h1")
    value = page.get_by_test_id("stSidebar").get_by_label("trigger value 0")
    value.fill("0.33")
    value.press("Enter")
    spinner = page.get_by_test_id("stSpinner")
    expect(spinner).to_be_visible(timeout=TIMEOUT_MS)
    expect(spinner).to_contain_text("Replaying the thread through the layers", timeout=TIMEOUT_MS)
    assert (_top(page, TIMELINE), _top(page, "h1")) == (chart_top, title_top)  # the old chart stays put
    box = spinner.bounding_box()
    size = page.viewport_size
    assert box is not None and size is not None
    assert box["y"] + box["height"] < chart_top and box["x"] + box["width"] <= size["width"]  # on screen, above the chart
    page.screenshot(path=str(screenshots / "timeline-replaying.png"))
    wait_for_app(page)
    assert (_top(page, TIMELINE), _top(page, "h1")) == (chart_top, title_top)
    # the style's own element takes no room at the end of the sidebar
    assert page.locator("[data-testid=stSidebar] .ctxi-replay-status").count() == 1
    assert page.evaluate("() => document.querySelector('[data-testid=stSidebar] .ctxi-replay-status')"
                         ".closest('[data-testid=stElementContainer]').getBoundingClientRect().height") == 0
    shot(page, screenshots, "timeline-long")
