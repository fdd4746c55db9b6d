"""The live follow box in the sidebar: while a session is followed, it polls the session's file every
second (only new bytes are read) and reruns the whole page when lines arrived, so every page redraws."""

from __future__ import annotations

import time

import streamlit as st

from engine.sessions.gauge import gauge
from ui import sessions_state
from ui.text import escape_md

POLL_S = 1.0
SEEN_KEY = "follow_seen_version"


def _stop() -> None:
    sessions_state.set_following(None)
    st.session_state.pop(SEEN_KEY, None)


def live_poller() -> None:
    """Draw the follow box when this browser session follows the open session (else nothing)."""
    key = sessions_state.following()
    if not key or st.session_state.get("thread_key") != key:
        return
    server = sessions_state.server()
    sf = server.lookup(key.split(":", 1)[1])
    if sf is None:
        return

    @st.fragment(run_every=POLL_S)
    def box() -> None:
        entry = server.poll(sf)
        seen = st.session_state.get(SEEN_KEY)
        if seen is not None and entry.version != seen:
            st.session_state[SEEN_KEY] = entry.version
            if entry.thread is not None:  # show the newest step as it arrives
                st.session_state["step"] = max(0, len(entry.thread.ai_indices()) - 1)
            st.rerun(scope="app")
        st.session_state[SEEN_KEY] = entry.version
        st.markdown("**● Following live**")
        if entry.error:
            st.caption("Cannot read it now: " + escape_md(entry.error))
        if entry.thread is None:
            return
        g = gauge(entry.thread, config=st.session_state.get("config"))
        fraction = 0.0 if g.fraction is None else min(1.0, g.fraction)
        st.progress(fraction, text=f"{g.context_tokens or 0:,} / {g.window_tokens:,} tokens now ({g.source})")
        lines = [escape_md(g.threshold_label)]
        if g.calls_left is not None:
            lines.append("over it" if g.calls_left == 0 else f"about {g.calls_left:,} call(s) left at "
                         f"{g.growth_per_call:+,.0f} tokens/call")
        ago = time.time() - entry.last_change_s if entry.last_change_s else None
        lines.append(f"{g.steps:,} steps" + ("" if ago is None else f" · last change {ago:,.0f} s ago")
                     + (" · waiting for a half-written line" if entry.update and entry.update.waiting_line else ""))
        st.caption(" · ".join(lines))
        st.button("Stop following", key="follow_stop", on_click=_stop)

    with st.sidebar:
        box()
