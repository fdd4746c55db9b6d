"""Context Inspector dashboard: `streamlit run app.py`.

This file is the frame every page runs inside: session state, the shared sidebar (thread and live
settings), the URL, and the page navigation. Pages only read the current Run and draw it.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import follow_widget, session, sidebar
from ui.frame import frame

# The favicon is a file of ours, served by this server: a `:material/…:` icon here makes the browser
# fetch its SVG from fonts.gstatic.com (Streamlit 1.67 builds that URL for a page icon), which fails
# offline with a console error on every page load (issue 35). Nothing is fetched from outside.
FAVICON = Path(__file__).resolve().parent / "ui" / "favicon.svg"
st.set_page_config(page_title="Context Inspector", page_icon=str(FAVICON), layout="wide")

session.init()

# The Timeline is the default page, which Streamlit serves only at the root ("/"), while its own
# url_path stays reserved and unserved (streamlit/commands/navigation.py, 1.67): so it reserves a
# name no one types, and a hidden page runs the same script at /timeline for a typed or bookmarked
# /timeline?... (a page's identity is its url_path; `st.switch_page("pages/timeline.py")` and page
# links find the default one, listed first).
TIMELINE = st.Page("pages/timeline.py", title="Timeline", icon=":material/stacked_line_chart:",
                   url_path="timeline-home", default=True)

TIMELINE_PATHS = ("", "timeline")  # the default page's url_path reads "" (streamlit/navigation/page.py, 1.67)

PAGES = {
    "Inspect": [
        st.Page("pages/threads.py", title="Threads", icon=":material/folder_open:", url_path="threads"),
        st.Page("pages/sessions.py", title="Sessions", icon=":material/history:", url_path="sessions"),
        TIMELINE,
        st.Page("pages/timeline.py", title="Timeline", url_path="timeline", visibility="hidden"),
        st.Page("pages/step.py", title="Step", icon=":material/search:", url_path="step"),
        st.Page("pages/layers.py", title="Layers", icon=":material/layers:", url_path="layers"),
        st.Page("pages/compare.py", title="Compare sessions", icon=":material/compare:", url_path="compare"),
    ],
    "Configure": [
        st.Page("pages/config.py", title="Config", icon=":material/tune:", url_path="config"),
    ],
    "Evaluate": [
        st.Page("pages/evals.py", title="Evals", icon=":material/fact_check:", url_path="evals"),
    ],
    "Teach": [
        st.Page("pages/workshop.py", title="Workshop", icon=":material/school:", url_path="workshop"),
    ],
}

page = st.navigation(PAGES)
if (target := session.pending_page()) is not None:  # a callback asked for another page (ui.session.go_to)
    session.switch_page(target)  # before the sidebar: a run that only switches pages draws nothing
session.sync_url()
follow_widget.live_poller()  # a followed session: polls its file, reruns the page when lines arrive
try:
    if page.url_path in TIMELINE_PATHS:
        # the Timeline draws the sidebar itself, inside its body's fragment (pages/timeline.py): a
        # sidebar edit there reruns that fragment only, not this frame
        with frame():
            page.run()
    else:
        sidebar.render()
        with frame():
            page.run()
finally:  # also when the page stops or reruns: the run cache stays bounded
    session.settle_runs()  # sizing a new Run waits until its page has been sent (engine/run/cache.py)
