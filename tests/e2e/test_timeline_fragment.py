"""A sidebar edit on the Timeline reruns the page's body and the sidebar only (pages/timeline.py
`body_and_sidebar`, one `st.fragment`), not app.py's frame: read from what the server sends.

Each delta Streamlit sends names the fragment that wrote it (`Delta.fragment_id`, empty on a full
run's own elements: the title, the navigation). The edit must still redraw the chart, the sidebar,
the URL, and open the Step page from the body's button.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from tests.e2e.test_dashboard import (  # noqa: E402
    TIMELINE,
    TIMEOUT_MS,
    expect_lane_count,
    open_page,
    summaries,
    wait_for_app,
)

pytestmark = pytest.mark.e2e


class Sent:
    """The ForwardMsgs the server sends this page, decoded (Playwright's websocket frames)."""

    def __init__(self, page: Page) -> None:
        self.msgs: list[Any] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._add))

    def _add(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(payload)
            self.msgs.append(msg)

    def deltas(self) -> list[Any]:
        return [m for m in self.msgs if m.WhichOneof("type") == "delta"]


def test_a_sidebar_edit_on_the_timeline_reruns_its_body_and_sidebar_only(page: Page, app_url: str,
                                                                        e2e_samples: Path) -> None:
    before, after = summaries(e2e_samples), summaries(e2e_samples, "summarization.trigger=fraction:0.5")
    sent = Sent(page)
    open_page(page, f"{app_url}/?thread=sample:a_demo&preset=stress")
    expect_lane_count(page, "summarization", before)
    assert any(not d.delta.fragment_id for d in sent.deltas())  # a full run: the title, the navigation
    sent.msgs.clear()

    trigger = page.get_by_test_id("stSidebar").get_by_label("trigger value 0")
    trigger.fill("0.5")
    trigger.press("Enter")
    wait_for_app(page)
    expect_lane_count(page, "summarization", after)  # the chart redrew for the new config
    deltas = sent.deltas()
    assert deltas and all(d.delta.fragment_id for d in deltas)  # nothing outside the fragment was sent again
    assert len({d.delta.fragment_id for d in deltas if d.metadata.delta_path[0] == 1}) == 1  # the sidebar: in it
    expect(trigger).to_have_value("0.50", timeout=TIMEOUT_MS)
    expect(page.get_by_role("heading", name="Timeline")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stSidebarNav")).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_function("() => location.search.includes('summarization.trigger=fraction')", timeout=TIMEOUT_MS)
    assert "0.5" in page.url

    # the body's own button still opens the Step page (a page switch from inside the fragment)
    box = page.get_by_label("Open step")
    box.fill("7")
    box.press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Open in Step page").click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Step 7")).to_be_visible(timeout=TIMEOUT_MS)
    assert "/step" in page.url


def test_a_kept_graph_shown_again_after_a_resize_is_redrawn_at_the_new_width(page: Page, app_url: str,
                                                                            e2e_samples: Path) -> None:
    # ui/timeline_chart.py keeps the graphs it drew, hidden; plotly's own `responsive` resize skips
    # a hidden graph, so the component compares the width plotly drew a graph at with its width on
    # the frame after showing it, and resizes it (never reading the width right after drawing it)
    def widths() -> list[float]:
        return page.evaluate("(sel) => { const gd = document.querySelector(sel);"
                             " return [gd._fullLayout.width, gd.offsetWidth]; }", TIMELINE)

    before, after = summaries(e2e_samples), summaries(e2e_samples, "summarization.trigger=fraction:0.5")
    page.set_viewport_size({"width": 1400, "height": 1000})
    open_page(page, f"{app_url}/?thread=sample:a_demo&preset=stress")
    expect_lane_count(page, "summarization", before)
    drawn, shown = widths()
    assert abs(drawn - shown) < 1

    trigger = page.get_by_test_id("stSidebar").get_by_label("trigger value 0")
    trigger.fill("0.5")
    trigger.press("Enter")
    wait_for_app(page)
    expect_lane_count(page, "summarization", after)  # a second graph: the first is kept, hidden
    page.set_viewport_size({"width": 1100, "height": 1000})
    page.wait_for_timeout(500)  # plotly's own resize of the graph on show (debounced)

    trigger.fill("0.25")
    trigger.press("Enter")
    wait_for_app(page)
    expect_lane_count(page, "summarization", before)  # the kept graph, shown again
    page.wait_for_function("(sel) => { const gd = document.querySelector(sel);"
                           " return Math.abs(gd._fullLayout.width - gd.offsetWidth) < 1; }", arg=TIMELINE,
                           timeout=TIMEOUT_MS)
    drawn_after, shown_after = widths()
    assert shown_after < shown - 100  # the chart did get narrower
    assert abs(drawn_after - shown_after) < 1


def test_the_other_pages_element_code_is_fetched_while_the_first_page_is_read(page: Page, app_url: str) -> None:
    """ui/preload.py: once the browser is idle after the first page, it has fetched the element
    code the other pages draw (the dataframe's, the text input's, ...), before any page shows one;
    the preloader takes no room in the sidebar."""
    from ui.preload import chunk_files

    files = list(chunk_files())
    assert files
    open_page(page, f"{app_url}/?thread=sample:a_demo")
    expect(page.locator(TIMELINE)).to_be_visible(timeout=TIMEOUT_MS)
    assert page.get_by_test_id("stDataFrame").count() == 0  # the Timeline shows no table itself
    page.wait_for_function("files => files.every(f => performance.getEntriesByType('resource')"
                           ".some(e => e.name.endsWith('/static/js/' + f)))", arg=files, timeout=TIMEOUT_MS)
    # mounted on the session's first run only (tests/ui/test_preload.py); never a visible box
    container = page.get_by_test_id("stSidebar").locator("[data-testid=stElementContainer]:has(.ctxi-preload)")
    expect(container).to_be_hidden(timeout=TIMEOUT_MS)
    # the Step page then draws its table without fetching the dataframe's code again
    before = page.evaluate("() => performance.getEntriesByType('resource').length")
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Step").click()  # in the app: same module map
    wait_for_app(page)
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible(timeout=TIMEOUT_MS)
    fetched = page.evaluate(f"() => performance.getEntriesByType('resource').slice({before}).map(e => e.name)")
    assert not [u for u in fetched if u.endswith("/static/js/" + files[0])]
