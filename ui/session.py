"""Session state of the dashboard: the current thread, config and step, the cached replay, URL sync.

The config in session state is the truth; widgets show it and callbacks replace it. A run is
cached per (thread, config): any change re-runs the engine once, and every page reads the result.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import streamlit as st

from engine.base.errors import ConfigError, ContextInspectorError, ThreadLoadError
from engine.base.redaction import describe_error, one_line
from engine.cli.ui import LOOPBACK, NETWORK_CODE_ENV
from engine.config.links import LIBRARY_PREFIX, link_step
from engine.config.presets import RECORDED_PRESET, default_preset_name
from engine.config.schema import EngineConfig, preset
from engine.config.settings import RESERVED_PARAMS, config_from_params, default_config, url_params
from engine.formats import load_thread
from engine.run.cache import DEFAULT_BUDGET_MB, MB, RunCache
from engine.run.replay import replay
from engine.run.run import Run
from engine.summarizers.choice import model_summarizers, with_offline_summaries
from engine.thread.model import Thread
from engine.views.threads import load_notes
from engine.workspace import keys
from engine.workspace.library import Library, LibraryEntry, as_uploaded
from ui.text import error_text, escape_md, isolate_bidi

ROOT = Path(__file__).resolve().parents[1]
SAMPLES_ENV = "CTXI_SAMPLES_DIR"
OPEN_ENV = "CTXI_OPEN"  # set by `ctxi ui FILE`: the one local file the dashboard may open by path
DEMO_KEY = keys.DEMO_KEY
# the sample a new visitor sees first: offloads, summaries, a todo reminder and a patched call on its
# first screen (engine/scenarios/first_look.py), then the older landing threads
PREFERRED_SAMPLES = ("first-look", "code-analysis", "a_demo")
# set only by a real-model checkbox the user ticks (sidebar, Run panel); no widget binds it to the URL
MODELS_KEY = "allow_real_models"
# query parameters owned by widgets bound to the URL (bind="query-params"); never cleared by sync_url
# (the Layers/Config tab, and the Workshop's presenter mode and slide: pages/workshop.py)
BOUND_PARAMS = frozenset({"tab", "presenter", "slide"})


def samples_dir() -> Path:
    return Path(os.environ.get(SAMPLES_ENV) or ROOT / "sample_threads")


def sample_files() -> list[Path]:
    """The samples a link may name (engine.workspace.keys): no symlink leading out, no odd names."""
    return keys.sample_files(samples_dir())


def sample_key(path: Path) -> str:
    return keys.sample_key(path)


def sample_file(key: str) -> Path | None:
    """The bundled sample a `sample:NAME` key names; None for anything outside the samples folder."""
    source = keys.resolve_thread_key(key, _roots()) if key.startswith(keys.SAMPLE_PREFIX) else None
    return source.path if source is not None else None


def _roots() -> keys.ThreadRoots:
    """Where this server's keys may lead (engine.workspace.keys.ThreadRoots): also the sessions its roots
    list (ui/sessions_state.py), by id only."""
    from dataclasses import replace

    from ui import sessions_state

    roots = keys.roots_from_environment(samples_dir(), opened_env=OPEN_ENV, library=library())
    return replace(roots, sessions=sessions_state.lookup)


@dataclass(frozen=True)
class Upload:
    """An uploaded file kept in the session (uploads cannot come back from a URL)."""

    name: str
    data: bytes
    thread_id: str | None
    # Files uploaded with it that belong beside it (Claude Code agent-*.jsonl, a Cline task's other files)
    companions: tuple[tuple[str, bytes], ...] = ()


# A Cline task's other files: they belong beside its api_conversation_history.json (engine/formats/cline.py);
# an OpenHands V1 conversation's settings beside its events.json (engine/formats/openhands_state.py).
CLINE_COMPANIONS = frozenset({"ui_messages.json", "claude_messages.json", "task_metadata.json", "context_history.json"})
OPENHANDS_COMPANIONS = frozenset({"trajectory.json", "base_state.json"})


def is_companion(name: str) -> bool:
    """A file that belongs beside the transcript it came with rather than being a thread to open:
    a Claude Code sub-agent file, a Cline task's ui_messages / task_metadata / context_history, an
    OpenHands conversation's trajectory.json / base_state.json."""
    return (name.startswith("agent-") and name.endswith(".jsonl")) or name in CLINE_COMPANIONS \
        or name in OPENHANDS_COMPANIONS


