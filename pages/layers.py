"""Layers: what each layer did — offloaded files, summaries, reminders, patched calls, sub-agents, prompt."""

from __future__ import annotations

import json

import streamlit as st

from engine.base.wording import plural
from engine.run.run import Run
from engine.run.whatif import COMPACTION_EVENTS
from engine.thread.events import Event
from engine.thread.kinds import message_kind
from engine.tokens.content import message_text
from engine.views.layers import file_rows, stub_for, subagent_rows
from engine.views.middleware import edited_messages, middleware_events, middleware_layers
from engine.views.step import message_entry, prompt_summary, system_parts
from engine.views.timeline import describe_event, events_of, layer_order, payload_value
from ui import session
from ui.advice import no_compaction_advice
from ui.cost_panel import compactions_table, cost_of, payback_line
from ui.forensics import card_at
from ui.frame import require_frame
from ui.library import all_subagent_buttons
from ui.text import escape_md, show_text
from ui.widgets import badge, no_run_message, table

require_frame()

st.title("Layers")
run = session.current_run()
if run is None:
    no_run_message()
    st.stop()


def event_table(events: list[Event]) -> None:
    table([{"step": e.step, "kind": e.kind, "severity": e.severity, "tokens before": e.tokens_before,
                   "tokens after": e.tokens_after, "message": e.message} for e in events])


def raw_payload(event: Event) -> None:
    with st.expander("event record (JSON)"):
        st.json(json.loads(json.dumps(event.to_dict(), default=str)), expanded=False)


def pick_event(events: list[Event], key: str) -> Event:
    if len(events) == 1:
        return events[0]
    index = st.selectbox(f"{len(events)} events", range(len(events)), key=key,
                         format_func=lambda i: f"step {events[i].step} · {events[i].kind}"
                         + (f" · {events[i].tokens_before:,} → {events[i].tokens_after:,}"
                            if events[i].tokens_before is not None and events[i].tokens_after is not None else ""))
    return events[index]


def messages_by_id(run: Run) -> dict[str, object]:
    out: dict[str, object] = {str(m.id): m for m in run.thread.messages}
    for s in run.steps:
        for m in s.view:
            out.setdefault(str(m.id), m)
    return out


def show_messages(ids: list[str], run: Run, limit: int = 50) -> None:
    known = messages_by_id(run)
    for mid in ids[:limit]:
        m = known.get(str(mid))
        if m is None:
            st.caption(f"{escape_md(str(mid), limit=80)} (not in the thread)")
            continue
        entry = message_entry(0, m, run.counter)
        st.markdown(f"**{escape_md(entry.role)}** · {entry.tokens:,} tokens :gray[{escape_md(entry.id, limit=60)}]")
        if entry.text.strip():
            show_text(entry.text, preview_chars=240)
        for name, args in entry.tool_calls:
            st.markdown(f"↳ tool call **{escape_md(name, limit=60)}**")
            show_text(args, preview_chars=160, label="all arguments")
    if len(ids) > limit:
        st.caption(f"… and {len(ids) - limit:,} more")


def layer_inactive_note(layer: str) -> None:
    if layer not in run.layer_names:
        st.caption(f"The {layer} layer is off (or not available) in this run.")


tabs = st.tabs(["Offloaded files", "Summaries", "Reminders", "Patched calls", "Sub-agents", "Prompt & memory",
                "All events", "Your middleware"], key="tab", bind="query-params")

# -- files -------------------------------------------------------------------------------------
with tabs[0]:
    rows = file_rows(run)
    if not rows:
        st.info("No files were written: no tool result was large enough to offload, and no history file was kept.")
        layer_inactive_note("filesystem")
    else:
        table(rows, height=min(400, 38 + 35 * len(rows)))
        path = st.selectbox("Read a file", [r["path"] for r in rows], key="layers_file")
        entry = run.files.entry(path)
        tokens = next(r["tokens"] for r in rows if r["path"] == path)
        st.caption(f"{entry.size_chars:,} characters · {tokens:,} tokens · "
                   f"written at step {entry.step} by {entry.layer or '?'}")
        stub = stub_for(run, path, entry.source_id)
        if stub is not None:
            st.markdown("**The stub that replaced it in the context** " + badge("stub")
                        + f" ({run.counter.count_message(stub):,} tokens)")
            show_text(message_text(stub), preview_chars=400)
        st.markdown("**Content**")
        show_text(entry.content, preview_chars=2000, label="whole file")

