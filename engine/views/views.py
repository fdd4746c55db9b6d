"""What the dashboard shows, as plain data computed from a Run (no Streamlit, no Plotly).

Every page of the dashboard draws one of these; the same numbers can be printed by the CLI.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import numpy as np
import yaml
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.base.errors import ConfigError
from engine.config.links import VIEW_PARAMS, link_setting_allowed, refusal
from engine.config.presets import DEFAULT_PRESET, PRESETS
from engine.config.schema import EngineConfig, preset
from engine.config.sections import BUILTIN_LAYERS, DEFAULT_ORDER
from engine.config.sizes import AllOf, ContextSize
from engine.policies import get_policy
from engine.run.run import Run, StepRecord
from engine.thread.events import LAYERS, Event
from engine.thread.kinds import CATEGORIES, message_kind
from engine.thread.model import RecordedCompaction, Thread
from engine.tokens.content import message_text, tool_call_text
from engine.tokens.counters import TokenCounter
from engine.tokens.windows import max_output_tokens

TOGGLE_LAYERS: tuple[str, ...] = DEFAULT_ORDER
# Where a layer turned on goes: the recorded layer first (it rebuilds the history the others see),
# context editing and the coding-agent compaction next to summarization (Claude Code microcompacts
# before it autocompacts).
CANONICAL_ORDER: tuple[str, ...] = ("recorded", "filesystem", "subagents", "summarization", "context_editing",
                                    "compaction", "todo", "dangling", "memory")
PARTS_KEY = "ctxi_parts"


# -- timeline --------------------------------------------------------------------------------
@dataclass(frozen=True)
class TimelineSeries:
    """Per-step token series as numpy arrays (plotly sends them as compact binary)."""

    steps: np.ndarray
    by_category: dict[str, np.ndarray]  # CATEGORIES order; every category present, zeros included
    view_tokens: np.ndarray
    raw_tokens: np.ndarray
    state_tokens: np.ndarray
    recorded_input_tokens: np.ndarray | None  # NaN where the source recorded nothing
    event_counts: np.ndarray


def timeline_series(run: Run) -> TimelineSeries:
    n = len(run.steps)
    cats = np.zeros((len(CATEGORIES), n), dtype=np.int64)
    index = {c: i for i, c in enumerate(CATEGORIES)}
    for j, s in enumerate(run.steps):
        for cat, tokens in s.view_by_category.items():
            i = index.get(cat)
            if i is not None:
                cats[i, j] = tokens
    recorded = np.array([np.nan if s.recorded_input_tokens is None else s.recorded_input_tokens
                         for s in run.steps], dtype=np.float64)
    return TimelineSeries(
        steps=np.arange(n, dtype=np.int64),
        by_category={c: cats[i] for c, i in index.items()},
        view_tokens=np.array([s.view_tokens for s in run.steps], dtype=np.int64),
        raw_tokens=np.array([s.raw_tokens for s in run.steps], dtype=np.int64),
        state_tokens=np.array([s.state_tokens for s in run.steps], dtype=np.int64),
        recorded_input_tokens=recorded if n and not np.isnan(recorded).all() else None,
        event_counts=np.array([len(s.events) for s in run.steps], dtype=np.int64),
    )


# -- thresholds ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ThresholdLine:
    """A horizontal level on the timeline; `tokens` is None when it is not a token level."""

    role: str  # window | trigger | keep
    label: str
    tokens: int | None
    note: str = ""


def resolve_tokens(size: ContextSize, window_tokens: int) -> int | None:
    """A threshold as tokens: fractions resolve against the window as LangChain does (min 1)."""
    if size.type == "tokens":
        return int(size.value)
    if size.type == "fraction":
        return max(1, int(window_tokens * float(size.value)))
    return None


def _line(role: str, size: ContextSize, window_tokens: int, prefix: str = "") -> ThresholdLine:
    tokens = resolve_tokens(size, window_tokens)
    label = f"{role} {prefix}{size}"
    if tokens is None:
        return ThresholdLine(role, label, None, f"{role} {size} counts messages, so it cannot be drawn as a token level")
    if size.type == "fraction":
        label += f" = {tokens:,} tokens"
    return ThresholdLine(role, label, tokens)


def compaction_line(config: EngineConfig, window_tokens: int, model: str | None,
                    thread: Thread | None = None) -> ThresholdLine | None:
    """A coding-agent policy's compaction threshold as a token level (None when that layer is off)."""
    if not layer_enabled(config, "compaction"):
        return None
    policy = get_policy(config.compaction.policy)
    tokens = policy.threshold_tokens(window_tokens, max_output_tokens(config, model), config.compaction, thread=thread)
    if tokens is None:
        note = getattr(policy, "trigger_note", lambda c: "")(config.compaction)
        return ThresholdLine("trigger", f"{policy.name}: {note}", None, note)
    own = "" if config.compaction.trigger is None else f", set by {config.compaction.trigger}"
    return ThresholdLine("trigger", f"{policy.name} compacts at {tokens:,} tokens{own}", tokens)


