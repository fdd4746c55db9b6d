"""Compare sessions: two threads (samples, library entries, uploads, sub-agents) side by side."""

from __future__ import annotations

import streamlit as st

from engine.config.links import link_notice
from engine.config.schema import EngineConfig
from engine.config.settings import default_config
from engine.cost.payback import is_compaction
from engine.cost.views import percent
from engine.evals.account import forensics_summary
from engine.run.run import Run
from engine.views.compare import summarizer_calls_text
from engine.views.threads import thread_facts
from ui import session
from ui.figures import timeline_figure
from ui.frame import require_frame
from ui.text import error_text, escape_md
from ui.widgets import no_run_message, table

require_frame()

st.title("Compare sessions")
# `thread=` is session A (the open thread, as on every page); `vs=` is session B, written by this page
VS_PARAM = "vs"
COMPARE_LEGEND_PX = 240
CHART_PX = 470  # each chart's width: two fit beside each other in the main column at 1440 px (~980 px)  # the legend band under each half-width chart: ~12 entries in 4-5 rows
OWN, SIDEBAR = "each on its own default settings", "both on the sidebar's settings"


def _label(key: str, labels: dict[str, str]) -> str:
    return labels.get(key, key)


def _config_for(key: str, how: str) -> EngineConfig:
    if how == SIDEBAR:
        return st.session_state["config"]
    return default_config(session.thread_for(key))


def _run(key: str, how: str) -> Run | None:
    try:
        return session.run_for(key, _config_for(key, how))
    except Exception as exc:
        st.error(f"{escape_md(key, limit=80)}: {escape_md(error_text(exc))}")
        return None


labels = session.known_threads()
current = st.session_state.get("thread_key")
if current and current not in labels:
    thread = session.current_thread()
    if thread is not None:
        labels[current] = thread.title or thread.thread_id
keys = list(labels)
if len(keys) < 2 or not current or current not in labels:
    st.info("Two sessions are needed: open a thread and upload or pick another on the **Threads** page.")
    if not current:
        no_run_message()
    st.stop()

if "cmp_b" not in st.session_state:  # the link's B once, else the first other session
    wanted = st.session_state.get("link_params", {}).get(VS_PARAM)
    if wanted and wanted != current and session.thread_for(wanted) is not None:
        labels.setdefault(wanted, session.thread_for(wanted).title or wanted)  # type: ignore[union-attr]
        keys = list(labels)
        st.session_state["cmp_b"] = wanted
    else:
        st.session_state["cmp_b"] = next(k for k in keys if k != current)
        if wanted:  # said once, like every other bad link value (issue 35: vs=library:… silently became a sample)
            why = ("it is session A itself" if wanted == current else
                   f"not available here: {session.load_error(wanted)}" if session.load_error(wanted) else
                   "not available here: not a sample, nor in this workspace's library, nor opened in this session")
            st.session_state["cmp_notice"] = link_notice(
                VS_PARAM, wanted, why, f"comparing with {_label(st.session_state['cmp_b'], labels)} instead")
if st.session_state.get("cmp_notice"):
    st.warning(escape_md(st.session_state.pop("cmp_notice")))
if st.session_state["cmp_b"] not in keys:
    st.session_state["cmp_b"] = next(k for k in keys if k != current)

# the settings radio has a row of its own, and room under it: in a third column beside the two pickers its labels
# wrapped to four lines at 1024 px (a projector) and the facts table's hover toolbar (search, download, full
# screen, shown above the table's top right corner) covered them
pick = st.columns(2, vertical_alignment="bottom")
chosen_a = pick[0].selectbox("Session A (the open thread)", keys, index=keys.index(current),
                             format_func=lambda k: _label(k, labels), key=f"cmp_a_{current}")
if chosen_a != current:
    session.select_thread(chosen_a)
    st.rerun()
