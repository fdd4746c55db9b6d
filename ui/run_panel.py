"""The Threads page's Run panel: run a scenario agent or a real model live, watch it, keep the thread.

The run happens on a worker thread (`engine.scenarios.live_run.start_live`); this script polls its handle and
redraws a progress bar per step and a token gauge (the view against the window). Cancel keeps
what ran so far. The result is saved in the workspace and opened as the current thread.
"""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from engine.base.errors import ContextInspectorError
from engine.base.redaction import one_line
from engine.config.presets import PRESETS
from engine.config.schema import EngineConfig, preset
from engine.formats.native import dumps
from engine.scenarios import get_scenario, scenario_names
from engine.scenarios.live import save_run
from engine.scenarios.live_run import LiveRunHandle, live_runs, start_live
from engine.workspace.workspace import Workspace
from ui.text import escape_md, isolate_bidi

HANDLE_KEY = "run_handle"
POLL_S = 0.25
CURRENT = "current settings"


def _workspace() -> Workspace:
    return Workspace()


def _config(choice: str) -> EngineConfig | None:
    """The run's config; a model summarizer only once the user allowed real models (`session.runnable_config`)."""
    from ui import session

    if choice == CURRENT:
        current = st.session_state.get("config")
        return session.runnable_config(current) if isinstance(current, EngineConfig) else None
    return preset(choice)


def _open_thread_bytes(name: str, data: bytes) -> None:
    """Make a thread the dashboard's current one (as an upload, the dashboard's in-session source)."""
    from ui import session

    key = session.add_upload(session.Upload(name, data, None))
    session.select_thread(key)


def _failed(handle: LiveRunHandle) -> bool:
    """A run that ended on an error (a 401, a provider error mid-run): its thread is partial."""
    return handle.result is not None and (handle.result.outcome == "error" or handle.result.error is not None)


OPENED_KEY = "run_opened"  # the id of the run this session opened: a finished run is opened once


def _finish(handle: LiveRunHandle) -> None:
    """Save the result (and any earlier thread of the same run) once, if the worker did not; open it, once,
    unless the run failed.

    The worker saves what ran itself (`start_live(save_to=...)`), so a run survives the page that
    started it; a failed run is saved as partial (its thread records the outcome and the redacted error)
    and never replaces the thread the user has open; a save that fails is said, not raised.
    """
    if handle.result is None:
        return
    if handle.save_error:
        st.session_state["run_save_error"] = handle.save_error
        return
    if not handle.saved and not st.session_state.get("run_save_error"):
        try:
            handle.saved.extend(save_run(handle.result, _workspace()))  # renames keep previous_thread links valid
        except ContextInspectorError as exc:
            st.session_state["run_save_error"] = one_line(str(exc))
            return
    if not _failed(handle) and st.session_state.get(OPENED_KEY) != handle.id:
        st.session_state[OPENED_KEY] = handle.id
        thread = handle.result.thread
        _open_thread_bytes(f"{thread.thread_id}.json", dumps(thread).encode("utf-8"))


def _progress(handle: LiveRunHandle, total: int) -> None:
    bar = st.empty()
    gauge = st.empty()
    info = st.empty()
    while True:
        snap = handle.snapshot()
        step = snap["step"]
        frac = min(1.0, step / total) if total else 0.0
        bar.progress(frac, text=f"Step {step}/{total} · {escape_md(str(snap['action']), limit=80)}")
        window = snap["window_tokens"] or 1
        gauge.progress(min(1.0, snap["view_tokens"] / window),
                       text=f"Context: {snap['view_tokens']:,} / {snap['window_tokens']:,} tokens in the view "
                            f"· {snap['raw_tokens']:,} raw")
        info.caption(f"{snap['events']} layer events · {snap['subagent_steps']} sub-agent steps"
                     + (" · cancelling…" if snap["cancelling"] else ""))
        if snap["done"]:
            return
        time.sleep(POLL_S)