def threshold_lines(config: EngineConfig, window_tokens: int, model: str | None = None,
                    thread: Thread | None = None) -> list[ThresholdLine]:
    """Window, summarization trigger clause(s) and keep, from the live settings."""
    lines = [ThresholdLine("window", f"window {window_tokens:,} tokens", window_tokens)]
    compaction = compaction_line(config, window_tokens, model, thread)
    if compaction is not None:
        lines.append(compaction)
    if not layer_enabled(config, "summarization"):
        return lines
    summ = config.summarization
    if summ.trigger is None:
        lines.append(ThresholdLine("trigger", "trigger none", None, "trigger is none: summarization never fires"))
    else:
        for clause in summ.trigger:
            if isinstance(clause, AllOf):
                for part in clause.all:
                    lines.append(_line("trigger", part, window_tokens, prefix=f"(AND {clause}) "))
            else:
                lines.append(_line("trigger", clause, window_tokens))
    lines.append(_line("keep", summ.keep, window_tokens))
    return lines


# -- events ----------------------------------------------------------------------------------
def describe_event(event: Event) -> str:
    """One line: what happened and the tokens before -> after."""
    text = f"{event.layer} · {event.kind}"
    if event.message:
        text += f": {event.message}"
    if event.tokens_before is not None or event.tokens_after is not None:
        before = "?" if event.tokens_before is None else f"{event.tokens_before:,}"
        after = "?" if event.tokens_after is None else f"{event.tokens_after:,}"
        text += f" (tokens {before} → {after})"
    return text


@dataclass(frozen=True)
class EventMarker:
    step: int
    layer: str
    kind: str
    tokens: int  # the height to draw it at
    severity: str
    text: str


def event_markers(run: Run) -> list[EventMarker]:
    """Every event, placed at its step and at the tokens it saw (else the step's view tokens)."""
    out: list[EventMarker] = []
    last = len(run.steps) - 1
    for s in run.steps:
        for e in s.events:
            step = min(max(e.step, 0), last)
            height = e.tokens_before if e.tokens_before is not None else run.steps[step].view_tokens
            out.append(EventMarker(step, e.layer, e.kind, int(height), e.severity, describe_event(e)))
    return out


def layer_order(names: Sequence[str]) -> list[str]:
    """Layer names in the canonical order, unknown names last (sorted)."""
    known = [n for n in LAYERS if n in names]
    return known + sorted(set(names) - set(known))


def step_for_message_index(steps: Sequence[StepRecord], index: int) -> int | None:
    """The first step whose AI message comes at or after message position `index`."""
    for s in steps:
        if s.message_index >= index:
            return s.index
    return steps[-1].index if steps else None


def recorded_compactions(run: Run) -> list[tuple[int, RecordedCompaction]]:
    """Compactions the source agent performed, each at the step that followed it."""
    out = []
    for c in run.thread.compactions:
        step = step_for_message_index(run.steps, c.index)
        if step is not None:
            out.append((step, c))
    return out


def events_of(run: Run, layer: str) -> list[Event]:
    return [e for e in run.events if e.layer == layer]


def payload_value(event: Event, *names: str, default: Any = None) -> Any:
    """The first payload key present among `names` (layers name things slightly differently)."""
    for n in names:
        if n in event.payload and event.payload[n] not in (None, "", [], ()):
            return event.payload[n]
    return default


# -- step ------------------------------------------------------------------------------------
def category_rows(step: StepRecord, window_tokens: int) -> list[dict[str, Any]]:
    """Like Claude Code's /context: tokens and % of the window per category, then free space."""
    def pct(n: int) -> float:
        return round(100 * n / window_tokens, 1) if window_tokens else 0.0

    rows = [{"category": c, "tokens": step.view_by_category.get(c, 0), "percent_of_window": pct(step.view_by_category.get(c, 0))}
            for c in CATEGORIES if step.view_by_category.get(c, 0)]
    free = window_tokens - step.view_tokens
    # A view over the window says by how much, as a positive amount: negative "free space" would
    # read as a bar running backwards in every table that shows it.
    if free >= 0:
        rows.append({"category": "free space", "tokens": free, "percent_of_window": pct(free)})
    else:
        rows.append({"category": "over the window", "tokens": -free, "percent_of_window": pct(-free)})
    return rows


