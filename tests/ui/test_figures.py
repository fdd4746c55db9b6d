"""Figure builders, sidebar config edits, the generated config form and safe text."""

from __future__ import annotations

import html
import json

import pytest

from engine.base.errors import ConfigError
from engine.config.presets import PRESETS
from engine.config.schema import preset
from engine.config.settings import config_from_params, url_params
from engine.config.sizes import ContextSize
from engine.run.replay import replay
from engine.thread.events import Event
from engine.tokens.counters import get_counter
from engine.views.timeline import recorded_compactions
from tests.ui.builders import HOSTILE, build_thread
from ui import controls
from ui.config_form import all_fields, apply_form, field_for_error, widget_value
from ui.figures import (
    NOTE_LINE_PX,
    TOP_MARGIN_PX,
    compare_figure,
    legend_height,
    timeline_figure,
    timeline_spec,
)
from ui.text import escape_md

COUNTER = get_counter("approximate")


@pytest.fixture(scope="module")
def run():  # noqa: ANN201
    r = replay(build_thread(10, result_words=60, recorded_compaction_at=8), preset("stress"), token_counter=COUNTER,
               layers=[])
    r.steps[4].events.append(Event("summarization", "summarize", 4, 900, 200, message=HOSTILE))
    r.steps[6].events.append(Event("dangling", "patch", 6, severity="warning", message="1 call patched"))
    return r


def test_timeline_traces_lines_and_click_layer(run) -> None:  # noqa: ANN001
    fig = timeline_figure(run)
    spec = json.loads(fig.to_json())
    names = [(t.get("name") or "").replace("<br>", " ") for t in spec["data"]]  # long names wrap (issue 35)
    assert names[:6] == ["system prompt", "tool schemas", "human", "AI text", "tool calls", "tool results"]
    assert "raw (no layers)" in names
    assert "summarization (1)" in names and "patched tool calls (1)" in names
    assert "compaction recorded in the source (1)" in names
    hit = spec["data"][-1]
    assert hit["type"] == "heatmap" and hit["opacity"] == 0  # one image, no WebGL context per redraw
    assert fig.data[-1].customdata[0][:, 0].tolist() == list(range(10))  # a click carries the step
    shapes = spec["layout"]["shapes"]
    levels = {s["legendgroup"]: s["y0"] for s in shapes if s.get("legendgroup")}
    assert levels == {"window": 40_000, "trigger": 10_000, "keep": 2_000}
    vlines = [s for s in shapes if s["xref"] == "x"]
    (recorded_step, _), = recorded_compactions(run)
    assert [(s["x0"], s["line"]["dash"]) for s in vlines] == [(4, "dot"), (recorded_step, "dashdot")]
    lanes = spec["layout"]["yaxis2"]["categoryarray"]
    assert lanes == ["recorded (source)", "dangling", "summarization"]
    # lanes read as words; the traces keep the layer's name and count for code
    assert spec["layout"]["yaxis2"]["ticktext"] == ["compaction in the<br>source", "patched tool calls", "summarization"]
    assert [t["meta"] for t in spec["data"] if t.get("meta")] == [{"layer": "summarization", "events": 1},
                                                                  {"layer": "dangling", "events": 1}]


def test_only_the_click_layer_hovers_so_overlapping_curves_still_open_a_step(run) -> None:  # noqa: ANN001
    fig = timeline_figure(run)
    top = [t for t in fig.data if t.yaxis in (None, "y")]
    hovering = [t.name for t in top if t.hoverinfo != "skip"]
    assert hovering == ["steps (click to open)"]
    raw = next(t for t in fig.data if t.name == "raw (no layers)")
    assert raw.hoverinfo == "skip"
    hit = fig.data[-1]
    # the label is a template over per-step numbers (no per-step string): view, % of window, raw, categories
    assert hit.hovertemplate == ("<b>step %{customdata[0]}</b>: view %{customdata[1]:,} (%{customdata[2]}% of "
                                 "window) · raw %{customdata[3]:,}%{text}<br>system prompt %{customdata[4]:,}<br>"
                                 "tool schemas %{customdata[5]:,}<br>human %{customdata[6]:,}<br>"
                                 "AI text %{customdata[7]:,}<br>tool calls %{customdata[8]:,}<br>"
                                 "tool results %{customdata[9]:,}%{hovertext}<extra>click to open</extra>")
    s3 = run.steps[3]
    by = s3.view_by_category
    cells = hit.customdata[0]  # one row of cells, one per step
    assert cells[3].tolist() == [3, s3.view_tokens, round(100 * s3.view_tokens / run.window_tokens), s3.raw_tokens,
                                 *[by.get(c, 0) for c in ("system", "tools", "human", "ai", "tool_calls",
                                                          "tool_results")]]
    assert sum(cells[3][4:]) == s3.view_tokens
    # what varies in shape stays text: the event count and each event named where a step has events
    # (escaped: the thread's text is never HTML), empty elsewhere
    events = hit.hovertext[0]
    assert events[4].startswith("<br>1 event(s)<br>· summarization · summarize: &lt;script&gt;")
    assert events[6] == "<br>1 event(s)<br>· dangling · patch: 1 call patched" and events[3] == ""
    assert set(hit.text[0]) == {""}  # no recorded input in this thread


