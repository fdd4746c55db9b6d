"""Workshop: guided lessons (an overview and one per layer), with a presenter mode for teaching.

In presenter mode one slide is one screen (at 1280×720 as at 1920×1080): a slide per point, then
"Try this" with the lesson's controls beside the chart they change, then the check question
(issue 35: the controls and the chart were never on screen together, on pages of 2,100 px).
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

from engine.config.links import link_notice, link_switch, link_whole_number
from engine.evals import needle_retention
from engine.lessons.catalog import (
    LESSONS,
    THREADS,
    Lesson,
    LessonOutcome,
    lesson,
    lesson_for_link,
    run_lesson,
    watch_label,
    watched_events,
)
from ui import presenter as presenter_ui
from ui.eval_figures import figure_html, figure_png, png_export_available
from ui.figures import compare_figure
from ui.frame import require_frame
from ui.text import escape_md

require_frame()

IDS = [item.id for item in LESSONS]
# In the URL, so a reload (or the link sent to a colleague) opens the same lesson, mode and slide:
# presenter mode and the slide are widgets bound to their query parameter (ui.session.BOUND_PARAMS);
# the lesson is written by this page (a bound select box would put the lesson's title in the URL).
LESSON, PRESENTER, SLIDE = "ws_lesson", "presenter", "slide"
LESSON_PARAM = "lesson"
NOTICES = "ws_notices"


@st.cache_resource(max_entries=48, show_spinner="Replaying the lesson…")
def _outcome(lesson_id: str, choices: tuple[tuple[str, str], ...]) -> LessonOutcome:
    return run_lesson(lesson_id, dict(choices))


def _stages(lesson_id: str) -> int:
    """Presenter slides: each explanation point, then the try-this part, then the check question."""
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


def _read_link() -> None:
    """The link's lesson, presenter mode and slide, once per session; a bad value is said in one line and
    the URL then shows what is displayed (issue 35: `lesson=zzz`, `slide=-3`, `presenter=maybe` were
    dropped or kept without a word). `lesson=` also takes the layer the lessons table names
    (`lesson=compaction`)."""
    link = st.session_state.get("link_params", {})
    notices: list[str] = []
    raw = link.get(LESSON_PARAM)
    if raw is not None:
        found = lesson_for_link(raw)
        if found is None:
            notices.append(link_notice(LESSON_PARAM, raw, "no such lesson; the lessons are " + ", ".join(IDS),
                                       "showing the overview"))
        else:
            st.session_state[LESSON] = found
    # a bad value shows the default, which the bound widgets leave out of the URL
    on, notice = link_switch(PRESENTER, link.get(PRESENTER))
    if notice:
        notices.append(notice)
        st.session_state[PRESENTER] = on
        st.query_params.pop(PRESENTER, None)
    slide, notice = link_whole_number(SLIDE, link.get(SLIDE), 1, _stages(_current()), 1)
    if notice:
        notices.append(notice)
        st.session_state[SLIDE] = slide
        st.query_params.pop(SLIDE, None)
    st.session_state[NOTICES] = notices


if not st.session_state.get("ws_link_read"):
    st.session_state["ws_link_read"] = True
    _read_link()

top = st.columns([4, 2, 1], vertical_alignment="bottom")
top[0].selectbox("Lesson", IDS, key=LESSON, format_func=lambda i: lesson(i).title, persist_state="session",
                 on_change=lambda: st.session_state.__setitem__(SLIDE, 1))
if _current() == IDS[0]:
    st.query_params.pop(LESSON_PARAM, None)
else:
    st.query_params[LESSON_PARAM] = _current()
presenter = bool(st.session_state.get(PRESENTER))
# no help tooltip in presenter mode: shown after the click, it covered the slide's header (issue 35);
# the keys are in the footer line instead
top[1].toggle("Presenter mode", key=PRESENTER, bind="query-params",
              help=None if presenter else "Large type, no sidebar, one slide a screen. Keys: → / ← the next / "
                                          "previous slide, Page Down / Page Up the next / previous lesson "
                                          "(presenter clickers send these).")
presenter = bool(st.session_state.get(PRESENTER))
item = lesson(_current())
if presenter:
    top[2].number_input("Slide", key=SLIDE, min_value=1, value=1, step=1, bind="query-params")
    st.html(presenter_ui.CSS)
    # a new script each run (the counter), so the page takes the focus back after every click
    st.session_state["ws_runs"] = st.session_state.get("ws_runs", 0) + 1
    st.html(presenter_ui.FOCUS_SCRIPT + f"<!-- {st.session_state['ws_runs']} -->", unsafe_allow_javascript=True)
for notice in st.session_state.pop(NOTICES, []):
    st.warning(escape_md(notice))
shown = min(max(1, int(st.session_state.get(SLIDE) or 1)), _stages(item.id)) if presenter else _stages(item.id)
points = len(item.points)
try_slide, check_slide = points + 1, points + 2


def _nav() -> None:
    nav = st.columns(4)
    nav[0].button("◀ Previous lesson", key="ws_prev_lesson", on_click=_go_lesson, args=(-1,),
                  disabled=item.id == IDS[0], shortcut="PageUp")
    if presenter:
        nav[1].button("Previous slide", key="ws_prev_point", on_click=_reveal, args=(-1,), disabled=shown <= 1,
                      shortcut="Left")
        nav[2].button("Next slide", key="ws_next_point", on_click=_reveal, args=(1,),
                      disabled=shown >= _stages(item.id), shortcut="Right", type="primary")
    nav[3].button("Next lesson ▶", key="ws_next_lesson", on_click=_go_lesson, args=(1,),
                  disabled=item.id == IDS[-1], shortcut="PageDown")


def _controls(lesson_: Lesson, *, across: bool) -> dict[str, str]:
    """The lesson's settings to try, one radio each (side by side, or one under the other beside the chart)."""
    choices: dict[str, str] = {}
    slots = st.columns(max(1, len(lesson_.try_this))) if across else [st.container() for _ in lesson_.try_this]
    for slot, control in zip(slots, lesson_.try_this, strict=False):
        key = f"ws_try_{lesson_.id}_{control.key}"
        st.session_state.setdefault(key, control.default)
        slot.radio(control.label, control.options, key=key, horizontal=True, help=None if presenter else control.help or None,
                   format_func=control.option_label)
        choices[control.key] = st.session_state[key]
    return choices


