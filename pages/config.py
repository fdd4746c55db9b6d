"""Config: every layer's settings as a form or YAML, presets, download/upload, and A/B compare."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st
import yaml

from engine.base.errors import ConfigError
from engine.config.presets import PRESETS
from engine.config.safe_yaml import yaml_text
from engine.config.schema import EngineConfig, preset
from engine.config.setting_warnings import setting_warnings
from engine.config.settings import base_config, setting_text
from engine.config.validation import InvalidConfig
from engine.cost.views import dollars, percent
from engine.evals.policy_compare import COMPARABLE, DEFAULT_COMPARE, compare_policies
from engine.layers.user import check_middleware, plan_middleware
from engine.run.whatif import has_recorded_baseline
from engine.views.compare import compare_runs
from ui import session
from ui.config_form import (
    SECTIONS,
    FormField,
    all_fields,
    apply_form,
    field_for_error,
    form_fields,
    open_section,
    widget_value,
)
from ui.cost_panel import compare_cost
from ui.figures import compare_figure, policies_figure
from ui.forensics import compare_section
from ui.frame import require_frame
from ui.text import error_text, escape_md
from ui.widgets import EMPTY_CELL, keep_widget_state, no_run_message, table

require_frame()

st.title("Config")
config: EngineConfig = st.session_state["config"]
# widgets are keyed by the config they show, so they reset when the config changes elsewhere
gen = f"{abs(hash(config)) % 10**10:010d}"

SECTION_TITLES = {
    "summarization": "L2 summarization", "filesystem": "L0 filesystem", "subagents": "L1 sub-agents",
    "todo": "L3 todo reminder", "dangling": "L4 dangling tool calls", "memory": "L5 memory",
    "input_context": "Input context (prompt assembly)", "model": "Model and window", "tokens": "Token counter",
    "general": "Layer order and your own middleware",
    "compaction": "Coding-agent compaction (Claude Code, Codex, Gemini CLI, Cline, OpenHands, server-side)",
    "recorded": "As recorded (the source's own compactions)",
    "context_editing": "Context editing (clear old tool results)", "cost": "Cost (prices and prompt cache)",
}


# `middleware:` imports and runs code: said wherever it can be typed (docs/config.md, SECURITY.md).
MIDDLEWARE_NOTE = ("`middleware` entries import and run Python code on this server (`use: package.module:Class`): "
                   "each new list is shown for your confirmation before anything is imported. Only use code you "
                   "wrote or trust. A link never sets this.")


PENDING_KEY = "middleware_pending"


def _accept(new: EngineConfig, source: str) -> bool:
    """Apply a config the user typed or uploaded; True when applied now.

    Middleware is Python code: a list this session has not confirmed is checked without importing
    anything (`plan_middleware`: `os:system`, a function, a module that defines no such class are one
    line here) and then waits for the confirmation that lists each class and the file it imports
    (`_confirmation`); a server open to a network refuses it unless started to allow it (SECURITY.md).
    """
    changed = bool(new.middleware) and new.middleware != config.middleware
    if changed and not session.middleware_confirmed(new):
        refused = session.middleware_refused_here()
        if refused:
            raise ConfigError(refused, key="middleware")
        plans = plan_middleware(new)
        st.session_state[PENDING_KEY] = (new, source, [p.describe() for p in plans])
        return False
    if changed:
        check_middleware(new)  # confirmed before: imported and built now, so a bad one is an error here
    st.session_state.pop(PENDING_KEY, None)
    session.set_config(new)
    return True


def _confirm() -> None:
    """The user read the list and allowed exactly this middleware for this session."""
    pending = st.session_state.pop(PENDING_KEY, None)
    if pending is None:
        return
    new, source = pending[0], pending[1]
    try:
        session.confirm_middleware(new)
        check_middleware(new)
        session.set_config(new)
        st.session_state.pop("middleware_error", None)
    except ConfigError as exc:
        st.session_state["middleware_error"] = f"{source} not applied: {exc}"


def _confirmation() -> None:
    """The pending config's middleware, class by class with the file each would import, and its kwargs."""
    pending = st.session_state.get(PENDING_KEY)
    failed = st.session_state.pop("middleware_error", None)
    if failed:
        st.error(escape_md(failed))
    if pending is None:
        return
    new, source, described = pending
    with st.container(border=True, key="middleware_confirm_box"):
        st.warning(f"**{escape_md(source)} names middleware: Python code this server would import and run**, with "
                   "its permissions and the API keys in its environment. Nothing has been imported yet. Apply it "
                   "only if you wrote or trust every class below.", icon=":material/warning:")
        st.markdown("\n".join(f"- {escape_md(d)}" for d in described))
        st.code(yaml.safe_dump({"middleware": [m.model_dump(mode="json") for m in new.middleware]}, sort_keys=False,
                               allow_unicode=True), language="yaml")
        cols = st.columns([2, 1, 4])
        cols[0].button("Import and run these", key="middleware_confirm", type="primary", on_click=_confirm)
        cols[1].button("Cancel", key="middleware_cancel", on_click=st.session_state.pop, args=(PENDING_KEY, None))


