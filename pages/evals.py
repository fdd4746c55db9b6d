"""Evals: needle retention and goal drift after compaction, stress mode, and settings sweeps."""

from __future__ import annotations

import importlib.util
import json

import streamlit as st

from engine.base.errors import ConfigError, ContextInspectorError
from engine.base.wording import plural
from engine.config.schema import EngineConfig
from engine.cost.views import account_at, dollars, paid_back, percent
from engine.evals import (
    DEFAULT_STRESS_FRACTION,
    STRESS_RANGE,
    compactions,
    goal_drift,
    needle_retention,
    step_ranges,
)
from engine.evals.account import forensics_summary
from engine.evals.stress import stress_plan
from engine.evals.sweep import PARETO_AXES, SweepResult, cost_axis, default_workers, grid_from_args, sweep
from engine.run.run import Run
from engine.views.compare import summarizer_calls_text
from ui import session
from ui.advice import no_compaction_advice, stress_applies
from ui.cost_panel import cost_of
from ui.eval_figures import (
    CLASS_LABELS,
    COST_AXIS_LABELS,
    SWEEP_X_AXES,
    SWEEP_Y_AXES,
    pareto_axis_label,
    retention_figure,
    selected_points,
    sweep_figure,
)
from ui.figures import compare_figure
from ui.forensics import survival_section
from ui.frame import require_frame
from ui.text import error_text, escape_md
from ui.widgets import keep_widget_state, no_run_message, table

require_frame()

DEFAULT_GRID = "summarization.trigger=fraction:0.25,fraction:0.5,fraction:0.85\nsummarization.keep=messages:6,fraction:0.1"
RESULT_KEY = "ev_sweep_result"
NONCE_KEY = "ev_sweep_nonce"


def _needles() -> list[str]:
    return [line.strip() for line in str(st.session_state.get("ev_needles", "")).splitlines() if line.strip()]


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _sweep_json(result: SweepResult) -> str:
    return json.dumps(result.to_dict(), indent=1)


def _open_in_dashboard(config: EngineConfig, label: str) -> None:
    session.set_config(config)
    session.notify(f"Opened {label} from the Evals page.")
    session.switch_page("pages/timeline.py")


def _eval_table(run: Run, label: str) -> dict[str, object]:
    needle = needle_retention(run, _needles() or None)
    drift = goal_drift(run)
    t = run.totals()
    cost = cost_of(run)
    money = cost.totals() if cost is not None else {}
    kept = forensics_summary(run)
    return {"run": label, "compactions": len(needle.compactions), "peak view": t["peak_view_tokens"],
            "facts kept": _score(kept["facts kept"]), "re-fetches": kept["re-fetches"],
            "retention": _score(needle.score), "with recovery": _score(needle.recovery_score),
            "intent kept": _score(drift.score), "summarizer calls": summarizer_calls_text(run),
            "summarizer tokens": t["summarizer_input_tokens"],
            # unpriced: unknown ("-"), not "$0.00" (engine.evals.sweep.run_metrics does the same)
            "dollars": dollars(money.get("dollars") if cost is not None and cost.price is not None else None),
            "cache hit rate": percent(money.get("hit_rate"))}


st.title("Evals")
run = session.current_run()
if run is None:
    no_run_message()
    st.stop()
thread_key = st.session_state["thread_key"]