@dataclass(frozen=True)
class ViewEntry:
    """One message of a step's view as the model received it."""

    position: int
    id: str
    role: str
    kind: str
    name: str | None
    tokens: int
    text: str
    tool_calls: tuple[tuple[str, str], ...] = ()  # (name, args json)
    tool_call_id: str | None = None
    # of `tokens`, those the provider recorded beyond our count of this message (engine.recorded.calibration)
    unrecorded: int = 0
    # the tools an AI message calls, or the tool a tool result answers (for the Step page's filter)
    tools: tuple[str, ...] = ()


def message_entry(position: int, m: BaseMessage, counter: TokenCounter,
                  call_names: Mapping[str, str] | None = None) -> ViewEntry:
    """One message as the pages show it: role, kind, tokens, text and tool calls.

    `call_names` (tool call id -> tool name) names the tool a result answers when the result
    itself carries no name (LangChain's ToolMessage.name is optional).
    """
    calls = tuple((str(tc.get("name", "")), tool_call_text(tc)) for tc in m.tool_calls) if isinstance(m, AIMessage) else ()
    if isinstance(m, ToolMessage):
        tool = m.name or (call_names or {}).get(m.tool_call_id)
        tools: tuple[str, ...] = (tool,) if tool else ()
    else:
        tools = tuple(dict.fromkeys(name for name, _ in calls if name))
    return ViewEntry(position, str(m.id or f"#{position}"), m.type, message_kind(m), m.name, counter.count_message(m),
                     message_text(m), calls, m.tool_call_id if isinstance(m, ToolMessage) else None,
                     int(counter.breakdown(m).get("unrecorded", 0)), tools)


def call_names(*histories: Sequence[BaseMessage]) -> dict[str, str]:
    """Tool call id -> tool name over the AI messages of these histories (later ones win)."""
    out: dict[str, str] = {}
    for history in histories:
        for m in history:
            if isinstance(m, AIMessage):
                for tc in m.tool_calls:
                    if tc.get("id"):
                        out[str(tc["id"])] = str(tc.get("name", ""))
    return out


def view_entries(step: StepRecord, counter: TokenCounter) -> list[ViewEntry]:
    """The view message by message, the system prompt first."""
    # the state too: a result whose call was summarized away still answers a named tool
    names = call_names(step.state, step.view)
    out = [message_entry(0, step.system, counter, names)] if step.system is not None else []
    first = len(out)  # read once: `extend` grows the list while it consumes the generator
    out.extend(message_entry(first + i, m, counter, names) for i, m in enumerate(step.view))
    return out


@dataclass(frozen=True)
class DiffRow:
    status: str  # same | changed | only_state | only_view
    id: str
    role: str
    kind: str
    state_tokens: int | None
    view_tokens: int | None
    # the messages themselves, for the page's text preview and before/after diff
    state_message: BaseMessage | None = field(default=None, compare=False, repr=False)
    view_message: BaseMessage | None = field(default=None, compare=False, repr=False)


def _same(a: BaseMessage, b: BaseMessage) -> bool:
    if a is b:
        return True
    return a.content == b.content and getattr(a, "tool_calls", None) == getattr(b, "tool_calls", None)


def state_view_diff(step: StepRecord, counter: TokenCounter) -> list[DiffRow]:
    """Align state and view by message id: what a layer hid, inserted or rewrote for this request."""
    state, view = list(step.state), list(step.view)
    sid = [str(m.id) for m in state]
    vid = [str(m.id) for m in view]
    rows: list[DiffRow] = []

    def row(status: str, s: BaseMessage | None, v: BaseMessage | None) -> DiffRow:
        m = v if v is not None else s
        assert m is not None
        return DiffRow(status, str(m.id), m.type, message_kind(m),
                       counter.count_message(s) if s is not None else None,
                       counter.count_message(v) if v is not None else None, s, v)

    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=sid, b=vid, autojunk=False).get_opcodes():
        if op == "equal":
            rows.extend(row("same" if _same(state[i], view[j]) else "changed", state[i], view[j])
                        for i, j in zip(range(i1, i2), range(j1, j2), strict=True))
        else:
            rows.extend(row("only_state", state[i], None) for i in range(i1, i2))
            rows.extend(row("only_view", None, view[j]) for j in range(j1, j2))
    return rows