def _reason(exc: ConfigError, source: str | None = None) -> str:
    """Why a config was not applied, as Markdown: `source` (which the caller names) is not said again,
    and a document with several invalid settings lists each on a line of its own."""
    if isinstance(exc, InvalidConfig) and (len(exc.problems) > 1 or exc.more):
        lines = [f"{len(exc.problems) + exc.more:,} settings are not valid:"]
        lines += [f"- {escape_md(key)}: {escape_md(message)}" for key, message in exc.problems]
        if exc.more:
            lines.append(f"- and {exc.more:,} more")
        return "\n".join(lines)
    text = str(exc)
    if source is not None and exc.key == source:
        text = text.removeprefix(f"{source}: ")
    return escape_md(text)


def _wkey(field: FormField) -> str:
    return f"cf_{gen}_{field.key}"


def _apply_form() -> None:
    values = {f.key: st.session_state.get(_wkey(f)) for f in all_fields() if _wkey(f) in st.session_state}
    try:
        _accept(apply_form(config, values), "The form")
        st.session_state.pop("form_error", None)
    except ConfigError as exc:
        st.session_state["form_error"] = (gen, exc.key, str(exc))
    except Exception as exc:  # a bug, not the user's input: one line, the page and the run stay
        st.session_state["form_error"] = (gen, None, f"unexpected problem ({error_text(exc)})")


def _apply_yaml() -> None:
    text = st.session_state.get(f"yaml_{gen}", "")
    try:
        _accept(EngineConfig.from_yaml(text, source="YAML editor"), "The YAML editor")
        st.session_state.pop("yaml_error", None)
    except ConfigError as exc:
        st.session_state["yaml_error"] = (gen, _reason(exc))
    except Exception as exc:  # a bug, not the user's input: one line, the page and the run stay
        st.session_state["yaml_error"] = (gen, escape_md(f"unexpected problem ({error_text(exc)})"))


def _load_preset() -> None:
    session.set_config(preset(st.session_state["cfg_preset"]))


def _pin() -> None:
    st.session_state["pinned"] = (st.session_state["thread_key"], st.session_state["config"])


def _field(field: FormField, error: str | None, warnings: dict[str, list[str]]) -> None:
    key = _wkey(field)
    if key not in st.session_state:
        st.session_state[key] = widget_value(config, field)
    label = field.label
    if field.widget == "checkbox":
        st.checkbox(label, key=key)
    elif field.widget == "select":
        st.selectbox(label, field.options, key=key)
    elif field.widget == "int":
        st.number_input(label, key=key, step=1, format="%d", min_value=None,
                        placeholder="none" if field.optional else None)
    elif field.widget == "float":
        st.number_input(label, key=key, format="%.3f")
    elif field.widget in ("textarea", "yaml"):
        st.text_area(label + (" (YAML)" if field.widget == "yaml" else ""), key=key, height=110,
                     placeholder="none" if field.optional else None)
    else:
        hint = {"size": "TYPE:VALUE, e.g. fraction:0.85, tokens:30000, messages:20",
                "trigger": "clauses separated by commas (any fires); tokens:1000&messages:5 is an AND clause; none",
                "list": "comma-separated"}.get(field.widget)
        st.text_input(label, key=key, help=hint, placeholder="none" if field.optional else None)
    if field.key == "middleware":
        st.caption(MIDDLEWARE_NOTE)
    if error:
        st.error(escape_md(error))
    for warning in warnings.get(field.key, ()):
        st.warning(escape_md(warning), icon=":material/warning:")


_confirmation()
form_tab, yaml_tab, compare_tab = st.tabs(["Form", "YAML", "Compare runs"], key="tab", bind="query-params")