# -- needle retention and goal drift ----------------------------------------------------------------
def _needle_section() -> None:
    st.text_area("Needles: facts to track, one per line (empty: distinctive facts picked from the thread)",
                 key="ev_needles", height=90, placeholder="e.g. BLUE-HERON-7")
    report = needle_retention(run, _needles() or None)
    drift = goal_drift(run)
    if report.auto_picked:
        st.caption("Picked from the thread: " + (", ".join(f"**{escape_md(n)}**" for n in report.needles)
                                                 or "nothing distinctive found; type a needle above."))
    cols = st.columns(5)
    cols[0].metric("Retention", _score(report.score), help="share of checked steps where every needle in the thread "
                   "is in the view or in a summary (checked: from the first compaction on; all steps without one)")
    cols[1].metric("With recovery", _score(report.recovery_score), help="also counting needles the agent could grep "
                   "from the virtual filesystem (offloaded results, history files)")
    cols[2].metric("Compactions", f"{len(report.compactions):,}")
    cols[3].metric("Intent kept", _score(drift.score), help="share of steps after the first compaction where the "
                   "first human request is still in the view or in the summary's SESSION INTENT")
    cols[4].metric("Drift flags", f"{len(drift.flagged_steps):,}")
    if report.needles:
        st.plotly_chart(retention_figure(report, drift), key="ev_retention_chart", config={"displaylogo": False})
        st.caption("One band per needle and for the session intent: " + " · ".join(
            f"{label}" for label in CLASS_LABELS.values()) + ". Dotted lines: compactions of this replay; "
            "dash-dot: compactions the source recorded.")
    if drift.placeholder_steps:
        st.warning(f"The summary was LangChain's placeholder “Previous conversation was too long to summarize.” at "
                   f"steps {step_ranges(drift.placeholder_steps)}: everything it replaced is gone. Raise "
                   "`summarization.trim_tokens_to_summarize` or lower the keep.")
    if drift.flagged_steps:
        st.error(f"Goal drift: the session intent is neither kept nor in the summary at steps "
                 f"{step_ranges(drift.flagged_steps)}.")
    elif drift.intent and report.compactions:
        st.success("The session intent survives every compaction.")
    if drift.intent:
        st.caption("Session intent: " + escape_md(drift.intent, limit=300))
    if report.compactions:
        rows = []
        checks = {c.step: c for c in drift.checks}
        run_cost_ = cost_of(run)
        for c in report.at_compactions():
            row: dict[str, object] = {"step": c["step"], "source": c["source"]}
            row.update({n: CLASS_LABELS[k] for n, k in c["classes"].items()})
            check = checks.get(c["step"])
            row["session intent"] = check.status if check else "-"
            row["too long to summarize"] = "yes" if c["placeholder"] else "no"
            account = account_at(run_cost_, c["step"]) if run_cost_ is not None else None
            row["paid back"] = paid_back(account) if account is not None else "-"
            # an unpriced model has no dollars: "-", not "$0.00" beside "unpriced"
            row["net"] = dollars(account.net_dollars) if account is not None and account.priced else "-"
            rows.append(row)
        st.markdown("**After each compaction**")
        table(rows, height=min(400, 38 + 35 * len(rows)))
    else:
        st.info("No compaction happened with these settings. "
                + no_compaction_advice(run.config, stress=stress_applies(run.config, run.thread)))


# -- stress mode -------------------------------------------------------------------------------------
def _stress_section() -> None:
    low, high = STRESS_RANGE
    st.slider("Every trigger at this % of the window", min_value=int(low * 100), max_value=int(high * 100),
              value=int(DEFAULT_STRESS_FRACTION * 100), step=1, key="ev_stress_pct",
              help="Sets the summarization trigger, the argument-truncation trigger and an agent preset's compaction "
                   "trigger; keeps that would swallow the trigger shrink to a fifth of it. On the as-recorded run B is "
                   "the preset of the agent that recorded the thread. The references force compaction like this to "
                   "study it.")
    fraction = st.session_state["ev_stress_pct"] / 100
    # the as-recorded run has no trigger to lower: B is then the recording agent's own preset, stressed
    plan = stress_plan(run.config, run.thread, fraction, window_tokens=run.window_tokens)
    if plan.config is None:
        st.info(escape_md(plan.reason))
        return
    try:
        stressed = session.run_for(thread_key, plan.config)
    except Exception as exc:  # a layer bug must not take the page down
        st.error(escape_md(f"The engine failed in stress mode: {error_text(exc)}"))
        stressed = None
    if stressed is not None:
        st.plotly_chart(compare_figure(run, stressed), key="ev_stress_chart", config={"displaylogo": False})
        st.caption(escape_md(f"A: the current settings ({run.config.preset or 'custom'}). B: {plan.describe()}."))
        label = f"stress {fraction:.0%}" + (f" ({plan.agent_preset})" if plan.agent_preset else "")
        table([_eval_table(run, "current settings"), _eval_table(stressed, label)])
        if not compactions(stressed):
            st.info(f"B did not compact: this thread never reaches B's trigger (B's peak view: "
                    f"{stressed.totals()['peak_view_tokens']:,} tokens)."
                    + (" Lower the slider to compact earlier." if fraction > STRESS_RANGE[0] else ""))
        if st.button("Open the stress run in the dashboard", key="ev_stress_open"):
            _open_in_dashboard(plan.config, label.replace("stress", "stress mode at", 1))


