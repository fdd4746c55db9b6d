"""Streamlit's element code for the other pages, fetched while the user reads the first one.

Streamlit's frontend loads each element's code the first time a page shows that element
(`React.lazy` chunks under `static/js/`): the first Step page of a browser tab fetched and parsed
the dataframe's code and its Arrow formatting (DataFrame, arrowFormatUtils: 1.2 MB), the text
input's, the segmented control's and the progress bar's before it could draw, 0.62-0.71 s to
settle against 0.28-0.33 s for every later Step page (probe, 2026-12-03; docs/benchmarks.md).

This component imports those chunks once per browser tab, when the browser is idle after the
first page: the same URLs Streamlit's own `import()` asks for later, so the browser's module map
answers it at once. A chunk is found by its name in the installed Streamlit's static folder (the
names carry a content hash that changes with each release); a name that is not there is left out,
so an upgrade degrades to Streamlit's own lazy loading, never to an error.

A Streamlit custom component (`st.components.v2`, mounted in the page's own DOM, no iframe), fixed
script, its only data the chunk names; its element container takes no room in the sidebar.
"""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

# The element chunks the dashboard's pages draw that its first page (the Timeline) does not, each
# with the Streamlit call it serves; what they import themselves (arrowFormatUtils, moment, ...)
# comes with them.
CHUNKS = (
    "DataFrame",  # st.dataframe: every table (ui.widgets.table), the Step page's budget panel
    "TextInput",  # st.text_input: the Step page's search
    "ButtonGroup",  # st.segmented_control / st.pills: the Step page's filters
    "Progress",  # st.progress: the Step page's budget gauge
    "TextArea",  # st.text_area: Config's YAML, the Evals needles
    "Multiselect",  # st.multiselect: Config's policies, Evals' samples
    "Slider",  # st.slider: Evals' stress mode
    "PlotlyChart",  # st.plotly_chart: every figure but the Timeline's own chart
    "FileUploader",  # st.file_uploader: Threads, Config
    "Table",  # st.table: the Workshop's overview
    "StreamlitSyntaxHighlighter",  # st.code: Layers' offloaded files, summaries
)
STATIC_JS = Path(st.__file__).parent / "static" / "static" / "js"
CLASS = "ctxi-preload"

_JS = r"""
export default function (component) {
  const { data } = component;
  if (window.__ctxiPreload || !data || !Array.isArray(data.chunks)) return;
  const index = document.querySelector('script[type="module"][src*="/static/js/index."]');
  if (!index) return;
  window.__ctxiPreload = true;
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 1));
  setTimeout(() => idle(() => {
    window.__ctxiPreload = Promise.allSettled(data.chunks.map((name) => import(new URL(name, index.src).href)));
  }, {timeout: 5000}), %(delay_ms)d);
}
"""
# after the first page's own draw (a 1,000-step Timeline settles in ~0.3 s on a quiet machine)
DELAY_MS = 1500
# no room in the sidebar (the newline inside: Streamlit reads a one-line string with `[` as a file glob)
CSS = f"[data-testid=stElementContainer]:has(.{CLASS})\n{{display: none;}}"


@functools.cache
def chunk_files(folder: Path = STATIC_JS) -> tuple[str, ...]:
    """The installed Streamlit's file for each of CHUNKS (`DataFrame.-f9-1zS0.js`), those it has."""
    found = []
    for name in CHUNKS:
        files = sorted(p.name for p in folder.glob(f"{name}.*.js") if p.name.count(".") == 2)
        if len(files) == 1:  # two would be an ambiguous build: leave it to Streamlit
            found.append(files[0])
    return tuple(found)


def _component():  # noqa: ANN202 - Streamlit's ComponentRenderer
    # registered on each call: AppTest and a fresh runtime each keep their own registry
    return st.components.v2.component("ctxi_preload", html=f'<div class="{CLASS}"></div>', css=CSS,
                                      js=_JS % {"delay_ms": DELAY_MS}, isolate_styles=False)


SENT_KEY = "ctxi_preload_sent"


def preload_elements() -> None:
    """Mount the preloader in the sidebar on this session's first run that draws it, only then.

    A session is one browser tab, and the script's timer runs once the script has mounted, whether
    or not the element stays: later runs do not resend its ~1.1 KB (a cached config's whole
    message is ~18 KB)."""
    if st.session_state.get(SENT_KEY):
        return
    st.session_state[SENT_KEY] = True
    _component()(key="ctxi_preload", data={"chunks": list(chunk_files())})


__all__ = ["CHUNKS", "chunk_files", "preload_elements"]
