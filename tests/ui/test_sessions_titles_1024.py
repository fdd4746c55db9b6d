"""The Sessions page's titles at 1024 px: cut at 144 px (the figures up to "cost" need the rest of the width,
tests/ui/test_sessions_1024.py), each table's title header says how to read a whole title.

Streamlit 1.67's st.dataframe has no hover tooltip on a cell; a double-clicked read-only cell opens over the table
with its whole text (seen in Chromium at 1024 px). The help said "select the row to read all of it", which held
only in the list: in the "Across sessions" tables a selection picks sessions and shows no title.
"""

from __future__ import annotations

import json

from tests.ui.test_sessions_page import roots  # noqa: F401 - the fixture


def test_every_title_header_says_a_double_click_reads_the_whole_title(start, roots) -> None:  # noqa: ANN001, F811
    at = start("pages/sessions.py")
    frames = list(at.dataframe)
    assert len(frames) == 3
    for frame in frames:
        title = json.loads(frame.proto.columns)["title"]
        assert title["label"] == "session"
        assert "double-click" in title["help"], title
        assert "select the row" not in title["help"], title
