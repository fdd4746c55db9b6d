"""The sidebar on every page: current thread and the live controls (preset, trigger, keep, mode, window, layers)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from engine.base.errors import ConfigError
from engine.config.presets import PRESETS
from engine.config.schema import EngineConfig
from engine.config.setting_warnings import keep_meets_trigger
from engine.config.settings import TOGGLE_LAYERS, layer_enabled
from engine.config.sizes import AllOf, ContextSize
from engine.summarizers.choice import model_summarizers
from engine.tokens.counters import COUNTERS
from engine.views.timeline import compaction_trigger_as
from ui import controls, session
from ui import library as library_ui
from ui.preload import preload_elements
from ui.replay_status import replay_status_style
from ui.text import escape_md

LAYER_LABELS = {
    "filesystem": "L0 filesystem (offload, truncate args)",
    "subagents": "L1 sub-agents",
    "summarization": "L2 summarization",
    "todo": "L3 todo reminder",
    "dangling": "L4 dangling tool calls",
    "memory": "L5 memory",
}
SIZE_FORMAT = {"fraction": "%.2f", "tokens": "%d", "messages": "%d"}
POLICY_DEFAULT = "policy default"
# Whether this session's browser shows a sidebar already (session state, set each time one is drawn).
SIDEBAR_DRAWN = "sidebar_drawn"


def _config() -> EngineConfig:
    return st.session_state["config"]


def _window() -> int:
    thread = session.current_thread()
    return _config().window_tokens(thread.max_input_tokens if thread else None)


def _edit(change: Callable[[EngineConfig], EngineConfig]) -> None:
    """Apply one control's change; an invalid value keeps the previous config and shows why."""
    try:
        session.set_config(change(_config()))
    except (ConfigError, ValueError) as exc:
        st.session_state["sidebar_error"] = str(exc)


def _show(key: str, value: object) -> None:
    """Make a widget show the config's value (set before the widget is created in this run).

    Every widget is also created with that value as its default (`value=`, `index=`): without one a
    number box's default is its minimum and a select box's its first option, and the browser drew
    that default for a moment on every rerun (issue 15: 0.01, 1,000 and "as-recorded" flashed in
    the sidebar). The key alone is the widget's identity, so a changing default never resets it.
    """
    if st.session_state.get(key) != value:
        st.session_state[key] = value


def _index(options: list[str] | tuple[str, ...], value: str) -> int:
    return list(options).index(value) if value in options else 0


def _size_value(size: ContextSize) -> float | int:
    return float(size.value) if size.type == "fraction" else int(size.value)


def _size_input(label: str, key: str, size: ContextSize, on_change: Callable[[], None]) -> None:
    value = _size_value(size)
    _show(key, value)
    if size.type == "fraction":
        st.number_input(label, key=key, value=value, min_value=0.01, max_value=1.0, step=0.05, format="%.2f",
                        on_change=on_change, label_visibility="collapsed")
    else:
        st.number_input(label, key=key, value=value, min_value=1, step=1000 if size.type == "tokens" else 1, format="%d",
                        on_change=on_change, label_visibility="collapsed")


# -- callbacks -------------------------------------------------------------------------------------
def _on_preset() -> None:
    name = st.session_state["sb_preset"]
    if name in PRESETS:
        _edit(lambda c: controls.switch_preset(c, name))


def _on_trigger_type(i: int) -> None:
    new_type = st.session_state[f"sb_trig_type_{i}"]
    clauses = controls.trigger_clauses(_config())
    # a timer rerun (a followed session's poll) can carry the value of a clause row the config no longer has
    clause = clauses[i] if i < len(clauses) else None
    if isinstance(clause, ContextSize):
        _edit(lambda c: controls.set_trigger_clause(c, i, controls.convert_size(clause, new_type, _window())))


def _on_trigger_value(i: int, kind: str) -> None:
    value = st.session_state[f"sb_trig_val_{i}_{kind}"]
    if i < len(controls.trigger_clauses(_config())):  # see _on_trigger_type
        _edit(lambda c: controls.set_trigger_clause(c, i, ContextSize(type=kind, value=value)))


def _on_keep_type() -> None:
    new_type = st.session_state["sb_keep_type"]
    _edit(lambda c: controls.set_keep(c, controls.convert_size(c.summarization.keep, new_type, _window())))


def _on_keep_value(kind: str) -> None:
    value = st.session_state[f"sb_keep_val_{kind}"]
    _edit(lambda c: controls.set_keep(c, ContextSize(type=kind, value=value)))


