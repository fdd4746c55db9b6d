"""The Timeline chart's wire format (ui/timeline_chart.py `wire_figure`, issue 37): smaller than plotly's
JSON, and unpacked in the browser into the very data plotly would have drawn, hover texts included."""

from __future__ import annotations

import base64
import html
import json
import math
import re
import shutil
import subprocess
import zlib
from typing import Any

import numpy as np
import pytest

from engine.config.schema import preset
from engine.run.replay import replay
from engine.thread.events import Event
from engine.thread.synthetic import synthetic_thread
from engine.tokens.counters import get_counter
from tests.ui.builders import HOSTILE, build_thread
from ui.figures import timeline_spec
from ui.timeline_chart import _SCRIPT, plotly_json, unpack_figure, wire_figure

COUNTER = get_counter("approximate")


@pytest.fixture(scope="module")
def long_run():  # noqa: ANN201 - the issue's case: 2,000 steps, every stress layer acting
    return replay(synthetic_thread(2000, seed=0), preset("stress"))


def small_runs() -> list[Any]:
    hostile = replay(build_thread(12, result_words=60, hostile=True, recorded_compaction_at=9), preset("stress"),
                     token_counter=COUNTER)
    hostile.steps[4].events.append(Event("summarization", "summarize", 4, 900, 200, message=HOSTILE))
    hostile.steps[6].events.append(Event("dangling", "patch", 6, severity="warning", message="1 call patched"))
    return [hostile, replay(build_thread(40, result_words=200, recorded_compaction_at=30), preset("deepagents"),
                            token_counter=COUNTER),
            replay(build_thread(6, result_words=20), preset("stress"), token_counter=COUNTER, layers=[])]


def sent(wire: dict[str, Any]) -> dict[str, Any]:
    """The figure as the browser receives it: JSON text, parsed."""
    return json.loads(json.dumps(wire, separators=(",", ":"), allow_nan=False))


def values(v: Any) -> Any:
    """Data as values: NaN (a gap) as None, as JSON writes it."""
    if isinstance(v, list):
        return [values(x) for x in v]
    if isinstance(v, dict):
        return {k: values(x) for k, x in v.items()}
    return None if isinstance(v, float) and math.isnan(v) else v


def plotly_values(spec: dict[str, Any]) -> dict[str, Any]:
    """plotly's own JSON of the figure, its typed arrays decoded (as plotly.js decodes them)."""
    return values(unpack_figure(plotly_json(spec)))


def test_the_packed_timeline_unpacks_to_what_plotly_would_send(long_run) -> None:  # noqa: ANN001
    for run in [*small_runs(), long_run]:
        for whole_window in (False, True):
            spec = timeline_spec(run, whole_window=whole_window)
            wire = sent(wire_figure(spec))
            assert values(unpack_figure(wire)) == plotly_values(spec)
            assert wire["layout"] == plotly_json(spec)["layout"]  # the layout goes as plotly sends it


def table(wire: dict[str, Any]) -> list[dict[str, Any]]:
    return json.loads(zlib.decompress(base64.b64decode(wire["packed"])))