def test_the_figure_is_valid_plotly_though_built_without_validation(run) -> None:  # noqa: ANN001
    """timeline_figure skips plotly's per-property validation (it took most of a rerun); plotly's own
    validating constructor must accept every property it sets."""
    import plotly.graph_objects as go

    for whole in (False, True):
        spec = json.loads(timeline_figure(run, whole_window=whole).to_json())
        checked = go.Figure(spec)  # raises on any property plotly does not know or a bad value
        assert len(checked.data) == len(spec["data"])
        assert checked.layout.xaxis.matches == "x2" and checked.layout.yaxis2.anchor == "x2"


def test_lines_past_the_point_budget_are_decimated_keeping_peaks_and_drops(monkeypatch) -> None:  # noqa: ANN001
    import numpy as np

    import ui.figures as figures
    from engine.views.timeline import TimelineSeries

    n = 10_000
    view = np.full(n, 1000, dtype=np.int64)
    view[4321] = 90_000  # a peak
    view[4322] = 10  # the drop a compaction makes
    raw = np.arange(n, dtype=np.int64)
    raw[777] = 1_000_000
    series = TimelineSeries(steps=np.arange(n), by_category={}, view_tokens=view, raw_tokens=raw,
                            state_tokens=raw, recorded_input_tokens=None, event_counts=np.zeros(n, dtype=np.int64))
    idx = figures.line_points(series, 2000)
    assert len(idx) <= 2000 and list(idx) == sorted(set(idx.tolist()))
    assert {0, n - 1, 4321, 4322, 777} <= set(idx.tolist())
    assert figures.line_points(series, n).tolist() == list(range(n))  # within budget: every step

    # in the figure: every line trace shares the decimated x, the click layer keeps every step
    r = replay(build_thread(12, result_words=60), preset("stress"), token_counter=COUNTER, layers=[])
    monkeypatch.setattr(figures, "MAX_LINE_POINTS", 6)
    spec = json.loads(figures.timeline_figure(r).to_json())
    lines = [t for t in spec["data"] if t.get("mode") == "lines" and t.get("x") != [None]
             and t["name"] != "steps (click to open)"]
    xs = {tuple(go_x(t["x"])) for t in lines}
    assert len(xs) == 1 and len(next(iter(xs))) <= 6
    assert go_x(spec["data"][-1]["x"]) == list(range(12))


def test_the_click_layer_covers_each_steps_whole_column_and_the_legend_has_its_margin(run) -> None:  # noqa: ANN001
    from ui import figures

    spec = json.loads(figures.timeline_figure(run).to_json())
    shown = [t["name"] for t in spec["data"] if t.get("showlegend", True) is not False and t.get("name")]
    shown += [sh["name"] for sh in spec["layout"]["shapes"] if sh.get("showlegend")]
    shown += [t["legendgrouptitle"]["text"] for t in spec["data"] if t.get("legendgrouptitle")]
    # long entries wrap onto lines of at most LABEL_LINE_CHARS: the legend is as wide as its longest line
    # ("trigger fraction:0.25 = 10,000 tokens" is two lines here), not as its longest entry (issue 35)
    lines = [html.unescape(line) for name in shown for line in name.split("<br>")]
    assert max(map(len, lines)) <= figures.LABEL_LINE_CHARS
    assert spec["layout"]["margin"]["r"] == int(figures.LEGEND_PAD_PX + figures.LEGEND_CHAR_PX * max(map(len, lines)))
    assert spec["layout"]["margin"]["r"] <= 200
    # one transparent cell per step, from 0 to the axis top: hover and click anywhere in a step's column
    # open it, not only within 20 px of the view curve (issue 35); one image whatever the steps
    click = spec["data"][-1]
    assert (click["type"], click["opacity"], click["showscale"]) == ("heatmap", 0, False)
    assert click["y"] == [0, spec["layout"]["yaxis"]["range"][1]]
    assert go_x(click["x"]) == list(range(len(run.steps)))
    assert click["x"]["dtype"] in ("i1", "i2")  # plotly narrows int64 arrays to the type that holds them
    assert figures.legend_margin([{"name": "x" * 500}], []) == figures.MAX_LEGEND_MARGIN_PX
    assert figures.legend_margin([], []) == 20