# -- sweep -----------------------------------------------------------------------------------------
def _sweep_section() -> None:
    st.caption("Replays this thread (and any samples you add) over every combination of the values below, starting "
               "from the current settings. One `KEY=V1,V2` per line; when a value itself holds commas (a trigger "
               "list such as `tokens:30000,messages:50`), separate the values with `;`.")
    st.text_area("Grid", value=DEFAULT_GRID, key="ev_grid", height=90)
    extra = [p for p in session.sample_files() if session.sample_key(p) != thread_key]
    st.multiselect("Also sweep these samples", [session.sample_key(p) for p in extra], key="ev_sweep_samples",
                   format_func=lambda k: k.removeprefix("sample:"))
    executors = ["process", "serial"] + (["ray"] if importlib.util.find_spec("ray") else [])
    cols = st.columns(2)
    cols[0].radio("Executor", executors, key="ev_executor", horizontal=True,
                  help="process: a local pool on all cores; serial: in this process; ray: a local Ray instance")
    cols[1].number_input("Workers", min_value=1, max_value=64, value=default_workers(), key="ev_workers")
    if st.button("Run sweep", key="ev_sweep_run", type="primary"):
        try:
            grid = grid_from_args(line for line in str(st.session_state["ev_grid"]).splitlines() if line.strip())
            threads = [run.thread] + [t for k in st.session_state.get("ev_sweep_samples", [])
                                      if (t := session.thread_for(k)) is not None]
            bar = st.progress(0.0, text="Starting workers…")
            if any(k.partition(".")[0] == "middleware" for k in grid):  # code: confirmed on the Config page only
                raise ConfigError("a sweep on the dashboard does not vary middleware (Python code): apply each "
                                  "list on the Config page, which asks first, or sweep it with ctxi sweep "
                                  "--allow-middleware", key="grid")
            if not session.models_allowed() and any(k.endswith(("summarizer", "model_name")) for k in grid):
                raise ConfigError("a sweep over summarizer models calls them: turn on \"Allow real models\" in the sidebar first",
                                  key="grid")
            result = sweep(threads, session.runnable_config(run.config), grid, executor=st.session_state["ev_executor"],
                           workers=int(st.session_state["ev_workers"]), needles=_needles() or None,
                           progress=lambda done, total: bar.progress(done / total, text=f"{done}/{total} replays"))
            bar.empty()
            st.session_state[RESULT_KEY] = (thread_key, result)
        except ContextInspectorError as exc:
            st.error(escape_md(error_text(exc)))
    stored = st.session_state.get(RESULT_KEY)
    if stored is not None and stored[0] == thread_key:
        result = stored[1]
        axes = st.multiselect("Pareto front on", list(PARETO_AXES), default=list(result.pareto_axes), key="ev_pareto",
                              format_func=pareto_axis_label,
                              help="the metrics a point must not be beaten on all at once (at least two); `cost` is "
                                   "dollars when the runs are priced, else summarizer input tokens. `ctxi sweep "
                                   f"--pareto` takes their keys: {', '.join(PARETO_AXES)}")
        if len(set(axes)) >= 2 and tuple(axes) != result.pareto_axes:
            result = result.with_pareto(axes)  # nothing is replayed
        axis = cost_axis([p.metrics for p in result.points])
        st.caption(f"{plural(len(result.points), 'point')} × {plural(len(result.thread_ids), 'thread')} = "
                   f"{plural(result.replays, 'replay')} in {result.elapsed_s:.1f} s ({result.executor}, "
                   f"{plural(result.workers, 'worker')}). Pareto front: min peak "
                   f"view tokens, max retention, min {COST_AXIS_LABELS[axis]} (marker size). Click a point to open "
                   "its settings in the Timeline.")
        x_options = [k for k in SWEEP_X_AXES if k != "dollars" or axis == "dollars"]
        pick = st.columns(2)
        x_axis = pick[0].radio("X axis", x_options, format_func=SWEEP_X_AXES.__getitem__, horizontal=True,
                               key="ev_sweep_x")
        y_axis = pick[1].radio("Y axis", list(SWEEP_Y_AXES), format_func=SWEEP_Y_AXES.__getitem__, horizontal=True,
                               key="ev_sweep_y")
        event = st.plotly_chart(sweep_figure(result, x_axis=x_axis, y_axis=y_axis),
                                key=f"ev_sweep_chart_{st.session_state.get(NONCE_KEY, 0)}",
                                on_select="rerun", selection_mode="points", config={"displaylogo": False})
        picked = selected_points(event)
        if picked:
            st.session_state[NONCE_KEY] = st.session_state.get(NONCE_KEY, 0) + 1  # consume the click
            _open_in_dashboard(result.config_for(picked[0]), f"sweep point {result.points[picked[0]].point.label}")
        table([{"point": p.point.index, "settings": p.point.label, "Pareto": "★" if p.pareto else "",
                "peak view": p.metrics["peak_view_tokens"], "retention": _score(p.metrics["retention"]),
                "intent kept": _score(p.metrics["drift"]), "compactions": p.metrics["compactions"],
                "summarizer calls": p.metrics["summarizer_calls"],
                # the source agent's own compaction calls, replayed by the as-recorded preset (ours are 0 there)
                "agent calls (recorded)": p.metrics.get("recorded_summarizer_calls", 0),
                "summarizer tokens": p.metrics["summarizer_input_tokens"],
                "dollars": dollars(p.metrics.get("dollars")), "cache hit rate": percent(p.metrics.get("hit_rate")),
                "facts kept": _score(p.metrics.get("survival")), "re-fetches": p.metrics.get("recovery_calls"),
                "cache misses": dollars(p.metrics.get("cache_lost_dollars"))}
               for p in result.points],
              height=min(420, 38 + 35 * len(result.points)))
        cols = st.columns([3, 1], vertical_alignment="bottom")
        cols[0].selectbox("Open a point", range(len(result.points)), key="ev_open_point",
                          format_func=lambda i: f"{i}: {result.points[i].point.label}")
        if cols[1].button("Open in Timeline", key="ev_open_point_go"):
            i = int(st.session_state["ev_open_point"])
            _open_in_dashboard(result.config_for(i), f"sweep point {result.points[i].point.label}")
        st.download_button("Download the sweep (JSON)", data=lambda: _sweep_json(result), file_name="sweep.json",
                           mime="application/json", key="ev_sweep_download", on_click="ignore")


# Only the open tab runs (bind="query-params" tracks it and reruns on a switch): the stress tab
# replays the thread once more and prices both runs, 1.3 of the 1.7 s a first visit of Evals took
# for a 1,000-step thread when every tab ran (2026-12-03). The closed tabs' widgets keep their
# values (the stress table reads the needles typed in the first tab).
keep_widget_state("ev_needles", "ev_stress_pct", "ev_grid", "ev_sweep_samples", "ev_executor", "ev_workers",
                  "ev_pareto", "ev_sweep_y", "fx_eval_pick",
                  "ev_sweep_x", "ev_open_point")
def _survival_section() -> None:
    survival_section(run, cost_of(run))


needle_tab, survival_tab, stress_tab, sweep_tab = st.tabs(
    ["Needle retention & goal drift", "Compaction survival", "Stress mode", "Sweep"], key="tab", bind="query-params")
for tab, section in ((needle_tab, _needle_section), (survival_tab, _survival_section), (stress_tab, _stress_section),
                     (sweep_tab, _sweep_section)):
    if tab.open:
        with tab:
            section()
