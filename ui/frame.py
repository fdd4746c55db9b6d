"""Pages always run inside app.py's frame (session state, sidebar, URL), even on Streamlit's legacy path.

With a `pages/` folder next to app.py, Streamlit 1.67 still runs a page file directly (its
pre-`st.navigation` multipage mode) in two cases: the first request a fresh server gets, when it
is a deep link such as `/step?step=4`, and every rerun after the first inside `AppTest`, which
resets the mode flag per run. A page then renders without the frame. Each page calls
`require_frame()` first: it switches the process to `st.navigation` mode and reruns through app.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

_IN_FRAME: ContextVar[bool] = ContextVar("ctxi_in_frame", default=False)


@contextmanager
def frame() -> Iterator[None]:
    """app.py runs the selected page inside this."""
    token = _IN_FRAME.set(True)
    try:
        yield
    finally:
        _IN_FRAME.reset(token)


def require_frame() -> None:
    """First line of every page: rerun through app.py if Streamlit ran this file on its own."""
    PagesManager.uses_pages_directory = False  # this app registers its pages with st.navigation
    if not _IN_FRAME.get():
        st.rerun()
