"""Timeline: tokens per step by category, the raw curve, live threshold lines, events; click a step."""

from __future__ import annotations

import streamlit as st

from engine.views import event_markers, recorded_compactions, threshold_lines
from ui import session
from ui.cost_panel import timeline_cost
from ui.figures import timeline_figure
from ui.frame import require_frame
from ui.widgets import no_run_message, run_metrics, table

require_frame()

st.title("Timeline")
run = session.current_run()
if run is None:
    no_run_message()
    st.stop()

run_metrics(run)

fig = timeline_figure(run)
event = st.plotly_chart(fig, key=session.timeline_key(), on_select="rerun", selection_mode="points",
                        config={"displaylogo": False})
picked = session.selected_steps(event)
if picked:
    session.set_step(picked[0])
    session.consume_timeline_click()
    st.switch_page("pages/step.py")

notes = [li.note for li in threshold_lines(run.config, run.window_tokens, run.thread.model, run.thread) if li.note]
caption = ("Stacked areas: what the model saw at each step, by category. Dotted: the raw thread with no layers. "
           "Lines: window, trigger and keep from the live settings. Markers: events, coloured by layer "
           "(× = warning). Click a step to open it.")
if recorded_compactions(run):
    caption += " Purple stars and dash-dot lines: compactions the source agent itself recorded."
st.caption(caption + ("  \n" + " · ".join(notes) if notes else ""))

cols = st.columns([1, 3])
with cols[0]:
    target = st.number_input("Open step", min_value=0, max_value=max(0, len(run.steps) - 1),
                             value=session.current_step(run), step=1, key="timeline_open_step")
    if st.button("Open in Step page", key="timeline_open"):
        session.set_step(int(target))
        st.switch_page("pages/step.py")

markers = event_markers(run)
with cols[1]:
    st.markdown(f"**Events** ({len(markers):,})")
    if markers:
        table([{"step": m.step, "layer": m.layer, "kind": m.kind, "severity": m.severity, "what happened": m.text}
                      for m in markers], height=260)
    else:
        st.caption("No layer acted on this thread with these settings.")

timeline_cost(run)
