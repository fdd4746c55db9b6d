"""The Config page's "Compare runs" tab at 1024 px (a projector): whole button labels, table toolbars with room."""

from __future__ import annotations

import json
from typing import Any

from streamlit.proto.Block_pb2 import Block

from tests.ui.test_app import open_tab


def _compared(start: Any) -> Any:  # noqa: ANN401 - an AppTest
    at = open_tab(start("pages/config.py", preset="stress"), "Compare runs")
    at.button(key="pin").click().run()
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.5).run()
    assert not at.exception, at.exception
    return at


def test_the_pin_buttons_are_as_wide_as_their_labels(start) -> None:  # noqa: ANN001
    """In [2, 1, 4] columns "Re-pin current run as A" read "Re-pin current run …" at 1024 px."""
    at = _compared(start)
    row = next(c for c in at.tabs[2].children.values() if getattr(c, "key", None) == "cmp_pins")
    assert row.proto.flex_container.direction == Block.FlexContainer.Direction.HORIZONTAL
    assert [b.key for b in row.children.values()] == ["pin", "unpin"]
    assert [b.label for b in row.children.values()] == ["Re-pin current run as A", "Clear A"]


def test_the_ab_table_leaves_room_for_its_toolbar_under_the_chart(start) -> None:  # noqa: ANN001
    """The toolbar (search, download, full screen) shows above a table's top right corner on hover: it ran over the
    end of the A/B chart's note ("… window 40,000 (above)") at 1024 px."""
    at = _compared(start)
    children = list(at.tabs[2].children.values())
    kinds = [getattr(c, "type", type(c).__name__) for c in children]
    metrics = next(i for i, c in enumerate(children)
                   if kinds[i] == "dataframe" and '"metric"' in json.dumps(c.value.to_dict(orient="records")))
    assert kinds[metrics - 2:metrics + 1] == ["plotly_chart", "space", "dataframe"], kinds