# -- summaries ---------------------------------------------------------------------------------
with tabs[1]:
    # summaries of every kind: this run's summarization, a coding-agent policy's compaction, and the
    # source agent's own recorded compactions when the run replays them
    events = [e for e in run.events
              if e.layer == "summarization" or (e.layer, e.kind) in COMPACTION_EVENTS or e.layer == "recorded"]
    if run.thread.compactions and "recorded" not in run.layer_names:
        with st.expander(f"What the source agent itself did: {len(run.thread.compactions)} recorded compaction(s)"):
            for c in sorted(run.thread.compactions, key=lambda c: c.index):
                st.markdown(f"**Before message {c.index}** · trigger {escape_md(c.trigger or 'not recorded')} · "
                            + (f"{c.pre_tokens:,} tokens before" if c.pre_tokens is not None else "tokens before not recorded")
                            + (f" · {c.post_tokens:,} after" if c.post_tokens is not None else "")
                            + f" · {escape_md(c.kind)}" + (f" · {escape_md(c.source)}" if c.source else ""))
                show_text(c.summary or "(no summary text recorded)", preview_chars=1500, label="whole summary")
    if not events:
        st.info("No summarization happened with these settings. " + no_compaction_advice(run.config))
        layer_inactive_note("summarization")
    else:
        if run.summarizer_calls or not any(e.layer == "recorded" for e in events):
            st.caption(f"Summarizer: {run.summarizer_name} · {plural(run.summarizer_calls, 'call')} · "
                       f"{run.summarizer_input_tokens:,} tokens sent to it")
        else:  # as recorded: the source agent wrote these summaries; no summarizer of ours ran ("none" read as a fault)
            st.caption("Summaries written by the source agent itself, as recorded in the transcript; "
                       "no summarizer of ours ran.")
        event_table(events)
        summaries_cost = cost_of(run)
        if summaries_cost is not None:
            compactions_table(summaries_cost)
        e = pick_event(events, "layers_summary")
        before, after = e.tokens_before, e.tokens_after
        st.markdown(f"#### Step {e.step} · {escape_md(e.kind)}"
                    + (f" — {before:,} → {after:,} tokens" if before is not None and after is not None else ""))
        # LangChain's "too long to summarize" case is its own warning event at the same step
        for w in [x for x in events if x.step == e.step and x.severity == "warning" and x is not e]:
            st.warning(escape_md(f"{w.kind}: {w.message}"))
        payback = payback_line(summaries_cost, e.step)
        if payback:
            st.info(payback)
        # what this compaction kept, lost and cost to recover, and the cache it broke (ui.forensics)
        card_at(run, e.step, summaries_cost)
        if e.severity == "warning":
            st.warning(escape_md(e.message or "warning"))
        elif e.message:
            st.caption(escape_md(e.message, limit=400))
        if e.payload.get("recorded"):
            pre, post = e.payload.get("pre_tokens"), e.payload.get("post_tokens")
            st.caption("Recorded by the source agent: trigger " + escape_md(str(e.payload.get("trigger") or "not recorded"))
                       + (f" · {pre:,} tokens before (as the agent counted)" if isinstance(pre, int) else "")
                       + (f" · {post:,} after" if isinstance(post, int) else "")
                       + f" · first message after the cut: #{e.payload.get('message_index')}")
        removed = payload_value(e, "removed_ids", "summarized_ids", "removed", default=[]) or []
        kept = payload_value(e, "kept_ids", "preserved_ids", "kept", default=[]) or []
        if isinstance(kept, list) and kept:
            st.caption(f"Kept {len(kept)} message(s): {escape_md(str(kept[0]), limit=50)} … "
                       f"{escape_md(str(kept[-1]), limit=50)}")
        summary = payload_value(e, "summary", "summary_text")
        if summary is None and e.step < len(run.steps):
            summary = next((message_text(m) for m in run.steps[min(e.step + 1, len(run.steps) - 1)].view
                            if message_kind(m) == "summary"), None)
        left, right = st.columns(2)
        with left:
            st.markdown(f"**Removed from the context** ({len(removed) if isinstance(removed, list) else '?'} messages)")
            if isinstance(removed, list):
                show_messages([str(x) for x in removed], run)
        with right:
            st.markdown("**Summary** " + badge("summary"))
            if summary:
                show_text(str(summary), preview_chars=3000, label="whole summary")
            else:
                st.caption("No summary text recorded.")
        prompt = payload_value(e, "prompt", "summary_prompt")
        if prompt:
            with st.expander("Prompt sent to the summarizer"):
                show_text(str(prompt), preview_chars=4000)
        history = payload_value(e, "history_path", "file_path", "path")
        if isinstance(history, str) and run.files.exists(history):
            with st.expander(f"History file {escape_md(history)}"):
                show_text(run.files.read(history), preview_chars=4000)
        raw_payload(e)

# -- reminders ---------------------------------------------------------------------------------
with tabs[2]:
    events = events_of(run, "todo")
    if not events:
        st.info("No todo reminder was injected.")
        layer_inactive_note("todo")
    else:
        event_table(events)
        e = pick_event(events, "layers_reminder")
        text = payload_value(e, "text", "reminder", "content", "inserted")
        st.markdown(f"**Injected at step {e.step}** " + badge("reminder"))
        show_text(str(text) if text is not None else e.message)
        raw_payload(e)

