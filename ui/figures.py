"""Figure builders: pure functions from a Run (or engine.views data) to a plotly Figure."""

from __future__ import annotations

import copy
import html
import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.run.run import Run
from engine.run.whatif import COMPACTION_EVENTS
from engine.thread.events import Event
from engine.thread.kinds import CATEGORIES
from engine.views.decisions import DecisionSeries, decision_series, run_lines
from engine.views.timeline import (
    ThresholdLine,
    TimelineSeries,
    describe_event,
    event_markers,
    layer_order,
    recorded_compactions,
    timeline_series,
)

CATEGORY_COLORS: dict[str, str] = {
    "system": "#6b7280",
    "tools": "#a3a3a3",
    "memory": "#8b5cf6",
    "human": "#2563eb",
    "ai": "#0ea5e9",
    "tool_calls": "#14b8a6",
    "tool_results": "#f59e0b",
    "stubs": "#84cc16",
    "summary": "#ec4899",
    "reminders": "#f97316",
    "patches": "#ef4444",
    "thinking": "#38bdf8",
    "agent_prompt": "#cbd5e1",
    "first_turn_context": "#c4b5fd",
    "restored_context": "#f9a8d4",
    "unexplained": "#94a3b8",
}
CATEGORY_LABELS: dict[str, str] = {
    "system": "system prompt",
    "tools": "tool schemas",
    "memory": "memory",
    "human": "human",
    "ai": "AI text",
    "tool_calls": "tool calls",
    "tool_results": "tool results",
    "stubs": "offload stubs",
    "summary": "summary",
    "reminders": "reminders",
    "patches": "patches",
    "thinking": "thinking",
    "agent_prompt": "agent prompt (not recorded)",
    "first_turn_context": "first-turn context (not recorded)",
    "restored_context": "re-attached at compaction (not recorded)",
    "unexplained": "unexplained",
}
LAYER_COLORS: dict[str, str] = {
    "filesystem": "#65a30d",
    "subagents": "#0891b2",
    "summarization": "#db2777",
    "todo": "#ea580c",
    "dangling": "#dc2626",
    "memory": "#7c3aed",
    "input_context": "#475569",
    "recorded": "#7c3aed",
    "compaction": "#be185d",
    "context_editing": "#0d9488",
    "durable_context": "#9333ea",
    "coalesce": "#64748b",
}
LINE_STYLES: dict[str, dict[str, object]] = {
    "window": {"color": "#111827", "width": 2, "dash": "solid"},
    "trigger": {"color": "#dc2626", "width": 2, "dash": "dash"},
    "keep": {"color": "#16a34a", "width": 2, "dash": "dot"},
}
# The lanes under the timeline, in words (engine layer names are code names)
LANE_LABELS: dict[str, str] = {
    "filesystem": "offload to files",
    "subagents": "sub-agents",
    "summarization": "summarization",
    "context_editing": "context editing",
    "todo": "todo reminder",
    "dangling": "patched tool calls",
    "memory": "memory",
    "input_context": "prompt assembly",
    "recorded": "recorded history",
    "compaction": "compaction",
    "durable_context": "durable context (DeerFlow)",
    "coalesce": "system messages merged",
    "recorded (source)": "compaction in the source",
}
RECORDED_COLOR = "#7c3aed"
MAX_EVENT_LINES = 150  # vertical guides for compactions; more would clutter and bloat the figure


SHORT_RUN_STEPS = 12  # up to this many steps the steps axis ticks every step: a step is a whole model call


def esc(text: str) -> str:
    """Plotly renders a subset of HTML in hover and legend text; transcript text must stay text."""
    return html.escape(text, quote=False)


# A legend entry or lane name longer than this wraps onto more lines: the side legend's width is its
# longest line, and "unrecorded prompt (agent's own prompt + tools)" or "claude-code compacts at
# 167,000 tokens" took the legend to 317 px of an 820 px chart at 1280×720 (issue 35), the plot to 353.
# At 24 characters a real Claude Code session's plot was 220 px wide at 1024×768 (a projector), narrower
# than its legend (194 px) beside lane names of 150 px: 18 gives the plot ~70 px more there (16 gave ~12 px
# more still, but broke "summarization (6)" in two and grew the landing chart's legend by 80 px).
LABEL_LINE_CHARS = 18


def wrapped(text: str, width: int = LABEL_LINE_CHARS) -> str:
    """`text` escaped, its words wrapped onto lines of at most `width` characters joined by <br>."""
    return "<br>".join(esc(line) for line in textwrap.wrap(text, width, break_long_words=False) or [""])


def longest_line(text: str) -> int:
    """The longest line of a legend or tick text (its <br>-separated lines, entities read as one character)."""
    return max((len(html.unescape(line)) for line in str(text).split("<br>")), default=0)


def category_label(category: str) -> str:
    return CATEGORY_LABELS.get(category, category)


def lane_label(lane: str) -> str:
    return LANE_LABELS.get(lane, lane.replace("_", " "))


