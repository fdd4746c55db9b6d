"""A word in a chart's place until the `st.plotly_chart` next to it is drawn.

Streamlit 1.67 loads its plotly.js chunk the first time a page draws an `st.plotly_chart` (seconds
on a busy machine; the Timeline draws with its own copy, `ui.timeline_chart`, so the Step page's
*Tokens per tool* chart is often the first): until then the chart's place was blank. Put
`chart_placeholder(height)` right before the chart, both inside one `st.container()`: a line of
text as tall as the chart, hidden by CSS (`:has`) once a drawn plotly graph (`.main-svg`) is in the
same block, so the chart takes its place without the page jumping.

A Streamlit custom component (`st.components.v2`, mounted in the page's DOM) with fixed markup and
CSS, no script and no data: nothing from a thread reaches it.
"""

from __future__ import annotations

import streamlit as st

CLASS = "ctxi-drawing"
TEXT = "Drawing the chart…"
# hide the placeholder's element container (not only its text: the block's gap would stay) once a
# sibling element holds a drawn plotly graph
CSS = (f".{CLASS} {{display: flex; align-items: center; justify-content: center; opacity: 0.6; "
       "font-size: 0.875rem; height: 100%;}\n"
       "[data-testid=stVerticalBlock]:has(> [data-testid=stElementContainer] .main-svg) "
       f"> [data-testid=stElementContainer]:has(.{CLASS}) {{display: none;}}")


def _component():  # noqa: ANN202 - Streamlit's ComponentRenderer
    # registered on each call: AppTest and a fresh runtime each keep their own registry
    return st.components.v2.component("ctxi_chart_placeholder", html=f'<div class="{CLASS}">{TEXT}</div>',
                                      css=CSS, isolate_styles=False)


def chart_placeholder(height: int, *, key: str) -> None:
    """The placeholder, `height` px tall (the chart's own height), for the chart drawn right after it."""
    _component()(key=key, height=int(height))


__all__ = ["CLASS", "TEXT", "chart_placeholder"]