def diff_counts(rows: Sequence[DiffRow]) -> dict[str, int]:
    out = {"same": 0, "changed": 0, "only_state": 0, "only_view": 0}
    for r in rows:
        out[r.status] += 1
    return out


def system_parts(step: StepRecord, counter: TokenCounter) -> list[dict[str, Any]]:
    """The system prompt's parts (set by the prompt layers), each with its tokens."""
    if step.system is None:
        return []
    parts = step.system.additional_kwargs.get(PARTS_KEY) or []
    if not parts:
        return [{"part": "system prompt", "category": "system", "tokens": counter.count_message(step.system),
                 "text": message_text(step.system)}]
    return [{"part": str(p.get("part", "?")), "category": str(p.get("category", "system")),
             "tokens": counter.count_text(str(p.get("text", ""))), "text": str(p.get("text", ""))} for p in parts]


# -- layers ----------------------------------------------------------------------------------
@lru_cache(maxsize=512)
def _text_tokens(counter: TokenCounter, text: str) -> int:
    # history files reach hundreds of kB; pages ask for their size on every rerun
    return counter.count_text(text)


def file_rows(run: Run) -> list[dict[str, Any]]:
    """The virtual filesystem: path, size, tokens, the step and layer that wrote each file."""
    # counters hash by identity; mypy cannot see that a Protocol type is Hashable
    counter = cast(Hashable, run.counter)
    return [{"path": e.path, "chars": e.size_chars, "tokens": _text_tokens(counter, e.content), "step": e.step,
             "layer": e.layer, "source_id": e.source_id} for e in run.files.entries()]


def stub_for(run: Run, path: str, source_id: str | None) -> BaseMessage | None:
    """The stub message that replaced an offloaded result (searched in the last state and view)."""
    if not run.steps:
        return None
    pool = [*run.final_state, *run.steps[-1].view]
    for m in pool:
        if message_kind(m) != "stub":
            continue
        if source_id and source_id in (m.id, getattr(m, "tool_call_id", None)):
            return m
        if path in message_text(m):
            return m
    return None


def subagent_rows(run: Run) -> list[dict[str, Any]]:
    """Per task call: tokens spent inside the sub-agent vs tokens returned to the parent.

    The sub-agent layer's event (when present) says what the sub-agent *sent* over all its model
    calls; the transcript's own size is the fallback.
    """
    names = set(run.config.subagents.task_tool_names)
    results = run.thread.tool_results()
    measured = {e.payload.get("tool_call_id"): e for e in events_of(run, "subagents") if e.kind == "subagent"}
    rows = []
    for m in run.thread.messages:
        if not isinstance(m, AIMessage):
            continue
        for tc in m.tool_calls:
            call_id = tc.get("id") or ""
            inner = run.thread.subagents.get(call_id)
            if tc.get("name") not in names and inner is None:
                continue
            result = results.get(call_id)
            args = tc.get("args") or {}
            event = measured.get(call_id)
            rows.append({
                "tool_call_id": call_id,
                "subagent": str(args.get("subagent_type") or args.get("agent") or tc.get("name")),
                "description": str(args.get("description") or args.get("prompt") or "")[:200],
                "inside steps": event.payload.get("inside_steps") if event else None,
                "transcript tokens": sum(run.counter.count_message(x) for x in inner.messages) if inner else None,
                "sent inside (all its calls)": event.payload.get("inside_tokens") if event else None,
                "peak inside": event.payload.get("inside_peak_tokens") if event else None,
                "returned tokens": run.counter.count_message(result) if result is not None else None,
            })
    return rows


# -- compare ---------------------------------------------------------------------------------
def compare_runs(a: Run, b: Run) -> list[dict[str, Any]]:
    """Run A vs run B: peak view tokens, tokens saved, events per layer, summarizer calls."""
    ta, tb = a.totals(), b.totals()
    rows: list[tuple[str, Any, Any]] = [
        ("steps", ta["steps"], tb["steps"]),
        ("window tokens", ta["window_tokens"], tb["window_tokens"]),
        ("peak view tokens", ta["peak_view_tokens"], tb["peak_view_tokens"]),
        ("total view tokens (billed input)", sum(s.view_tokens for s in a.steps), sum(s.view_tokens for s in b.steps)),
        ("tokens saved", ta["tokens_saved"], tb["tokens_saved"]),
        ("events", ta["events"], tb["events"]),
    ]
    for layer in layer_order([*ta["events_by_layer"], *tb["events_by_layer"]]):
        rows.append((f"events: {layer}", ta["events_by_layer"].get(layer, 0), tb["events_by_layer"].get(layer, 0)))
    rows += [("warnings", ta["warnings"], tb["warnings"]),
             ("summarizer calls", ta["summarizer_calls"], tb["summarizer_calls"]),
             ("files written", ta["files"], tb["files"])]
    return [{"metric": m, "A": x, "B": y, "B − A": y - x} for m, x, y in rows]