def compaction_by(by: str) -> str:
    """Who compacted, in words, from a compaction's "layer.kind" ("summarization.summarize" and
    "recorded.compaction" were shown to users as they are stored)."""
    layer = by.split(".", 1)[0]
    return "the source agent" if layer == "recorded" else lane_label(layer)


def _hline(line: ThresholdLine) -> dict[str, object]:
    style = LINE_STYLES.get(line.role, LINE_STYLES["trigger"])
    return {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": line.tokens, "y1": line.tokens,
            "line": style, "layer": "above", "showlegend": True, "name": wrapped(line.label), "legendgroup": line.role}


def _vline(x: float, color: str, dash: str, width: float = 1.0) -> dict[str, object]:
    return {"type": "line", "xref": "x", "x0": x, "x1": x, "yref": "y domain", "y0": 0, "y1": 1,
            "line": {"color": color, "dash": dash, "width": width}, "layer": "below"}


# A step's hover names its events (as the event lanes do), at most HOVER_EVENTS, each on one line with its
# message clipped to HOVER_MESSAGE_CHARS characters; the rest are counted ("and 3 more"): the Step page
# lists them all.
HOVER_EVENTS = 4
HOVER_MESSAGE_CHARS = 40


def _events_lines(events: Sequence[Event], count: int) -> str:
    """A step's "<br>N event(s)" line and a line naming each event (`describe_event`: layer · kind, its
    message with whitespace collapsed and clipped, tokens before → after; escaped, a message is transcript
    text), the events after HOVER_EVENTS counted, so the names and "and N more" add up to `count`."""
    out = f"<br>{count} event(s)"
    named = list(events[:HOVER_EVENTS]) if count <= HOVER_EVENTS else list(events[:HOVER_EVENTS - 1])
    for e in named:
        message = " ".join(e.message.split())
        if len(message) > HOVER_MESSAGE_CHARS:
            message = message[:HOVER_MESSAGE_CHARS - 1].rstrip() + "…"
        out += "<br>· " + esc(describe_event(e, message))
    if count > len(named):
        out += f"<br>· and {count - len(named)} more"
    return out


def _step_hover(series: TimelineSeries, window_tokens: int,
                decided: Sequence[DecisionSeries] = (),
                step_events: Sequence[Sequence[Event]] = ()) -> tuple[str, np.ndarray, list[str], list[str]]:
    """The click layer's hover: a template, per-step numbers (customdata) and the per-step extras.

    The label lists view vs window, raw, recorded input and each category of the run in the legend's
    order (a step's own zeros included, so a category always sits on the same line). The numbers
    travel as `customdata` rows read by the template: a per-step string for 1,000 steps was 227 KB
    of the 572 KB figure (issue 17); only what varies in shape (recorded input, event count) stays
    text (`text` after raw, `hovertext` at the end), empty at most steps. Column 0 is the step, which a
    click carries; column 1 the view's tokens.
    """
    present = [c for c in CATEGORIES if series.by_category[c].any()]
    n = len(series.steps)
    pct = (np.rint(100 * series.view_tokens / window_tokens).astype(np.int64) if window_tokens
           else np.zeros(n, dtype=np.int64))
    # each rule's measured quantity at the step (0 where it measured nothing), against its threshold
    shown = [d for d in decided if d.threshold is not None]
    measured = [np.nan_to_num(d.measured, nan=0.0).astype(np.int64) for d in shown]
    columns = (np.column_stack([series.steps, series.view_tokens, pct, series.raw_tokens,
                                *[series.by_category[c] for c in present], *measured])
               if n else np.zeros((0, 4 + len(present) + len(shown))))
    recorded = (series.recorded_input_tokens.tolist() if series.recorded_input_tokens is not None
                else [float("nan")] * n)
    rec_text = [f" · recorded input {int(rec):,}" if rec == rec else "" for rec in recorded]  # NaN: not recorded
    # a step with events names them (`step_events[i]`, the run's steps' events, which `event_counts` counts);
    # built only for those steps: most steps have none and their text stays empty
    events_text = [(_events_lines(step_events[i] if i < len(step_events) else (), events) if events else "")
                   for i, events in enumerate(series.event_counts.tolist())]
    # a step where a rule fired, or did something its numbers do not say, names it (the Step page has the rest)
    for d in shown:
        for i, dec in enumerate(d.decisions):
            if dec is not None and (dec.fired or dec.reason):
                events_text[i] += "<br>" + esc(f"{d.rule}: " + ("fired" if dec.fired else "not fired")
                                               + (f" ({dec.reason})" if dec.reason else ""))
    first = 4 + len(present)
    # Each rule's question ends with its answer, as on the Step page ("… ≥ 10,000? no"). The template
    # cannot choose a word by a number, so the answers travel in `hovertext` (a few bytes a step): the
    # first rule's question is in the template and its answer opens the step's hovertext; a further
    # rule's line (rare) is written out whole there.
    decisions = (f"<br>{_question(shown[0], f'%{{customdata[{first}]:,}}')} " if shown else "")
    for i in range(n):
        answers = "".join(
            ("" if j == 0 else f"<br>{_question(d, f'{int(measured[j][i]):,}')} ") + _answer(d, i)
            for j, d in enumerate(shown))
        events_text[i] = answers + events_text[i]
    template = ("<b>step %{customdata[0]}</b>: view %{customdata[1]:,}"
                + (" (%{customdata[2]}% of window)" if window_tokens else "")
                + " · raw %{customdata[3]:,}%{text}<br>"
                + "<br>".join(f"{esc(category_label(c))} %{{customdata[{4 + i}]:,}}" for i, c in enumerate(present))
                + decisions + "%{hovertext}<extra>click to open</extra>")
    # customdata: a 2-D array, sent as a typed array and copied cheaply
    # int64 on purpose: plotly's JSON encoder sends an int64 array as the narrowest integer type
    # that holds it (int16 for steps and most token counts, plotly 7.1 `to_typed_array_spec`)
    return template, columns.astype(np.int64), rec_text, events_text


