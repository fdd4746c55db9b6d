"""The Sessions page's tables at 1024 px (a projector): a session's figures are seen without scrolling sideways.

At 1024 px the main column is 564 px wide (1024 - the 300 px sidebar - 2 × 80 px padding, Streamlit 1.67's wide
layout; measured in Chromium). A table with row checkboxes gives ~33 px to them, and ~15 px stay free for a
vertical scrollbar. The lead's 1024 px screenshots had "cost" (and in the policies table "facts kept") off-screen.
"""

from __future__ import annotations

import json
from typing import Any

from tests.ui.test_sessions_page import roots  # noqa: F401 - the fixture

MAIN_PX_1024 = 1024 - 300 - 2 * 80
CHECKBOX_PX = 33
SCROLLBAR_PX = 15
NAMED_PX = {"small": 75, "medium": 200, "large": 400}  # st.column_config widths, Streamlit 1.67
SEEN = ["title", "steps", "peak", "compactions", "cost"]


def _px_through(frame: Any, last: str) -> int:
    """The width of a dataframe's columns up to and including `last` (every one of them sized)."""
    config = json.loads(frame.proto.columns)
    columns = list(frame.value.columns)
    widths = [config.get(c, {}).get("width") for c in columns[: columns.index(last) + 1]]
    assert all(w is not None for w in widths), dict(zip(columns, widths, strict=False))
    px = sum(NAMED_PX.get(w, w) for w in widths)
    return px + (CHECKBOX_PX if list(frame.proto.selection_mode) else 0)


def test_a_sessions_figures_fit_at_1024_px_in_every_table(start, roots) -> None:  # noqa: ANN001, F811
    at = start("pages/sessions.py")
    listed, across, figures = at.dataframe
    for frame in (listed, across, figures):
        columns = list(frame.value.columns)
        last = max(columns.index(c) for c in SEEN)
        assert columns[last] == "cost", columns
        assert _px_through(frame, "cost") <= MAIN_PX_1024 - SCROLLBAR_PX, (columns, frame.proto.columns)
        assert json.loads(frame.proto.columns)["title"]["label"] == "session"
    assert list(listed.value.columns)[:6] == ["live", "title", "steps", "peak", "compactions", "cost"]
    assert list(figures.value.columns)[:5] == SEEN


def test_the_figures_table_has_room_for_its_toolbar_under_the_metrics(start, roots) -> None:  # noqa: ANN001, F811
    """The toolbar (search, download, full screen) shows above a table's top right corner on hover: it covered the
    cache hit rate ("97.2%") just above the figures table at 1024 px."""
    at = start("pages/sessions.py")
    children = list(at.tabs[1].children.values())
    kinds = [getattr(c, "type", type(c).__name__) for c in children]
    for i, kind in enumerate(kinds):
        if kind == "dataframe":
            assert kinds[i - 1] == "space", kinds


def test_the_policies_compared_show_cost_and_facts_kept_at_1024_px(start, roots) -> None:  # noqa: ANN001, F811
    at = start("pages/sessions.py")
    at.multiselect(key="ss_policies").set_value(["codex"]).run()
    at.button(key="ss_compare_go").click().run()
    assert not at.exception, at.exception
    policies = at.dataframe[-1]
    assert list(policies.value.columns)[:6] == ["policy", "best", "peak", "compactions", "cost", "facts kept"]
    assert list(policies.value["policy"]) == ["codex"]
    assert _px_through(policies, "facts kept") <= MAIN_PX_1024 - SCROLLBAR_PX
