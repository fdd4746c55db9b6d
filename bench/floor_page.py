"""The browser bench's floor: a bare Streamlit page that reruns and draws a Plotly figure of a given size.

No session state, engine, sidebar frame or tables: one sidebar number box and one chart. The
figure has the same traces and points as the Timeline figure the bench measures for the app's edit
this one is paired with (the shapes are read from the JSON file `bench/bench_browser.py` writes,
`CTXI_FLOOR_SHAPE`: one per level, and a default): for each trace its type, subplot, mode and
point count, drawn with numpy data (typed arrays, as plotly sends the Timeline's numbers), no
hover text. The number box moves one horizontal line, so each edit sends a new figure.

    streamlit run bench/floor_page.py   (started by bench/bench_browser.py)
"""

from __future__ import annotations

import json
import os

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

st.set_page_config(page_title="floor", layout="wide")


@st.cache_data
def _shape(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


shapes = _shape(os.environ["CTXI_FLOOR_SHAPE"])
level = st.sidebar.number_input("level", key="level", value=0.25, min_value=0.01, max_value=1.0, step=0.05,
                                format="%.2f")
shape = shapes["by_level"].get(f"{level:.2f}", shapes["default"])
rng = np.random.default_rng(0)
fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.04, row_heights=[0.8, 0.2])
for k, trace in enumerate(shape["traces"]):
    n = trace["points"]
    if trace["row"] == 2:  # an event lane: markers at steps, on a category axis
        x, y = np.sort(rng.integers(0, shape["steps"], n)), np.full(n, f"lane {k}", dtype=object)
    else:
        x, y = np.arange(n), rng.integers(1_000, 20_000, n)
    if trace["type"] == "heatmap":  # the Timeline's step columns: one transparent cell per step
        fig.add_trace(go.Heatmap(x=np.arange(n), y=[0, 20_000], z=np.zeros((1, n), dtype=np.int8), opacity=0,
                                 showscale=False), row=1, col=1)
    elif trace["type"] == "scattergl":
        fig.add_trace(go.Scattergl(x=x, y=y, mode=trace["mode"]), row=trace["row"], col=1)
    else:
        fig.add_trace(go.Scatter(x=x, y=y, mode=trace["mode"], stackgroup="s" if trace["stacked"] else None),
                      row=trace["row"], col=1)
fig.add_hline(y=level * shape["window"], line={"color": "#dc2626", "dash": "dash"}, row=1, col=1)
fig.update_layout(height=shape["height"])
st.plotly_chart(fig, key="floor", on_select="rerun", selection_mode="points")