def _question(d: DecisionSeries, measured: str) -> str:
    """A rule's comparison as a question, e.g. "trigger: messages 4,183 ≥ 10,000?" (`measured` already formatted)."""
    return f"{esc(d.rule)}: {esc(d.series_label)} {measured} {'≥' if d.op == '>=' else '>'} {d.threshold:,}?"


def _answer(d: DecisionSeries, i: int) -> str:
    """The question's answer at step index `i`: "yes", "no", or "-" where the rule measured nothing."""
    dec = d.decisions[i] if i < len(d.decisions) else None
    reached = dec.reached if dec is not None else None  # the Step page's answer (`Decision.text`)
    return "-" if reached is None else "yes" if reached else "no"


def click_layer(series: TimelineSeries, window_tokens: int, top: int,
                decided: Sequence[DecisionSeries] = (),
                step_events: Sequence[Sequence[Event]] = ()) -> dict[str, Any]:
    """The trace that hovers and opens a step: a transparent heatmap of one cell per step, each cell the
    step's whole column from 0 to the axis top (never decimated).

    The areas do not hover, so this carries every step's breakdown (`_step_hover`); plotly_click reports
    the cell, whose customdata starts with the step (ui/timeline_chart.py). A zero-width line through the
    view did this before, and hovered only within plotly's hover distance (20 px) of the view curve's top,
    where docs/dashboard.md promises anywhere along a step (issue 35). A heatmap is one image however
    many steps (invisible markers or bars cost a styled SVG node per step: ~0.3 s of a 1,000-step
    newPlot in Chromium, docs/benchmarks.md); its customdata is 3-D (one row of cells), sent as a typed
    array (plotly.js 4.1 decodes up to three dimensions, `decodeTypedArraySpec`).
    """
    template, customdata, rec_text, events_text = _step_hover(series, window_tokens, decided, step_events)
    n = len(series.steps)
    return {"type": "heatmap", "x": series.steps, "y": [0, top], "z": np.zeros((1, n), dtype=np.int8),
            "name": "steps (click to open)", "showscale": False, "showlegend": False, "opacity": 0,
            "colorscale": [[0, "rgba(0,0,0,0)"], [1, "rgba(0,0,0,0)"]], "zmin": 0, "zmax": 1,
            "customdata": customdata.reshape(1, n, customdata.shape[1]), "text": [rec_text],
            "hovertext": [events_text], "hoverlabel": {"align": "left"}, "hovertemplate": template,
            "xaxis": "x", "yaxis": "y"}


# Lines with more points than this are decimated (issue 17: a 16,000-step thread drew 16,000-point
# areas); every bucket keeps its lowest and highest view and raw step, so peaks and the drops a
# compaction makes survive, and all the stacked areas share one x so they still stack.
MAX_LINE_POINTS = 2_000


# Margins that already hold the legend and the axis labels spare plotly's second layout pass: it
# draws everything, measures what pushes the margins (the legend; the axes, which Streamlit's theme
# sets to automargin), grows them and draws everything again (measured: 1.0 s of a 1.3 s newPlot
# of a 1,000-step figure in Chromium). Legend text (size 11) is ~5 px a character, lane names (tick
# size 10) ~4.6 px; a label longer than estimated still gets its room, by that second pass.
LEGEND_CHAR_PX = 5.6
LEGEND_PAD_PX = 60
MAX_LEGEND_MARGIN_PX = 480
LANE_CHAR_PX = 5.0
LANE_PAD_PX = 30
MIN_LEFT_MARGIN_PX = 104  # the y title and 7-digit tick labels: 88 px measured, + 14 for the title's second line
BOTTOM_MARGIN_PX = 70  # the x title and tick labels: 67 px measured


