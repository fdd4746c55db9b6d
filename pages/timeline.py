"""Timeline: tokens per step by category, the raw curve, live threshold lines, events; click a step."""

from __future__ import annotations

import streamlit as st

from engine.run import Run
from engine.timeline_table import rows_csv, timeline_rows
from engine.views import event_markers, recorded_compactions, threshold_lines
from ui import session
from ui.cost_panel import timeline_cost
from ui.figures import cached_timeline_figure
from ui.frame import require_frame
from ui.widgets import no_run_message, run_metrics, table

require_frame()

st.title("Timeline")
run = session.current_run()
if run is None:
    no_run_message()
    st.stop()

run_metrics(run)


@st.fragment
def chart(run: Run) -> None:
    """The chart, its scale toggle and its exports: toggling Whole window reruns only this.

    The figure is built once per run and scale (`ui.figures.cached_timeline_figure`): a config
    served from the run cache redraws without rebuilding it.
    """
    whole_window = st.toggle("Whole window", key="timeline_whole_window",
                             help="Scale the chart to the window and the trigger and keep levels; "
                                  "off, it fits what the model saw.")
    fig = cached_timeline_figure(run, whole_window=whole_window)
    name = f"timeline-{run.thread.thread_id}"[:80]
    event = st.plotly_chart(fig, key=session.timeline_key(), on_select="rerun", selection_mode="points",
                            config={"displaylogo": False,
                                    # the camera button of the chart's toolbar saves this PNG (drawn in the browser)
                                    "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2}})
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

    exports = st.columns([1, 1, 4], vertical_alignment="center")
    # callables: the file is built when the button is pressed, not on every rerun
    exports[0].download_button("Table (CSV)", data=lambda: rows_csv(timeline_rows(run)), file_name=f"{name}.csv",
                               mime="text/csv", key="timeline_csv", icon=":material/table:", on_click="ignore")
    exports[1].download_button("Chart (HTML)", data=lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                               file_name=f"{name}.html", mime="text/html", key="timeline_html",
                               icon=":material/download:", on_click="ignore")
    exports[2].caption("PNG: the camera button in the chart's toolbar (top right of the chart).")


chart(run)

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
