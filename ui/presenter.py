"""Presenter mode for the Workshop: projector-sized type and charts, no sidebar, keys work at once.

Everything here is static text of our own (no transcript or user text goes into the CSS or the
script), so the one script the page runs cannot carry anything a thread or a link says.
"""

from __future__ import annotations

import plotly.graph_objects as go

# Where the Try-this slide's chart goes: a keyed container (Streamlit gives it the class `st-key-…`)
# that CSS sizes to what the screen leaves below the slide's header and above its navigation, so the
# chart, drawn with `height="stretch"`, fills it at 1280×720 as at 1920×1080 (one slide = one screen).
CHART_BOX = "ws_chart_box"
# What the slide takes above and below the chart, in px (rem-based type: the same at both sizes):
# the top bar, the title, the metrics row; the navigation row and the footer line.
CHART_RESERVE_PX = 490
# Below 800 px of height the metrics row is set smaller (value 2.4rem, no 3.4rem), which gives the chart
# back what it no longer takes: at 1280×720 the chart's plot was 75 px tall, its curves and the trigger,
# keep and window labels piled on each other.
CHART_RESERVE_SMALL_PX = 445

# Larger type for a projector, and no sidebar: the lesson uses its own thread and settings, so the
# sidebar's controls only take room (the presenter toggle stays on the page to leave the mode). Every
# control reads at the size of the text beside it (issue 35: the lesson select, the slide box and the
# radio dots stayed at ~13 px beside 25 px text), no focus frame around the slide (the page takes the
# focus so the keys work: FOCUS_SCRIPT), no header band. Below 800 px of height (a 1280×720
# projector) the points are a little smaller, so a lesson's four longest points still fit.
CSS = f"""<style>
[data-testid="stMainBlockContainer"] {{ padding-top: 1.2rem !important; padding-bottom: 0.5rem !important; }}
[data-testid="stHeader"] {{ display: none !important; }}
[data-testid="stMainBlockContainer"] p, [data-testid="stMainBlockContainer"] li,
[data-testid="stMainBlockContainer"] label {{ font-size: 1.55rem !important; line-height: 1.4 !important; }}
[data-testid="stMainBlockContainer"] h1 {{ font-size: 2.6rem !important; padding: 0.3rem 0 0.5rem 0 !important; }}
[data-testid="stMainBlockContainer"] h3 {{ font-size: 2rem !important; }}
[data-testid="stMainBlockContainer"] [data-testid="stMetricValue"],
[data-testid="stMainBlockContainer"] [data-testid="stMetricValue"] p {{ font-size: 3.4rem !important; line-height: 1.1 !important; }}
[data-testid="stMainBlockContainer"] [data-testid="stMetricLabel"] p {{ font-size: 1.3rem !important; }}
[data-testid="stMainBlockContainer"] [data-testid="stMetricDelta"],
[data-testid="stMainBlockContainer"] [data-testid="stMetricDelta"] p {{ font-size: 1.2rem !important; }}
[data-testid="stMainBlockContainer"] [data-testid="stSelectbox"] input,
[data-testid="stMainBlockContainer"] [data-testid="stNumberInputField"] {{ font-size: 1.55rem !important; }}
[data-testid="stMainBlockContainer"] [data-testid="stSelectbox"] div:has(> input),
[data-testid="stMainBlockContainer"] [data-testid="stNumberInputContainer"] {{ min-height: 3rem !important; }}
[data-testid="stMainBlockContainer"] [data-testid="stSelectbox"] input {{ height: 2.8rem !important; }}
[data-testid="stMainBlockContainer"] [role="radiogroup"] label > div:first-of-type > div:first-child
  {{ transform: scale(1.55); margin-right: 0.45rem !important; }}
[data-testid="stMainBlockContainer"] [data-testid="stCheckbox"] label > div:first-of-type,
[data-testid="stMainBlockContainer"] [data-baseweb="checkbox"] > div:first-of-type {{ transform: scale(1.4); }}
[data-testid="stMainBlockContainer"] button p {{ font-size: 1.4rem !important; }}
.st-key-{CHART_BOX} {{ flex: 0 0 auto !important; height: max(240px, calc(100vh - {CHART_RESERVE_PX}px)) !important; min-height: 0 !important;
  max-height: max(240px, calc(100vh - {CHART_RESERVE_PX}px)) !important; overflow: hidden; }}
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"]
  {{ display: none !important; }}
@media (max-height: 800px) {{
  [data-testid="stMainBlockContainer"] li {{ font-size: 1.35rem !important; line-height: 1.35 !important; }}
  [data-testid="stMainBlockContainer"] h1 {{ font-size: 2.3rem !important; }}
  [data-testid="stMainBlockContainer"] [data-testid="stMetricValue"],
  [data-testid="stMainBlockContainer"] [data-testid="stMetricValue"] p {{ font-size: 2.4rem !important; }}
  [data-testid="stMainBlockContainer"] [data-testid="stMetricLabel"] p {{ font-size: 1.15rem !important; }}
  [data-testid="stMainBlockContainer"] [data-testid="stMetricDelta"],
  [data-testid="stMainBlockContainer"] [data-testid="stMetricDelta"] p {{ font-size: 1.05rem !important; }}
  .st-key-{CHART_BOX} {{ height: max(240px, calc(100vh - {CHART_RESERVE_SMALL_PX}px)) !important;
    max-height: max(240px, calc(100vh - {CHART_RESERVE_SMALL_PX}px)) !important; }}
}}
</style>"""

