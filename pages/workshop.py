"""Workshop: guided lessons (an overview and one per layer), with a presenter mode for teaching."""

from __future__ import annotations

from typing import Literal

import streamlit as st

from engine.evals import needle_retention
from engine.lessons.catalog import LESSONS, THREADS, LessonOutcome, lesson, run_lesson, watched_events
from ui import presenter as presenter_ui
from ui.eval_figures import figure_html, figure_png, png_export_available
from ui.figures import compare_figure
from ui.frame import require_frame

require_frame()

IDS = [item.id for item in LESSONS]
# In the URL, so a reload (or the link sent to a colleague) opens the same lesson, mode and slide:
# presenter mode and the slide are widgets bound to their query parameter (ui.session.BOUND_PARAMS);
# the lesson is written by this page (a bound select box would put the lesson's title in the URL).
LESSON, PRESENTER, SLIDE = "ws_lesson", "presenter", "slide"
LESSON_PARAM = "lesson"


@st.cache_resource(max_entries=48, show_spinner="Replaying the lesson…")
def _outcome(lesson_id: str, choices: tuple[tuple[str, str], ...]) -> LessonOutcome:
    return run_lesson(lesson_id, dict(choices))


def _stages(lesson_id: str) -> int:
    """Presenter reveals: each explanation point, then the try-this part, then the check question."""
    return len(lesson(lesson_id).points) + 2


def _current() -> str:
    value = st.session_state.get(LESSON)
    return value if value in IDS else IDS[0]


def _change(diff: int) -> str:
    return f"{diff:+,}" if diff else "no change"


def _arrow(diff: int) -> Literal["auto", "off"]:
    """An arrow only for a real change: "+0" with an up arrow read as a rise on the projector."""
    return "auto" if diff else "off"


def _go_lesson(delta: int) -> None:
    i = IDS.index(_current())
    st.session_state[LESSON] = IDS[max(0, min(len(IDS) - 1, i + delta))]
    st.session_state[SLIDE] = 1


def _reveal(delta: int) -> None:
    shown = int(st.session_state.get(SLIDE) or 1)
    st.session_state[SLIDE] = max(1, min(_stages(_current()), shown + delta))


if not st.session_state.get("ws_link_read"):  # the link's lesson, once per session
    st.session_state["ws_link_read"] = True
    if st.session_state.get("link_params", {}).get(LESSON_PARAM) in IDS:
        st.session_state[LESSON] = st.session_state["link_params"][LESSON_PARAM]

top = st.columns([4, 2, 1], vertical_alignment="bottom")
top[0].selectbox("Lesson", IDS, key=LESSON, format_func=lambda i: lesson(i).title, persist_state="session",
                 on_change=lambda: st.session_state.__setitem__(SLIDE, 1))
if _current() == IDS[0]:
    st.query_params.pop(LESSON_PARAM, None)
else:
    st.query_params[LESSON_PARAM] = _current()
top[1].toggle("Presenter mode", key=PRESENTER, bind="query-params",
              help="Large type, no sidebar and a step-by-step reveal. Keys: → / ← reveal the next / previous "
                   "point, Page Down / Page Up the next / previous lesson (presenter clickers send these).")
presenter = bool(st.session_state.get(PRESENTER))
item = lesson(_current())
if presenter:
    top[2].number_input("Slide", key=SLIDE, min_value=1, value=1, step=1, bind="query-params",
                        help="The point being shown; it is kept in the URL, so a reload opens the same slide.")
    st.html(presenter_ui.CSS)
    # a new script each run (the counter), so the page takes the focus back after every click
    st.session_state["ws_runs"] = st.session_state.get("ws_runs", 0) + 1
    st.html(presenter_ui.FOCUS_SCRIPT + f"<!-- {st.session_state['ws_runs']} -->", unsafe_allow_javascript=True)
shown = min(max(1, int(st.session_state.get(SLIDE) or 1)), _stages(item.id)) if presenter else _stages(item.id)

st.title(item.title)
st.markdown(f"*{item.summary}*")
st.markdown("\n".join(f"- {p}" for p in item.points[: min(shown, len(item.points))]))

nav = st.columns(4)
nav[0].button("◀ Previous lesson", key="ws_prev_lesson", on_click=_go_lesson, args=(-1,),
              disabled=item.id == IDS[0], shortcut="PageUp")
if presenter:
    nav[1].button("Previous point", key="ws_prev_point", on_click=_reveal, args=(-1,), disabled=shown <= 1,
                  shortcut="Left")
    nav[2].button("Next point", key="ws_next_point", on_click=_reveal, args=(1,), disabled=shown >= _stages(item.id),
                  shortcut="Right", type="primary")