# -- loading (cached: one Thread object per key, shared by every rerun) -------------------------
@st.cache_resource(max_entries=64, show_spinner=False)
def _load_sample(path: str, mtime: float) -> Thread:
    return load_thread(path)


@st.cache_resource(max_entries=16, show_spinner=False)
def _load_upload(key: str, _upload: Upload) -> Thread:
    if not _upload.companions:
        return load_thread(data=_upload.data, name=_upload.name, thread_id=_upload.thread_id)
    # Companions are found beside the main file (Claude Code 2.0.x sub-agents, matched by the sessionId
    # inside them; a Cline task's sibling files), so lay the upload out that way in a scratch folder.
    with tempfile.TemporaryDirectory(prefix="ctxi-upload-") as folder:
        main = Path(folder) / Path(_upload.name).name
        main.write_bytes(_upload.data)
        for name, data in _upload.companions:
            (Path(folder) / Path(name).name).write_bytes(data)
        try:
            return load_thread(main, thread_id=_upload.thread_id)
        except ThreadLoadError as exc:  # name the uploaded files, not the scratch folder
            raise as_uploaded(exc, Path(folder), {Path(n).name: n for n, _ in ((_upload.name, b""),
                                                                               *_upload.companions)}) from None


# -- the library: uploads saved in the workspace (engine/workspace/library.py) ------------------------------
def library() -> Library:
    """The library of the workspace (`$CTXI_WORKSPACE`, else ~/.context-inspector), read afresh each time."""
    return Library()


@st.cache_resource(max_entries=16, show_spinner=False)
def _load_library(folder: str, entry_id: str) -> Thread:
    # an entry never changes (its id is its content), so one load serves every session and rerun
    return Library(Path(folder).parent.parent).load(entry_id)


def save_upload(upload: Upload) -> LibraryEntry:
    """Save an upload in the library (raises ThreadLoadError if it does not load, WorkspaceError if the
    workspace cannot be written); returns its entry, whose key `library:<id>` opens it from a link."""
    return library().add(upload.name, upload.data, upload.thread_id, upload.companions)


def spawning_step(key: str) -> int | None:
    """For a sub-agent key: the parent's step whose model call made the Task call that spawned it."""
    source = keys.resolve_thread_key(key, _roots())
    parent = thread_for(source.parent_key) if source is not None and source.kind == "subagent" else None
    if source is None or parent is None:
        return None
    for step, index in enumerate(parent.ai_indices()):
        message = parent.messages[index]
        if any(call.get("id") == source.call_id for call in getattr(message, "tool_calls", None) or ()):
            return step
    return None


def known_threads() -> dict[str, str]:
    """Every thread this session can open, key -> label: samples, library entries, uploads, databases."""
    out: dict[str, str] = {}
    for path in sample_files():
        out[sample_key(path)] = f"sample · {path.stem}"
    try:
        entries = library().entries()
    except ContextInspectorError:
        entries = []
    for entry in entries:
        out[LIBRARY_PREFIX + entry.id] = (f"library · {isolate_bidi(entry.title[:70])} ({entry.source_format}, "
                                          f"{entry.steps} steps)")
    for key, upload in st.session_state.get("uploads", {}).items():
        out.setdefault(key, f"upload · {isolate_bidi(upload.name)}")
    for key, thread in st.session_state.get("database_threads", {}).items():
        out.setdefault(key, f"PostgreSQL · {isolate_bidi(thread.title or thread.thread_id)}")
    from ui import sessions_state

    for sid, entry in list(sessions_state.server().followed.items()):  # sessions opened from the Sessions page
        if entry.thread is not None:
            out.setdefault(f"session:{sid}", f"session · {isolate_bidi((entry.thread.title or entry.thread.thread_id)[:70])}")
    return out


def synthetic_available() -> bool:
    try:
        return importlib.util.find_spec("engine.thread.synthetic") is not None
    except ModuleNotFoundError:
        return False


@st.cache_resource(max_entries=1, show_spinner=False)
def _demo_thread() -> Thread | None:
    """A small generated thread for when no samples are bundled (engine.thread.synthetic, when present)."""
    if not synthetic_available():
        return None
    make = importlib.import_module("engine.thread.synthetic").synthetic_thread
    params = inspect.signature(make).parameters
    wanted: dict[str, Any] = {"steps": 60, "seed": 7}
    return make(**{k: v for k, v in wanted.items() if k in params})