def go_x(values) -> list[int]:  # noqa: ANN001
    """Numbers as plotly JSON carries them (a base64 typed array or a list)."""
    import base64

    import numpy as np

    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"])).tolist()
    return list(values)


def test_the_y_axis_fits_the_data_unless_the_whole_window_is_asked_for(run) -> None:  # noqa: ANN001
    peak = max(s.view_tokens for s in run.steps)
    assert peak == max(s.raw_tokens for s in run.steps) == 1094  # no layers: raw and view are one curve
    fit = json.loads(timeline_figure(run).to_json())["layout"]
    assert fit["yaxis"]["range"] == [0, int(peak * 1.06)]
    # the note sits in the margin above the plot, never over a line inside it (issue 35), one line tall
    [note] = fit["annotations"]
    assert note["text"] == "above the chart: window 40,000, trigger 10,000, keep 2,000<br>(turn on Whole window to see them)"
    assert (note["yref"], note["y"], note["yanchor"]) == ("paper", 1, "bottom")
    assert fit["margin"]["t"] == TOP_MARGIN_PX + 2 * NOTE_LINE_PX  # two short lines, not one over the legend
    whole = json.loads(timeline_figure(run, whole_window=True).to_json())["layout"]
    assert whole["yaxis"]["range"] == [0, int(40_000 * 1.1 * 1.06)]
    assert "annotations" not in whole
    # the first and last steps' markers sit inside the plot, not on its edge
    assert fit["xaxis"]["range"] == fit["xaxis2"]["range"] == [-0.6, 9.6]


def test_a_raw_curve_far_above_the_view_is_clipped_and_said() -> None:
    r = replay(build_thread(40, result_words=800), preset("stress"), token_counter=COUNTER)
    view_peak, raw_peak = max(s.view_tokens for s in r.steps), max(s.raw_tokens for s in r.steps)
    assert (view_peak, raw_peak) == (9660, 39887)
    layout = json.loads(timeline_figure(r).to_json())["layout"]
    text = layout["annotations"][0]["text"]
    assert text.startswith(f"raw curve clipped: it peaks at {raw_peak:,} tokens")
    lines = text.count("<br>") + 1
    # the axis fits what the policy decided on too (the request before it summarized: above the view there)
    decided = max(d.measured for d in r.decisions if d.measured is not None)
    assert decided > view_peak
    data = max(view_peak, decided)
    assert layout["yaxis"]["range"] == [0, int(int(1.5 * data) * 1.06)]
    assert layout["margin"]["t"] == TOP_MARGIN_PX + lines * NOTE_LINE_PX


def test_timeline_hover_text_is_escaped(run) -> None:  # noqa: ANN001
    fig = timeline_figure(run)
    summ = next(t for t in fig.data if t.name == "summarization (1)")
    assert "<script>" not in summ.hovertext[0] and "&lt;script&gt;alert(1)&lt;/script&gt;" in summ.hovertext[0]
    warn = next(t for t in fig.data if t.name == "patched tool calls<br>(1)")
    assert list(warn.marker.symbol) == ["x"]


def test_compare_figure(run) -> None:  # noqa: ANN001
    cmp = json.loads(compare_figure(run, run).to_json())
    assert [t["name"] for t in cmp["data"]][:3] == ["raw (no layers)", "A: view tokens", "B: view tokens"]
    # the same levels on both sides are drawn once, each named on its line, and the legend runs in rows
    # above the plot
    assert len([sh for sh in cmp["layout"]["shapes"] if sh.get("legendgroup") == "trigger"]) == 1
    # (here all three lie far above the curves: said under the chart, not drawn)
    assert cmp["layout"]["xaxis"]["title"]["text"] == "step<br>window 40,000, trigger 10,000, keep 2,000 (above)"
    assert (cmp["layout"]["legend"]["orientation"], cmp["layout"]["legend"]["yanchor"]) == ("h", "bottom")


