"""Presenter mode for the Workshop: projector-sized type and charts, no sidebar, keys work at once.

Everything here is static text of our own (no transcript or user text goes into the CSS or the
script), so the one script the page runs cannot carry anything a thread or a link says.
"""

from __future__ import annotations

import plotly.graph_objects as go

# Larger type for a projector, and no sidebar: the lesson uses its own thread and settings, so the
# sidebar's controls only take room (the presenter toggle stays on the page to leave the mode).
CSS = """<style>
[data-testid="stMainBlockContainer"] p, [data-testid="stMainBlockContainer"] li,
[data-testid="stMainBlockContainer"] label { font-size: 1.55rem !important; line-height: 1.45 !important; }
[data-testid="stMainBlockContainer"] h1 { font-size: 3.1rem !important; }
[data-testid="stMainBlockContainer"] h3 { font-size: 2.1rem !important; }
[data-testid="stMainBlockContainer"] [data-testid="stMetricValue"],
[data-testid="stMainBlockContainer"] [data-testid="stMetricValue"] p { font-size: 4rem !important; line-height: 1.2 !important; }
[data-testid="stMainBlockContainer"] [data-testid="stMetricLabel"] p { font-size: 1.35rem !important; }
[data-testid="stMainBlockContainer"] [data-testid="stMetricDelta"],
[data-testid="stMainBlockContainer"] [data-testid="stMetricDelta"] p { font-size: 1.3rem !important; }
[data-testid="stMainBlockContainer"] [data-baseweb="select"] div { font-size: 1.35rem !important; }
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"]
  { display: none !important; }
</style>"""

# Streamlit's button shortcuts (→, ←, Page Down, Page Up) ignore key presses while an <input> has
# the focus (its key filter in static/js/index.*.js skips INPUT, TEXTAREA and SELECT targets), and
# turning presenter mode on leaves the focus on the toggle's checkbox: a clicker's first press did
# nothing. The script gives the page the focus unless the user is typing in a text or number box.
FOCUS_SCRIPT = """<script>
(() => {
  const doc = window.parent ? window.parent.document : document;
  const active = doc.activeElement;
  const typing = active && (active.tagName === "TEXTAREA" || active.isContentEditable
    || (active.tagName === "INPUT" && !["checkbox", "radio", "button"].includes(active.type)));
  if (typing) return;
  if (active && active.blur) active.blur();
  const main = doc.querySelector('[data-testid="stMain"]');
  if (main) { if (!main.hasAttribute("tabindex")) main.setAttribute("tabindex", "-1"); main.focus({preventScroll: true}); }
})();
</script>"""

FONT_SCALE = 1.8  # chart text on a projector, against the dashboard's 11-12 px defaults
BASE_FONT = 12


def scale_figure(fig: go.Figure, scale: float = FONT_SCALE) -> go.Figure:
    """The same figure with every text (axes, ticks, legend, hover, title) scaled for a projector."""
    size = round(BASE_FONT * scale)
    fig.update_layout(font={"size": size}, legend={"font": {"size": size}}, hoverlabel={"font": {"size": size}},
                      title={"font": {"size": round(size * 1.2)}})
    fig.update_xaxes(title_font={"size": size}, tickfont={"size": round(size * 0.9)})
    fig.update_yaxes(title_font={"size": size}, tickfont={"size": round(size * 0.9)})
    return fig


__all__ = ["CSS", "FOCUS_SCRIPT", "FONT_SCALE", "scale_figure"]
