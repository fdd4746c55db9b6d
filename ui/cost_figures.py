"""Cost figures: pure functions from a run's cost (engine.cost.run_cost, engine.cost.views) to a plotly Figure."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.base.wording import money
from engine.cost.payback import CompactionCost
from engine.cost.run_cost import RunCost
from engine.cost.views import cost_series, paid_back_sentence
from ui.figures import esc

KIND_COLORS = {"uncached input": "#f59e0b", "cache read": "#16a34a", "cache write": "#dc2626",
               "output": "#2563eb", "summarizer call": "#db2777"}
MODELLED_COLOR = "#111827"
RECORDED_COLOR = "#0f766e"
MAX_COMPACTION_LINES = 60


def payback_label(c: CompactionCost) -> str:
    """The label at a compaction's line: "paid back in 4 steps", "never paid back", "unpriced"."""
    if not c.priced:
        return "unpriced"
    if c.paid_back_after is None:
        return "never paid back"
    return f"paid back in {c.paid_back_after} step{'s' if c.paid_back_after != 1 else ''}"


def _money(values: list[float] | list[float | None]) -> list[str]:
    return [money(v) for v in values]


def cost_figure(cost: RunCost, *, height: int = 560) -> go.Figure:
    """Top: each step's bill stacked by kind of token (bars) and the cumulative dollars (lines: modelled,
    and recorded on the as-recorded run). Bottom: the cache hit rate per step. Compactions: vertical lines
    labelled with when they paid back."""
    s = cost_series(cost)
    steps = np.array(s.steps, dtype=np.int64)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.06, row_heights=[0.7, 0.3],
                        specs=[[{"secondary_y": True}], [{}]])
    for name, values in (("uncached input", s.input), ("cache read", s.cache_read), ("cache write", s.cache_write),
                         ("output", s.output), ("summarizer call", s.summarizer)):
        y = np.array(values, dtype=np.float64)
        if not y.any():
            continue
        fig.add_trace(go.Bar(x=steps, y=y, name=f"{name} (per step)", marker_color=KIND_COLORS[name],
                             legendgroup="bill", legendgrouptitle_text="each step's bill", text=_money(values),
                             textposition="none", hovertemplate=f"{name}: %{{text}}<extra>step %{{x}}</extra>"),
                      row=1, col=1, secondary_y=False)
    if cost.price is not None:  # unpriced: no dollars, not a flat "$0.00" line
        fig.add_trace(go.Scatter(x=steps, y=np.array(s.cumulative, dtype=np.float64), name="cumulative (modelled)",
                                 mode="lines", line={"color": MODELLED_COLOR, "width": 2.5}, legendgroup="cumulative",
                                 legendgrouptitle_text="cumulative", text=_money(s.cumulative),
                                 hovertemplate="cumulative modelled: %{text}<extra>step %{x}</extra>"),
                      row=1, col=1, secondary_y=True)
    if any(v is not None for v in s.recorded_cumulative):
        rec = np.array([np.nan if v is None else v for v in s.recorded_cumulative], dtype=np.float64)
        fig.add_trace(go.Scatter(x=steps, y=rec, name="cumulative (recorded usage)", mode="lines",
                                 line={"color": RECORDED_COLOR, "width": 2, "dash": "dash"}, legendgroup="cumulative",
                                 connectgaps=True, text=_money(s.recorded_cumulative),
                                 hovertemplate="cumulative recorded: %{text}<extra>step %{x}</extra>"),
                      row=1, col=1, secondary_y=True)
    hit = np.array([np.nan if v is None else 100 * v for v in s.hit_rate], dtype=np.float64)
    fig.add_trace(go.Scatter(x=steps, y=hit, name="hit rate (modelled)", mode="lines+markers",
                             marker={"size": 4}, line={"color": MODELLED_COLOR, "width": 1.5}, legendgroup="hit",
                             legendgrouptitle_text="cache hit rate",
                             hovertemplate="modelled hit rate: %{y:.1f}%<extra>step %{x}</extra>"), row=2, col=1)
    if any(v is not None for v in s.recorded_hit_rate):
        rhit = np.array([np.nan if v is None else 100 * v for v in s.recorded_hit_rate], dtype=np.float64)
        fig.add_trace(go.Scatter(x=steps, y=rhit, name="hit rate (recorded)", mode="lines",
                                 line={"color": RECORDED_COLOR, "width": 1.5, "dash": "dash"}, legendgroup="hit",
                                 hovertemplate="recorded hit rate: %{y:.1f}%<extra>step %{x}</extra>"), row=2, col=1)
    shapes, annotations = [], []
    for n, c in enumerate(cost.compactions[:MAX_COMPACTION_LINES]):
        shapes.append({"type": "line", "xref": "x", "x0": c.step, "x1": c.step, "yref": "paper", "y0": 0, "y1": 1,
                       "line": {"color": KIND_COLORS["summarizer call"], "dash": "dot", "width": 1.5}})
        # each label says what it is at its own line ("paid back after:" stood alone at the far left,
        # issue 35); two alternating rows so neighbouring compactions' labels do not overlap
        annotations.append({"xref": "x", "x": c.step, "yref": "paper", "y": 1.0, "yanchor": "bottom",
                            "yshift": 14 * (n % 2), "showarrow": False,
                            "font": {"size": 11, "color": KIND_COLORS["summarizer call"]},
                            "text": esc(payback_label(c)),
                            "hovertext": esc(f"the compaction at step {c.step} {paid_back_sentence(c)}")})
    fig.update_layout(barmode="stack", height=height, shapes=shapes, annotations=annotations, hovermode="x unified",
                      margin={"l": 70, "r": 70, "t": 60, "b": 40},
                      legend={"orientation": "v", "x": 1.08, "y": 1, "groupclick": "toggleitem"})
    # ticks in the pages' money format (engine.base.wording.money): cents, or two significant digits when
    # every step's bill is under two cents ("$0.500" had three decimals); the cumulative axis its own round
    # ticks (synced to the bars' it read "$1.98, $3.96, $5.95")
    top = max((sum(k) for k in zip(s.input, s.cache_read, s.cache_write, s.output, s.summarizer, strict=True)),
              default=0.0)
    fig.update_yaxes(title_text="dollars per step", tickformat=per_step_tickformat(top), row=1, col=1,
                     secondary_y=False)
    fig.update_yaxes(title_text="cumulative dollars", tickformat="$,.2f", row=1, col=1, secondary_y=True,
                     rangemode="tozero", showgrid=False, tickmode="auto")
    fig.update_yaxes(title_text="hit rate %", range=[-2, 102], row=2, col=1)
    fig.update_xaxes(title_text="step", row=2, col=1)
    return fig


