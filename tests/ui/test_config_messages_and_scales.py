"""The walk-through's Config and Sessions findings through AppTest: an uploaded config's errors (its
name said once, a binary file said plainly, every invalid setting listed), the policies chart fitted
to its curves under a window far above them, and the Sessions tables in the list's words."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from tests.sessions import trees
from tests.ui.test_app import open_tab


def plain(elements) -> list[str]:  # noqa: ANN001
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


def upload(at, name: str, data: bytes):  # noqa: ANN001, ANN201
    return at.file_uploader(key="yaml_upload").upload(name, data, "application/yaml").run()


@pytest.mark.parametrize(("name", "data", "message"), [
    ("broken.yaml", b"version: 1\nsummarization: [trigger: tokens:8000\n  keep: {messages: 6\n\t- bad\n",
     "broken.yaml not applied: invalid YAML at line 3, column 7: did not find expected ',' or ']'"),
    ("binary.yaml", b"\x00\x01\x02binary\xff\xfe",
     "binary.yaml not applied: a binary file, not a text YAML file: a control character (0x00) at byte 0 (line 1)"),
    ("invalid.yaml", b"version: 1\nsummarization:\n  trigger: banana:12\n  keep: messages:-3\nmodel:\n"
                     b"  max_input_tokens: -100\n",
     "invalid.yaml not applied: 3 settings are not valid:\n"
     "- model.max_input_tokens: must be a whole number from 1 to 500,000,000, got -100\n"
     "- summarization.trigger: the type should be 'messages', 'tokens' or 'fraction' (got 'banana:12')\n"
     "- summarization.keep: messages thresholds must be greater than 0, got -3. (as written: 'messages:-3')"),
])
def test_an_uploaded_config_says_each_problem_once(start, name: str, data: bytes, message: str) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="stress", tab="YAML")
    before = at.session_state["config"]
    upload(at, name, data)
    assert not at.exception
    assert plain(at.error) == [message]
    assert at.session_state["config"] == before


def test_several_invalid_settings_in_the_editor_are_listed(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="stress", tab="YAML")
    area = next(t for t in at.text_area if t.label.startswith("Config YAML"))
    area.set_value("preset: stress\nmodel:\n  max_input_tokens: -1\nsummarization:\n  mode: stream\n")
    at.button(key="yaml_apply").click().run()
    assert not at.exception
    assert plain(at.error) == ["Not applied; the previous run is kept. 2 settings are not valid:\n"
                               "- model.max_input_tokens: must be a whole number from 1 to 500,000,000, got -1\n"
                               "- summarization.mode: must be 'state' or 'view', got 'stream'"]


def _policies_chart(at) -> dict:  # noqa: ANN001
    return json.loads(next(c for c in at.get("plotly_chart") if c.key == "cmp_policies_chart").proto.spec)


def _peak(spec: dict) -> float:
    peak = 0.0
    for trace in spec["data"]:
        y = trace.get("y")
        if isinstance(y, dict):  # plotly's typed array: {"dtype", "bdata"}
            y = np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"])
        values = np.asarray(y if y is not None else [], dtype=float)
        if np.isfinite(values).any():
            peak = max(peak, float(np.nanmax(values)))
    return peak


def test_the_policies_chart_fits_its_curves_under_a_window_far_above(start) -> None:  # noqa: ANN001
    """A 1,048,576-token window (Gemini) squashed curves of ~41k into the chart's bottom 4%: the y-axis fits
    the curves, a note names the window above it, and Whole window (as on the Timeline) scales to it."""
    at = open_tab(start("pages/config.py", thread="sample:b_small"), "Compare runs")
    assert not at.exception
    spec = _policies_chart(at)
    window = 40_000  # tests/ui/builders.py build_thread
    top = spec["layout"]["yaxis"]["range"][1]
    assert _peak(spec) <= top < window  # the curves, whole, and no more
    notes = [a["text"] for a in spec["layout"].get("annotations", [])]
    assert notes == [f"above the chart: window {window:,} tokens (turn on Whole window to see it)"]
    at.toggle(key="cmp_whole_window").set_value(True).run()
    spec = _policies_chart(at)
    assert spec["layout"]["yaxis"]["range"][1] >= window
    assert not spec["layout"].get("annotations")


def test_the_across_sessions_table_uses_the_lists_names_and_units(start, tmp_path: Path,  # noqa: ANN001
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    trees.make_all(root)
    monkeypatch.setenv("CTXI_SESSIONS", str(root))
    at = start("pages/sessions.py")
    listed, _, figures = (d.value for d in at.dataframe)
    for raw in ("peak_tokens", "window_tokens", "peak_fraction", "dollars", "hit_rate"):
        assert raw not in figures.columns
    assert {"peak", "window", "% of window", "cost", "cache hit rate"} <= set(figures.columns)
    by_title = {r["title"]: r for r in figures.to_dict(orient="records")}
    for row in listed.to_dict(orient="records"):  # the same value reads the same in both tables
        shown = by_title[row["title"]]
        assert (shown["peak"], shown["cost"]) == (row["peak"], row["cost"])
        assert shown["% of window"] == row["% of window"] or (np.isnan(shown["% of window"])
                                                               and np.isnan(row["% of window"]))
    assert all(v is None or re.fullmatch(r"\d+\.\d%", v) for v in figures["cache hit rate"])
    # the list's caption is kept clear of the table toolbar that shows above the table's top right
    kinds = [getattr(c, "type", None) for c in at.tabs[0].children.values()]
    assert kinds[kinds.index("caption"):kinds.index("dataframe") + 1] == ["caption", "space", "dataframe"]
