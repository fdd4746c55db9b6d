"""Step: the budget (used vs window, trigger, keep), a /context-like breakdown, the view page by page with search and filters,
state vs view as text, and tokens per tool."""

from __future__ import annotations

import streamlit as st

from engine.base.wording import plural
from engine.views.decisions import run_lines
from engine.views.step import tools_sent
from engine.views.step_page import event_step
from ui import session
from ui.cost_panel import step_bill
from ui.frame import require_frame
from ui.library import subagent_buttons
from ui.step_view import budget_panel, diff_panel, message_browser, reset_page, step_detail, tool_panel
from ui.widgets import no_run_message

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
    reset_page()


def _picked() -> None:
    _go(int(st.session_state["step_input"]))


if st.session_state.get("step_input") != k:
    st.session_state["step_input"] = k

prev_event = event_step(run.steps, k, -1)
next_event = event_step(run.steps, k, +1)
# Streamlit's button shortcuts ignore key presses while a text field, select or checkbox has the
# focus (its key filter in static/js/index.*.js), so typing a search never changes the step.
# The title and the navigation share a row that wraps: the navigation (~510 px) moves under the title as
# one row when both do not fit (a 1024 px projector), where a 3/5 column stacked it in three rows.
head = st.container(horizontal=True, horizontal_alignment="distribute", vertical_alignment="bottom",
                    key="step_head")
head.title(f"Step {k}", width="content")
with head.container(horizontal=True, vertical_alignment="bottom", width="content", key="step_nav"):
    st.button("◀ event", key="step_prev_event", disabled=prev_event is None, on_click=_go, args=(prev_event or 0,),
              shortcut="p", help="The previous step with events" + (f" (step {prev_event})" if prev_event is not None
                                                                     else ": none before this one") + ". Key: p")
    st.button("◀ prev", key="step_prev", disabled=k <= 0, on_click=_go, args=(k - 1,), shortcut="k",
              help="The previous step. Key: k")
    st.number_input(f"step (0–{last})", key="step_input", min_value=0, max_value=max(0, last), step=1,
                    on_change=_picked, width=130)
    st.button("next ▶", key="step_next", disabled=k >= last, on_click=_go, args=(k + 1,), shortcut="j",
              help="The next step. Key: j")
    st.button("event ▶", key="step_next_event", disabled=next_event is None, on_click=_go, args=(next_event or 0,),
              shortcut="n", help="The next step with events" + (f" (step {next_event})" if next_event is not None
                                                                else ": none after this one") + ". Key: n")

if not run.steps:
    st.info("This thread has no model calls (no AI messages), so there is no step to show.")
    st.stop()

step = run.steps[k]
lines = run_lines(run)
budget_panel(run, k, lines)

if step.events:
    st.markdown(f"**Events at this step** ({len(step.events)})")
    for e in step.events:
        (st.warning if e.severity == "warning" else st.info)(
            f"{e.layer} · {e.kind}" + (f" — tokens {e.tokens_before:,} → {e.tokens_after:,}"
                                       if e.tokens_before is not None and e.tokens_after is not None else ""))
        if e.message:
            st.text(e.message)

# the bill needs the whole run priced (engine.cost.run_cost.run_cost: ~0.5 s CPU for 1,000 steps, once per
# run): a lazy section, drawn only while open (it stays open from step to step once opened)
bill = st.expander("This step's bill: tokens and dollars by kind, the cache, the summarizer call before it",
                   key="step_bill", on_change="rerun", icon=":material/payments:")
if bill.open:
    with bill:
        step_bill(run, k)
subagent_buttons(run, k)  # a Task call's sub-agent transcript opens as its own thread

detail = step_detail(run, k)
# lazy tabs: only the open one is drawn (a 300-message diff table is not built while reading the view)
view_tab, diff_tab, tools_tab = st.tabs(["View (what the model received)", "State vs view", "Tokens per tool"],
                                        key="step_tab", on_change="rerun")
if view_tab.open:
    with view_tab:
        has_system = bool(detail.entries) and detail.entries[0].role == "system"
        st.caption(plural(len(detail.entries), "message") + (", system prompt first" if has_system else "")
                   + f"; {tools_sent(step)}. "
                   "Keys: j / k next / previous step, n / p next / previous step with events.")
        message_browser(run, k, detail)
if diff_tab.open:
    with diff_tab:
        diff_panel(detail)
if tools_tab.open:
    with tools_tab:
        tool_panel(run, detail, step.view_tokens)