# -- form --------------------------------------------------------------------------------------
with form_tab:
    form_error = st.session_state.get("form_error")
    err_field = None
    if form_error and form_error[0] == gen:
        err_field = field_for_error(form_error[1], all_fields())
        st.error(f"Not applied — {escape_md(form_error[2])}")
    # settings that defeat themselves (keep ≥ trigger), shown under the field they are about
    warned: dict[str, list[str]] = {}
    thread = session.current_thread()
    for w in setting_warnings(config, config.window_tokens(thread.max_input_tokens if thread else None)):
        warned.setdefault(w.key, []).append(w.message)
    shown_open = open_section(config)  # what the stack runs (as-recorded: its history, not summarization)
    with st.form("config_form", border=False):
        for section in SECTIONS:
            fields = form_fields(section)
            with st.expander(SECTION_TITLES[section],
                             expanded=section == shown_open or any(f.key == err_field for f in fields)):
                cols = st.columns(2)
                for i, f in enumerate(fields):
                    with cols[i % 2]:
                        _field(f, form_error[2] if err_field == f.key and form_error else None, warned)
        st.form_submit_button("Apply and re-run", type="primary", on_click=_apply_form)

# -- YAML --------------------------------------------------------------------------------------
with yaml_tab:
    cols = st.columns([3, 2])
    with cols[0]:
        ykey = f"yaml_{gen}"
        if ykey not in st.session_state:
            st.session_state[ykey] = config.to_yaml()
        st.text_area("Config YAML (ours, or a DeerFlow config.yaml)", key=ykey, height=520)
        st.caption(MIDDLEWARE_NOTE)
        yaml_error = st.session_state.get("yaml_error")
        if yaml_error and yaml_error[0] == gen:
            st.error(f"Not applied; the previous run is kept. {yaml_error[1]}")
        st.button("Apply YAML and re-run", key="yaml_apply", type="primary", on_click=_apply_yaml)
    with cols[1]:
        st.markdown("**Presets**")
        st.selectbox("Preset", PRESETS, key="cfg_preset",
                     index=PRESETS.index(config.preset) if config.preset in PRESETS else 0)
        st.button("Load preset (replaces every setting)", key="cfg_load_preset", on_click=_load_preset)
        st.markdown("**File**")
        st.download_button("Download YAML", data=config.to_yaml(), file_name="context-inspector.yaml",
                           mime="application/yaml", on_click="ignore", key="yaml_download")
        if st.button("Export for an agent…", key="cfg_export", icon=":material/ios_share:",
                     help="these settings as Claude Code, Codex, Gemini CLI, OpenHands, DeerFlow, LangChain or Deep "
                          "Agents configuration (ctxi export-config)"):
            from ui.export_dialog import export_dialog

            export_dialog(config, session.current_thread())
        uploaded = st.file_uploader("Upload YAML", type=["yaml", "yml"], key="yaml_upload", max_upload_size=5)
        if uploaded is not None and st.session_state.get("yaml_upload_seen") != uploaded.file_id:
            st.session_state["yaml_upload_seen"] = uploaded.file_id
            try:
                # not UTF-8 or a control character (a binary file): said plainly, with the byte and line
                text = yaml_text(uploaded.getvalue(), source=uploaded.name)
                _accept(EngineConfig.from_yaml(text, source=uploaded.name), uploaded.name)
            except ConfigError as exc:
                st.error(f"{escape_md(uploaded.name)} not applied: {_reason(exc, uploaded.name)}")
            except Exception as exc:  # a bug, not the file: one line, the page and the run stay
                st.error(f"{escape_md(uploaded.name)} not applied: unexpected problem ({escape_md(error_text(exc))})")
            else:
                st.rerun()  # applied, or waiting for the confirmation shown at the top
        diff = {k: v for k, v in base_config(config).diff(config).items() if k != "preset"}
        st.markdown(f"**Differs from preset {escape_md(config.preset or 'defaults')}**")
        if diff:
            table([{"key": k, "preset": setting_text(k, a), "now": setting_text(k, b)} for k, (a, b) in diff.items()])
        else:
            st.caption("nothing — the preset as is")

