"""Small widgets shared by pages: run metrics, the no-thread message, a view message with badges."""

from __future__ import annotations

from typing import Any

import streamlit as st

from engine.base.wording import plural
from engine.run.run import Run
from engine.run.whatif import WhatIf, against_baseline
from engine.views.step import ViewEntry
from engine.views.timeline import summarizer_calls
from ui import session
from ui.figures import CATEGORY_LABELS
from ui.text import escape_md, show_text

# kind -> (badge text, colour); fixed strings, so safe inside Markdown directives
BADGES: dict[str, tuple[str, str]] = {
    "stub": ("offloaded stub", "green"),
    "summary": ("summary", "violet"),
    "reminder": ("reminder", "orange"),
    "patch": ("patched call", "red"),
    "truncated": ("truncated arguments", "yellow"),
    "memory": ("memory", "blue"),
}
ROLE_ICONS = {"system": ":material/settings:", "human": ":material/person:", "ai": ":material/smart_toy:",
              "tool": ":material/build:"}


# What an empty cell shows: Streamlit's dataframe writes "None" for a missing value unless told
# otherwise (`st.dataframe(placeholder=...)`, streamlit/elements/arrow.py, 1.67), and "None" in a
# "peak inside" column read as a value (issue 35).
EMPTY_CELL = "—"


def table(rows: list[dict[str, Any]], **kwargs: Any) -> None:
    """A dataframe whose token and size columns read 12,345 and whose empty cells read "—" (cells render
    as text, never as HTML)."""
    columns = list(rows[0]) if rows else []
    numeric = [c for c in columns
               if all(isinstance(r.get(c), int | None) and not isinstance(r.get(c), bool) for r in rows)
               and c not in ("step", "index")]
    config = {c: st.column_config.NumberColumn(c, format="localized") for c in numeric}
    st.dataframe(rows, hide_index=True, column_config=config, placeholder=EMPTY_CELL, **kwargs)


TABLE_ROW_PX = 35  # st.dataframe's row height (and its header's), Streamlit 1.67
TABLE_MAX_ROWS = 20


def table_height(rows: int, max_rows: int = TABLE_MAX_ROWS) -> int:
    """A dataframe just tall enough for its rows, up to `max_rows` (then it scrolls): not a fixed box."""
    return (min(max(rows, 1), max_rows) + 1) * TABLE_ROW_PX + 3


def no_run_message() -> None:
    if st.session_state.get("thread_key") is None:
        if session.synthetic_available():
            st.info("No thread is open. Pick one on the **Threads** page.")
        else:
            st.info("No thread is open and no sample threads are bundled yet "
                    f"(looked in `{session.samples_dir()}`). Upload a transcript on the **Threads** page.")
    else:
        reason = session.load_error(st.session_state["thread_key"])
        st.info("The selected thread is not available" + (f" ({escape_md(reason)})" if reason else "")
                + ". Pick one on the **Threads** page.")
    st.page_link("pages/threads.py", label="Go to Threads", icon=":material/folder_open:")


def keep_widget_state(*keys: str) -> None:
    """Keep these widgets' values through runs that do not draw them (a closed lazy tab).

    Streamlit drops a widget's value at the end of a run that did not draw it, unless its key was
    assigned in that run: its docs' "interrupt the widget clean-up process" (Widget behavior). Call
    before the widgets, on every run of the page.
    """
    for key in keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def run_totals(run: Run) -> dict[str, Any]:
    """`run.totals()` plus the billed input, computed once per Run and kept on it (`Run.derived`).

    A Run is read-only once replayed, and `totals()` walks every step several times: the headline
    metrics asked for it twice on every rerun, a cached config's included.
    """
    if "ui.totals" not in run.derived:
        run.derived["ui.totals"] = {**run.totals(), "billed_tokens": sum(s.view_tokens for s in run.steps),
                                    "raw_input_tokens": sum(s.raw_tokens for s in run.steps)}
    return run.derived["ui.totals"]  # type: ignore[no-any-return]


def run_metrics(run: Run) -> None:
    """Context at the peak step vs the window, raw peak, tokens saved, events, summarizer calls."""
    t = run_totals(run)
    window = run.window_tokens
    # Tiles as wide as their text, in a row that wraps: six equal columns cut the labels and the deltas
    # to "Peak raw (…" and "83% of 2…" on a 1024 px projector (the main column is ~560 px there).
    row = st.container(horizontal=True, gap="medium", key="run_metrics")
    row.metric("Steps", f"{t['steps']:,}", width="content")
    peak = t["peak_view_tokens"]
    row.metric("Peak view", compact(peak), help="largest single request (what fills the window)",
               delta=f"{100 * peak / window:.0f}% of {window:,}" if window else None, delta_color="off",
               delta_arrow="off", width="content")  # a share of the window, not a change: no arrow
    row.metric("Peak raw (no layers)", compact(t["peak_raw_tokens"]),
               delta=f"{100 * t['peak_raw_tokens'] / window:.0f}% of window" if window else None, delta_color="off",
               delta_arrow="off", width="content")
    row.metric("Input not sent", compact(t["tokens_saved"]), width="content",
               help=f"{t['tokens_saved']:,} tokens: the sum over every step of raw − view, the input the layers "
                    "kept out of the requests. Cumulative, like the input sent (below), not one request's size.")
    row.metric("Events", f"{t['events']:,}", width="content",
               help=", ".join(f"{k}: {v}" for k, v in t["events_by_layer"].items()) or None)
    # ours and the source agent's recorded compaction calls, said whose under the value (engine.views.timeline)
    calls = summarizer_calls(run)
    row.metric("Summarizer calls", f"{calls.total:,}", help=calls.help, delta=calls.whose, delta_color="off",
               delta_arrow="off", width="content")
    st.caption(counts_note(run) + " " + cumulative_note(t))
    whatif = against_recorded(run)
    if whatif is not None:
        st.info(escape_md(whatif.headline) + " :gray[(compared with the as-recorded run: what the agent really sent)]")