def test_compare_figure_fits_a_and_b_and_says_what_it_clips() -> None:
    """A lesson's chart was scaled to the raw curve (130k) while A and B stayed under 25k (issue 35)."""
    a = replay(build_thread(40, result_words=800), preset("stress"), token_counter=COUNTER)
    b = replay(build_thread(40, result_words=800), preset("stress").with_overrides(["summarization.keep=messages:2"]),
               token_counter=COUNTER)
    view_peak = max(s.view_tokens for r in (a, b) for s in r.steps)
    raw_peak = max(s.raw_tokens for s in a.steps)
    assert raw_peak > 1.5 * view_peak
    layout = json.loads(compare_figure(a, b).to_json())["layout"]
    top = layout["yaxis"]["range"][1]
    assert view_peak < top <= 1.5 * view_peak
    assert layout["xaxis"]["title"]["text"].startswith(f"step<br>raw peaks at {raw_peak:,} (clipped)")
    # a level both share is drawn once; one only A has (B keeps messages, no token level) says whose it is
    assert [a["text"] for a in layout["annotations"]] == ["trigger 10,000", "A: keep 2,000"]
    # each on a backing, so a curve crossing a level's name does not strike it through
    assert all(a.get("bgcolor") == "rgba(255,255,255,0.85)" for a in layout["annotations"])


# -- sidebar edits -----------------------------------------------------------------------------
def test_convert_size_keeps_the_level() -> None:
    frac = ContextSize(type="fraction", value=0.25)
    assert controls.convert_size(frac, "tokens", 40_000) == ContextSize(type="tokens", value=10_000)
    assert controls.convert_size(ContextSize(type="tokens", value=10_000), "fraction", 40_000) == frac
    assert controls.convert_size(frac, "messages", 40_000) == ContextSize(type="messages", value=50)
    assert controls.convert_size(ContextSize(type="messages", value=9), "tokens", 40_000) == ContextSize(
        type="tokens", value=20_000)


def test_trigger_clause_edits() -> None:
    config = preset("stress")
    two = controls.add_trigger_clause(config, 40_000)
    assert two.summarization.trigger == (ContextSize(type="fraction", value=0.25), ContextSize(type="messages", value=50))
    three = controls.add_trigger_clause(two, 40_000)
    assert three.summarization.trigger[2] == ContextSize(type="tokens", value=20_000)
    assert controls.remove_trigger_clause(controls.remove_trigger_clause(two, 0), 0).summarization.trigger is None
    assert controls.add_trigger_clause(preset("langchain"), 1000).summarization.trigger == (
        ContextSize(type="fraction", value=0.85),)
    changed = controls.set_trigger_clause(config, 0, ContextSize(type="tokens", value=123))
    assert changed.summarization.trigger == (ContextSize(type="tokens", value=123),)
    assert changed.summarization.keep == config.summarization.keep


def test_preset_switch_and_other_edits() -> None:
    mine = controls.set_counter(controls.set_window(preset("stress"), 64_000), "approximate")
    switched = controls.switch_preset(mine, "deerflow")
    assert switched.preset == "deerflow" and switched.model.max_input_tokens == 64_000
    assert switched.tokens.counter == "approximate"
    assert controls.set_mode(mine, "state").summarization.mode == "state"
    assert controls.set_keep(mine, ContextSize(type="messages", value=3)).summarization.keep.value == 3
    with pytest.raises(ConfigError):
        controls.set_mode(mine, "sideways")


@pytest.mark.parametrize("name", PRESETS)
def test_a_preset_picked_in_the_sidebar_is_the_preset_a_link_names(name: str) -> None:
    """Issue 31: `deepagents` picked after as-recorded kept `tokens.layer_counter: null` (another run than
    `?preset=deepagents`, and a URL with tokens.layer_counter=null); from every preset to every preset, the
    pick is the preset itself and the URL says nothing but its name."""
    for start in PRESETS:
        switched = controls.switch_preset(preset(start), name)
        assert switched == preset(name), (start, name)
        assert url_params(switched) == {"preset": name}, (start, name)
        assert config_from_params(url_params(switched)) == (switched, [])