b_key = pick[1].selectbox("Session B", keys, format_func=lambda k: _label(k, labels), key="cmp_b",
                          persist_state="session")
how = st.radio("Settings", [OWN, SIDEBAR], key="cmp_how", persist_state="session", horizontal=True,
               help="Own defaults: each session as recorded where it recorded its usage, else its default "
                    "preset. Sidebar: the same what-if on both.")
st.query_params[VS_PARAM] = b_key

run_a, run_b = _run(current, how), _run(b_key, how)
if run_a is None or run_b is None:
    st.stop()


def _facts(run: Run) -> dict[str, object]:
    facts = thread_facts(run.thread)
    totals = run.totals()
    return {
        "format": facts.source_format, "model": facts.model or "?", "steps (model calls)": facts.steps,
        "messages": facts.messages, "tool calls": len(run.thread.tool_calls()), "sub-agent transcripts": facts.subagents,
        "recorded compactions": facts.recorded_compactions, "window": run.window_tokens,
        "peak view tokens": totals["peak_view_tokens"], "peak raw tokens (no layers)": totals["peak_raw_tokens"],
        "tokens saved": totals["tokens_saved"], "events": totals["events"], "warnings": totals["warnings"],
        "summarizer calls": summarizer_calls_text(run), "settings": run.config.preset or "custom",
        **_forensics(run),
    }


def _forensics(run: Run) -> dict[str, object]:
    """What the run's compactions kept and what the agent fetched again (engine.evals.account)."""
    try:
        f = forensics_summary(run)
    except Exception as exc:  # an eval bug must not take the page down
        return {"facts kept after compactions": f"failed: {error_text(exc)}"}
    if not any(is_compaction(e) for e in run.events):  # nothing to account for: say so, not "-" and "0 (-)"
        kept = refetches = "no compaction"
    else:
        kept = percent(f["facts kept"])
        basis = f["re-fetch basis"]
        refetches = f"{f['re-fetches']:,}" + (f" ({basis})" if basis and basis != "-" else "")
    return {"facts kept after compactions": kept, "re-fetches after compactions": refetches,
            "share of input dollars re-sending history": percent(f["replayed share of input dollars"])}


def _cell(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _open_b(a: str, b: str) -> None:
    """B becomes the open thread, and the previous one is B: the same two sessions, swapped."""
    session.select_thread(b)
    st.session_state["cmp_b"] = a


fa, fb = _facts(run_a), _facts(run_b)
st.space("small")  # the table's toolbar shows in it, under the radio
table([{"": name, "A": _cell(fa[name]), "B": _cell(fb[name])} for name in fa], height=38 + 35 * len(fa))

# Side by side where two charts fit (1440 px), one under the other where they do not: two half columns of
# a 1024 px projector's ~560 px left each plot ~75 px and cut B's notes off.
charts = st.container(horizontal=True, gap="medium", key="cmp_charts")
for run, name, key in ((run_a, "A", current), (run_b, "B", b_key)):
    with charts.container(width=CHART_PX, key=f"cmp_half_{name}"):
        st.markdown(f"**{name}: {escape_md(_label(key, labels), limit=80)}**")
        st.caption(f"{run.counts_label()} · settings {escape_md(run.config.preset or 'custom')}")
        fig = timeline_figure(run, height=620 + COMPARE_LEGEND_PX)
        # Half a page wide: the legend goes under the plot, in a band of the figure's own height
        # (`yref: container`), and the right margin the side legend needed is given back to the plot.
        fig.update_layout(legend={"orientation": "h", "x": 0, "xref": "container", "y": 0, "yref": "container",
                                  "yanchor": "bottom"},
                          margin={"r": 20, "b": COMPARE_LEGEND_PX + 60})
        st.plotly_chart(fig, key=f"cmp_chart_{name}", config={"displaylogo": False})
        if name == "B":
            st.button("Swap: open B as the current thread", key="cmp_open_b", on_click=_open_b, args=(current, b_key))