# Streamlit's button shortcuts (→, ←, Page Down, Page Up) ignore key presses while an <input> has
# the focus (its key filter in static/js/index.*.js skips INPUT, TEXTAREA and SELECT targets), and
# turning presenter mode on leaves the focus on the toggle's checkbox: a clicker's first press did
# nothing. The script takes the focus off such a control unless the user is typing in a text or
# number box; the document then gets the keys. It used to focus the main area instead, and Chromium
# drew its focus ring, a grey frame, around every slide (issue 35).
FOCUS_SCRIPT = """<script>
(() => {
  const doc = window.parent ? window.parent.document : document;
  const active = doc.activeElement;
  const typing = active && (active.tagName === "TEXTAREA" || active.isContentEditable
    || (active.tagName === "INPUT" && !["checkbox", "radio", "button"].includes(active.type)));
  if (typing) return;
  if (active && active !== doc.body && active.blur) active.blur();
})();
</script>"""

FONT_SCALE = 1.8  # chart text on a projector, against the dashboard's 11-12 px defaults
BASE_FONT = 12


def scale_figure(fig: go.Figure, scale: float = FONT_SCALE) -> go.Figure:
    """The same figure with every text (axes, ticks, legend, hover, title) scaled for a projector."""
    size = round(BASE_FONT * scale)
    # the legend a little smaller than the axes: its rows sit above the plot and take its height
    fig.update_layout(font={"size": size}, legend={"font": {"size": round(size * 0.8)}},
                      hoverlabel={"font": {"size": size}}, title={"font": {"size": round(size * 1.2)}})
    fig.update_xaxes(title_font={"size": size}, tickfont={"size": round(size * 0.9)})
    fig.update_yaxes(title_font={"size": size}, tickfont={"size": round(size * 0.9)})
    # the x title's notes ("step<br>raw peaks at … (clipped) · window … (above)") on one line, a little
    # smaller: their second line took the plot's height on a 720 px projector
    title = fig.layout.xaxis.title.text
    if title and "<br>" in title:
        fig.update_xaxes(title={"text": title.replace("<br>", " · "), "font": {"size": round(size * 0.75)}})
    return fig


__all__ = ["CHART_BOX", "CSS", "FOCUS_SCRIPT", "FONT_SCALE", "scale_figure"]