def upload_key(data: bytes, thread_id: str | None, companions: tuple[tuple[str, bytes], ...] = ()) -> str:
    sha = hashlib.sha1(data)
    for name, companion in companions:
        sha.update(b"\0" + name.encode() + b"\0" + companion)
    digest = sha.hexdigest()[:12]
    return f"upload:{digest}" + (f":{thread_id}" if thread_id else "")


def database_key(thread: Thread, label: str) -> str:
    """A key for a thread read from a database: its redacted URL, id and checkpoint, never the password."""
    seen = f"{label}\0{thread.thread_id}\0{thread.extra.get('checkpoint_id')}"
    return f"pg:{hashlib.sha1(seen.encode()).hexdigest()[:12]}:{thread.thread_id}"


def add_database_thread(thread: Thread, label: str) -> str:
    """Keep a thread read from a database in this session; a link to its key opens nothing elsewhere."""
    key = database_key(thread, label)
    st.session_state.setdefault("database_threads", {})[key] = thread
    return key


def load_error(key: str) -> str | None:
    """Why the thread behind `key` could not be loaded (set by `thread_for`)."""
    return st.session_state.get("thread_errors", {}).get(key)


def thread_for(key: str | None) -> Thread | None:
    """The thread behind a key (sample, upload, the file given to `ctxi ui`, or demo); None if unavailable."""
    if not key:
        return None
    try:
        return _thread_for(key)
    except ContextInspectorError as exc:
        message = one_line(exc.one_line() if isinstance(exc, ThreadLoadError) else str(exc), 1000)
    except Exception as exc:  # an importer bug: say so in one line instead of a traceback
        message = f"unexpected problem while reading it ({describe_error(exc)})"
    st.session_state.setdefault("thread_errors", {})[key] = message
    return None


def _thread_for(key: str) -> Thread | None:
    # what the key names, by the link rules (engine.workspace.keys); each kind is cached its own way
    source = keys.resolve_thread_key(key, _roots())
    if source is None:
        return None
    if source.kind == "demo":
        return _demo_thread()
    if source.kind in ("sample", "file"):
        assert source.path is not None
        return _load_sample(str(source.path), source.path.stat().st_mtime)
    if source.kind == "database":
        # read when the user opened it on the Threads page; a key in a URL never makes the server connect
        return st.session_state.get("database_threads", {}).get(key)
    if source.kind == "library":
        return _load_library(str(source.path), str(source.entry_id))
    if source.kind == "subagent":
        parent = thread_for(source.parent_key)
        return parent.subagents.get(source.call_id or "") if parent is not None else None
    if source.kind == "session":
        # a session found under the server's roots, read by its follower (only new bytes since the last read)
        from ui import sessions_state

        assert source.session is not None
        return sessions_state.server().thread(source.session)
    upload = st.session_state.get("uploads", {}).get(key)
    return _load_upload(key, upload) if upload is not None else None


def _thread_version(key: str) -> str:
    source = keys.resolve_thread_key(key, _roots())
    if source is not None and source.kind == "subagent":  # a sub-agent changes when its parent's file does
        return f"{_thread_version(source.parent_key or '')}>{source.call_id}"
    if source is not None and source.kind == "session" and source.session is not None:
        from ui import sessions_state

        return sessions_state.server().version(source.session)  # bumped when the follower read new lines
    return source.version() if source is not None else key


def default_thread_key() -> str | None:
    opened = os.environ.get(OPEN_ENV)
    if opened and Path(opened).is_file():
        return f"file:{Path(opened).resolve()}"
    files = sample_files()
    if files:
        by_stem = {p.stem: p for p in files}
        first = next((by_stem[s] for s in PREFERRED_SAMPLES if s in by_stem), files[0])
        return sample_key(first)
    return DEMO_KEY if synthetic_available() else None


# -- the cached replay ------------------------------------------------------------------------
RUN_CACHE_ENV = "CTXI_RUN_CACHE_MB"


def _run_cache_budget() -> int:
    """The run cache's budget in bytes: CTXI_RUN_CACHE_MB (default 512), read once per server."""
    raw = os.environ.get(RUN_CACHE_ENV, "").strip()
    try:
        mb = float(raw) if raw else DEFAULT_BUDGET_MB
    except ValueError:
        mb = DEFAULT_BUDGET_MB
    return int(max(mb, 0) * MB)