def legend_margin(data: Sequence[dict[str, Any]], shapes: Sequence[dict[str, Any]], floor: int = 20) -> int:
    """The right margin the vertical legend at x=1.01 needs for the longest entry or group title."""
    texts = [str(t.get("name") or "") for t in data if t.get("showlegend", True) is not False]
    texts += [str((t.get("legendgrouptitle") or {}).get("text") or "") for t in data]
    texts += [str(sh.get("name") or "") for sh in shapes if sh.get("showlegend")]
    longest = max((longest_line(t) for t in texts), default=0)
    if not longest:
        return floor
    return max(floor, min(MAX_LEGEND_MARGIN_PX, int(LEGEND_PAD_PX + LEGEND_CHAR_PX * longest)))


# The side legend's rows (font size 10, measured in Chromium on the landing Timeline): an entry 19 px, each
# further wrapped line 13 px, a group's title 17 px, 6 px between groups (its tracegroupgap 5 and a pixel),
# and the legend's own padding.
LEGEND_FONT_PX, LEGEND_GROUP_GAP_PX = 10, 5
LEGEND_ROW_PX, LEGEND_WRAP_PX, LEGEND_TITLE_PX, LEGEND_BOX_PAD_PX = 19, 13, 17, 16
MAX_TIMELINE_HEIGHT_PX = 1_100


def legend_height(data: Sequence[dict[str, Any]], shapes: Sequence[dict[str, Any]]) -> int:
    """About how tall the vertical legend of these traces and shapes is drawn, in px."""
    entries = [t for t in data if t.get("showlegend", True) is not False]
    entries += [sh for sh in shapes if sh.get("showlegend")]
    titled = {t.get("legendgroup"): str((t.get("legendgrouptitle") or {}).get("text"))
              for t in data if (t.get("legendgrouptitle") or {}).get("text")}
    groups: list[object] = []
    total = 0
    for i, e in enumerate(entries):
        total += LEGEND_ROW_PX + LEGEND_WRAP_PX * str(e.get("name") or "").count("<br>")
        group = e.get("legendgroup") or ("ungrouped", i)  # an entry without a group is a group of its own
        if group not in groups:
            groups.append(group)
            total += LEGEND_TITLE_PX + LEGEND_WRAP_PX * titled[group].count("<br>") if group in titled else 0
    return total + (LEGEND_GROUP_GAP_PX + 1) * max(0, len(groups) - 1) + (LEGEND_BOX_PAD_PX if entries else 0)