# -- config form -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", PRESETS)
def test_form_round_trips_every_preset(name: str) -> None:
    config = preset(name)
    assert apply_form(config, {f.key: widget_value(config, f) for f in all_fields()}) == config


def test_form_covers_every_setting() -> None:
    keys = {f.key for f in all_fields()}
    flat = set(preset("stress").diff(preset("langchain"))) | {"summarization.summary_prompt", "memory.facts"}
    assert flat - {"preset"} <= keys


def test_form_errors_name_the_field() -> None:
    config = preset("stress")
    with pytest.raises(ConfigError) as err:
        apply_form(config, {"memory.facts": "- content: x\n  confidence: 5"})
    assert field_for_error(err.value.key, all_fields()) == "memory.facts"
    with pytest.raises(ConfigError) as err:
        apply_form(config, {"memory.facts": "- [unclosed"})
    assert err.value.key == "memory.facts" and "invalid YAML" in str(err.value)
    assert apply_form(config, {"summarization.trigger": "none"}).summarization.trigger is None
    assert apply_form(config, {"summarization.model_name": ""}).summarization.model_name is None


# -- safe text ---------------------------------------------------------------------------------
def test_escape_md_neutralises_markup() -> None:
    out = escape_md(HOSTILE)
    assert "<" not in out.replace("\\<", "") and "[" not in out.replace("\\[", "")
    assert ":" not in out.replace("\\:", "") and "$" not in out.replace("\\$", "")
    assert escape_md("a\nb  c") == "a b c"
    assert escape_md("x" * 10, limit=5) == "xxxx…"


@pytest.mark.parametrize("whole_window", [False, True])
def test_the_timeline_payload_is_what_plotly_would_send(run, whole_window: bool) -> None:  # noqa: ANN001
    """The chart's data is built from the figure's dict without a go.Figure (ui.timeline_chart.plotly_json);
    it must equal plotly's own JSON of that figure: typed arrays narrowed alike, NaN as null."""
    import math

    import numpy as np

    from ui.figures import timeline_spec
    from ui.timeline_chart import plotly_json

    big = replay(build_thread(40, result_words=200, recorded_compaction_at=30), preset("deepagents"),
                 token_counter=COUNTER)
    for r in (run, big):
        spec = timeline_spec(r, whole_window=whole_window)
        assert plotly_json(spec) == json.loads(timeline_figure(r, whole_window=whole_window).to_json())
    odd = {"data": [{"type": "scatter", "x": np.array([1, 70_000, 3]), "y": np.array([0.5, math.nan]), "z": np.array([[1, 2], [3, 4]]),
                     "t": np.array(["a", "b"]), "n": np.int64(7), "f": math.inf, "e": np.array([], dtype=np.int64)}],
           "layout": {"xaxis": {"range": np.array([0, 2])}, "template": {"layout": {"colorway": ["#123456"]}}}}
    import plotly.graph_objects as go

    expected = json.loads(go.Figure(odd, _validate=False).to_json())
    assert plotly_json(odd) == expected
    assert plotly_json(odd)["data"][0]["x"]["dtype"] == "i4" and plotly_json(odd)["data"][0]["z"]["shape"] == "2, 2"
    assert plotly_json(odd)["layout"]["xaxis"]["range"] == [0, 2] and plotly_json(odd)["data"][0]["f"] is None


def test_a_run_with_no_events_puts_the_steps_axis_under_the_view() -> None:
    """With no lane to draw, plotly draws no axes in the empty lane row: the steps' ticks and title
    would be missing and a blank band left under the chart (seen on a real Codex session, as recorded)."""
    import plotly.graph_objects as go

    quiet = replay(build_thread(6, result_words=20), preset("stress"), token_counter=COUNTER, layers=[])
    assert not any(s.events for s in quiet.steps)
    spec = json.loads(timeline_figure(quiet).to_json())
    layout = spec["layout"]
    assert "xaxis2" not in layout and "yaxis2" not in layout
    assert layout["xaxis"].get("showticklabels", True) and "matches" not in layout["xaxis"]
    assert layout["xaxis"]["title"]["text"] == "step (model call)"
    assert layout["yaxis"]["domain"] == [0.0, 1.0]
    assert {t.get("xaxis", "x") for t in spec["data"]} == {"x"}
    go.Figure(spec)  # still valid plotly