# -- compare -----------------------------------------------------------------------------------
def _policies_section() -> None:
    """Several agents' policies replayed on the current thread, side by side (engine.evals.policy_compare)."""
    st.subheader("Agents' policies on this thread")
    key = st.session_state.get("thread_key")
    thread = session.current_thread()
    if not key or thread is None:
        no_run_message()
        return
    names = st.multiselect("Policies", COMPARABLE, default=list(DEFAULT_COMPARE), key="cmp_policies",
                           help="Each one replays this thread with that preset's own settings.")
    if not names:
        st.caption("Pick at least one policy.")
        return
    try:
        runs = {name: session.run_for(key, preset(name)) for name in names}
        baseline = session.run_for(key, preset("as-recorded")) if has_recorded_baseline(thread) else None
    except Exception as exc:  # a policy's ConfigError or an engine failure: one line, the page stays up
        st.error(f"Not compared: {escape_md(str(exc))}")
        return
    whole_window = st.toggle("Whole window", key="cmp_whole_window",
                             help="Scale the chart to the window; off, it fits the policies' curves.")
    fig = policies_figure(runs, baseline)
    _fit_policies_chart(fig, next(iter(runs.values())).window_tokens, whole_window)
    st.plotly_chart(fig, key="cmp_policies_chart")
    rows = [_shown(r) for r in compare_policies(runs, baseline)]
    st.dataframe(rows, hide_index=True, column_config=POLICY_TABLE_COLUMNS, placeholder=EMPTY_CELL,
                 height=38 + 35 * len(rows), key="cmp_policies_table")
    st.caption("Hover a column's name for what it counts; the table scrolls sideways to the rest. Needles (needle "
               "retention): facts picked from the thread, tracked in each view. Facts kept: of the history each "
               "compaction removed (paths, commands, numbers, errors, identifiers, decisions). Summarizer input "
               "tokens: what the summaries would cost a model (the offline summarizer writes them here); "
               "re-fetches: what the agent fetched again (as-recorded) or the later steps would need (a policy's). "
               "`ctxi sweep FILE --grid preset=claude-code,codex,gemini-cli,deepagents` prints the same.")


# At 1024 px (a projector) the main column is 564 px wide (1024 - the 300 px sidebar - 2 × 80 px padding): with
# the engine's order (peak view tokens, peak % of window, compactions, compaction steps, …) and headers as wide as
# their names, only those four figures showed there; facts kept, needle retention and the rest were off-screen.
# Which policy, how high its view went, how often it compacted and what its compactions kept come first, in
# widths that fit 549 px (15 px left for a scrollbar, tests/ui/test_config_policies_1024.py), under short names
# whose help says the rest; the others follow and show at 1440 px (or by scrolling sideways). A column is its
# text's width + ~17 px (8 px padding each side), measured in Chromium ("compactions": 75 px of text).
POLICY_TABLE_FIRST = ("policy", "peak view tokens", "peak % of window", "compactions", "facts kept",
                      "needle retention", "tokens saved", "cache misses $", "first compaction vs recorded",
                      "re-fetches", "re-fetch tokens", "summarizer calls", "summarizer input tokens")
POLICY_TABLE_COLUMNS = {
    # "claude-code", "as-recorded" whole; "openai-compaction" and "anthropic-compaction" (picked by hand) lose
    # their last letters, and read whole in the chart's legend just above. Not pinned: Streamlit greys a pinned
    # column's text as an index's, pale on a projector
    "policy": st.column_config.TextColumn(width=120),
    "peak view tokens": st.column_config.NumberColumn(
        "peak", format="localized", width=76, help="peak view tokens: the largest view any step sent"),
    "peak % of window": st.column_config.NumberColumn(
        "% window", format="%.1f", width=80,
        help="the peak as a share of the model's context window; above 100: this replay sent more than the window "
             "holds (the real agent would have hit a context overflow there; the replay goes on with the recorded steps)"),
    "compactions": st.column_config.NumberColumn(
        format="localized", width=96, help="how often the policy compacted (its steps: \"compaction steps\")"),
    "facts kept": st.column_config.TextColumn(  # "no compaction" whole
        width=108, help="the facts (paths, commands, numbers, errors, identifiers, decisions) of the history each "
                        "compaction removed that the model still sees after it"),
    "needle retention": st.column_config.TextColumn(
        "needles", width=68, help="needle retention: facts picked from the thread, tracked in each view"),
    "tokens saved": st.column_config.NumberColumn(format="localized", width=96),
    "cache misses $": st.column_config.TextColumn(
        width=108, help="what the prompt cache's misses cost, compactions' included"),
    **{name: st.column_config.NumberColumn(format="localized")
       for name in ("re-fetches", "re-fetch tokens", "summarizer calls", "summarizer input tokens",
                    "input tokens sent")},
}