def line_points(series: TimelineSeries, budget: int = MAX_LINE_POINTS) -> np.ndarray:
    """The step indices the line traces draw: all of them up to `budget`, else ≤ budget by min/max buckets."""
    n = len(series.steps)
    if n <= budget:
        return np.arange(n)
    buckets = max(1, (budget - 2) // 4)
    edges = np.linspace(0, n, buckets + 1).astype(np.int64)
    starts = np.unique(edges[:-1][edges[1:] > edges[:-1]])  # the non-empty buckets (they cover 0..n-1)
    bucket = np.repeat(np.arange(starts.size), np.diff(np.append(starts, n)))
    keep = [np.array([0, n - 1], dtype=np.int64)]
    for values in (series.view_tokens, series.raw_tokens):
        for extreme in (np.minimum, np.maximum):
            # each bucket's first step at its lowest (highest) value, as np.argmin (argmax) finds it
            at = np.flatnonzero(values == extreme.reduceat(values, starts)[bucket])
            keep.append(at[np.unique(bucket[at], return_index=True)[1]])
    return np.unique(np.concatenate(keep))


def event_lanes(run: Run) -> list[str]:
    """The lanes under the timeline, top to bottom: one per layer that acted, then recorded compactions."""
    return _lanes(event_markers(run), bool(recorded_compactions(run)))


def _lanes(markers: Sequence[Any], recorded: bool) -> list[str]:
    return layer_order(sorted({m.layer for m in markers})) + (["recorded (source)"] if recorded else [])


@lru_cache(maxsize=4)
def _subplots_layout(row_heights: tuple[float, float]) -> dict[str, Any]:
    """The two-row layout make_subplots gives (axes, domains, the default template), computed once."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.04, row_heights=list(row_heights))
    return fig.to_plotly_json()["layout"]


def timeline_figure(run: Run, *, height: int = 620, whole_window: bool = False) -> go.Figure:
    """Stacked view tokens per category, the raw curve, live threshold lines, a click layer; events in lanes below.

    The y-axis fits the data (what the model saw, the recorded input, the raw curve unless far above);
    `whole_window` scales it to the window and the live levels instead.

    Built as plain plotly JSON (`timeline_spec`) and wrapped without validation: plotly's
    per-property validation took 0.17–0.65 s of every rerun for a 1,000-step thread (the whole
    figure is ours and fixed in shape; tests/ui/test_figures.py checks it against plotly's own schema).
    """
    return go.Figure(timeline_spec(run, height=height, whole_window=whole_window), _validate=False)


def timeline_spec(run: Run, *, height: int = 620, whole_window: bool = False) -> dict[str, Any]:
    """`timeline_figure` as the plain dict it wraps (`data`, `layout`; numbers as numpy arrays).

    The Timeline chart sends this (`ui.timeline_chart.figure_payload`) without making a
    `go.Figure` of it: the Figure deep-copies the dict on the way in and again in `to_json`
    (~0.03 s CPU of a new config's critical path for a 1,000-step thread).
    """
    series = timeline_series(run)
    steps = series.steps
    markers = event_markers(run)
    recorded = recorded_compactions(run)
    lanes = _lanes(markers, bool(recorded))  # `event_lanes`, from the markers already made
    top_row = {"xaxis": "x", "yaxis": "y"}
    lane_row = {"xaxis": "x2", "yaxis": "y2"}
    idx = line_points(series, MAX_LINE_POINTS)
    xs_line = steps[idx]
    data: list[dict[str, Any]] = []
    for cat in CATEGORIES:
        y = series.by_category[cat]
        if not y.any():
            continue
        data.append({"type": "scatter", "x": xs_line, "y": y[idx], "name": wrapped(category_label(cat)), "mode": "lines",
                     "stackgroup": "view", "legendgroup": "categories",
                     "legendgrouptitle": {"text": "view by category"},
                     "line": {"width": 0.5, "color": CATEGORY_COLORS.get(cat)},
                     "hoverinfo": "skip", **top_row})  # the click layer's hover lists every category instead
    data.append({"type": "scatter", "x": xs_line, "y": series.raw_tokens[idx], "name": "raw (no layers)",
                 "mode": "lines", "line": {"color": "#374151", "width": 1.5, "dash": "dot"}, "hoverinfo": "skip",
                 **top_row})
    if series.recorded_input_tokens is not None:
        data.append({"type": "scatter", "x": xs_line, "y": series.recorded_input_tokens[idx],
                     "name": wrapped("recorded input (provider usage)"), "mode": "lines",
                     "line": {"color": "#0f766e", "width": 1, "dash": "dashdot"}, "connectgaps": False,
                     "hoverinfo": "skip", **top_row})

    # each rule's decided quantity, drawn where it reaches its line (engine.views.decisions)
    decided = decision_series(run)
    for d in decided:
        if not d.drawable:
            continue
        data.append({"type": "scatter", "x": steps, "y": d.measured, "name": wrapped(d.name), "mode": "lines",
                     "legendgroup": "decided", "legendgrouptitle": {"text": wrapped("what the policy decides on")},
                     "line": {"color": LAYER_COLORS.get(d.layer, "#334155"), "width": 1.5, "dash": "dash"},
                     "connectgaps": False, "hoverinfo": "skip", **top_row})
    lines = run_lines(run)
    shapes = [_hline(li) for li in lines if li.tokens is not None]
    for li in lines:
        if li.tokens is None:  # a message count: listed in the legend, not drawn as a level
            data.append({"type": "scatter", "x": [None], "y": [None], "mode": "lines", "name": wrapped(li.note),
                         "legendgroup": li.role, "line": {**LINE_STYLES.get(li.role, {}), "width": 1},
                         "hoverinfo": "skip", **top_row})

    for layer in lanes:
        rows = [m for m in markers if m.layer == layer]
        if not rows:
            continue
        warn = [m.severity == "warning" for m in rows]
        xs = np.array([m.step for m in rows], dtype=np.int64)
        data.append({
            "type": "scatter", "x": xs, "y": [layer] * len(rows), "mode": "markers",
            "name": wrapped(f"{lane_label(layer)} ({len(rows)})"), "meta": {"layer": layer, "events": len(rows)},
            "legendgroup": "events", "legendgrouptitle": {"text": "events by layer"}, "cliponaxis": False,
            # one value for the whole lane unless it mixes warnings in (most lanes have none)
            "marker": {"color": LAYER_COLORS.get(layer, "#334155"),
                       "size": [12 if w else 9 for w in warn] if any(warn) else 9,
                       "symbol": ["x" if w else "circle" for w in warn] if any(warn) else "circle",
                       "line": {"width": 1, "color": "white"}},
            "customdata": xs, "hovertext": [esc(m.text) for m in rows],
            "hovertemplate": "step %{x}<br>%{hovertext}<extra></extra>", **lane_row})
        if layer == "summarization":
            shapes.extend(_vline(m.step, LAYER_COLORS["summarization"], "dot") for m in rows[:MAX_EVENT_LINES])

    if recorded:
        xs = np.array([s for s, _ in recorded], dtype=np.int64)
        data.append({
            "type": "scatter", "x": xs, "y": ["recorded (source)"] * len(recorded), "mode": "markers",
            "name": wrapped(f"compaction recorded in the source ({len(recorded)})"), "legendgroup": "events",
            "cliponaxis": False,
            "marker": {"symbol": "star-diamond", "size": 15, "color": RECORDED_COLOR, "line": {"width": 1, "color": "white"}},
            "customdata": xs,
            "hovertext": [esc(f"recorded compaction ({c.trigger or 'unknown trigger'}): "
                              f"{f'{c.pre_tokens:,}' if c.pre_tokens else '?'} tokens before; summary {len(c.summary):,} chars")
                          for _, c in recorded],
            "hovertemplate": "step %{x}<br>%{hovertext}<extra></extra>", **lane_row})
        shapes.extend(_vline(s, RECORDED_COLOR, "dashdot", 2) for s, _ in recorded[:MAX_EVENT_LINES])

    decided_peak = max((int(np.nanmax(d.measured)) for d in decided if d.drawable and not np.isnan(d.measured).all()),
                       default=0)
    top, annotations = _y_top(series, lines, run.window_tokens, whole_window, decided_peak)
    data.append(click_layer(series, run.window_tokens, top, decided, [s.events for s in run.steps]))
    last = max(0, len(steps) - 1)
    pad = max(0.6, 0.01 * last)  # room for the step-0 and last-step markers: never half clipped
    layout = copy.deepcopy(_subplots_layout((0.8, 0.2) if len(lanes) > 2 else (0.86, 0.14)))
    lane_names = [wrapped(lane_label(lane)) for lane in reversed(lanes)]
    # on two lines: in one, the title ran down past the view's row beside the lane names (Compare sessions)
    layout["yaxis"].update({"title": {"text": f"tokens in the view<br>({esc(run.counts_label())})"}, "range": [0, top],
                            "tickformat": ",d"})
    steps_axis = {"title": {"text": "step (model call)"}, "range": [-pad, last + pad]}
    if lanes:
        layout["xaxis"].update({"range": [-pad, last + pad]})
        layout["xaxis2"].update(steps_axis)
        layout["yaxis2"].update({
            "categoryorder": "array", "categoryarray": list(reversed(lanes)), "range": [-0.6, max(0.6, len(lanes) - 0.4)],
            "showgrid": True, "tickfont": {"size": 10}, "tickmode": "array", "tickvals": list(reversed(lanes)),
            "ticktext": lane_names})
    else:  # nothing acted: plotly draws no axes for an empty lane row, so the steps go under the view
        del layout["xaxis2"], layout["yaxis2"]
        layout["xaxis"] = {"anchor": "y", "domain": [0.0, 1.0], **steps_axis}
        layout["yaxis"]["domain"] = [0.0, 1.0]
    if last <= SHORT_RUN_STEPS:  # plotly's own ticks would fall between steps (-0.5, 0.5, 1.5 for 2 steps)
        layout["xaxis2" if lanes else "xaxis"].update({"tick0": 0, "dtick": 1})
    # Plotly scrolls a vertical legend taller than the plot, and its last entries are the trigger and keep
    # lines: with every layer acting (the landing sample) they were out of sight. In smaller type, the
    # legend takes the whole height of the figure on the right (the top and bottom margins hold the notes
    # and the x title on the left): only a legend taller than that grows the chart, up to a bound (growing
    # it for every long legend pushed the event lanes off the first screen).
    top = notes_margin(annotations)
    height = max(height, min(MAX_TIMELINE_HEIGHT_PX, legend_height(data, shapes) + 4))
    plot_px = max(1, height - top - BOTTOM_MARGIN_PX)
    layout.update({
        "shapes": shapes, "height": height, "hovermode": "closest", "clickmode": "event+select",
        "margin": {"l": max(MIN_LEFT_MARGIN_PX, int(LANE_PAD_PX + LANE_CHAR_PX * max(map(longest_line, lane_names),
                                                                                      default=0))),
                   "r": legend_margin(data, shapes), "t": top, "b": BOTTOM_MARGIN_PX},
        "legend": {"orientation": "v", "x": 1.01, "y": 1 + top / plot_px, "yanchor": "top",
                   "font": {"size": LEGEND_FONT_PX}, "groupclick": "toggleitem", "tracegroupgap": LEGEND_GROUP_GAP_PX,
                   "maxheight": height},
        "uirevision": f"timeline-{'window' if whole_window else 'fit'}",  # a new scale resets the zoom
    })
    if annotations:
        layout["annotations"] = annotations
    return {"data": data, "layout": layout}


# How many figures were built, by kind: tests count builds (a cached config must not rebuild).
FIGURE_BUILDS: Counter[str] = Counter()


def cached_figure(run: Run, key: str, build: Callable[[], go.Figure]) -> go.Figure:
    """The figure `build` makes for `run`, built once and kept on the run (`Run.derived`, like its cost).

    A rerun that changes nothing a chart shows (a config served from the run cache, a widget below
    the chart, the Whole window toggle back) reuses the figure instead of rebuilding it, and the
    figure lives exactly as long as its run in the dashboard's run cache. Pages treat it as read-only.
    """
    store = run.derived.setdefault("ui.figures", {})
    fig = store.get(key)
    if fig is None:
        FIGURE_BUILDS[key.split(":", 1)[0]] += 1
        fig = store[key] = build()
    return fig


def cached_timeline_figure(run: Run, *, height: int = 620, whole_window: bool = False) -> go.Figure:
    """`timeline_figure`, built once per run and options."""
    return cached_figure(run, f"timeline:{height}:{int(whole_window)}",
                         lambda: timeline_figure(run, height=height, whole_window=whole_window))


NOTE_LINE_PX = 15  # one line of the notes (11 px type) in the margin above the plot
TOP_MARGIN_PX = 20


def _y_top(series: TimelineSeries, lines: Sequence[ThresholdLine], window_tokens: int,
           whole_window: bool, decided_peak: int = 0) -> tuple[int, list[dict[str, object]]]:
    """The y-axis top and the notes on what lies above it.

    By default the axis fits the data, so a small run is not a flat line under a 200k window; a raw
    curve far above what the model saw is clipped (and labelled) rather than squashing the view.
    The notes sit in the margin above the plot, one a line (`notes_margin`): drawn inside it, at its
    top right, they covered the trigger line running there (issue 35).
    """
    view_peak = int(series.view_tokens.max(initial=0))
    recorded_peak = max(decided_peak, int(np.nanmax(series.recorded_input_tokens))
                        if series.recorded_input_tokens is not None else 0)
    raw_peak = int(series.raw_tokens.max(initial=0))
    levels = [li for li in lines if li.tokens is not None]
    if whole_window:
        top = max([int(window_tokens * 1.1), view_peak, recorded_peak, *[li.tokens or 0 for li in levels]])
    else:
        data = max(view_peak, recorded_peak, 1)
        top = max(data, raw_peak) if raw_peak <= 1.5 * data else int(1.5 * data)
    top = int(top * 1.06)
    notes = []
    if raw_peak > top:
        notes.append(f"raw curve clipped: it peaks at {raw_peak:,} tokens")
    above = list(dict.fromkeys(f"{li.role} {li.tokens:,}" for li in levels if (li.tokens or 0) > top))
    if above:
        notes.append("above the chart: " + ", ".join(above))
        notes.append("(turn on Whole window to see them)")
    annotations: list[dict[str, object]] = []
    # one short note a line: a long line ran off a half-width chart (Compare sessions), and on a narrow
    # Timeline (1024 px) it ran on over the side legend's first entries
    if notes:
        annotations.append({"xref": "paper", "x": 0, "yref": "paper", "y": 1, "yshift": 4, "showarrow": False,
                            "xanchor": "left", "yanchor": "bottom", "align": "left",
                            "font": {"size": 11, "color": "#374151"}, "name": "notes",
                            "text": "<br>".join(esc(n) for n in notes)})
    return top, annotations


def notes_margin(annotations: Sequence[dict[str, object]]) -> int:
    """The top margin that holds the notes' lines above the plot (plotly does not grow it for them)."""
    lines = sum(str(a.get("text", "")).count("<br>") + 1 for a in annotations if a.get("name") == "notes")
    return TOP_MARGIN_PX + NOTE_LINE_PX * lines


def compare_figure(a: Run, b: Run, *, height: int = 420) -> go.Figure:
    """Run A and run B overlaid: view tokens per step, the raw curve, the window and levels, compactions.

    The y-axis fits A and B (the curves being compared) and the levels near them; a raw curve or a
    level far above is clipped and said under the chart, as on the Timeline (issue 35: a lesson's
    chart was scaled to the raw curve's 130k while A and B stayed under 25k). The legend sits above
    the plot, in rows (at the side it took half a 1280 px projector's chart), and B's levels are drawn
    only where they differ from A's.
    """
    sa, sb = timeline_series(a), timeline_series(b)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=sa.steps, y=sa.raw_tokens, name="raw (no layers)", mode="lines",
                             line={"color": "#9ca3af", "dash": "dot"}))
    fig.add_trace(go.Scatter(x=sa.steps, y=sa.view_tokens, name="A: view tokens", mode="lines",
                             line={"color": "#2563eb", "width": 2}))
    fig.add_trace(go.Scatter(x=sb.steps, y=sb.view_tokens, name="B: view tokens", mode="lines",
                             line={"color": "#ea580c", "width": 2}))
    # only the compactions: per-step layers (offloads, patches) would bury the lines; the delta table counts them
    marked = 0
    for label, run, symbol, color in (("A", a, "circle", "#2563eb"), ("B", b, "diamond", "#ea580c")):
        markers = [m for m in event_markers(run) if m.layer == "summarization"
                   or (m.layer, m.kind) in COMPACTION_EVENTS]
        if markers:
            marked = max(marked, max(m.tokens or 0 for m in markers))
            fig.add_trace(go.Scatter(
                x=np.array([m.step for m in markers]), y=np.array([m.tokens for m in markers]),
                mode="markers", name=f"{label}: compactions ({len(markers)})", showlegend=False,
                marker={"symbol": symbol, "size": 10, "color": color, "line": {"width": 1, "color": "white"}},
                hovertext=np.array([esc(m.text) for m in markers], dtype=object),
                hovertemplate="step %{x}<br>%{hovertext}<extra></extra>"))
    lines_a = [li for li in run_lines(a) if li.tokens is not None]
    lines_b = [li for li in run_lines(b) if li.tokens is not None]
    in_a, in_b = {(li.role, li.tokens) for li in lines_a}, {(li.role, li.tokens) for li in lines_b}
    drawn = ([("" if (li.role, li.tokens) in in_b else "A: ", li, "solid") for li in lines_a]
             + [("B: ", li, "dash") for li in lines_b if (li.role, li.tokens) not in in_a])
    data_peak = max(int(sa.view_tokens.max(initial=0)), int(sb.view_tokens.max(initial=0)), marked, 1)
    raw_peak = int(sa.raw_tokens.max(initial=0))
    near = [li.tokens or 0 for _, li, _ in drawn if (li.tokens or 0) <= 1.5 * data_peak]
    # headroom for a level's name drawn just above its line at the top of the plot
    top = int(max([data_peak, *near, raw_peak if raw_peak <= 1.5 * data_peak else 0]) * 1.15)
    # each level is named on its line, at the right end, rather than in the legend (five more entries
    # that pushed the curves down on a projector)
    shapes, labels = [], []
    for prefix, li, dash in drawn:
        line = {**_hline(li), "showlegend": False}
        line.pop("name", None)
        line["line"] = {**LINE_STYLES.get(li.role, {}), "dash": dash, "width": 1.5}
        shapes.append(line)
        if (li.tokens or 0) <= top:
            labels.append({"xref": "paper", "x": 1, "xanchor": "right", "yref": "y", "y": li.tokens,
                           "yanchor": "bottom", "showarrow": False, "text": esc(f"{prefix}{li.role} {li.tokens:,}"),
                           # on a backing: the raw curve crossing the window's label struck it through
                           "bgcolor": "rgba(255,255,255,0.85)",
                           "font": {"color": str(LINE_STYLES.get(li.role, {}).get("color", "#374151"))}})
    notes = []  # under the chart, on a line of their own under "step"
    if raw_peak > top:
        notes.append(f"raw peaks at {raw_peak:,} (clipped)")
    above = list(dict.fromkeys(f"{li.role} {li.tokens:,}" for _, li, _ in drawn if (li.tokens or 0) > top))
    if above:
        notes.append(", ".join(above) + " (above)")
    fig.update_layout(shapes=shapes, annotations=labels, height=height, hovermode="x unified",
                      margin={"l": 60, "r": 20, "t": 30, "b": 50},
                      legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.06, "yanchor": "bottom"},
                      xaxis={"title": {"text": "<br>".join(["step", *([esc(" · ".join(notes))] if notes else [])])}},
                      yaxis={"title": {"text": "tokens in the view"}, "tickformat": ",d", "range": [0, top]})
    return fig


