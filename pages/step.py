"""Step: the budget gauge, a /context-like breakdown, the view message by message, state vs view."""

from __future__ import annotations

import streamlit as st

from engine.views import category_rows, diff_counts, state_view_diff, threshold_lines, view_entries
from ui import session
from ui.cost_panel import step_bill
from ui.figures import category_bar_figure, category_label, gauge_figure
from ui.frame import require_frame
from ui.library import subagent_buttons
from ui.widgets import no_run_message, table, view_message

require_frame()

run = session.current_run()
if run is None:
    st.title("Step")
    no_run_message()
    st.stop()

last = len(run.steps) - 1
k = session.current_step(run)


def _go(step: int) -> None:
    session.set_step(max(0, min(last, step)))


def _picked() -> None:
    _go(int(st.session_state["step_input"]))


if st.session_state.get("step_input") != k:
    st.session_state["step_input"] = k

head = st.columns([6, 1, 2, 1], vertical_alignment="bottom")
head[0].title(f"Step {k}")
head[1].button("◀ prev", key="step_prev", disabled=k <= 0, on_click=_go, args=(k - 1,))
head[2].number_input(f"step (0–{last})", key="step_input", min_value=0, max_value=max(0, last), step=1,
                     on_change=_picked)
head[3].button("next ▶", key="step_next", disabled=k >= last, on_click=_go, args=(k + 1,))

if not run.steps:
    st.info("This thread has no model calls (no AI messages), so there is no step to show.")
    st.stop()

step = run.steps[k]
lines = threshold_lines(run.config, run.window_tokens, run.thread.model, run.thread)
left, right = st.columns([2, 3])
with left:
    st.plotly_chart(gauge_figure(step, run.window_tokens, lines), key="gauge", config={"displayModeBar": False})
    st.caption(" · ".join(li.label for li in lines if li.tokens is not None)
               + "".join(f"  \n{li.note}" for li in lines if li.note))
with right:
    st.markdown(f"**Context at this step** ({run.counts_label()}): {step.view_tokens:,} of "
                f"{run.window_tokens:,} tokens · raw (no layers) {step.raw_tokens:,} · state {step.state_tokens:,}"
                + (f" · recorded by the provider {step.recorded_input_tokens:,}" if step.recorded_input_tokens else ""))
    st.plotly_chart(category_bar_figure(step, run.window_tokens), key="category_bar",
                    config={"displayModeBar": False})
    table([{"category": category_label(r["category"]), "tokens": r["tokens"],
                   "% of window": r["percent_of_window"]}
                  for r in category_rows(step, run.window_tokens)])

if step.events:
    st.markdown(f"**Events at this step** ({len(step.events)})")
    for e in step.events:
        (st.warning if e.severity == "warning" else st.info)(
            f"{e.layer} · {e.kind}" + (f" — tokens {e.tokens_before:,} → {e.tokens_after:,}"
                                       if e.tokens_before is not None and e.tokens_after is not None else ""))
        if e.message:
            st.text(e.message)

step_bill(run, k)
subagent_buttons(run, k)  # a Task call's sub-agent transcript opens as its own thread

view_tab, diff_tab = st.tabs(["View (what the model received)", "State vs view"])
entries = view_entries(step, run.counter)
state_ids = {str(m.id) for m in step.state}
with view_tab:
    st.caption(f"{len(entries)} messages, system prompt first; tools sent: {len(step.tool_names)}.")
    for entry in entries:
        with st.container(border=True):
            view_message(entry, in_state=None if entry.role == "system" else entry.id in state_ids)
with diff_tab:
    rows = state_view_diff(step, run.counter)
    counts = diff_counts(rows)
    st.markdown(f"Same: {counts['same']} · rewritten in the view: {counts['changed']} · "
                f"only in state (hidden from the model): {counts['only_state']} · "
                f"only in the view (inserted by a layer): {counts['only_view']}")
    table([{"status": r.status.replace("_", " "), "id": r.id, "role": r.role, "kind": r.kind,
                   "state tokens": r.state_tokens, "view tokens": r.view_tokens} for r in rows],
                  height=min(600, 38 + 35 * len(rows)))
