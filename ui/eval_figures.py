"""Figures for the Evals and Workshop pages (pure: report -> plotly Figure), and figure export."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from engine.base.wording import money
from engine.evals import DriftReport, NeedleReport
from engine.evals.sweep import PARETO_AXES, SweepResult, cost_axis
from ui.figures import esc

# One colour per retention class; the session intent's statuses reuse them (kept = in view, ...).
# Every band must stand out from the white plot: "never in the thread" was #f8fafc, so a needle that never
# appears drew as an empty row, its legend swatch invisible; it is a mid grey, darker than "not yet".
CLASS_COLORS: dict[str, str] = {
    "never": "#94a3b8",
    "absent": "#e5e7eb",
    "in_view": "#16a34a",
    "in_summary": "#2563eb",
    "recoverable": "#f59e0b",
    "lost": "#dc2626",
}
CLASS_LABELS: dict[str, str] = {
    "never": "never in the thread",
    "absent": "not in the thread yet",
    "in_view": "in view",
    "in_summary": "in summary",
    "recoverable": "recoverable (VFS)",
    "lost": "lost",
}
# before the first compaction nothing has removed the first human message: it is in the view
INTENT_AS_CLASS = {"before": "in_view", "kept": "in_view", "summary": "in_summary", "missing": "lost"}
_CODES = {c: i for i, c in enumerate(CLASS_COLORS)}
INTENT_ROW = "session intent"
PARETO_COLOR = "#db2777"
OTHER_COLOR = "#64748b"


def _discrete_scale() -> list[list[float | str]]:
    n = len(CLASS_COLORS)
    scale: list[list[float | str]] = []
    for i, color in enumerate(CLASS_COLORS.values()):
        scale.append([i / n, color])
        scale.append([(i + 1) / n, color])
    return scale


def retention_figure(needles: NeedleReport, drift: DriftReport | None = None, *, height: int | None = None) -> go.Figure:
    """One band per needle (and the session intent): its class at every step; compactions as lines."""
    rows = list(needles.needles)
    classes = [needles.classes[n] for n in rows]
    if drift is not None and drift.intent is not None:
        rows.append(INTENT_ROW)
        classes.append([INTENT_AS_CLASS[s] for s in drift.statuses])
    steps = len(classes[0]) if classes else 0
    z = np.array([[_CODES[c] for c in row] for row in classes], dtype=np.int8).reshape(len(rows), steps)
    labels = [esc(r if len(r) <= 32 else r[:31] + "…") for r in rows]
    hover = np.array([[CLASS_LABELS[c] for c in row] for row in classes], dtype=object).reshape(len(rows), steps)
    fig = go.Figure(go.Heatmap(
        z=z, x=np.arange(steps), y=labels, zmin=-0.5, zmax=len(CLASS_COLORS) - 0.5, colorscale=_discrete_scale(),
        showscale=False, customdata=hover, xgap=0, ygap=3,
        hovertemplate="step %{x}<br>%{y}: %{customdata}<extra></extra>"))
    for cls, color in CLASS_COLORS.items():  # legend entries for the bands
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=CLASS_LABELS[cls],
                                 marker={"symbol": "square", "size": 12, "color": color}))
    shapes = [{"type": "line", "xref": "x", "yref": "paper", "x0": c.step - 0.5, "x1": c.step - 0.5, "y0": 0, "y1": 1,
               "line": {"color": "#111827" if c.source == "simulated" else "#7c3aed", "width": 1,
                        "dash": "dot" if c.source == "simulated" else "dashdot"}}
              for c in needles.compactions[:150]]
    if drift is not None and drift.placeholder_steps:
        fig.add_trace(go.Scatter(x=np.array(drift.placeholder_steps), y=[labels[-1]] * len(drift.placeholder_steps),
                                 mode="markers", name="too long to summarize",
                                 marker={"symbol": "x", "size": 9, "color": "#111827"},
                                 hovertemplate="step %{x}: placeholder summary<extra></extra>"))
    fig.update_layout(
        shapes=shapes, height=height or 140 + 46 * max(1, len(rows)), margin={"l": 10, "r": 10, "t": 30, "b": 40},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        xaxis={"title": {"text": "step (dotted lines: compactions)"}, "range": [-0.5, max(steps, 1) - 0.5]},
        yaxis={"autorange": "reversed", "automargin": True}, plot_bgcolor="white")
    return fig


SWEEP_X_AXES = {"peak_view_tokens": "peak view tokens", "dollars": "dollars", "recovery_calls": "re-fetches after compactions",
                "recovery_tokens": "re-fetched tokens"}
SWEEP_Y_AXES = {"retention": "needle retention", "survival": "facts kept after compactions"}
COST_AXIS_LABELS = {"dollars": "dollars", "summarizer_input_tokens": "summarizer input tokens"}
# the Pareto axes in words (engine.evals.sweep.PARETO_AXES; `ctxi sweep --pareto` takes the keys)
PARETO_AXIS_LABELS = {
    "peak_view_tokens": "peak view tokens", "retention": "needle retention", "recovery": "needle recovery",
    "drift": "goal-drift score", "survival": "facts kept after compactions",
    "recovery_calls": "re-fetches after compactions", "recovery_tokens": "re-fetched tokens",
    "recovery_dollars": "re-fetch dollars", "cache_lost_dollars": "dollars of cache lost", "dollars": "dollars",
    "summarizer_input_tokens": "summarizer input tokens", "compactions": "compactions",
    "tokens_saved": "tokens saved", "cost": "cost",  # dollars when priced, else summarizer input tokens (the help says)
}


def pareto_axis_label(key: str) -> str:
    """A Pareto axis as a chip reads: its words and which way is better, "peak view tokens (lower is better)"."""
    better = {"min": "lower", "max": "higher"}.get(PARETO_AXES.get(key, ""), "")
    return f"{PARETO_AXIS_LABELS.get(key, key)}" + (f" ({better} is better)" if better else "")


def sweep_figure(result: SweepResult, *, height: int = 460, x_axis: str = "peak_view_tokens",
                 y_axis: str = "retention") -> go.Figure:
    """Peak view tokens (or dollars) vs retention, marker size = the Pareto front's cost axis (dollars when the
    runs are priced, else summarizer input tokens: engine.evals.sweep.cost_axis); the Pareto front joined up."""
    metrics = [p.metrics for p in result.points]
    axis = cost_axis(metrics)
    x_key = x_axis if x_axis in SWEEP_X_AXES and (x_axis != "dollars" or axis == "dollars") else "peak_view_tokens"
    x = np.array([m[x_key] for m in metrics], dtype=np.float64 if x_key == "dollars" else np.int64)
    y_key = y_axis if y_axis in SWEEP_Y_AXES else "retention"
    y = np.array([np.nan if m.get(y_key) is None else m[y_key] for m in metrics], dtype=np.float64)
    cost = np.array([m[axis] for m in metrics], dtype=np.float64)
    spread = cost.max() - cost.min()
    # relative to the cheapest point: costs of one sweep are often close, and equal sizes would hide them
    size = 10 + 30 * (cost - cost.min()) / spread if spread > 0 else np.full(len(cost), 14.0)
    front = np.array([p.pareto for p in result.points], dtype=bool)
    hover = [esc(f"{p.point.label}<br>peak {m['peak_view_tokens']:,} · retention {m['retention']} · "
                 f"drift {m['drift']}<br>summarizer {m['summarizer_calls']} calls, "
                 f"{m['summarizer_input_tokens']:,} tokens<br>cost "
                 + money(m.get("dollars"))  # the pages' one format (was "$12.6147", issue 35)
                 + (f" · cache hit rate {100 * m['hit_rate']:.1f}%" if m.get("hit_rate") is not None else "")
                 + (f"<br>facts kept {m['survival']} · {m['recovery_calls']} re-fetches" if "survival" in m else "")
                 ).replace("&lt;br&gt;", "<br>")
             for p, m in zip(result.points, metrics, strict=True)]
    fig = go.Figure()
    for on_front, name, color in ((False, "dominated", OTHER_COLOR), (True, "Pareto front", PARETO_COLOR)):
        idx = np.flatnonzero(front == on_front)
        if not len(idx):
            continue
        fig.add_trace(go.Scatter(
            x=x[idx], y=y[idx], mode="markers", name=f"{name} ({len(idx)})", customdata=idx,
            hovertext=[hover[i] for i in idx], hovertemplate="%{hovertext}<extra></extra>",
            marker={"size": size[idx], "color": color, "opacity": 0.85 if on_front else 0.5,
                    "line": {"width": 2 if on_front else 0, "color": "#111827"}}))
    order = np.flatnonzero(front)
    order = order[np.argsort(x[order], kind="stable")]
    if len(order) > 1:
        fig.add_trace(go.Scatter(x=x[order], y=y[order], mode="lines", name="front", hoverinfo="skip",
                                 line={"color": PARETO_COLOR, "width": 1, "dash": "dot"}, showlegend=False))
    fig.update_layout(
        height=height, margin={"l": 60, "r": 20, "t": 30, "b": 50}, hovermode="closest",
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        xaxis={"title": {"text": f"{SWEEP_X_AXES[x_key]} (lower is better) · marker size: {COST_AXIS_LABELS[axis]}"},
               "tickformat": "$,.3f" if x_key == "dollars" else ",d"},
        yaxis={"title": {"text": f"{SWEEP_Y_AXES[y_key]} (higher is better)"}, "range": [-0.05, 1.05]})
    return fig


def selected_points(event: object) -> list[int]:
    """Sweep point indices a plotly selection points at (PlotlyState or the plain dict AppTest gives)."""
    if not event:
        return []
    selection = event.get("selection") if isinstance(event, dict) else getattr(event, "selection", None)
    points = selection.get("points") if isinstance(selection, dict) else getattr(selection, "points", None)
    out: list[int] = []
    for p in points or []:
        data = p.get("customdata") if isinstance(p, dict) else None
        if isinstance(data, (list, tuple)):
            data = data[0] if data else None
        try:
            out.append(int(data))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
    return out


# -- export ------------------------------------------------------------------------------------
def figure_html(fig: go.Figure) -> bytes:
    """A standalone HTML file with plotly.js inlined: opens offline, interactive."""
    return fig.to_html(include_plotlyjs=True, full_html=True, config={"displaylogo": False}).encode("utf-8")


def chrome_path() -> str | None:
    for candidate in (os.environ.get("BROWSER_PATH"), shutil.which("chromium"), shutil.which("chromium-browser"),
                      shutil.which("google-chrome")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def png_export_available() -> bool:
    """kaleido (PNG export) is installed and a Chrome/Chromium it can drive is on this machine."""
    return importlib.util.find_spec("kaleido") is not None and chrome_path() is not None


def figure_png(fig: go.Figure, *, width: int = 1400, height: int | None = None, scale: float = 2.0) -> bytes:
    """A PNG through kaleido and the local Chromium (no download: kaleido finds /usr/bin/chromium)."""
    path = chrome_path()
    if path and not os.environ.get("BROWSER_PATH"):
        os.environ["BROWSER_PATH"] = path  # choreographer's lookup
    return fig.to_image(format="png", width=width, height=height or fig.layout.height or 600, scale=scale)


def names(items: Sequence[str]) -> str:
    return ", ".join(items)
