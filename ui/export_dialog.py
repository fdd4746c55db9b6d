"""The Config page's *Export for an agent* dialog: the current settings as an agent's own configuration
(engine/sessions/export.py), each key with its source, and what the agent cannot take."""

from __future__ import annotations

import streamlit as st

from engine.base.errors import ContextInspectorError
from engine.config.schema import EngineConfig
from engine.sessions.export import TARGETS, export_config
from engine.thread.model import Thread
from ui.text import error_text, escape_md

LABELS = {"claude-code": "Claude Code", "codex": "Codex CLI", "gemini-cli": "Gemini CLI", "openhands": "OpenHands",
          "deerflow": "DeerFlow", "langchain": "LangChain", "deepagents": "Deep Agents"}


@st.dialog("Export for an agent", width="large")
def export_dialog(config: EngineConfig, thread: Thread | None) -> None:
    target = st.selectbox("Agent", TARGETS, format_func=lambda t: LABELS[t], key="export_target")
    try:
        result = export_config(config, target, window_tokens=thread.max_input_tokens if thread else None,
                               model=thread.model if thread else None)
    except ContextInspectorError as exc:
        st.error(escape_md(error_text(exc)))
        return
    if not result.files:
        st.info("Nothing to write: " + escape_md("; ".join(result.not_carried[:1]) or "the agent's defaults apply"))
    for f in result.files:
        st.markdown(f"**{escape_md(f.where)}**")
        st.code(f.text, language=f.language)
    if result.carried:
        st.markdown("**Carried**")
        st.markdown("\n".join(f"- {escape_md(line)}" for line in result.carried))
    if result.not_carried:
        st.markdown(f"**What {LABELS[target]} does not take**")
        st.markdown("\n".join(f"- {escape_md(line)}" for line in result.not_carried))
    st.markdown("**Sources**")
    st.markdown("\n".join(f"- {escape_md(line)}" for line in result.sources))
    st.download_button("Download", data=result.text(), file_name=f"context-inspector-{target}.txt",
                       mime="text/plain", on_click="ignore", key="export_download")
