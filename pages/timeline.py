"""Timeline: tokens per step by category, the raw curve, live threshold lines, events; click a step."""

from __future__ import annotations

import streamlit as st

from engine.run.run import Run
from engine.views.decisions import run_lines
from engine.views.timeline import event_markers, recorded_compactions
from engine.views.timeline_table import rows_csv, timeline_rows
from ui import session, sidebar
from ui.cost_panel import timeline_cost
from ui.figures import cached_timeline_figure, timeline_spec
from ui.frame import require_frame
from ui.timeline_chart import figure_payload, timeline_chart
from ui.widgets import no_run_message, run_metrics, table, table_height

require_frame()

st.title("Timeline")


def _open_clicked_step(step: int) -> None:
    # a callback (the chart's click trigger): app.py switches pages before this page draws again
    session.set_step(step)
    session.go_to("pages/step.py")


@st.fragment
def chart(run: Run) -> None:
    """The chart, its scale toggle and its exports: toggling Whole window reruns only this.

    The figure and its JSON are made once per run and scale (`ui.timeline_chart.figure_payload`),
    and the browser keeps the figures it drew (`ui.timeline_chart`): a config served from the run
    cache is shown again without being rebuilt, resent or redrawn.
    """
    whole_window = st.toggle("Whole window", key="timeline_whole_window",
                             help="Scale the chart to the window and the trigger and keep levels; "
                                  "off, it fits what the model saw.")
    height = 620
    spec = lambda: timeline_spec(run, height=height, whole_window=whole_window)  # noqa: E731
    payload = figure_payload(run, f"timeline:{height}:{int(whole_window)}", spec)
    name = f"timeline-{run.thread.thread_id}"[:80]
    timeline_chart(payload, key="timeline_chart", on_click=_open_clicked_step,
                   config={"displaylogo": False,
                           # the camera button of the chart's toolbar saves this PNG (drawn in the browser)
                           "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2}})
    if (target := session.pending_page()) is not None:  # a click ran `_open_clicked_step`; this may be
        session.switch_page(target)                      # a fragment-only rerun, which app.py does not see

    notes = [li.note for li in run_lines(run) if li.note]
    caption = ("Stacked areas: what the model saw at each step, by category. Dotted: the raw thread with no layers. "
               "Dashed curves: what each policy decides on (the request before it acts, or its own count), with its "
               "trigger and keep lines on that curve: the curve reaches its line where the policy fires. Markers: "
               "events, coloured by layer (× = warning). Click a step to open it.")
    if recorded_compactions(run):
        caption += " Purple stars and dash-dot lines: compactions the source agent itself recorded."
    st.caption(caption + ("  \n" + " · ".join(notes) if notes else ""))

    # a row that wraps, each button as wide as its label: three columns cut them to "Ta…" and "Ch…" at 1024 px
    exports = st.container(horizontal=True, vertical_alignment="center", key="timeline_exports")
    # callables: the file is built when the button is pressed, not on every rerun
    exports.download_button("Table (CSV)", data=lambda: rows_csv(timeline_rows(run)), file_name=f"{name}.csv",
                               mime="text/csv", key="timeline_csv", icon=":material/table:", on_click="ignore")
    exports.download_button("Chart (HTML)", data=lambda: cached_timeline_figure(run, height=height, whole_window=whole_window)
                               .to_html(include_plotlyjs=True, full_html=True),
                               file_name=f"{name}.html", mime="text/html", key="timeline_html",
                               icon=":material/download:", on_click="ignore")
    exports.caption("PNG: the camera button in the chart's toolbar (top right of the chart).")


def _open_step() -> None:
    # a callback: app.py switches pages before this page draws anything again (ui.session.go_to)
    session.set_step(int(st.session_state["timeline_open_step"]))
    session.go_to("pages/step.py")


def _page(run: Run) -> None:
    """Everything under the title, for a run."""
    # The headline numbers sit above the chart but are drawn after it: a new config's chart leaves
    # first, and the browser is not busy laying out the metrics when the figure arrives.
    metrics = st.container()
    chart(run)
    with metrics:
        run_metrics(run)

    with st.container(horizontal=True, vertical_alignment="bottom"):
        st.number_input("Open step", min_value=0, max_value=max(0, len(run.steps) - 1),
                        value=session.current_step(run), step=1, key="timeline_open_step", width=200)
        st.button("Open in Step page", key="timeline_open", on_click=_open_step)

    # Lazy sections (on_change="rerun": their content runs only while open, and stays open across edits
    # once opened). Drawn on every edit they cost more than the chart itself: the events table (~90 KB
    # for a 1,000-step thread) and the cost section (engine.cost.run_cost.run_cost, ~0.5 s CPU per new config,
    # plus a second chart) made a sidebar edit wait for them in the browser (docs/benchmarks.md).
    markers = event_markers(run)
    events = st.expander(f"Events ({len(markers):,}): every layer action, step by step", key="timeline_events",
                         on_change="rerun", icon=":material/list:")
    if events.open:
        with events:
            if markers:
                table([{"step": m.step, "layer": m.layer, "kind": m.kind, "severity": m.severity, "what happened": m.text}
                       for m in markers], height=table_height(len(markers)))
            else:
                st.caption("No layer acted on this thread with these settings.")

    cost = st.expander("Cost: modelled dollars, cache hit rate, did each compaction pay for itself?",
                       key="timeline_cost", on_change="rerun", icon=":material/payments:")
    if cost.open:
        with cost:
            timeline_cost(run)


def _body() -> None:
    run = session.current_run()
    if run is None:
        # no st.stop(): the sidebar is drawn after the page, and a stopped run would draw nothing
        # more (the sidebar is where the thread and the settings are fixed)
        no_run_message()
    else:
        _page(run)


@st.fragment
def body_and_sidebar() -> None:
    """Everything under the title, and the sidebar, as one fragment: an edit in the sidebar (or any
    widget of the page's body) reruns this only, not app.py's frame (page config, navigation, the
    title). In the browser that frame's re-render of an unchanged page took as long as the chart
    (docs/benchmarks.md). A fragment may write to `st.sidebar` once it did on the full run
    (`st.fragment`, Streamlit 1.67). What app.py does around a page on a full run is done in
    `sidebar.fragment_run` too, for a fragment's rerun."""
    sidebar.fragment_run(_body)


body_and_sidebar()