def _metrics(lesson_: Lesson, outcome: LessonOutcome) -> None:
    before, after = outcome.watched
    base_peak, tried_peak = outcome.baseline.peak_view_tokens(), outcome.tried.peak_view_tokens()
    cols = st.columns(3)
    cols[0].metric(watch_label(lesson_.watch), f"{after:,}", delta=f"{_change(after - before)} vs default",
                   delta_color="off", delta_arrow=_arrow(after - before))
    # no colour for no change: "inverse" painted "no change" red (Streamlit colours a text delta as a rise)
    cols[1].metric("Peak view tokens", f"{tried_peak:,}", delta=_change(tried_peak - base_peak),
                   delta_color="inverse" if tried_peak != base_peak else "off",
                   delta_arrow=_arrow(tried_peak - base_peak))
    if lesson_.needles:
        score = needle_retention(outcome.tried, list(lesson_.needles)).score
        cols[2].metric("Needle retention", "n/a" if score is None else f"{score:.0%}",
                       help=None if presenter else "tracked facts: " + ", ".join(lesson_.needles))
    else:
        cols[2].metric("Events, all layers", f"{len(outcome.tried.events):,}",
                       delta=_change(len(outcome.tried.events) - len(outcome.baseline.events)), delta_color="off",
                       delta_arrow=_arrow(len(outcome.tried.events) - len(outcome.baseline.events)))