# Runs by (thread version, config, offline summaries), bounded by the memory they hold (not a
# count: a 16,000-step Run holds ~100x a 60-step one). Not st.cache_data: a Run holds LangChain
# messages and the shared token counter; pickling a copy per rerun would be slow and would lose
# the counter's per-message cache. Pages treat the Run as read-only.
_RUNS = RunCache(_run_cache_budget())


def _replay_cached(thread_version: str, config: EngineConfig, offline_summaries: bool, thread: Thread) -> Run:
    key = (thread_version, config, offline_summaries)
    hit = _RUNS.get(key)
    if hit is not None:
        return hit
    with st.spinner("Replaying the thread through the layers…"):
        if thread_version.startswith("session:"):  # a followed session resumes from its previous Run
            from ui import sessions_state

            run = sessions_state.server().replay(thread_version.split("#", 1)[0], config, offline_summaries, thread)
        else:
            # the last Run of this thread under other settings: the re-run replays from the last step both
            # configs agree on (a sidebar edit costs what it changes; the same Run as a full replay)
            previous = _RUNS.latest(lambda k: isinstance(k, tuple) and k[0] == thread_version
                                    and k[2] == offline_summaries)
            run = replay(thread, config, summarizer="offline" if offline_summaries else None, previous=previous)
    # sized once the page is sent (settle_runs, app.py): the chart does not wait for the walk
    return _RUNS.put(key, run, defer_size=True)


# How long after a script run the new Run is sized (engine/run/cache.py): by then the browser has
# drawn what the run sent. Sized at the end of the run itself, the walk (21-23 ms CPU for a
# 1,000-step Run, against ~12 ms for the rest of the page after the chart) ran while the browser
# drew a new config's chart, and slowed the draw (probe, 2026-12-03; docs/benchmarks.md). Edits
# sooner than this leave their Runs waiting too (up to the cache's `max_pending`, 4 by default) and
# the timer sizes them all; only an edit past that bound sizes the oldest before its own is stored.
SETTLE_DELAY_S = 0.25


def settle_runs() -> None:
    """Size the Runs stored on this script run and enforce the cache's budget, shortly after the
    page ran (app.py, and the Timeline's fragment): on a timer, once the browser has drawn it."""
    _RUNS.settle_later(SETTLE_DELAY_S)


def run_for(thread_key: str, config: EngineConfig) -> Run:
    """The cached run; a model summarizer is only called once the user allowed real models (`models_allowed`),
    a middleware's code only once the user confirmed it (`require_confirmed`)."""
    thread = thread_for(thread_key)
    if thread is None:
        raise LookupError(f"thread {thread_key!r} is not available")
    require_confirmed(config)
    return _replay_cached(_thread_version(thread_key), config, model_gated(config), thread)


# -- the user's own middleware: Python code, run only after the user confirmed it here -------------
# The middleware lists (every entry: class and kwargs) the user confirmed in this session; set only by
# the confirmation button on the Config page, never from a link or a config.
CODE_KEY = "confirmed_middleware"
# `ctxi ui --host ADDRESS --allow-middleware` sets NETWORK_CODE_ENV: a dashboard open to a network applies
# no config that names middleware unless its server was started with it (SECURITY.md).


def middleware_refused_here() -> str | None:
    """Why this server applies no config that names middleware (it listens beyond this machine and was
    not started with --allow-middleware), or None."""
    address = str(st.get_option("server.address") or "")
    if address in LOOPBACK or os.environ.get(NETWORK_CODE_ENV) == "1":
        return None
    return (f"this dashboard listens on {address or 'every address of this machine'}, so a config that names "
            "middleware (Python code) is not applied here; start it with `ctxi ui --host ADDRESS --allow-middleware` "
            "to allow it after a confirmation (SECURITY.md)")


def _runs_code(config: EngineConfig) -> bool:
    return any(m.enabled for m in config.middleware)


def middleware_confirmed(config: EngineConfig) -> bool:
    """No enabled middleware, or exactly this list was confirmed in this session."""
    return not _runs_code(config) or config.middleware in st.session_state.get(CODE_KEY, ())


