"""Threads: bundled samples, upload (any supported format), a LangGraph PostgreSQL database, pick a thread."""

from __future__ import annotations

import importlib
import importlib.util

import streamlit as st

from engine.base.errors import ContextInspectorError
from engine.formats import list_threads, load_thread
from engine.formats.dburl import is_postgres_url, redact
from engine.thread.model import load_warnings
from engine.views.threads import load_notes, thread_facts
from engine.workspace.workspace import WorkspaceError
from ui import session
from ui.frame import require_frame
from ui.library import render_library
from ui.text import error_text, escape_md, isolate_bidi
from ui.upload_box import upload_box

require_frame()

st.title("Threads")


def _open(key: str) -> None:
    session.select_thread(key)


def _save_and_open(upload: session.Upload, marker: str) -> str | None:
    """Save the upload in the library and return its `library:` key; if the workspace cannot be written,
    keep it in this session only (an `upload:` key) and say so; None (with the error shown) if it does
    not load."""
    try:
        entry = session.save_upload(upload)
    except WorkspaceError as exc:
        session.add_upload(upload)
        if session.thread_for(marker) is None:
            st.session_state["uploads"].pop(marker, None)
            st.error(f"Could not load {escape_md(upload.name)}: {escape_md(session.load_error(marker) or '')}")
            return None
        session.notify(f"Not saved in the library ({error_text(exc)}); it lasts only for this session.")
        return marker
    except Exception as exc:
        st.error(f"Could not load {escape_md(upload.name)}: {escape_md(_explain(exc))}")
        return None
    key = "library:" + entry.id
    if session.thread_for(key) is None:
        st.error(f"Could not load {escape_md(upload.name)}: {escape_md(session.load_error(key) or '')}")
        return None
    return key


def _explain(exc: Exception) -> str:
    if isinstance(exc, ContextInspectorError):
        return error_text(exc)
    return f"unexpected problem while reading the file ({error_text(exc)})"


# -- the current thread -------------------------------------------------------------------------
thread = session.current_thread()
if thread is not None:
    facts = thread_facts(thread)
    with st.container(border=True):
        st.markdown(f"**Open now:** {escape_md(facts.title or facts.thread_id, limit=120)}")
        cols = st.columns(5)
        cols[0].metric("Steps (model calls)", f"{facts.steps:,}")
        cols[1].metric("Messages", f"{facts.messages:,}")
        cols[2].metric("Tool calls", f"{len(thread.tool_calls()):,}")
        cols[3].metric("Recorded compactions", facts.recorded_compactions)
        cols[4].metric("Sub-agent transcripts", facts.subagents)
        st.caption(f"Format {escape_md(facts.source_format)} · messages by role: " + ", ".join(f"{k} {v:,}" for k, v in sorted(facts.by_role.items()))
                   + (f" · model {escape_md(facts.model, limit=60)}" if facts.model else "")
                   + (f" · window {thread.max_input_tokens:,}" if thread.max_input_tokens else "")
                   + (f" · provider usage recorded for {facts.recorded_usage:,} calls" if facts.recorded_usage else ""))
        for warning in load_warnings(thread):  # what the importer read other than as written
            st.warning(escape_md(warning, limit=400), icon=":material/warning:")
        for note in load_notes(thread):
            st.warning(escape_md(note, limit=400))

samples_col, upload_col = st.columns(2)

# -- samples ------------------------------------------------------------------------------------
with samples_col:
    st.subheader("Samples")
    files = session.sample_files()
    if not files:
        if session.synthetic_available():
            st.caption("No sample threads are bundled yet; a generated demo thread is available.")
            st.button("Open the generated demo thread", key="open_demo", on_click=_open, args=(session.DEMO_KEY,))
        else:
            st.info(f"No sample threads found in `{session.samples_dir()}`. Upload a transcript instead.")
    for path in files:
        key = session.sample_key(path)
        sample = session.thread_for(key)
        if sample is None:  # a broken sample must not hide the others
            st.warning(f"{escape_md(path.name)}: {escape_md(session.load_error(key) or 'not available')}")
            continue
        current = key == st.session_state.get("thread_key")
        row = st.columns([6, 2], vertical_alignment="center")
        row[0].markdown(f"**{escape_md(sample.title or path.stem, limit=90)}**  \n"
                        f":gray[{escape_md(path.name)} · {len(sample.ai_indices()):,} steps · "
                        f"{len(sample.messages):,} messages]")
        row[1].button("Open" if not current else "Open ✓", key=f"open_{path.stem}", on_click=_open, args=(key,),
                      disabled=current, width="stretch")

