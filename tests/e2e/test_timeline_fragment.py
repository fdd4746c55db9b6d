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

from tests.e2e.test_dashboard import TIMEOUT_MS, expect_lane_count, open_page, summaries, wait_for_app  # noqa: E402

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