def confirm_middleware(config: EngineConfig) -> None:
    """The user clicked the confirmation showing this config's module:Class list (pages/config.py)."""
    refused = middleware_refused_here()
    if refused:
        raise ConfigError(refused, key="middleware")
    st.session_state.setdefault(CODE_KEY, set()).add(config.middleware)


def require_confirmed(config: EngineConfig) -> None:
    """A ConfigError for a config whose middleware this session did not confirm (nothing is imported)."""
    if _runs_code(config):
        refused = middleware_refused_here()
        if refused:
            raise ConfigError(refused, key="middleware")
        if not middleware_confirmed(config):
            raise ConfigError("not confirmed in this session: apply the config on the Config page, which lists the "
                              "classes it would import and asks first", key="middleware")


# -- real models: only after the user allows them in this session --------------------------------
def uses_model(config: EngineConfig) -> bool:
    """The config asks for a real model to write summaries (`summarization.summarizer=provider:model`,
    `compaction.summarizer=…`)."""
    return bool(model_summarizers(config))


def models_allowed() -> bool:
    """Whether the user ticked a real-model box in this session (never set from a link or a config)."""
    return bool(st.session_state.get(MODELS_KEY))


def allow_models(allowed: bool) -> None:
    st.session_state[MODELS_KEY] = bool(allowed)


def model_gated(config: EngineConfig) -> bool:
    """The config names a model the user has not allowed yet: summaries are written offline instead."""
    return uses_model(config) and not models_allowed()


def runnable_config(config: EngineConfig) -> EngineConfig:
    """`config` as the dashboard may run it outside `run_for` (sweeps, live runs): offline summaries
    unless real models are allowed; a ConfigError for middleware not confirmed in this session."""
    require_confirmed(config)
    return with_offline_summaries(config) if model_gated(config) else config


def baseline_run(thread_key: str) -> Run | None:
    """The as-recorded run of a thread that recorded what its agent sent (cached like any run), else None."""
    thread = thread_for(thread_key)
    if thread is None or default_preset_name(thread) != RECORDED_PRESET:
        return None
    return run_for(thread_key, preset(RECORDED_PRESET))


def current_thread() -> Thread | None:
    return thread_for(st.session_state.get("thread_key"))


def current_run() -> Run | None:
    """The run for the current thread and config; on an engine failure, the last good run (with an error)."""
    key = st.session_state.get("thread_key")
    if not key or current_thread() is None:
        return None
    config = st.session_state["config"]
    try:
        run = run_for(key, config)
    except Exception as exc:  # a layer bug or a model error must not take the dashboard down
        st.error("The engine failed on this thread with these settings: " + escape_md(error_text(exc)))
        last = st.session_state.get("last_good_run")
        if last is not None and last[0] == key:
            st.caption("Showing the previous run.")
            return last[1]
        return None
    st.session_state["last_good_run"] = (key, run)
    return run


def current_run_cached() -> bool:
    """Whether the current thread and config's Run is already in the run cache (no replay to wait for)."""
    key = st.session_state.get("thread_key")
    if not key or current_thread() is None:
        return False
    config = st.session_state["config"]
    return (_thread_version(key), config, model_gated(config)) in _RUNS


def current_step(run: Run) -> int:
    """The selected step, clamped to the run."""
    k = int(st.session_state.get("step", 0) or 0)
    return max(0, min(k, len(run.steps) - 1)) if run.steps else 0


# -- state changes (call from callbacks or before widgets render) ------------------------------
def set_config(config: EngineConfig) -> None:
    st.session_state["config"] = config
    st.session_state.pop("sidebar_error", None)


def set_step(step: int) -> None:
    st.session_state["step"] = max(0, int(step))


def select_thread(key: str) -> None:
    # A thread opens on its own default preset (as-recorded when it recorded its usage) unless the
    # user has changed the settings away from the previous thread's default.
    old = current_thread()
    config = st.session_state.get("config")
    if config is None or config == default_config(old):
        new = thread_for(key)
        st.session_state["config"] = default_config(new)
    st.session_state["thread_key"] = key
    st.session_state["step"] = 0
    st.session_state.pop("last_good_run", None)
    for note in load_notes(thread_for(key)):  # a cut file, a file holding several copies: said once
        notify(note)


def add_upload(upload: Upload) -> str:
    key = upload_key(upload.data, upload.thread_id, upload.companions)
    st.session_state.setdefault("uploads", {})[key] = upload
    return key


