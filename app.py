"""Context Inspector dashboard: `streamlit run app.py`.

This file is the frame every page runs inside: session state, the shared sidebar (thread and live
settings), the URL, and the page navigation. Pages only read the current Run and draw it.
"""

from __future__ import annotations

import streamlit as st

from ui import session, sidebar
from ui.frame import frame

st.set_page_config(page_title="Context Inspector", page_icon=":material/explore:", layout="wide")

session.init()
sidebar.render()

PAGES = {
    "Inspect": [
        st.Page("pages/threads.py", title="Threads", icon=":material/folder_open:", url_path="threads"),
        st.Page("pages/timeline.py", title="Timeline", icon=":material/stacked_line_chart:", url_path="timeline", default=True),
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
    st.switch_page(target)
session.sync_url()
with frame():
    page.run()