# -- patched calls -----------------------------------------------------------------------------
with tabs[3]:
    events = events_of(run, "dangling")
    if not events:
        st.info("No dangling tool call needed a placeholder result.")
        layer_inactive_note("dangling")
    else:
        event_table(events)
        e = pick_event(events, "layers_patch")
        st.markdown(f"**Step {e.step}** · {escape_md(e.message, limit=200)} " + badge("patch"))
        ids = payload_value(e, "message_ids", default=[]) or []
        calls = payload_value(e, "tool_call_ids", default=[]) or []
        if calls:
            st.caption("Tool calls: " + ", ".join(escape_md(str(c), limit=60) for c in calls))
        if ids:
            show_messages([str(x) for x in ids], run)
        raw_payload(e)

# -- sub-agents --------------------------------------------------------------------------------
with tabs[4]:
    rows = subagent_rows(run)
    events = events_of(run, "subagents")
    if not rows and not events:
        st.info("This thread delegates nothing to sub-agents.")
    if rows:
        st.markdown("**Task calls: tokens spent inside the sub-agent vs tokens returned to the parent**")
        table(rows)
    all_subagent_buttons(run)
    if events:
        st.markdown("**Sub-agent layer events** (e.g. calls dropped above the concurrency limit)")
        event_table(events)

# -- prompt & memory ---------------------------------------------------------------------------
with tabs[5]:
    if not run.steps:
        st.info("No steps.")
    else:
        k = session.current_step(run)
        step = run.steps[k]
        parts = system_parts(step, run.counter)
        st.markdown(f"**System prompt at step {k}**: " + escape_md(prompt_summary(step, run.counter,
                                                                                 run.thread.source_format)))
        if parts:  # no empty table under "the transcript holds no system prompt"
            table([{k2: v for k2, v in p.items() if k2 != "text"} for p in parts])
        for i, p in enumerate(parts):
            with st.expander(f"{escape_md(p['part'], limit=60)} — {p['tokens']:,} tokens", expanded=i == 0 and len(parts) == 1):
                st.code(p["text"] or " ", language=None, wrap_lines=True)
        memory_events = events_of(run, "memory") + events_of(run, "input_context")
        if memory_events:
            st.markdown("**Memory and prompt events**")
            event_table(memory_events)
        memories = [r for r in file_rows(run) if r["path"].startswith("/memories/")]
        if memories:
            st.markdown("**Memory files**")
            table(memories)

# -- all events --------------------------------------------------------------------------------
with tabs[6]:
    all_events = run.events
    if not all_events:
        st.info("No events in this run.")
    else:
        layers = layer_order(sorted({e.layer for e in all_events}))
        st.caption(" · ".join(f"{name}: {sum(1 for e in all_events if e.layer == name)}" for name in layers))
        table([{"step": e.step, "layer": e.layer, "kind": e.kind, "severity": e.severity,
                       "what happened": describe_event(e)} for e in all_events])

# -- the user's own middleware -----------------------------------------------------------------
with tabs[7]:
    names = middleware_layers(run)
    if not names:
        st.info("No middleware of your own in this run. Name any LangChain AgentMiddleware under `middleware:` "
                "on the Config page (docs/config.md, *Your own middleware*); what it changes shows here.")
    else:
        st.caption("What each middleware changed, diffed from the request (or state) before and after it: "
                   "its own events, like a built-in layer's.")
        name = names[0] if len(names) == 1 else st.selectbox("Middleware", names, key="layers_middleware")
        events = middleware_events(run, name)
        if not events:
            st.info(f"{escape_md(name)} ran but changed nothing the model was sent.")
        else:
            event_table(events)
            e = pick_event(events, "layers_middleware_event")
            st.markdown(f"#### Step {e.step} · {escape_md(e.kind)} · {escape_md(str(e.payload.get('hook', '')))}"
                        + (f" — {e.tokens_before:,} → {e.tokens_after:,} tokens"
                           if e.tokens_before is not None and e.tokens_after is not None else ""))
            (st.warning if e.severity == "warning" else st.caption)(escape_md(e.message, limit=600))
            for edit in edited_messages(run, e)[:50]:
                st.markdown(f"**{escape_md(edit.status)}** :gray[{escape_md(edit.id, limit=80)}]")
                left, right = st.columns(2)
                for col, label, message in ((left, "before", edit.before), (right, "after", edit.after)):
                    with col:
                        if message is None:
                            st.caption(f"{label}: —")
                            continue
                        st.caption(f"{label} · {message.type} · {run.counter.count_message(message):,} tokens")
                        show_text(message_text(message), preview_chars=300)
            raw_payload(e)