def _on_compaction_trigger_type() -> None:
    """Another kind of threshold, at the level the policy compacts at now (its default, or the value
    set): "policy default" (167,000) → tokens keeps 167,000 (issue 35: it jumped to half the window)."""
    kind = st.session_state["sb_ctrig_type"]
    if kind == POLICY_DEFAULT:
        _edit(lambda c: controls.set_compaction_trigger(c, None))
        return
    thread = session.current_thread()
    model = thread.model if thread is not None else None

    def change(c: EngineConfig) -> EngineConfig:
        same = compaction_trigger_as(c, kind, _window(), model, thread)
        if same is None:  # no token level to keep: a start the user then moves
            same = ContextSize(type=kind, value=0.8 if kind == "fraction" else max(1, _window() // 2))
        return controls.set_compaction_trigger(c, same)

    _edit(change)


def _on_compaction_trigger_value() -> None:
    kind = st.session_state["sb_ctrig_type"]
    value = st.session_state.get(f"sb_ctrig_val_{kind}")
    if kind == POLICY_DEFAULT or value is None:
        return
    _edit(lambda c: controls.set_compaction_trigger(c, ContextSize(type=kind, value=value)))


def _compaction_controls(config: EngineConfig) -> None:
    """The threshold of a coding-agent policy (the `compaction` layer): its own, or a lower one."""
    trigger = config.compaction.trigger
    st.markdown(f"**Compaction threshold** ({escape_md(config.compaction.policy)})")
    kinds = [POLICY_DEFAULT, "fraction", "tokens"]
    ctype = trigger.type if trigger is not None else POLICY_DEFAULT
    _show("sb_ctrig_type", ctype)
    # the kind on its own row, the value under it: two columns clipped "policy default" to "policy defa…"
    st.selectbox("compaction threshold type", kinds, key="sb_ctrig_type", label_visibility="collapsed",
                 index=_index(kinds, ctype),
                 on_change=_on_compaction_trigger_type,
                 help="The policy's own threshold, or a lower one: a fraction of the agent's effective "
                      "window (like CLAUDE_AUTOCOMPACT_PCT_OVERRIDE) or a token count. Switching keeps the "
                      "level it compacts at.")
    if trigger is not None:
        _size_input("compaction threshold value", f"sb_ctrig_val_{trigger.type}", trigger,
                    _on_compaction_trigger_value)


def _on_window() -> None:
    _edit(lambda c: controls.set_window(c, int(st.session_state["sb_window"])))


def _on_layer(name: str) -> None:
    _edit(lambda c: controls.set_layer(c, name, bool(st.session_state[f"sb_layer_{name}"])))


# -- render ----------------------------------------------------------------------------------------
def render() -> None:
    config = _config()
    thread = session.current_thread()
    window = _window()
    with st.sidebar:
        for notice in st.session_state.pop("notices", []):
            st.warning(escape_md(notice))
        st.markdown("#### Thread")
        if thread is None:
            st.caption("No thread loaded. Open the **Threads** page.")
        else:
            title = thread.title or thread.thread_id
            st.markdown(escape_md(title, limit=80))
            st.caption(f"{len(thread.ai_indices()):,} steps · {len(thread.messages):,} messages · "
                       f"{escape_md(thread.source_format)}")
            library_ui.origin_note()  # a sub-agent's transcript: whose, and back to the step that spawned it

        st.markdown("#### Settings")
        names = [*PRESETS] if config.preset in PRESETS else [*PRESETS, "custom"]
        shown_preset = config.preset if config.preset in PRESETS else "custom"
        _show("sb_preset", shown_preset)
        st.selectbox("Preset", names, key="sb_preset", on_change=_on_preset, index=_index(names, shown_preset),
                     help="as-recorded: what the source agent sent. The others reproduce an agent's or a "
                          "framework's policy; the controls below change it.")
        if "recorded" in config.order:
            st.info("**As recorded**: what the source agent sent, its own compactions included. "
                    "Pick another preset for a what-if; it is drawn against this one.")
        if layer_enabled(config, "compaction"):
            _compaction_controls(config)
        if layer_enabled(config, "summarization"):
            _summarization_controls(config, window)
        elif "recorded" not in config.order:
            st.caption("L2 summarization is off in these settings (turn it on under **Layers**).")

        _show("sb_window", window)
        st.number_input("Window (tokens)", key="sb_window", value=window, min_value=1_000, step=10_000, format="%d",
                        on_change=_on_window)
        origin = config.window_origin(thread)
        if origin.startswith("a default"):
            st.warning(escape_md(f"Window {window:,} is {origin}."))
        else:
            st.caption(escape_md(f"Window: {origin}."))

        st.markdown("**Layers**")
        for name in TOGGLE_LAYERS:
            _show(f"sb_layer_{name}", layer_enabled(config, name))
            st.toggle(LAYER_LABELS[name], key=f"sb_layer_{name}", value=layer_enabled(config, name),
                      on_change=_on_layer, args=(name,))

        _show("sb_counter", config.tokens.counter)
        st.selectbox("Token counter", COUNTERS, key="sb_counter", index=_index(COUNTERS, config.tokens.counter),
                     on_change=lambda: _edit(lambda c: controls.set_counter(c, st.session_state["sb_counter"])),
                     help="Our tokenizer. Where the thread recorded its usage, counts are calibrated to it.")

        _show("sb_allow_models", session.models_allowed())
        st.toggle("Allow real models", key="sb_allow_models", value=session.models_allowed(),
                  on_change=lambda: session.allow_models(bool(st.session_state["sb_allow_models"])),
                  help="Lets this session call a real model (an LLM summarizer, a live run with provider:model) "
                       "with the API key in the server's environment; calls may cost money. Off until you turn "
                       "it on: a link or a config file cannot turn it on.")
        if session.uses_model(config):
            model = escape_md(", ".join(sorted(set(model_summarizers(config).values()))), limit=80)
            st.caption(f"Summaries by {model}." if session.models_allowed() else
                       f"The summarizer {model} is not called until you allow real models: summaries are written "
                       "offline.")

        if st.session_state.get("sidebar_error"):
            st.error(escape_md(st.session_state["sidebar_error"]))
        replay_status_style()  # the replay's spinner, pinned where it moves nothing (takes no room here)
        preload_elements()  # the other pages' element code, fetched once the browser is idle
    st.session_state[SIDEBAR_DRAWN] = True


def with_page(draw_page: Callable[[], None]) -> None:
    """The sidebar and the page `draw_page` draws, the sidebar after the page once the browser shows one.

    Before: on the first run of a session, whose replay may take seconds with nothing else on
    screen. After: on a new config the chart's message leaves as soon as the Run is there, and the
    browser is not rendering the sidebar's ~40 unchanged widgets while the server replays (both
    compete for the machine's cores); going back to a cached config puts the chart ahead of them
    (docs/benchmarks.md). Either order draws the same page.
    """
    last = bool(st.session_state.get(SIDEBAR_DRAWN)) or session.current_run_cached()
    if not last:
        render()
    try:
        draw_page()
    except Exception:  # the page failed: Streamlit shows the error, the sidebar still lets the user fix it
        if last:
            render()
        raise
    if last:
        render()


def fragment_run(draw_page: Callable[[], None]) -> None:
    """What app.py does around a page on a full run, for a fragment's rerun of the page and sidebar
    (`with_page`): the page switch a callback asked for, the URL, sizing the Runs stored (each a
    no-op on a full run, where app.py did it first)."""
    if (target := session.pending_page()) is not None:
        session.switch_page(target)
    try:
        try:
            with_page(draw_page)
        except Exception:  # the page failed (Streamlit shows it): the edit still reaches the URL
            session.sync_url()
            raise
        # after the page: the browser's history update (pushState and Streamlit's page info,
        # ~15-30 ms of its main thread in a traced edit) does not come before the chart. A rerun or
        # stop the page asks for (st.rerun, st.switch_page) is not an Exception: its run syncs.
        session.sync_url()
    finally:
        session.settle_runs()


def _summarization_controls(config: EngineConfig, window: int) -> None:
    st.markdown("**Summarization trigger** (any clause fires)")
    clauses = controls.trigger_clauses(config)
    if not clauses:
        st.caption("No trigger: summarization never fires.")
    for i, clause in enumerate(clauses):
        cols = st.columns([10, 8, 3], vertical_alignment="center", gap="small")
        if isinstance(clause, AllOf):
            cols[0].caption(f"AND clause: {escape_md(str(clause))}")
            cols[1].caption("edit it in Config")
        else:
            _show(f"sb_trig_type_{i}", clause.type)
            cols[0].selectbox("type", controls.SIZE_TYPES, key=f"sb_trig_type_{i}", label_visibility="collapsed",
                              index=_index(controls.SIZE_TYPES, clause.type),
                              on_change=_on_trigger_type, args=(i,))
            with cols[1]:
                _size_input(f"trigger value {i}", f"sb_trig_val_{i}_{clause.type}", clause,
                            lambda i=i, t=clause.type: _on_trigger_value(i, t))
        cols[2].button("", icon=":material/close:", key=f"sb_trig_rm_{i}", help="remove this clause", type="tertiary",
                       on_click=_edit, args=(lambda c, i=i: controls.remove_trigger_clause(c, i),))
    st.button("+ add clause", key="sb_trig_add",
              on_click=_edit, args=(lambda c: controls.add_trigger_clause(c, _window()),))

    st.markdown("**Keep** (what survives a summary)")
    keep = config.summarization.keep
    cols = st.columns(2)
    _show("sb_keep_type", keep.type)
    cols[0].selectbox("keep type", controls.SIZE_TYPES, key="sb_keep_type", label_visibility="collapsed",
                      index=_index(controls.SIZE_TYPES, keep.type),
                      on_change=_on_keep_type)
    with cols[1]:
        _size_input("keep value", f"sb_keep_val_{keep.type}", keep, lambda t=keep.type: _on_keep_value(t))
    for warning in keep_meets_trigger(config.summarization, window):  # next to the field, before the run
        st.warning(escape_md(warning.message), icon=":material/warning:")

    _show("sb_mode", config.summarization.mode)
    st.radio("Mode", ["state", "view"], key="sb_mode", horizontal=True, index=_index(("state", "view"), config.summarization.mode),
             on_change=lambda: _edit(lambda c: controls.set_mode(c, st.session_state["sb_mode"])),
             help="state: history replaced by the summary (LangChain, DeerFlow). "
                  "view: state untouched, the model sees [summary, *kept] (Deep Agents).")
