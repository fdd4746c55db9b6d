"""Config › Compare runs, "Agents' policies on this thread" at 1024 px (a projector): which policy, its peak, how
often it compacted and what its compactions kept are seen without scrolling sideways.

Before, the engine's column order with headers as wide as their names showed policy, peak view tokens, peak % of
window, compactions and compaction steps at 1024 px; facts kept and needle retention were off-screen.
"""

from __future__ import annotations

import json
from typing import Any

from tests.ui.test_app import open_tab
from tests.ui.test_sessions_1024 import MAIN_PX_1024, NAMED_PX, SCROLLBAR_PX

SEEN = ["policy", "peak view tokens", "peak % of window", "compactions", "facts kept", "needle retention"]
CELL_PADDING_PX = 17  # a column's text plus 8 px each side and its border (Chromium, Streamlit 1.67)
# the widest text each column shows at 1024 px, measured in Chromium (14 px Source Sans): its header, or a cell
TEXT_PX = {"policy": 70, "peak": 56, "% window": 61, "compactions": 75, "facts kept": 88, "needles": 46}
SHORTENED = {"peak view tokens": "peak", "peak % of window": "% window", "needle retention": "needles"}


def _policies(start: Any) -> Any:  # noqa: ANN401 - an AppTest dataframe
    at = open_tab(start("pages/config.py", preset="stress"), "Compare runs")
    assert not at.exception, at.exception
    return next(f for f in at.dataframe if "needle retention" in f.value.columns)


def test_the_key_columns_come_first_and_fit_at_1024_px(start) -> None:  # noqa: ANN001
    frame = _policies(start)
    columns = list(frame.value.columns)
    assert columns[: len(SEEN)] == SEEN, columns
    config = json.loads(frame.proto.columns)
    widths = [config.get(c, {}).get("width") for c in SEEN]
    assert all(w is not None for w in widths), dict(zip(SEEN, widths, strict=True))
    assert sum(NAMED_PX.get(w, w) for w in widths) <= MAIN_PX_1024 - SCROLLBAR_PX, dict(zip(SEEN, widths, strict=True))
    # every column the engine adds is still in the table, after them
    assert set(columns) >= {"tokens saved", "compaction steps", "re-fetches", "summarizer input tokens",
                            "cache misses $", "input tokens sent"}


def test_the_short_headers_are_whole_and_say_the_rest_on_hover(start) -> None:  # noqa: ANN001
    config = json.loads(_policies(start).proto.columns)
    for name in SEEN:
        label = config[name].get("label", name)
        assert label == SHORTENED.get(name, name)
        assert config[name]["width"] >= TEXT_PX[label] + CELL_PADDING_PX, (name, config[name])
        if name != "policy":
            assert config[name].get("help"), name
    assert config["peak view tokens"]["help"].startswith("peak view tokens")
    assert config["needle retention"]["help"].startswith("needle retention")
    assert "context window" in config["peak % of window"]["help"]