def _chart(lesson_: Lesson, outcome: LessonOutcome) -> None:
    fig = compare_figure(outcome.baseline, outcome.tried, height=400)
    if presenter:
        presenter_ui.scale_figure(fig)
        fig.update_layout(height=None, autosize=True)
        # the chart fills what the slide leaves it (ui/presenter.CHART_BOX sizes this container to the screen)
        with st.container(key=presenter_ui.CHART_BOX):
            st.plotly_chart(fig, key=f"ws_chart_{lesson_.id}", config={"displaylogo": False}, height="stretch")
        return
    st.plotly_chart(fig, key=f"ws_chart_{lesson_.id}", config={"displaylogo": False})
    changed = outcome.changed()
    st.caption("A (blue): the lesson's default settings. B (orange): your settings"
               + (" — " + "; ".join(f"{k.rsplit('.', 1)[-1]} {a} → {b}" for k, (a, b) in changed.items())
                  if changed else " (the same as A: change a setting above)")
               + f". Markers: compactions; {watched_events(outcome.tried, lesson_.watch):,} "
               f"{watch_label(lesson_.watch).lower()} with your settings.")
    export = st.columns([1, 1, 3], vertical_alignment="center")
    export[0].download_button("Figure as HTML", data=lambda: figure_html(fig), file_name=f"lesson-{lesson_.id}.html",
                              mime="text/html", key=f"ws_html_{lesson_.id}", on_click="ignore",
                              help="A standalone page with plotly.js inside: opens offline, stays interactive.")
    if png_export_available():
        export[1].download_button("Figure as PNG", data=lambda: figure_png(fig), file_name=f"lesson-{lesson_.id}.png",
                                  mime="image/png", key=f"ws_png_{lesson_.id}", on_click="ignore",
                                  help="Rendered by kaleido with the local Chromium (a few seconds).")
    else:
        export[2].caption("PNG export needs the `kaleido` package and a local Chrome/Chromium; "
                          "use the camera icon in the chart's toolbar instead.")


def _try_this() -> None:
    thread_note = (f"Thread: {THREADS[item.thread]}. The lesson uses its own thread and settings "
                   f"(preset `{item.preset}`), not the sidebar's.")
    if presenter:  # the controls beside the chart they change, both on the screen
        left, right = st.columns([5, 7], gap="medium")
        with left:  # the slide's own title says what to do; the thread note is on the page outside presenter mode
            choices = _controls(item, across=False)
        outcome = _outcome(item.id, tuple(sorted(choices.items())))
        with right:
            _metrics(item, outcome)
            _chart(item, outcome)
        return
    st.subheader("Try this")
    st.caption(thread_note)
    outcome = _outcome(item.id, tuple(sorted(_controls(item, across=True).items())))
    _metrics(item, outcome)
    _chart(item, outcome)


def _check() -> None:
    st.subheader("Check")
    answer = st.radio(item.check.question, range(len(item.check.options)), index=None, key=f"ws_check_{item.id}",
                      format_func=lambda i: item.check.options[i])
    if answer is not None:
        if answer == item.check.answer:
            st.success("Right. " + item.check.why)
        else:
            st.warning("Not quite: look at the chart again and try another answer.")


st.title(item.title)
if not presenter:
    st.markdown(f"*{item.summary}*")
    st.markdown("\n".join(f"- {p}" for p in item.points))
    _nav()
    if item.id == "overview":
        st.markdown("**The lessons**")
        # st.table wraps its cells: in a dataframe the "what it shows" sentences were cut off at the column's edge
        st.table([{"lesson": x.title, "layer": x.layer or "all", "what it shows": x.summary} for x in LESSONS])
    _try_this()
    _check()
elif shown <= points:  # a point slide: the summary and the points so far
    st.markdown(f"*{item.summary}*")
    st.markdown("\n".join(f"- {p}" for p in item.points[:shown]))
    _nav()
elif shown == try_slide:
    _try_this()
    _nav()
else:
    _check()
    _nav()
if presenter:
    what = " · try this: change a setting, watch B" if shown == try_slide else ""
    st.caption(f"Slide {shown} of {_stages(item.id)}{what} · → / ← slide · Page Down / Page Up lesson")