def test_every_kind_of_array_survives_the_wire() -> None:
    nan = math.nan
    odd = {"data": [
        {"type": "scatter", "x": np.arange(5), "y": np.array([1.0, nan, 3.0, 4.0, 5.0]),  # a gap: float32
         "text": ["a"] * 20, "hovertext": ["<b>x</b>", "y"], "marker": {"size": np.full(5, 9), "color": "#123"}},
        {"type": "scatter", "x": np.arange(5), "y": np.array([0.5, 1.25, nan, 2.0, 1e300]),  # not whole: float64
         "customdata": np.array([2**40, 1, 2, 3, 4])},  # beyond 32 bits: as plotly sends it
        {"type": "scatter", "x": np.array([3, 1, 4, 1, 5]), "y": np.array([2.0**25, 7.0, 7.0, 8.0, 9.0]),
         "selectedpoints": np.array([True, False, True, False, True]), "ids": np.array(["a", "b", "c", "d", "e"])},
        {"type": "heatmap", "x": np.arange(4) * 3 + 10, "y": [0, 9], "z": np.zeros((1, 4), dtype=np.int8),
         "customdata": np.array([[[0, 70_000, 3], [1, 65_000, 3], [2, -5, 3], [3, 0, 3]]]),
         "text": [["", "", "", ""] * 5], "hovertext": [["no"] * 3 + ["yes"] + [f"<b>{i}</b>" for i in range(16)]]},
        {"type": "heatmap", "z": np.array([[0.5, 1.5], [nan, 2.5]]), "customdata": np.array([[[1.5]]])},
        {"type": "scatter", "x": np.array([0, 1, 3]), "y": np.array([70_000, 65_000, 0]), "line": {"width": 1}},
        {"type": "scatter", "x": np.array([], dtype=np.int64), "y": [None], "name": "legend only"},
        {"type": "scatter", "mode": "markers", "x": np.arange(20), "y": ["lane"] * 20, "hovertext": ["t"] * 20},
    ], "layout": {"xaxis": {"range": np.array([0, 2])}, "shapes": [{"x0": np.int64(3), "y0": 1.0}]}}
    wire = sent(wire_figure(odd))
    assert values(unpack_figure(wire)) == plotly_values(odd)
    arrays = table(wire)
    assert set(wire["data"][5]["y"]) == {"$a", "at"}  # read from the click layer's second column at x
    assert arrays[wire["data"][0]["marker"]["size"]["$a"]] == {"fill": 9, "n": 5}  # a constant: one number
    assert arrays[wire["data"][3]["x"]["$a"]] == {"range": [10, 3], "n": 4}
    assert arrays[wire["data"][0]["y"]["$a"]]["dtype"] == "f4"
    assert wire["data"][0]["x"] == wire["data"][1]["x"]  # the same array, sent once
    assert wire["data"][1]["customdata"] == [2**40, 1, 2, 3, 4]  # plotly's own form: not a 32-bit integer
    assert wire["data"][0]["hovertext"] == ["<b>x</b>", "y"]  # a short list of texts too


def test_a_2000_step_timeline_is_sent_in_a_third_of_plotlys_json(long_run) -> None:  # noqa: ANN001
    """Issue 37: the chart's figure for a 2,000-step stress run was ~373 KB of plotly JSON (~443 KB in the
    browser bench after a trigger edit) against ~89 KB for a bare page drawing the same traces and points
    with no hover texts. What travels now: the layout (~17 KB, 12 KB of it the 78 summarizations' guides)
    and the deflated table of the rest (~62 KB as base64): every step's 13 numbers and hover text for the
    click layer, the event lanes' hover texts, the lines. 100 KB leaves ~19 % over today's 84 KB."""
    spec = timeline_spec(long_run)
    plotly_bytes = len(json.dumps(plotly_json(spec), separators=(",", ":"), allow_nan=False).encode())
    wire_bytes = len(json.dumps(wire_figure(spec), separators=(",", ":"), allow_nan=False).encode())
    assert plotly_bytes > 350_000
    assert wire_bytes < 100_000 and wire_bytes < plotly_bytes / 2.5


def test_the_draw_pause_still_sees_plotlys_size_of_the_figure(long_run) -> None:  # noqa: ANN001
    """The script waits after a new figure in proportion to its size (draw_pause_s), measured against plotly's
    JSON of it: the payload estimates that size from the packed figure, so the pause is what it was."""
    from ui.timeline_chart import figure_payload

    for run in [*small_runs(), long_run]:
        spec = timeline_spec(run)
        plotly_bytes = len(json.dumps(plotly_json(spec), separators=(",", ":"), allow_nan=False).encode())
        payload = figure_payload(run, "timeline:620:0", lambda run=run: timeline_spec(run))
        assert payload.nbytes == pytest.approx(plotly_bytes, rel=0.005)
        assert payload.sent_bytes == len(json.dumps(payload.figure, separators=(",", ":")).encode())


# plotly.js's hovertemplate: %{name}, %{name[i]}, with a d3 format after a colon (only "," here: thousands)
_FIELD = re.compile(r"%\{(\w+)(?:\[(\d+)\])?(?::([^}]*))?\}")


def hover_as_read(template: str, point: dict[str, Any]) -> str:
    """The hover label's main text as a user reads it (the DOM's textContent): the template filled in with
    the point's values as plotly does, its markup dropped and entities read as characters."""
    def fill(m: re.Match[str]) -> str:
        value = point[m.group(1)]
        if m.group(2) is not None:
            value = value[int(m.group(2))]
        assert m.group(3) in (None, ","), m.group(3)
        return f"{value:,}" if m.group(3) == "," else str(value)

    main = re.sub(r"<extra>.*?</extra>", "", template)
    return html.unescape(re.sub(r"<[^>]+>", "", _FIELD.sub(fill, main)))