# -- upload -------------------------------------------------------------------------------------
with upload_col:
    st.subheader("Upload")
    st.caption("Claude Code session (.jsonl, with its sub-agent files agent-*.jsonl if you like), a Codex CLI "
               "rollout (.jsonl), a Gemini CLI chat (.json or .jsonl), an OpenHands event stream, a Cline task "
               "(api_conversation_history.json with its ui_messages.json, task_metadata.json and "
               "context_history.json, or ui_messages.json alone), an Inspect AI log (.eval or .json), OpenTelemetry GenAI spans (OTLP JSON), "
               "VCR cassettes of Anthropic or OpenAI Responses calls (.yaml), request logs (one logged request a "
               "line, Context Lens .lhar), streamed responses (SSE, .chunks.txt), Anthropic Messages or OpenAI "
               "chat/Responses dumps and JSONL logs, LangChain messages, a LangGraph SQLite checkpoint, SWE-agent "
               "or mini-swe-agent trajectories, tau-bench or tau2-bench results, or this tool's own JSON. "
               "The format is detected (docs/formats).")
    files = upload_box("Transcript file") or []  # its limit written as the README writes it (ui/upload_box.py)
    mains = [f for f in files if not session.is_companion(f.name)]
    extras = [f for f in files if session.is_companion(f.name)]
    if not mains and extras:  # sub-agent files only: open the last one on its own
        mains, extras = extras[-1:], []
    # the newest transcript wins, as it would in a single-file box; sub-agent files only attach to
    # the session whose sessionId they carry
    uploaded = mains[-1] if mains else None
    companions = tuple((f.name, f.getvalue()) for f in extras)
    if len(mains) > 1:
        st.caption(f"Opened the newest upload, {escape_md(uploaded.name if uploaded else '')}; remove the "
                   "others with × to keep the list short.")
    if uploaded is not None:
        data = uploaded.getvalue()
        try:
            refs = list_threads(data=data, name=uploaded.name)
        except Exception as exc:
            st.error(f"Could not read {escape_md(uploaded.name)}: {escape_md(_explain(exc))}")
            refs = []
        if companions:
            kind = "sub-agent" if all(name.startswith("agent-") for name, _ in companions) else "companion"
            st.caption(f"with {len(companions)} {kind} file(s): "
                       f"{escape_md(', '.join(name for name, _ in companions), limit=300)}")
        chosen = None
        if len(refs) == 1:
            chosen = refs[0].thread_id
        elif len(refs) > 1:
            labels = {r.thread_id: isolate_bidi(f"{r.thread_id}: {r.title}" if r.title and r.title != r.thread_id else r.thread_id)
                      + f" ({r.messages if r.messages is not None else '?'} messages)" for r in refs}
            pick = st.selectbox(f"{len(refs)} threads in this file; pick one", list(labels),
                                format_func=lambda t: labels[t], key="upload_pick")
            if st.button("Open this thread", key="upload_open"):
                chosen = pick
        if chosen is not None:
            upload = session.Upload(uploaded.name, data, chosen, companions)
            marker = session.upload_key(data, chosen, companions)
            # a single-thread file opens once on upload; later reruns keep whatever the user opened since
            if len(refs) > 1 or st.session_state.get("opened_upload") != marker:
                key = _save_and_open(upload, marker)
                if key is not None:
                    st.session_state["opened_upload"] = marker
                    session.select_thread(key)
                    st.rerun()

# -- the library: uploads saved in the workspace ------------------------------------------------
with samples_col:
    render_library()

# -- LangGraph on PostgreSQL --------------------------------------------------------------------
with upload_col:
    st.subheader("LangGraph on PostgreSQL")
    st.caption("The URL of a langgraph-checkpoint-postgres database. It is read in a read-only transaction; "
               "the password is never shown, and the URL is kept only in this browser session.")
    with st.form("pg_form", border=False):
        typed = st.text_input("PostgreSQL URL", key="pg_url", type="password",
                              placeholder="postgresql://user:password@host:5432/database")
        listed = st.form_submit_button("List threads", key="pg_list")
    if listed:
        url = (typed or "").strip()
        st.session_state.pop("pg_listing", None)
        if not is_postgres_url(url):
            st.error("Type a URL that starts with postgresql:// (or postgres://).")
        else:
            try:
                st.session_state["pg_listing"] = (url, list_threads(url))
            except Exception as exc:
                st.error(f"Could not read the database: {escape_md(_explain(exc))}")
    listing = st.session_state.get("pg_listing")
    if listing is not None:
        url, refs = listing
        label = redact(url)
        st.caption(f"{len(refs)} thread(s) in {escape_md(label, limit=200)}")
        pg_chosen = None
        if len(refs) == 1:
            pg_chosen = refs[0].thread_id if listed else None  # one thread opens at once, as an upload does
        elif refs:
            pg_labels = {r.thread_id: isolate_bidi(f"{r.thread_id}: {r.title}" if r.title and r.title != r.thread_id else r.thread_id)
                         + f" ({r.messages if r.messages is not None else '?'} messages)" for r in refs}
            pg_pick = st.selectbox("Pick a thread", list(pg_labels), format_func=lambda t: pg_labels[t], key="pg_pick")
            if st.button("Open this thread", key="pg_open"):
                pg_chosen = pg_pick
        if pg_chosen is not None:
            try:
                pg_thread = load_thread(url, thread_id=pg_chosen)
            except Exception as exc:
                st.error(f"Could not load thread {escape_md(pg_chosen)}: {escape_md(_explain(exc))}")
            else:
                session.select_thread(session.add_database_thread(pg_thread, label))
                st.rerun()

# -- run panel (another issue adds ui/run_panel.py) --------------------------------------------------
if importlib.util.find_spec("ui.run_panel") is not None:
    panel = importlib.import_module("ui.run_panel")
    if hasattr(panel, "render_run_panel"):
        st.subheader("Run")
        panel.render_run_panel()