def _saved_runs() -> None:
    ws = _workspace()
    try:
        scan = ws.scan_threads()
    except Exception as exc:  # the workspace itself is unusable (e.g. CTXI_WORKSPACE is a file)
        st.caption(f"Saved runs unavailable: {escape_md(one_line(str(exc)), limit=200)}")
        return
    for problem in scan.skipped:  # one unreadable file is skipped and named; the others are listed
        st.caption(f"Skipped an unreadable saved run: {escape_md(one_line(problem), limit=300)}")
    refs = scan.refs
    if not refs:
        return
    with st.expander(f"Saved runs in {escape_md(str(ws.root))} ({len(refs)})"):
        labels = {r.thread_id: f"{isolate_bidi(r.title or r.thread_id)} ({r.messages} messages)" for r in refs}
        pick = st.selectbox("Saved run", list(labels), format_func=lambda t: labels[t], key="run_saved_pick")
        st.button("Open saved run", key="run_saved_open", on_click=_open_saved, args=(ws, pick))


def _open_saved(ws: Workspace, thread_id: str) -> None:
    # the file it was listed from: its name may differ from its thread_id (renamed, or saved by hand)
    path = ws.saved_path(thread_id)
    try:
        data = path.read_bytes()
    except OSError as exc:
        st.session_state["run_error"] = f"Cannot open the saved run {path}: {exc.strerror or exc}"
        return
    _open_thread_bytes(path.name, data)


def _start(kind: str, target: str, choice: str, kwargs: dict[str, Any]) -> None:
    # a callback, so the click survives the dashboard's frame rerun (callbacks run before the script)
    from ui import session

    st.session_state.pop("run_error", None)
    st.session_state.pop("run_save_error", None)
    if kind == "Real model" and (":" not in target or not kwargs.get("task")):
        st.session_state["run_error"] = "Give a model as provider:model and a task."
        return
    if kind == "Real model" and not session.models_allowed():
        st.session_state["run_error"] = ("A real model is called with the API key in the server's environment: "
                                         "turn on \"Allow real models\" in the sidebar first.")
        return
    try:
        config = _config(choice)
    except ContextInspectorError as exc:  # middleware this session did not confirm (ui/session.py)
        st.session_state["run_error"] = f"Not started: {exc}"
        return
    # the worker saves what ran in the workspace: the run survives a reload of this page
    st.session_state[HANDLE_KEY] = start_live(target, config=config, save_to=_workspace(), **kwargs)


def _cancel() -> None:
    handle = st.session_state.get(HANDLE_KEY)
    if handle is not None:
        handle.cancel()


def _watch(handle_id: str) -> None:
    handle = next((h for h in live_runs() if h.id == handle_id), None)
    if handle is not None:
        st.session_state[HANDLE_KEY] = handle


def _other_runs() -> None:
    """Runs this dashboard started from another page load (a reload makes a new session): still running
    ones can be watched and cancelled again, finished ones were saved by their worker."""
    mine = st.session_state.get(HANDLE_KEY)
    others = [h for h in live_runs() if h is not mine]
    running = [h for h in others if not h.done]
    for h in running:
        snap = h.snapshot()
        cols = st.columns([5, 1], vertical_alignment="center")
        cols[0].info(escape_md(f"A run started at {h.started:%H:%M:%S} UTC is still going: {h.target}, step "
                               f"{snap['step']}{'/' + str(snap['max_steps']) if snap['max_steps'] else ''}. "
                               "It is saved when it ends, whether or not a page watches it."))
        cols[1].button("Watch it", key=f"run_watch_{h.id}", on_click=_watch, args=(h.id,))
    finished = [h for h in others if h.done and h.saved]
    if finished:
        st.caption("Runs started earlier (another page load) and saved when they ended: "
                   + "; ".join(escape_md(f"{h.target} at {h.started:%H:%M:%S} UTC → {h.saved[-1]}") for h in finished[-3:])
                   + ". Open them under *Saved runs* below.")


