"""The replay's "Replaying…" status moves nothing on the page (ui/replay_status.py).

Streamlit shows a spinner only after its 0.5 s delay (streamlit/elements/spinner.py), so a real
replay shows one or not depending on the machine's speed. This test does not wait for one: it puts
an element shaped like Streamlit's spinner (`stElementContainer` > `stSpinner`) into the page,
just above the chart, where `st.spinner` in `ui.session` draws it, and checks that nothing moved.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page  # noqa: E402

from tests.e2e.test_dashboard import TIMELINE, open_page  # noqa: E402

pytestmark = pytest.mark.e2e

# a spinner as Streamlit 1.67 draws one (its test ids), inserted in the page's flow above the chart
INSERT_SPINNER = """(sel) => {
  const chart = document.querySelector(sel).closest('[data-testid=stElementContainer]');
  const box = document.createElement('div');
  box.setAttribute('data-testid', 'stElementContainer');
  box.id = 'ctxi-test-spinner';
  box.innerHTML = '<div data-testid="stSpinner"><i data-testid="stSpinnerIcon"></i>'
                + '<p>Replaying the thread through the layers…</p></div>';
  chart.parentNode.insertBefore(box, chart);
  return box.getBoundingClientRect().height;
}"""


def _top(page: Page, selector: str) -> float:
    return float(page.evaluate("(sel) => document.querySelector(sel).getBoundingClientRect().top", selector))


def test_the_replay_status_moves_nothing_on_the_page(page: Page, app_url: str, screenshots: Path) -> None:
    open_page(page, f"{app_url}/?thread=sample:a_demo&preset=stress")
    chart_top, title_top = _top(page, TIMELINE), _top(page, "h1")
    height = page.evaluate(INSERT_SPINNER, TIMELINE)
    assert height > 0  # it is drawn (pinned, it takes no room in the flow)
    assert (_top(page, TIMELINE), _top(page, "h1")) == (chart_top, title_top)  # the chart stays put
    box = page.locator("#ctxi-test-spinner").bounding_box()
    size = page.viewport_size
    assert box is not None and size is not None
    assert 0 <= box["y"] and box["y"] + box["height"] < chart_top and box["x"] + box["width"] <= size["width"]
    page.screenshot(path=str(screenshots / "timeline-replaying.png"))
    page.evaluate("() => document.getElementById('ctxi-test-spinner').remove()")
    # the style's own element takes no room at the end of the sidebar
    assert page.locator("[data-testid=stSidebar] .ctxi-replay-status").count() == 1
    assert page.evaluate("() => document.querySelector('[data-testid=stSidebar] .ctxi-replay-status')"
                         ".closest('[data-testid=stElementContainer]').getBoundingClientRect().height") == 0