nav[3].button("Next lesson ▶", key="ws_next_lesson", on_click=_go_lesson, args=(1,),
              disabled=item.id == IDS[-1], shortcut="PageDown")

if item.id == "overview" and not presenter:
    st.markdown("**The lessons**")
    # st.table wraps its cells: in a dataframe the "what it shows" sentences were cut off at the column's edge
    st.table([{"lesson": x.title, "layer": x.layer or "all", "what it shows": x.summary} for x in LESSONS])

if shown > len(item.points):
    st.subheader("Try this")
    st.caption(f"Thread: {THREADS[item.thread]}. The lesson uses its own thread and settings "
               f"(preset `{item.preset}`), not the sidebar's.")
    controls = st.columns(max(1, len(item.try_this)))
    choices: dict[str, str] = {}
    for col, control in zip(controls, item.try_this, strict=False):
        key = f"ws_try_{item.id}_{control.key}"
        st.session_state.setdefault(key, control.default)
        col.radio(control.label, control.options, key=key, horizontal=True, help=control.help or None,
                  format_func=control.option_label)
        choices[control.key] = st.session_state[key]
    outcome = _outcome(item.id, tuple(sorted(choices.items())))
    before, after = outcome.watched
    base_peak, tried_peak = outcome.baseline.peak_view_tokens(), outcome.tried.peak_view_tokens()
    cols = st.columns(3)
    cols[0].metric(f"{item.watch} events", f"{after:,}", delta=f"{_change(after - before)} vs the lesson default",
                   delta_color="off", delta_arrow=_arrow(after - before))
    # no colour for no change: "inverse" painted "no change" red (Streamlit colours a text delta as a rise)
    cols[1].metric("Peak view tokens", f"{tried_peak:,}", delta=_change(tried_peak - base_peak),
                   delta_color="inverse" if tried_peak != base_peak else "off",
                   delta_arrow=_arrow(tried_peak - base_peak))
    if item.needles:
        score = needle_retention(outcome.tried, list(item.needles)).score
        cols[2].metric("Needle retention", "n/a" if score is None else f"{score:.0%}",
                       help="tracked facts: " + ", ".join(item.needles))
    else:
        cols[2].metric("Events, all layers", f"{len(outcome.tried.events):,}",
                       delta=_change(len(outcome.tried.events) - len(outcome.baseline.events)), delta_color="off",
                       delta_arrow=_arrow(len(outcome.tried.events) - len(outcome.baseline.events)))
    changed = outcome.changed()
    fig = compare_figure(outcome.baseline, outcome.tried, height=560 if presenter else 400)
    if presenter:
        presenter_ui.scale_figure(fig)
    st.plotly_chart(fig, key=f"ws_chart_{item.id}", config={"displaylogo": False})
    st.caption("A (blue): the lesson's default settings. B (orange): your settings"
               + (" — " + "; ".join(f"{k.rsplit('.', 1)[-1]} {a} → {b}" for k, (a, b) in changed.items())
                  if changed else " (the same as A: change a setting above)")
               + f". Markers: events, coloured by layer; {watched_events(outcome.tried, item.watch):,} are "
               f"`{item.watch}`.")
    export = st.columns([1, 1, 3], vertical_alignment="center")
    export[0].download_button("Figure as HTML", data=lambda: figure_html(fig), file_name=f"lesson-{item.id}.html",
                              mime="text/html", key=f"ws_html_{item.id}", on_click="ignore",
                              help="A standalone page with plotly.js inside: opens offline, stays interactive.")
    if png_export_available():
        export[1].download_button("Figure as PNG", data=lambda: figure_png(fig), file_name=f"lesson-{item.id}.png",
                                  mime="image/png", key=f"ws_png_{item.id}", on_click="ignore",
                                  help="Rendered by kaleido with the local Chromium (a few seconds).")
    else:
        export[2].caption("PNG export needs the `kaleido` package and a local Chrome/Chromium; "
                          "use the camera icon in the chart's toolbar instead.")

if shown > len(item.points) + 1:
    st.subheader("Check")
    answer = st.radio(item.check.question, range(len(item.check.options)), index=None, key=f"ws_check_{item.id}",
                      format_func=lambda i: item.check.options[i])
    if answer is not None:
        if answer == item.check.answer:
            st.success("Right. " + item.check.why)
        else:
            st.warning("Not quite: look at the chart again and try another answer.")
elif presenter:
    st.caption(f"Point {shown} of {_stages(item.id)} · → next · ← previous · Page Down next lesson")
