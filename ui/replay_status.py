"""Where the "Replaying…" status shows: pinned to the top right of the window, not in the page's flow.

A new config's replay shows an `st.spinner` (ui.session) after Streamlit's 0.5 s delay, inserted
where the page asked for the Run, right under the title: it pushed the old chart down by its height
and pulled it back up when the replay ended, and the browser repainted the whole chart each time
(frames of 216 and 105 ms in one traced edit, docs/benchmarks.md). This CSS takes the spinner's
element container out of the flow (`position: fixed`), so nothing moves while it shows.

A Streamlit custom component (`st.components.v2`, no iframe) with fixed markup and CSS, no script
and no data, drawn at the end of the sidebar on every page: its own element container is hidden,
so it takes no room there. Nothing from a thread reaches it.
"""

from __future__ import annotations

import streamlit as st

CLASS = "ctxi-replay-status"
CSS = (
    # the spinner of the main area (the dashboard's only st.spinner is the replay's)
    "[data-testid=stMain] [data-testid=stElementContainer]:has(> [data-testid=stSpinner]) "
    "{position: fixed; top: 4rem; right: 1.5rem; z-index: 999; width: auto !important; max-width: 60vw; "
    "padding: 0.35rem 0.8rem; border-radius: 0.5rem; background: rgba(255, 255, 255, 0.95); "
    "border: 1px solid rgba(49, 51, 63, 0.15); box-shadow: 0 2px 8px rgba(0, 0, 0, 0.08);}\n"
    # this component's own element container takes no room in the sidebar
    f"[data-testid=stElementContainer]:has(.{CLASS}) {{display: none;}}"
)


def _component():  # noqa: ANN202 - Streamlit's ComponentRenderer
    # registered on each call: AppTest and a fresh runtime each keep their own registry
    return st.components.v2.component("ctxi_replay_status", html=f'<div class="{CLASS}"></div>', css=CSS,
                                      isolate_styles=False)


def replay_status_style() -> None:
    """Mount the CSS that pins the replay's spinner (once per run, in the sidebar)."""
    _component()(key="replay_status_style")


__all__ = ["CLASS", "CSS", "replay_status_style"]