POLICY_COLORS: tuple[str, ...] = ("#2563eb", "#ea580c", "#16a34a", "#9333ea", "#dc2626", "#0891b2", "#ca8a04", "#db2777")


def policies_figure(runs: dict[str, Run], baseline: Run | None = None, *, height: int = 440) -> go.Figure:
    """Several policies on one thread: each run's view tokens per step, its compactions marked."""
    fig = go.Figure()
    if baseline is not None:
        sb = timeline_series(baseline)
        fig.add_trace(go.Scatter(x=sb.steps, y=sb.view_tokens, name="as recorded", mode="lines",
                                 line={"color": "#111827", "width": 2, "dash": "dot"}))
    for k, (name, run) in enumerate(runs.items()):
        color = POLICY_COLORS[k % len(POLICY_COLORS)]
        s = timeline_series(run)
        fig.add_trace(go.Scatter(x=s.steps, y=s.view_tokens, name=esc(name), mode="lines",
                                 line={"color": color, "width": 2}, legendgroup=esc(name)))
        marks = [m for m in event_markers(run) if m.layer == "summarization" or (m.layer, m.kind) in COMPACTION_EVENTS]
        if marks:
            fig.add_trace(go.Scatter(
                x=np.array([m.step for m in marks]), y=np.array([m.tokens for m in marks]), mode="markers",
                name=esc(f"{name}: compactions ({len(marks)})"), legendgroup=esc(name), showlegend=False,
                marker={"size": 10, "color": color, "line": {"width": 1, "color": "white"}},
                hovertext=np.array([esc(m.text) for m in marks], dtype=object),
                hovertemplate="step %{x}<br>%{hovertext}<extra></extra>"))
    window = next(iter(runs.values())).window_tokens if runs else (baseline.window_tokens if baseline else 0)
    shapes = [_hline(ThresholdLine("window", f"window {window:,} tokens", window))] if window else []
    fig.update_layout(shapes=shapes, height=height, hovermode="x unified",
                      margin={"l": 60, "r": 20, "t": 30, "b": 50},
                      xaxis={"title": {"text": "step"}}, yaxis={"title": {"text": "tokens in the view"}, "tickformat": ",d"})
    return fig
