"""The session library on the page: saved uploads on the Threads page, sub-agent transcripts opened as
threads from the Task call that spawned them, and the way back to that parent step.

The data lives in `engine.workspace.library` (content-addressed entries in the workspace); which keys a link
may name is `engine.config.links`. Everything shown from an entry or a transcript is escaped text.
"""

from __future__ import annotations

from datetime import datetime

import streamlit as st
from langchain_core.messages import AIMessage

from engine.config.links import LIBRARY_PREFIX, split_subagent_key, subagent_key
from engine.run.run import Run
from engine.workspace.library import LibraryEntry
from ui import session
from ui.text import error_text, escape_md


def entry_key(entry: LibraryEntry) -> str:
    return LIBRARY_PREFIX + entry.id


def saved_date(entry: LibraryEntry) -> str:
    try:
        return datetime.fromisoformat(entry.saved_at).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return entry.saved_at or "?"


def peak_text(entry: LibraryEntry) -> str:
    if entry.peak_tokens is None:
        return "peak n/a"
    return f"peak {entry.peak_tokens:,} tokens ({'recorded' if entry.peak_source == 'recorded' else 'our count'})"


def _delete(entry_id: str) -> None:
    st.session_state.pop("lib_confirm", None)
    key = LIBRARY_PREFIX + entry_id
    try:
        session.library().delete(entry_id)
    except Exception as exc:  # a read-only disk: say so, keep the page
        session.notify(f"Could not delete it: {error_text(exc)}")
        return
    if st.session_state.get("thread_key") == key or str(st.session_state.get("thread_key", "")).endswith("@" + key):
        session.select_thread(session.default_thread_key() or "")
    session.notify("Deleted from the library.")


def render_library() -> None:
    """The saved uploads, newest first: title, format, steps, peak and date; open or delete each."""
    st.subheader("Library")
    lib = session.library()
    try:
        entries, problems = lib.scan()
    except Exception as exc:
        st.error(f"Could not read the library in {escape_md(str(lib.dir))}: {escape_md(error_text(exc))}")
        return
    for problem in problems:  # one broken entry.json is skipped, said once, and hides nothing else
        st.warning(f"Skipped a library entry: {escape_md(problem, limit=400)}", icon=":material/warning:")
    st.caption(f"Every upload is saved in the workspace ({escape_md(str(lib.dir))}, content-addressed, with its "
               "sub-agent files) and opens again from a link after a reload or a server restart.")
    if not entries:
        st.caption("Nothing saved yet: upload a transcript.")
        return
    current = st.session_state.get("thread_key")
    for entry in entries:
        key = entry_key(entry)
        row = st.columns([7, 2, 1], vertical_alignment="center")
        extra = f" · {entry.subagents} sub-agent transcript(s)" if entry.subagents else ""
        row[0].markdown(f"**{escape_md(entry.title, limit=90)}**  \n"
                        f":gray[{escape_md(entry.source_format)} · {entry.steps:,} steps · "
                        f"{escape_md(peak_text(entry))} · saved {escape_md(saved_date(entry))} · "
                        f"{escape_md(entry.name, limit=60)}{escape_md(extra)}]")
        row[1].button("Open ✓" if key == current else "Open", key=f"lib_open_{entry.id}", width="stretch",
                      disabled=key == current, on_click=session.select_thread, args=(key,))
        row[2].button("", icon=":material/delete:", key=f"lib_bin_{entry.id}", help="Delete from the library",
                      type="tertiary", on_click=st.session_state.__setitem__, args=("lib_confirm", entry.id))
        if st.session_state.get("lib_confirm") == entry.id:  # a second, explicit click deletes
            ask = st.columns([7, 2, 1], vertical_alignment="center")
            ask[0].warning(f"Delete {escape_md(entry.name, limit=60)} and its files from the workspace?")
            ask[1].button("Delete", key=f"lib_delete_{entry.id}", type="primary", width="stretch",
                          on_click=_delete, args=(entry.id,))
            ask[2].button("Cancel", key=f"lib_cancel_{entry.id}", type="tertiary",
                          on_click=st.session_state.pop, args=("lib_confirm", None))


# -- sub-agents ------------------------------------------------------------------------------------
def _open_subagent(key: str) -> None:
    session.select_thread(key)
    session.go_to("pages/timeline.py")


def subagent_calls(run: Run, step: int) -> list[tuple[str, str]]:
    """(Task call id, label) of each call at `step` whose sub-agent transcript the thread holds."""
    if not run.steps or not 0 <= step < len(run.steps):
        return []
    message = run.thread.messages[run.steps[step].message_index]
    if not isinstance(message, AIMessage):
        return []
    out = []
    for call in message.tool_calls:
        call_id = call.get("id") or ""
        inner = run.thread.subagents.get(call_id)
        if inner is None:
            continue
        args = call.get("args") or {}
        what = str(args.get("description") or args.get("subagent_type") or inner.title or call_id)
        out.append((call_id, f"{call.get('name') or 'Task'}: {what}"))
    return out


def subagent_buttons(run: Run, step: int, *, where: str = "step") -> None:
    """'Open as a thread' for every sub-agent the model call at `step` spawned (its own timeline and steps)."""
    parent = st.session_state.get("thread_key")
    calls = subagent_calls(run, step)
    if not parent or not calls:
        return
    st.markdown(f"**Sub-agents spawned at this step** ({len(calls)})")
    for call_id, label in calls:
        inner = run.thread.subagents[call_id]
        st.button(f"Open {escape_md(label, limit=80)} as a thread ({len(inner.ai_indices()):,} steps)",
                  key=f"open_sub_{where}_{call_id}", icon=":material/account_tree:",
                  on_click=_open_subagent, args=(subagent_key(call_id, parent),))


def all_subagent_buttons(run: Run) -> None:
    """Every sub-agent transcript of the thread, by the step whose Task call spawned it (Layers page)."""
    parent = st.session_state.get("thread_key")
    if not parent or not run.thread.subagents:
        return
    st.markdown("**Open a sub-agent's own transcript as a thread**")
    for k in range(len(run.steps)):
        for call_id, label in subagent_calls(run, k):
            st.button(f"Step {k} · {escape_md(label, limit=80)}", key=f"open_sub_layers_{call_id}",
                      icon=":material/account_tree:", on_click=_open_subagent,
                      args=(subagent_key(call_id, parent),))


def _back_to_parent(parent: str, step: int | None) -> None:
    session.select_thread(parent)
    if step is not None:
        session.set_step(step)
    session.go_to("pages/step.py")


def origin_note() -> None:
    """In the sidebar, for a sub-agent thread: whose sub-agent it is and a button back to the parent step."""
    key = st.session_state.get("thread_key") or ""
    split = split_subagent_key(key)
    if split is None:
        return
    _, parent = split
    parent_thread = session.thread_for(parent)
    if parent_thread is None:
        return
    step = session.spawning_step(key)
    title = parent_thread.title or parent_thread.thread_id
    st.caption(f"Sub-agent transcript of {escape_md(title, limit=70)}"
               + (f", spawned by the Task call at step {step}." if step is not None else "."))
    st.button("Back to the parent" + (f" step {step}" if step is not None else ""), key="sub_back",
              icon=":material/arrow_back:", on_click=_back_to_parent, args=(parent, step))


__all__ = ["all_subagent_buttons", "entry_key", "origin_note", "peak_text", "render_library", "saved_date",
           "subagent_buttons", "subagent_calls"]