# -- config helpers --------------------------------------------------------------------------
def layer_enabled(config: EngineConfig, name: str) -> bool:
    section = getattr(config, name, None)
    return name in config.order and bool(getattr(section, "enabled", True))


def with_layer(config: EngineConfig, name: str, on: bool) -> EngineConfig:
    """Turn a layer on (placing it in the default order if absent) or off."""
    d = config.to_dict()
    d[name]["enabled"] = on
    if on and name not in d["order"]:
        # the layers take their canonical places; the user's middleware keeps its slots
        slots = [*d["order"], name]
        layers = iter([n for n in CANONICAL_ORDER if n in slots])
        d["order"] = [next(layers) if n in BUILTIN_LAYERS else n for n in slots]
    return EngineConfig.from_dict(d)


# -- URL state -------------------------------------------------------------------------------
RESERVED_PARAMS = VIEW_PARAMS  # not config keys (engine.config.links)


def base_config(config: EngineConfig) -> EngineConfig:
    return preset(config.preset) if config.preset in PRESETS else EngineConfig()


def setting_text(key: str, value: Any) -> str:
    """A config value as written after `--set KEY=` (and in the URL): `fraction:0.5`, `[a, b]`, `view`."""
    leaf = key.rsplit(".", 1)[-1]
    if leaf == "trigger" and isinstance(value, list):
        return ",".join(_clause_text(c) for c in value) if value else "[]"
    if leaf in ("trigger", "keep") and isinstance(value, dict) and "type" in value:
        return f"{value['type']}:{value['value']}"
    if isinstance(value, str) and ":" not in value and _reads_back(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def _reads_back(text: str) -> bool:
    try:
        return bool(yaml.safe_load(text) == text)
    except yaml.YAMLError:
        return False


def _clause_text(c: Mapping[str, Any]) -> str:
    if "all" in c:
        return "&".join(f"{p['type']}:{p['value']}" for p in c["all"])
    return f"{c['type']}:{c['value']}"


def url_params(config: EngineConfig) -> dict[str, str]:
    """The settings that differ from the config's preset, as query parameters (plus `preset`).

    Only settings a link may carry (`engine.config.links.LINK_SETTINGS`) are written: a workspace or a
    summarizer model chosen on the Config page stays in the session, out of the URL.
    """
    base = base_config(config)
    params = {"preset": config.preset or "custom"}
    # the user's middleware never goes into a link, nor its place in `order`
    linked = config.model_copy(update={"order": tuple(n for n in config.order if n in BUILTIN_LAYERS)})
    for key, (_, value) in base.diff(linked).items():
        if key != "preset" and link_setting_allowed(key):
            params[key] = setting_text(key, value)
    return params


def config_from_params(params: Mapping[str, str]) -> tuple[EngineConfig, list[str]]:
    """Rebuild a config from query parameters; bad parameters are skipped and reported.

    A parameter that is not on the allow-list (`engine.config.links.LINK_SETTINGS`) is refused, whatever
    its value: a link cannot set a path, a workspace, a model or an endpoint.
    """
    name = params.get("preset") or DEFAULT_PRESET
    errors: list[str] = []
    try:
        config = preset(name) if name != "custom" else EngineConfig()
    except ConfigError as exc:
        errors.append(str(exc))
        config = preset(DEFAULT_PRESET)
    for key, raw in params.items():
        if key in RESERVED_PARAMS:
            continue
        if not link_setting_allowed(key):
            errors.append(refusal(key))
            continue
        try:
            config = config.with_overrides([f"{key}={raw}"])
        except ConfigError as exc:
            errors.append(str(exc))
    return config, errors


# -- threads ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ThreadFacts:
    thread_id: str
    title: str | None
    source_format: str
    model: str | None
    messages: int
    steps: int
    by_role: dict[str, int] = field(default_factory=dict)
    tools: int = 0
    subagents: int = 0
    recorded_compactions: int = 0
    recorded_usage: int = 0


def thread_facts(thread: Thread) -> ThreadFacts:
    return ThreadFacts(thread.thread_id, thread.title, thread.source_format, thread.model, len(thread.messages),
                       len(thread.ai_indices()), thread.by_role(), len(thread.tools), len(thread.subagents),
                       len(thread.compactions), len(thread.usage))
