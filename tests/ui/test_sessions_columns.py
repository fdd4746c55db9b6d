"""The Sessions page's tables put the figures where they are seen: the walk-through found the list and both
"Across sessions" tables ending at "compacti…" at 1440 px (the title column took most of the width) and an
unlabeled column beside the row checkboxes (the "live" mark's empty header)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sessions import trees

FIGURES = ["peak", "% of window", "compactions", "cost"]


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "root"
    trees.make_all(root)
    monkeypatch.setenv("CTXI_SESSIONS", str(root))
    return root


def test_the_figures_come_before_the_title_which_is_not_the_widest_column(start, roots: Path) -> None:  # noqa: ANN001
    at = start("pages/sessions.py")
    listed, across, figures = at.dataframe
    for frame in (listed, across, figures):
        columns = list(frame.value.columns)
        assert all(columns.index(c) < columns.index("title") for c in FIGURES), columns
        config = json.loads(frame.proto.columns)
        assert config["title"]["width"] == "medium"
        assert all(header for header in (config.get(c, {}).get("label", c) for c in columns)), config
    assert list(listed.value.columns)[:7] == ["live", "modified", "agent", *FIGURES]
    assert list(figures.value.columns)[:7] == ["agent", "peak", "window", "% of window", "overflows", "compactions", "cost"]
    live = json.loads(listed.proto.columns)["live"]
    assert live["label"] == "live" and isinstance(live["width"], int) and live["width"] >= 40