def render_run_panel() -> None:
    """Choose a scenario or `provider:model`, a config, start; progress per step; cancel keeps the run."""
    _other_runs()
    handle: LiveRunHandle | None = st.session_state.get(HANDLE_KEY)
    running = handle is not None and not handle.done
    kind = st.radio("Agent", ["Scenario (offline)", "Real model"], horizontal=True, key="run_kind", disabled=running)
    kwargs: dict[str, Any] = {}
    if kind == "Scenario (offline)":
        name = st.selectbox("Scenario", scenario_names(), key="run_scenario", disabled=running,
                            format_func=lambda n: f"{n} — {get_scenario(n).title}")
        scenario = get_scenario(name)
        st.caption(escape_md(scenario.teaches))
        cols = st.columns(2)
        steps = int(cols[0].number_input("Steps (model calls)", min_value=2, max_value=400,
                                         value=scenario.default_steps, key=f"run_steps_{name}", disabled=running))
        seed = int(cols[1].number_input("Seed", min_value=0, max_value=1_000_000, value=0, key="run_seed",
                                        disabled=running))
        target, default_preset = name, scenario.preset
        kwargs.update(steps=steps, seed=seed)
    else:
        target = st.text_input("Model (provider:model)", placeholder="openai:gpt-4o-mini", key="run_model",
                               disabled=running).strip()
        task = st.text_area("Task", key="run_task", disabled=running,
                            placeholder="Explore /project and explain how invoice totals are computed.")
        steps = int(st.number_input("Maximum steps", min_value=1, max_value=200, value=30, key="run_max_steps",
                                    disabled=running))
        st.caption("The API key is read from the provider's environment variable (e.g. OPENAI_API_KEY); it is "
                   "never stored, logged or shown. Nothing is called until you turn on \"Allow real models\" in "
                   "the sidebar and press Start. The agent works on the bundled sample project.")
        default_preset = "deepagents"
        kwargs.update(steps=steps, task=task)
    options = [default_preset, *[p for p in PRESETS if p != default_preset], CURRENT]
    choice = st.selectbox("Config", options, key="run_config", disabled=running,
                          help="The layers the live agent runs with (a preset, or the sidebar's current settings).")
    cols = st.columns([1, 1, 4])
    cols[0].button("Start", type="primary", key="run_start", disabled=running, on_click=_start,
                   args=(kind, target, choice, kwargs))
    if running:
        cols[1].button("Cancel", key="run_cancel", on_click=_cancel)
    if st.session_state.get("run_error"):
        st.error(st.session_state["run_error"])
    handle = st.session_state.get(HANDLE_KEY)
    if handle is not None:
        _progress(handle, steps)
        if handle.error:
            st.error(f"The run failed: {escape_md(handle.error, limit=300)}")
        elif handle.result is not None and _failed(handle):
            _finish(handle)
            result = handle.result
            where = (f"What ran so far is saved as a partial run to {escape_md(handle.saved[-1])}" if handle.saved
                     else f"It could not be saved: {escape_md(st.session_state.get('run_save_error', ''), limit=300)}")
            st.error(f"The run failed after {result.steps} step{'' if result.steps == 1 else 's'}: {escape_md(result.error or 'unknown error', limit=300)}. "
                     f"{where}; the open thread is unchanged.")
        elif handle.result is not None and st.session_state.get("run_save_error"):
            st.error(f"The run finished but could not be saved: {escape_md(st.session_state['run_save_error'], limit=300)}")
        elif handle.result is not None:
            first = st.session_state.get(OPENED_KEY) != handle.id
            _finish(handle)
            if not handle.saved:  # the save failed just now: said on the rerun
                st.rerun()
            result = handle.result
            verb = "Cancelled" if result.cancelled else "Finished"
            st.success(f"{verb} after {result.steps} steps: {len(result.thread.messages)} messages, "
                       f"{len(result.thread.subagents)} sub-agent transcripts. Saved to "
                       f"{escape_md(handle.saved[-1])} and opened.")
            if first:
                st.rerun()
            try:
                st.page_link("pages/timeline.py", label="Open it in the timeline", icon=":material/stacked_line_chart:")
            except Exception:  # outside the dashboard's navigation (e.g. the panel rendered on its own)
                pass
    _saved_runs()