def go_to(page: str) -> None:
    """Switch to `page` on this run (a callback cannot switch pages itself; app.py does it, `pending_page`)."""
    st.session_state["go_to_page"] = page


def pending_page() -> str | None:
    return st.session_state.pop("go_to_page", None)


def switch_page(target: str) -> NoReturn:
    """`st.switch_page` with this session's thread, step and settings as the new page's query.

    Streamlit's own switch clears the query first, and refuses to while a widget is bound to one of
    its parameters: the Evals or Config tabs, open on a tab other than the first, are in the URL as
    `tab=…` ("Cannot clear query parameters - the following are bound to widgets", Streamlit 1.67).
    A mapping replaces the query instead, with what `sync_url` writes on the new page's run anyway.
    """
    st.switch_page(target, query_params=wanted_params())


def notify(message: str) -> None:
    st.session_state.setdefault("notices", []).append(message)


# -- session start and URL ---------------------------------------------------------------------
def init() -> None:
    """First run of a session: defaults, then whatever the URL asks for (thread, step, settings).

    Every value the link gets wrong is said in one line (`engine.config.links.link_notice`) and the
    URL is rewritten to what is shown (`sync_url`): a bad `step` is not quietly step 0, an unknown
    preset falls back to the thread's own default (as-recorded for a recorded thread), not to
    deepagents (issue 35).
    """
    if st.session_state.get("initialised"):
        return
    st.session_state["initialised"] = True
    st.session_state.setdefault("uploads", {})
    params = {k: st.query_params[k] for k in st.query_params}
    # what the link said, for a page that reads its own parameter once (the Workshop's `lesson`)
    st.session_state["link_params"] = dict(params)
    key = params.get("thread")
    if key and thread_for(key) is None:
        shown = key if len(key) <= 80 else key[:79] + "…"
        notify(f"The thread {shown!r} from the link is not available here"
               + (" (uploads last only for the session that uploaded them)" if key.startswith("upload:") else "")
               + (" (it is not in this workspace's library: deleted, or saved in another workspace)"
                  if key.startswith(LIBRARY_PREFIX) else "")
               + (" (threads read from PostgreSQL last only for the session that opened them)"
                  if key.startswith("pg:") else "")
               + "; opened the default thread instead.")
        key = None
    st.session_state.setdefault("thread_key", key or default_thread_key())
    opened = st.session_state["thread_key"]
    thread = thread_for(opened) if opened else None
    opens_on = default_config(thread)
    default = opens_on.preset or default_preset_name(thread)
    config_params = {k: v for k, v in params.items() if k not in BOUND_PARAMS}
    if "preset" in config_params or any(k not in RESERVED_PARAMS for k in config_params):
        if "preset" not in config_params:
            # settings without a preset change what the thread opens on (a scenario sample's lesson settings
            # too): `?summarization.keep=…` on the landing sample opened on deepagents, not on its stress
            config_params = {**url_params(opens_on), **config_params}
        config, errors = config_from_params(config_params, default=default)
        for e in errors:
            notify(f"Ignored a setting from the link: {e}")
    else:
        config = None
    # without settings in the link, a thread opens on its own default (as-recorded for recorded ones)
    st.session_state.setdefault("config", config or opens_on)
    if opened and thread is None and load_error(opened):
        notify(f"Could not open {opened.split(':', 1)[-1]}: {load_error(opened)}")
    for note in load_notes(thread):
        notify(note)
    step, notice = link_step(params.get("step"), len(thread.ai_indices()) if thread is not None else 1)
    if notice and thread is not None:
        notify(notice)
    st.session_state.setdefault("step", step)


def wanted_params() -> dict[str, str]:
    out: dict[str, str] = {}
    if st.session_state.get("thread_key"):
        out["thread"] = st.session_state["thread_key"]
    out["step"] = str(st.session_state.get("step", 0))
    out.update(url_params(st.session_state["config"]))
    return out


def sync_url() -> None:
    """Write thread, step and the settings that differ from the preset into the URL."""
    wanted = wanted_params()
    current = {k: st.query_params[k] for k in st.query_params}
    for k in list(current):
        if k not in wanted and k not in BOUND_PARAMS:
            del st.query_params[k]
    for k, v in wanted.items():
        if current.get(k) != v:
            st.query_params[k] = v