def cumulative_note(t: dict[str, Any]) -> str:
    """The run's input summed over every request, sent and not sent, in one sentence: "Tokens saved 5.0M"
    beside "cumulative input 1,975,424" read as a contradiction (issue 35) until both said what they add up."""
    steps, sent, raw, saved = t["steps"], t["billed_tokens"], t["raw_input_tokens"], t["tokens_saved"]
    text = (f"Over all {plural(steps, 'step')} the requests held {sent:,} input tokens in total (what is billed, "
            f"not how full the window was); without the layers they would have held {raw:,}: {saved:,} not sent.")
    if raw - sent != saved:  # a step whose layers added more than they removed counts as nothing saved
        text += f" (Steps where the layers added tokens count as 0 not sent: {saved - (raw - sent):,} tokens added there.)"
    return text


def counts_note(run: Run) -> str:
    """Where the numbers come from: calibrated to the provider's recorded usage, or our estimates."""
    t = run_totals(run)
    if not t["calibrated"]:
        return f"Token counts are estimates ({run.counter.name}): the source recorded no input usage."
    name, prompt, first = run.counter.name, t["agent_prompt_tokens"], t["first_turn_context_tokens"]
    agent = run.calibration.agent
    if prompt > 0:
        what = agent.describe() if agent is not None else f"{plural(prompt, 'token')}"
        prompt_part = f"the agent's own prompt, which the transcript does not hold: {what}"
    elif prompt < 0:  # engine.run.step_sums: taken off the tool schemas, then the system prompt
        prompt_part = (f"the provider counted {plural(-prompt, 'token')} fewer than our {name} count for the "
                       "prompt and tools, so the tool schemas and system prompt show that much less")
    else:
        prompt_part = "no unrecorded prompt"
    # a prompt measured again later (after a recorded compaction, or rebuilt by the agent: Gemini CLI) is not the
    # same on every request: say from which step it is what (the Step page's "agent prompt" row shows it)
    later = [(s, n) for s, n in getattr(run.calibration, "prompt_schedule", ()) if s > 0 and n != prompt][:3]
    measured_again = ""
    if prompt > 0 and later:
        measured_again = (" That prompt is " + ", then ".join(f"{n:,} tokens from step {s}" for s, n in later)
                          + " (measured again where a request grew by less than what it added).")
    if first:
        prompt_part += (f"; {plural(first, 'token')} more of the first call's input belong to the first turn "
                        "(first-turn context: gone once a compaction removes that turn)")
    calls = plural(t["recorded_steps"], "recorded call")
    note = run.calibration.note()
    return (f"Token counts are in the provider's tokens, calibrated to its recorded input ({calls}). "
            f"{t['tokenizer']}. Of every request: {prompt_part}.{measured_again} What a message carried beyond its text is "
            f"drawn as its own category; the unexplained rest is at most "
            f"{100 * (t['recorded_max_unexplained'] or 0):.1f}% of a recorded input."
            + (f" {note}" if note else ""))


def against_recorded(run: Run) -> WhatIf | None:
    """A what-if run compared with the thread's as-recorded run, or None (as-recorded itself, or nothing recorded)."""
    key = st.session_state.get("thread_key")
    if not key or "recorded" in run.config.order:
        return None
    baseline = session.baseline_run(key)
    if baseline is None or baseline.thread is not run.thread:
        return None
    return against_baseline(run, baseline)


def compact(n: int) -> str:
    """A token count short enough for a metric tile: 950, 12,345, 250k, 5.5M."""
    if abs(n) < 100_000:
        return f"{n:,}"
    if abs(n) < 1_000_000:
        return f"{n / 1000:,.0f}k"
    return f"{n / 1_000_000:,.1f}M"


def badge(kind: str) -> str:
    text, color = BADGES.get(kind, (kind, "gray"))
    return f":{color}-badge[{text}]"


def view_message(entry: ViewEntry, *, in_state: bool | None = None) -> None:
    """One message of a view: role, tokens, badges, then its text shown literally."""
    head = f"{ROLE_ICONS.get(entry.role, '•')} **{escape_md(entry.role)}** · {entry.tokens:,} tokens"
    if entry.hidden:
        parts = ", ".join(f"{n:,} {CATEGORY_LABELS.get(c, c)}" for c, n in entry.hidden_by)
        head += f" :gray[(+{parts}: billed with it, not in its text)]"
    if entry.name:
        head += f" · name {escape_md(entry.name, limit=60)}"
    if entry.kind != "original":
        head += " " + badge(entry.kind)
    if in_state is False:
        head += " :gray-badge[view only]"
    head += f"  \n:gray[id {escape_md(entry.id, limit=80)}]"
    if entry.tool_call_id:
        head += f" :gray[· answers {escape_md(entry.tool_call_id, limit=60)}]"
    st.markdown(head)
    if entry.text.strip():
        show_text(entry.text)
    for name, args in entry.tool_calls:
        st.markdown(f"↳ tool call **{escape_md(name, limit=60)}**")
        show_text(args, preview_chars=300, label="all arguments")