def test_a_short_run_ticks_whole_steps_only() -> None:
    """Two steps padded to [-0.6, 1.6] got plotly's ticks at -0.5, 0.5, 1.5: a step is a whole call."""
    for layers in ([], None):
        short = replay(build_thread(2, result_words=20, recorded_compaction_at=1 if layers is None else None),
                       preset("stress"), token_counter=COUNTER, layers=layers)
        layout = json.loads(timeline_figure(short).to_json())["layout"]
        assert ("xaxis2" in layout) == (layers is None)  # lanes (the recorded compaction) or none
        axis = layout["xaxis2"] if layers is None else layout["xaxis"]
        assert (axis["tick0"], axis["dtick"]) == (0, 1)
    long = json.loads(timeline_figure(replay(build_thread(40, result_words=20), preset("stress"),
                                             token_counter=COUNTER, layers=[])).to_json())["layout"]
    assert "dtick" not in long["xaxis"]  # a longer run keeps plotly's own tick spacing


def test_the_timeline_legend_has_the_figures_whole_height() -> None:
    """Plotly scrolls a legend taller than the plot, and the trigger and keep lines are its last entries: with
    every layer acting they were out of sight (the landing Timeline). The legend, in smaller type, takes the
    figure's whole height on the right; the chart keeps its height (a taller chart pushed the event lanes
    off the first screen) unless even that is too short."""
    from tests.ui.builders import demo_thread

    # an entry 19 px, a wrapped line 13 more, a titled group 17, 6 between groups, 16 of padding
    assert legend_height([{"name": "a", "legendgroup": "g", "legendgrouptitle": {"text": "G"}},
                          {"name": "b<br>c", "legendgroup": "g"}, {"name": "raw"}, {"showlegend": False}],
                         [{"name": "trigger", "showlegend": True, "legendgroup": "trigger"}, {"name": "x"}]) == (
        19 + 17 + (19 + 13) + 19 + 19 + 2 * 6 + 16)
    spec = timeline_spec(replay(demo_thread(), preset("stress")))
    layout = spec["layout"]
    margin, legend = layout["margin"], layout["legend"]
    needed = legend_height(spec["data"], layout["shapes"])
    assert needed > 620 - margin["t"] - margin["b"]  # more than the plot: plotly would scroll it
    # the compact legend (LABEL_LINE_CHARS, for a 1024 px projector) wraps more lines: this one grows the chart
    height = layout["height"]
    assert height == max(620, needed + 4) and legend["maxheight"] == height >= needed
    # anchored at the figure's top edge: y = 1 + the top margin in plot heights
    assert legend["yanchor"] == "top"
    assert legend["y"] == pytest.approx(1 + margin["t"] / (height - margin["t"] - margin["b"]))
    assert layout["legend"]["font"]["size"] == 10
    long = [{"name": "x", "legendgroup": f"g{i}"} for i in range(60)]
    assert legend_height(long, []) > 620  # a legend taller than the figure grows it (bounded)


def test_every_retention_band_stands_out_from_the_white_plot() -> None:
    """A needle that never appears drew as an empty row: "never in the thread" was #f8fafc on white, its
    legend swatch invisible too. Every class colour keeps a WCAG contrast of at least 1.2:1 with white
    ("not in the thread yet", the lightest, is #e5e7eb: 1.25) and "never" is darker than "not yet"."""
    from ui.eval_figures import CLASS_COLORS

    def luminance(color: str) -> float:
        channels = [int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = ((c / 12.92) if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    contrast = {cls: 1.05 / (luminance(color) + 0.05) for cls, color in CLASS_COLORS.items()}
    assert min(contrast.values()) >= 1.2, contrast
    assert contrast["never"] > contrast["absent"]


def test_a_presenter_chart_puts_its_axis_notes_on_one_line() -> None:
    """On a 720 px projector the x title's second line ("raw peaks at … (clipped)") took the plot's height."""
    import plotly.graph_objects as go

    from ui.presenter import scale_figure

    fig = scale_figure(go.Figure(layout={"xaxis": {"title": {"text": "step<br>raw peaks at 9 (clipped)"}}}))
    assert fig.layout.xaxis.title.text == "step · raw peaks at 9 (clipped)"
    assert fig.layout.xaxis.title.font.size < fig.layout.yaxis.title.font.size
    plain = scale_figure(go.Figure(layout={"xaxis": {"title": {"text": "step"}}}))
    assert plain.layout.xaxis.title.text == "step"