def _fit_policies_chart(fig: go.Figure, window: int, whole_window: bool) -> None:
    """The y-axis fits the curves (as the Timeline's does until Whole window is on, ui/figures.py `_y_top`).

    Scaled to the window line, a 1,048,576-token window (Gemini) squashed every curve (~41k) into the
    bottom 4% of the chart. A window above the fitted axis is named in a note above the plot.
    """
    peak = 0.0
    for trace in fig.data:
        ys = np.asarray(trace.y if trace.y is not None else [], dtype=float)
        if np.isfinite(ys).any():
            peak = max(peak, float(np.nanmax(ys)))
    top = max(peak, 1.0) * 1.15  # headroom as the A/B chart's (`compare_figure`)
    if whole_window:
        top = max(top, window * 1.06)
    elif window > top:
        fig.add_annotation(xref="paper", x=0, yref="paper", y=1, yshift=4, showarrow=False, xanchor="left",
                           yanchor="bottom", align="left", font={"size": 11, "color": "#374151"}, name="window-note",
                           text=f"above the chart: window {window:,} tokens (turn on Whole window to see it)")
    fig.update_yaxes(range=[0, top])


def _shown(row: dict[str, object]) -> dict[str, object]:
    """A policies row as the page writes it: shares as percents (retention read "0" and "1"), dollars in the
    pages' one format, "none" for a policy that never compacts (an empty cell)."""
    out = {key: row[key] for key in POLICY_TABLE_FIRST if key in row}  # the figures seen at 1024 px first
    out.update(row)
    for key in ("needle retention", "facts kept"):
        value = out.get(key)
        out[key] = (percent(value) if isinstance(value, int | float)
                    else "no compaction" if key == "facts kept" and not out.get("compactions") else "n/a")
    if "cache misses $" in out:
        out["cache misses $"] = dollars(out["cache misses $"])  # type: ignore[arg-type]
    if not out.get("compaction steps"):
        out["compaction steps"] = "none"
    return out


def _compare_section() -> None:
    """The policies side by side, then run A vs run B."""
    _policies_section()
    st.divider()
    st.subheader("Run A vs run B")
    st.caption("Pin the current run as A, change settings (sidebar, form or YAML), and the current run is B.")
    pinned = st.session_state.get("pinned")
    # the buttons as wide as their labels: in [2, 1, 4] columns "Re-pin current run as A" read
    # "Re-pin current run …" at 1024 px (a projector)
    pins = st.container(horizontal=True, key="cmp_pins")
    pins.button("Pin current run as A" if pinned is None else "Re-pin current run as A", key="pin", on_click=_pin)
    if pinned is not None:
        pins.button("Clear A", key="unpin", on_click=lambda: st.session_state.pop("pinned", None))
        run_b = session.current_run()
        try:
            run_a = session.run_for(*pinned)
        except Exception as exc:
            st.error(f"Run A is not available any more: {escape_md(error_text(exc))}")
            run_a = None
        if run_b is None:
            no_run_message()
        elif run_a is not None:
            if pinned[0] != st.session_state.get("thread_key"):
                st.warning("A was pinned on a different thread; the comparison mixes two threads.")
            changed = pinned[1].diff(run_b.config)
            if changed:
                st.markdown("**Settings A → B**")
                table([{"key": k, "A": setting_text(k, a), "B": setting_text(k, b)} for k, (a, b) in changed.items()])
            else:
                st.info("A and B have the same settings; change something to compare.")
            st.plotly_chart(compare_figure(run_a, run_b), key="compare_chart")
            # the table's hover toolbar (search, download, full screen) shows above its top right corner: without
            # room it ran over the end of the chart's note ("… window 40,000 (above)") at 1024 px
            st.space("small")
            rows = compare_runs(run_a, run_b)
            table(rows, height=38 + 35 * len(rows))
            compare_cost(run_a, run_b)
            compare_section(run_a, run_b)


# The tabs track which one is open (bind="query-params" reruns on a switch), so the Compare tab's
# replays run only while it is open: it replays the thread once per policy (four by default), and
# with every tab drawn a first visit of Config on a 1,000-step thread took 20 s (0.4 s now,
# bench/bench_first_visit.py, 2026-12-03).
keep_widget_state("cmp_policies", "cmp_whole_window")  # the pick and the scale survive a visit to another tab
with compare_tab:
    if compare_tab.open:
        _compare_section()