def test_hover_reads_as_it_did_before_the_wire_format(long_run) -> None:  # noqa: ANN001
    """Hover labels filled in from the unpacked figure read exactly as Chromium showed them before issue
    37 (the hover labels' textContent, captured with Playwright from plotly's JSON of the same run)."""
    figure = unpack_figure(sent(wire_figure(timeline_spec(long_run))))
    hit = figure["data"][-1]
    assert hit["type"] == "heatmap"

    def step(i: int) -> str:
        return hover_as_read(hit["hovertemplate"], {"customdata": hit["customdata"][0][i], "x": hit["x"][i],
                                                    "text": hit["text"][0][i], "hovertext": hit["hovertext"][0][i]})

    assert step(7) == ("step 7: view 10,820 (5% of window) · raw 30,815system prompt 337tool schemas 348human 27"
                       "AI text 250tool calls 196tool results 9,356offload stubs 306summary 0view summarization "
                       "trigger: Deep Agents' count of the request 10,820 ≥ 50,000? no1 event(s)· subagents · "
                       "clamp: kept 3 of 5 task calls; 2 dropped (tokens 201 → 123)")
    assert step(35) == ("step 35: view 11,112 (6% of window) · raw 93,932system prompt 337tool schemas 348human 0"
                        "AI text 202tool calls 95tool results 9,151offload stubs 304summary 675view summarization "
                        "trigger: Deep Agents' count of the request 51,426 ≥ 50,000? yes2 event(s)· filesystem · "
                        "truncate_args: 1 argument(s) in 1 old write/edit call(… (tokens 52,410 → 50,741)· "
                        "summarization · summarize: view: summarized 59 messages, kept 14 (… (tokens 50,741 → "
                        "10,427)view summarization trigger: fired")
    assert step(2012) == ("step 2012: view 45,324 (23% of window) · raw 4,803,648system prompt 337tool schemas 348"
                          "human 0AI text 828tool calls 2,132tool results 40,044offload stubs 304summary 1,331view "
                          "summarization trigger: Deep Agents' count of the request 45,324 ≥ 50,000? no")
    lanes = {t["meta"]["layer"]: t for t in figure["data"] if "layer" in (t.get("meta") or {})}

    def marker(layer: str, i: int) -> str:
        lane = lanes[layer]
        return hover_as_read(lane["hovertemplate"], {"x": lane["x"][i], "hovertext": lane["hovertext"][i]})

    assert marker("filesystem", 0) == ("step 4filesystem · offload: web_search result (121,311 chars) offloaded to "
                                       "/large_tool_results/c-3 (tokens 20,618 → 306)")
    assert marker("subagents", 5) == ("step 68subagents · subagent: sub-agent sent 6,300 tokens over 4 steps; "
                                      "returned 146 tokens to the parent (tokens 3,260 → 146)")
    assert marker("summarization", 0) == ("step 35summarization · summarize: view: summarized 59 messages, kept 14 "
                                          "(fraction:0.25) (tokens 50,741 → 10,427)")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the chart's script")
def test_the_chart_script_unpacks_what_python_unpacks(long_run) -> None:  # noqa: ANN001
    """The component's own `unpack` (the script the browser runs) gives the figure `unpack_figure` gives."""
    decoder = _SCRIPT[_SCRIPT.index("const TYPES"):_SCRIPT.index("function stepOf")]
    program = decoder + """
const fs = require('fs');
const fig = JSON.parse(fs.readFileSync(0, 'utf8'));
// what plotly.js does with its own typed arrays (left inline), for the comparison
const typed = (v) => nest(column(v), v.shape ? v.shape.split(',').map(Number) : []);
const plain = (v) => ArrayBuffer.isView(v) ? Array.from(v) : Array.isArray(v) ? v.map(plain)
  : (v && typeof v === 'object') ? (v.bdata !== undefined ? plain(typed(v))
  : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))) : v;
table(fig.packed).then((cols) => process.stdout.write(JSON.stringify(plain(unpack(fig.data, cols)))));
"""
    figures = [timeline_spec(r) for r in small_runs()] + [timeline_spec(long_run)]
    for spec in figures:
        wire = sent(wire_figure(spec))
        out = subprocess.run(["node", "-e", program], input=json.dumps(wire), capture_output=True, text=True,
                             timeout=120, check=True)
        assert json.loads(out.stdout) == values(unpack_figure(wire)["data"])