def per_step_tickformat(top: float) -> str:
    """The per-step axis' d3 format: cents, unless the tallest bar is under two cents (two significant digits)."""
    return "$,.2f" if top >= 0.02 else "$,.2r"


def compare_cost_figure(a: RunCost, b: RunCost, *, height: int = 360) -> go.Figure:
    """Run A and run B: cumulative modelled dollars per step."""
    fig = go.Figure()
    for label, cost, color in (("A", a, "#2563eb"), ("B", b, "#ea580c")):
        s = cost_series(cost)
        fig.add_trace(go.Scatter(x=np.array(s.steps, dtype=np.int64), y=np.array(s.cumulative, dtype=np.float64),
                                 name=f"{label}: cumulative dollars", mode="lines", line={"color": color, "width": 2},
                                 text=_money(s.cumulative), hovertemplate=f"{label}: %{{text}}<extra>step %{{x}}</extra>"))
        for c in cost.compactions:
            fig.add_trace(go.Scatter(x=[c.step], y=[s.cumulative[c.step]], mode="markers", showlegend=False,
                                     marker={"color": color, "size": 9, "symbol": "diamond"},
                                     hovertext=[esc(f"{label}: the compaction {paid_back_sentence(c)}")],
                                     hovertemplate="%{hovertext}<extra>step %{x}</extra>"))
    fig.update_layout(height=height, hovermode="x unified", margin={"l": 70, "r": 20, "t": 30, "b": 40},
                      xaxis={"title": {"text": "step"}},
                      yaxis={"title": {"text": "cumulative dollars (modelled)"}, "tickformat": "$,.2f"})
    return fig


__all__ = ["compare_cost_figure", "cost_figure"]
