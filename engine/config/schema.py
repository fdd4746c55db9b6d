"""One validated engine config (pydantic), YAML round trip, presets and `--set KEY=VALUE` overrides.

The `summarization:` section accepts DeerFlow's schema verbatim, and a whole DeerFlow
`config.yaml` loads (its `summarization` and `memory` sections are taken, the rest ignored).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from engine.base.errors import ConfigError
from engine.base.files import RefusedFile, read_regular

LayerName = Literal["recorded", "filesystem", "subagents", "summarization", "context_editing", "compaction", "todo",
                    "dangling", "memory"]
DEFAULT_ORDER: tuple[str, ...] = ("filesystem", "subagents", "summarization", "todo", "dangling", "memory")
DEFAULT_WINDOW_TOKENS = 200_000
MAX_CONFIG_BYTES = 8 * 1024 * 1024  # a config YAML is a few kB; this only stops a device or a wrong file
# The coding agents' and providers' own compaction, each a policy in engine/policies/ (docs/config.md).
AGENT_PRESETS: tuple[str, ...] = ("claude-code", "codex", "gemini-cli", "cline", "openhands", "anthropic-compaction",
                                  "openai-compaction")
PRESETS: tuple[str, ...] = ("as-recorded", *AGENT_PRESETS, "deepagents", "langchain", "deerflow", "deerflow-head",
                            "stress")
# What a thread whose source recorded its usage or compactions opens on: what really happened.
RECORDED_PRESET = "as-recorded"
DEFAULT_PRESET = "deepagents"

# Deep Agents' TOOLS_EXCLUDED_FROM_EVICTION: they truncate themselves or return tiny confirmations.
TOOLS_EXCLUDED_FROM_EVICTION: tuple[str, ...] = ("ls", "glob", "grep", "read_file", "edit_file", "write_file", "delete")
# Tools that spawn a sub-agent: Deep Agents' and DeerFlow's `task`, Claude Code's `Task` (later `Agent`).
TASK_TOOL_NAMES: tuple[str, ...] = ("task", "Task", "Agent")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ContextSize(_Frozen):
    """A threshold as data: `("messages", 20)`, `("tokens", 30000)` or `("fraction", 0.85)`."""

    type: Literal["messages", "tokens", "fraction"]
    value: int | float

    @model_validator(mode="before")
    @classmethod
    def _parse(cls, v: Any) -> Any:
        if isinstance(v, str):
            kind, sep, raw = v.partition(":")
            if not sep:
                raise ValueError(f"expected TYPE:VALUE like tokens:30000, got {v!r}")
            try:
                number: int | float = float(raw) if kind.strip() == "fraction" else int(raw)
            except ValueError:
                raise ValueError(f"{raw!r} is not a number in {v!r}") from None
            return {"type": kind.strip(), "value": number}
        if isinstance(v, (tuple, list)) and len(v) == 2:
            return {"type": v[0], "value": v[1]}
        return v

    @model_validator(mode="after")
    def _check(self) -> ContextSize:
        # LangChain's exact messages, so a config error reads like the library's.
        if isinstance(self.value, bool):
            raise ValueError("threshold value must be a number, not a boolean")
        if self.type == "fraction":
            if not 0 < float(self.value) <= 1:
                raise ValueError(f"Fractional values must be between 0 and 1, got {self.value}.")
            object.__setattr__(self, "value", float(self.value))
        else:
            if float(self.value) != int(self.value):
                raise ValueError(f"{self.type} thresholds must be whole numbers, got {self.value}.")
            if int(self.value) <= 0:
                raise ValueError(f"{self.type} thresholds must be greater than 0, got {self.value}.")
            object.__setattr__(self, "value", int(self.value))
        return self

    def to_tuple(self) -> tuple[str, int | float]:
        return (self.type, self.value)

    def __str__(self) -> str:
        return f"{self.type}:{self.value}"


class AllOf(_Frozen):
    """An AND clause (LangChain's dict trigger): fires only when every threshold is met."""

    all: tuple[ContextSize, ...] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _from_langchain_dict(cls, v: Any) -> Any:
        if isinstance(v, str) and "&" in v:
            return {"all": [p.strip() for p in v.split("&")]}
        if isinstance(v, dict) and "all" not in v:
            if not v:
                raise ValueError("an AND clause needs at least one threshold ({} is rejected)")
            unknown = set(v) - {"messages", "tokens", "fraction"}
            if unknown:
                raise ValueError(f"unknown threshold keys {sorted(unknown)}; allowed: messages, tokens, fraction")
            return {"all": [{"type": k, "value": val} for k, val in v.items()]}
        return v

    def __str__(self) -> str:
        return "&".join(str(c) for c in self.all)


TriggerClause = ContextSize | AllOf


def _parse_trigger(v: Any) -> Any:
    """Accept None, one clause, a list of clauses, or a 'tokens:30000,messages:50' string."""
    if v is None or v == "none" or v == "null":
        return None
    if isinstance(v, str):
        parts = [p.strip() for p in v.split(",") if p.strip()]
        return [_clause(p) for p in parts]
    if isinstance(v, (list, tuple)):
        if len(v) == 2 and isinstance(v[0], str) and v[0] in ("messages", "tokens", "fraction") and not isinstance(v[1], (dict, list)):
            return [_clause({"type": v[0], "value": v[1]})]
        return [_clause(c) for c in v]
    return [_clause(v)]


def _clause(c: Any) -> Any:
    if isinstance(c, (ContextSize, AllOf)):
        return c
    if isinstance(c, str):
        return AllOf.model_validate(c) if "&" in c else ContextSize.model_validate(c)
    if isinstance(c, dict) and ("all" in c or "type" not in c):
        return AllOf.model_validate(c)
    return ContextSize.model_validate(c)


class ModelConfig(_Frozen):
    name: str | None = None
    max_input_tokens: int | None = Field(default=None, gt=0)
    max_output_tokens: int = Field(default=0, ge=0)
    # Which earlier thinking the provider sends the model: "auto" (by model, engine/data/models.yaml),
    # "all" turns, or only the current assistant turn's ("last_turn": Claude before Opus 4.5 / Sonnet 4.6).
    thinking: Literal["auto", "all", "last_turn"] = "auto"
    # The agent model's LangChain `ls_provider`: reported usage on an AI message counts toward a
    # token trigger only when its `model_provider` is this one (LangChain's rule); None = any.
    provider: str | None = None


class TokensConfig(_Frozen):
    counter: Literal["o200k_base", "cl100k_base", "approximate"] = "o200k_base"
    # Lay the provider's recorded input onto the messages (engine.recorded.calibration) when the thread has it.
    calibrate: bool = True
    # What the layers measure their thresholds with (None = `counter`); "approximate" is LangChain's
    # count_tokens_approximately as LangChain, Deep Agents and DeerFlow use it (usage-scaled triggers).
    layer_counter: Literal["o200k_base", "cl100k_base", "approximate"] | None = None


class RecordedConfig(_Frozen):
    """The source agent's own recorded compactions and context edits, replayed as they happened."""

    enabled: bool = True
    compactions: bool = True
    edits: bool = True


class CompactionConfig(_Frozen):
    """Whole-history compaction as a coding agent runs it; `policy` names the agent (docs/config.md)."""

    enabled: bool = True
    policy: Literal["claude-code", "codex", "gemini-cli", "cline", "openhands", "anthropic-compaction",
                    "openai-compaction"] = "claude-code"
    # None: the policy's own trigger. Claude Code's CLAUDE_AUTOCOMPACT_PCT_OVERRIDE and Codex's
    # model_auto_compact_token_limit can only lower their threshold, so a trigger above the policy's
    # is ignored there; OpenHands takes messages:N (events, its max_size) (documented per policy).
    trigger: ContextSize | None = None
    # None: the policy's own. Codex: tokens of recent user messages re-sent (20,000); Gemini CLI: the
    # fraction of the history kept, by characters (0.3).
    keep: ContextSize | None = None
    # OpenHands: events always kept at the start (keep_first, 4).
    keep_first: int | None = Field(default=None, ge=0)
    # Codex: the tool-output truncation limit in tokens (truncation_policy, 10,000); None = the policy's.
    tool_output_tokens: int | None = Field(default=None, gt=0)
    summarizer: str = "offline"
    # Claude Code: files re-read into context after a compaction (compact.ts POST_COMPACT_*).
    restore_files: int = Field(default=5, ge=0)
    restore_file_tokens: int = Field(default=5_000, gt=0)
    restore_budget_tokens: int = Field(default=50_000, ge=0)

    @field_validator("summarizer")
    @classmethod
    def _summarizer(cls, v: str) -> str:
        if v != "offline" and ":" not in v:
            raise ValueError("summarizer must be 'offline' or 'provider:model' (e.g. 'openai:gpt-4o-mini')")
        return v


EditStyle = Literal["langchain", "anthropic", "inspect", "opencode", "claude-code"]


class ContextEditingConfig(_Frozen):
    """Clearing old tool results (and thinking) in place, by the rules `style` names (docs/config.md).

    Every setting left at null takes the style's own default (engine/layers/context_editing_rules.py
    STYLE_DEFAULTS); `style: langchain` with nothing else is LangChain's `ClearToolUsesEdit()`.
    """

    enabled: bool = True
    style: EditStyle = "langchain"
    # tokens:N or fraction:F of the window (OpenCode prunes every turn, Claude Code on `idle_minutes`).
    trigger: ContextSize | None = None
    # Claude Code: clear when the gap since the last assistant message exceeds this (its cache TTL).
    idle_minutes: float | None = Field(default=None, gt=0)
    keep: int | None = Field(default=None, ge=0)  # tool uses (results) kept, newest first
    # OpenCode: the newest this-many tokens of tool output are never pruned (PRUNE_PROTECT).
    keep_tokens: int | None = Field(default=None, gt=0)
    clear_at_least: int | None = Field(default=None, ge=0)
    exclude_tools: tuple[str, ...] | None = None
    # Claude Code: only these tools' results are cleared (its compactable tools).
    only_tools: tuple[str, ...] | None = None
    # True/False, or (Anthropic) the tool names whose call arguments are cleared with their results.
    clear_tool_inputs: bool | tuple[str, ...] = False
    placeholder: str | None = None
    # clear_thinking: keep the thinking of the last N assistant turns ("all": keep it all).
    keep_thinking_turns: int | Literal["all"] | None = None

    @field_validator("trigger")
    @classmethod
    def _tokens_only(cls, v: ContextSize | None) -> ContextSize | None:
        if v is not None and v.type == "messages":
            raise ValueError("context editing triggers on tokens: use tokens:N or fraction:F")
        return v

    @field_validator("keep_thinking_turns")
    @classmethod
    def _turns(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool) and v < 0:
            raise ValueError("keep_thinking_turns must be 0 or more, or 'all'")
        return v


class TruncateArgsConfig(_Frozen):
    enabled: bool = True
    trigger: ContextSize = ContextSize(type="fraction", value=0.85)
    keep: ContextSize = ContextSize(type="fraction", value=0.10)
    max_length: int = Field(default=2000, gt=0)
    truncation_text: str = "...(argument truncated)"
    tools: tuple[str, ...] = ("write_file", "edit_file")


class FilesystemConfig(_Frozen):
    enabled: bool = True
    tool_result_token_limit: int | None = Field(default=20_000, gt=0)
    excluded_tools: tuple[str, ...] = TOOLS_EXCLUDED_FROM_EVICTION
    truncate_args: TruncateArgsConfig = TruncateArgsConfig()
    # Deep Agents' human_message_token_limit_before_evict: a newest human message of more than 4x this
    # many characters is saved to /conversation_history/ and previewed (None: never).
    human_message_token_limit: int | None = Field(default=50_000, gt=0)


class SubagentsConfig(_Frozen):
    enabled: bool = True
    # DeerFlow clamps max_concurrent to [1, 4] (HEAD); None means no per-response limit (Deep Agents).
    max_concurrent: int | None = Field(default=3, ge=1, le=4)
    max_total: int | None = Field(default=None, ge=1, le=50)
    task_tool_names: tuple[str, ...] = TASK_TOOL_NAMES


class SummarizationConfig(_Frozen):
    """DeerFlow's schema (enabled, model_name, trigger, keep, trim_tokens_to_summarize, summary_prompt) + mode."""

    enabled: bool = True
    model_name: str | None = None
    trigger: tuple[TriggerClause, ...] | None = None
    keep: ContextSize = ContextSize(type="messages", value=20)
    trim_tokens_to_summarize: int | None = Field(default=4000, gt=0)
    summary_prompt: str | None = None
    mode: Literal["state", "view"] = "state"
    # state mode as LangChain (a summary message) or DeerFlow HEAD (the summary in a `summary_text` field)
    style: Literal["langchain", "deerflow-head"] = "langchain"
    summarizer: str = "offline"
    overflow_fallback: bool = True
    history_dir: str = "/conversation_history"
    # Accepted for DeerFlow HEAD compatibility; the replay does not use it.
    skill_file_read_tool_names: tuple[str, ...] | None = None

    @field_validator("trigger", mode="before")
    @classmethod
    def _trigger(cls, v: Any) -> Any:
        return _parse_trigger(v)

    @field_validator("summarizer")
    @classmethod
    def _summarizer(cls, v: str) -> str:
        if v != "offline" and ":" not in v:
            raise ValueError("summarizer must be 'offline' or 'provider:model' (e.g. 'openai:gpt-4o-mini')")
        return v


class TodoConfig(_Frozen):
    enabled: bool = True
    # DeerFlow's TodoMiddleware: v2.0-m0 ("deerflow") or HEAD ("deerflow-head": hidden reminder, completion reminder)
    style: Literal["deerflow", "deerflow-head"] = "deerflow-head"
    # append LangChain's TodoListMiddleware system prompt on every call (DeerFlow's subclass inherits it)
    system_prompt: bool = False


class DanglingConfig(_Frozen):
    enabled: bool = True
    style: Literal["deerflow", "deerflow-head", "deepagents"] = "deerflow"
    drop_orphans: bool = True


class MemoryFact(_Frozen):
    content: str
    category: str = "context"
    confidence: float = Field(default=0.9, ge=0, le=1)


class MemoryConfig(_Frozen):
    enabled: bool = True
    sources: tuple[str, ...] = ("/memories/AGENTS.md",)
    facts: tuple[MemoryFact, ...] = ()
    max_injection_tokens: int = Field(default=2000, gt=0)
    workspace: str | None = None


class SkillConfig(_Frozen):
    name: str
    description: str
    path: str | None = None


class InputContextConfig(_Frozen):
    custom_prompt: str | None = None
    base_prompt: bool = True
    tool_prompts: bool = True
    skills: tuple[SkillConfig, ...] = ()


class PriceOverride(_Frozen):
    """A `cost.prices` row: US dollars per million tokens for models whose name starts with `prefix`."""

    prefix: str = Field(min_length=1)
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write_5m: float | None = Field(default=None, ge=0)
    cache_write_1h: float | None = Field(default=None, ge=0)
    cache: Literal["anthropic", "openai", "none"] | None = None
    min_cache_tokens: int | None = Field(default=None, ge=0)


class CostConfig(_Frozen):
    """How calls are priced and cached (engine/cost/run_cost.py); docs/config.md, *Cost*."""

    # The provider's prompt cache: "auto" (by the priced model: engine/data/prices.yaml), "anthropic"
    # (explicit breakpoints), "openai" (automatic prefix caching) or "none".
    cache: Literal["auto", "anthropic", "openai", "none"] = "auto"
    # Anthropic's cache lifetime: "auto" (the TTL the recorded writes used, else 5m), "5m" or "1h".
    cache_ttl: Literal["auto", "5m", "1h"] = "auto"
    # Price the calls as this model (None: the thread's model); it is only looked up, never called.
    model: str | None = None
    # Rows that replace or extend the price table (prefix, input, output, cache_read, cache_write_5m,
    # cache_write_1h, cache, min_cache_tokens); a mapping {prefix: {...}} is accepted too.
    prices: tuple[PriceOverride, ...] = ()

    @field_validator("prices", mode="before")
    @classmethod
    def _prices(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return [{"prefix": k, **(row if isinstance(row, dict) else {})} for k, row in v.items()]
        return v


# `package.module:Attribute` (the attribute may be dotted: `module:Outer.Inner`), as entry points write it.
_USE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_MIDDLEWARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,79}")


class MiddlewareSpec(_Frozen):
    """A user's own LangChain `AgentMiddleware`: `use` is imported and called with `kwargs`.

    This names code to run, so it only ever comes from a config the user supplies (a file, `--set`,
    the Config page), never from a dashboard link (engine/config/links.py). Loading is
    `engine.layers.user.load_middleware`; a kwargs value `{use: ..., kwargs: ...}` is built the same way.
    """

    use: str
    kwargs: dict[str, Any] = Field(default_factory=dict)
    # The layer name its events carry and `order` refers to; default: the class name.
    name: str | None = None
    enabled: bool = True

    @field_validator("use")
    @classmethod
    def _use(cls, v: str) -> str:
        if not _USE.fullmatch(v.strip()):
            raise ValueError(f"expected 'package.module:Class', got {v!r}")
        return v.strip()

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        if v is not None and not _MIDDLEWARE_NAME.fullmatch(v):
            raise ValueError("a middleware name is letters, digits, '_', '.', '-' (at most 80), starting with a letter")
        return v

    @property
    def layer_name(self) -> str:
        return self.name or self.use.rsplit(":", 1)[1].rsplit(".", 1)[-1]

    def __hash__(self) -> int:  # kwargs is a dict: hash its canonical text (the run cache keys on configs)
        return hash((self.use, self.name, self.enabled, json.dumps(self.kwargs, sort_keys=True, default=repr)))


BUILTIN_LAYERS: frozenset[str] = frozenset(get_args(LayerName))


class EngineConfig(_Frozen):
    """Everything a replay needs to know; hashable, so the dashboard caches runs by config."""

    version: Literal[1] = 1
    preset: str | None = None
    model: ModelConfig = ModelConfig()
    tokens: TokensConfig = TokensConfig()
    # built-in layer names and the names of `middleware` entries
    order: tuple[str, ...] = DEFAULT_ORDER
    recorded: RecordedConfig = RecordedConfig()
    filesystem: FilesystemConfig = FilesystemConfig()
    subagents: SubagentsConfig = SubagentsConfig()
    summarization: SummarizationConfig = SummarizationConfig()
    context_editing: ContextEditingConfig = ContextEditingConfig()
    compaction: CompactionConfig = CompactionConfig()
    todo: TodoConfig = TodoConfig()
    dangling: DanglingConfig = DanglingConfig()
    memory: MemoryConfig = MemoryConfig()
    input_context: InputContextConfig = InputContextConfig()
    cost: CostConfig = CostConfig()
    # The user's own AgentMiddleware, replayed with the layers; one not named in `order` runs after
    # (inside) every layer that is, in list order.
    middleware: tuple[MiddlewareSpec, ...] = ()

    @field_validator("order")
    @classmethod
    def _order(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(v)) != len(v):
            raise ValueError("each layer may appear once in order")
        return v

    @model_validator(mode="after")
    def _middleware_names(self) -> EngineConfig:
        names = [m.layer_name for m in self.middleware]
        for i, name in enumerate(names):
            if name in BUILTIN_LAYERS or name in type(self).model_fields:
                raise ValueError(f"middleware.{i}.name: {name!r} is a built-in layer or config key; give it another `name`")
            if name in names[:i]:
                raise ValueError(f"middleware.{i}.name: two middleware are named {name!r}; give each its own `name`")
        unknown = [n for n in self.order if n not in BUILTIN_LAYERS and n not in names]
        if unknown:
            raise ValueError(f"order: unknown layer {unknown[0]!r}; layers are {', '.join(get_args(LayerName))}"
                             + (f" and the middleware {', '.join(names)}" if names else ""))
        return self

    def layer_sequence(self) -> tuple[str, ...]:
        """Every enabled layer and middleware in list order: `order`, then middleware not named in it."""
        enabled = {m.layer_name for m in self.middleware if m.enabled}
        listed = [n for n in self.order if n in BUILTIN_LAYERS or n in enabled]
        return (*listed, *(m.layer_name for m in self.middleware if m.enabled and m.layer_name not in self.order))

    def middleware_spec(self, name: str) -> MiddlewareSpec | None:
        return next((m for m in self.middleware if m.layer_name == name), None)

    # -- windows -------------------------------------------------------------------------
    def window_tokens(self, thread_max_input_tokens: int | None = None) -> int:
        """The context window: the config's, else the thread's, else 200,000."""
        return self.model.max_input_tokens or thread_max_input_tokens or DEFAULT_WINDOW_TOKENS

    def window_origin(self, thread: Any = None) -> str:
        """Where `window_tokens` came from, in words, so a default window is never silent."""
        if self.model.max_input_tokens:
            return "set in the settings (model.max_input_tokens)"
        recorded = getattr(thread, "max_input_tokens", None)
        model = getattr(thread, "model", None)
        if recorded:
            if (getattr(thread, "extra", None) or {}).get("window_source") == "model table":
                return f"the model table's window for {model} (engine/data/models.yaml)"
            return "recorded in the thread"
        if model:
            return (f"a default: {model} is not in the model table (engine/data/models.yaml); "
                    "set the window if it differs")
        return "a default: the thread names no model; set the window if it differs"

    # -- serialization ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return _plain(self.model_dump(mode="json"))

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "config") -> EngineConfig:
        try:
            return cls.model_validate(d)
        except ValidationError as exc:
            raise _config_error(exc, d, source) from None

    @classmethod
    def from_yaml(cls, text: str, *, source: str = "config") -> EngineConfig:
        """Load our YAML, or a DeerFlow config.yaml (its summarization and memory sections)."""
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise ConfigError(f"invalid YAML{where}: {getattr(exc, 'problem', exc)}", key=source) from None
        if doc is None:
            doc = {}
        if not isinstance(doc, dict):
            raise ConfigError("the config must be a YAML mapping", key=source)
        if is_deerflow_config(doc):
            return from_deerflow(doc, source=source)
        base = doc.get("preset")
        if base is not None:
            merged = _deep_merge(preset(str(base)).to_dict(), doc)
            return cls.from_dict(merged, source=source)
        return cls.from_dict(doc, source=source)

    def with_overrides(self, assignments: list[str] | tuple[str, ...]) -> EngineConfig:
        """Apply `KEY=VALUE` overrides (dotted keys; values parsed as YAML scalars/lists)."""
        d = self.to_dict()
        for item in assignments:
            key, sep, raw = item.partition("=")
            key = key.strip()
            if not sep or not key:
                raise ConfigError(f"expected KEY=VALUE, got {item!r}", key="--set")
            _assign(d, key, _parse_value(key, raw))
        return EngineConfig.from_dict(d, source="--set")

    def diff(self, other: EngineConfig) -> dict[str, tuple[Any, Any]]:
        """Dotted keys whose values differ: `{key: (self_value, other_value)}`."""
        a, b = _flatten(self.to_dict()), _flatten(other.to_dict())
        return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v and k not in ("trigger", "keep"):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k not in ("keep",):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def _parse_value(key: str, raw: str) -> Any:
    raw = raw.strip()
    leaf = key.rsplit(".", 1)[-1]
    if leaf in ("trigger", "keep") and ":" in raw and not raw.startswith(("{", "[")):
        return raw  # ContextSize strings: tokens:30000,messages:50
    try:
        return yaml.safe_load(raw) if raw else None
    except yaml.YAMLError:
        return raw


def _assign(d: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node: Any = d
    for i, p in enumerate(parts[:-1]):
        if not isinstance(node, dict) or p not in node or not isinstance(node[p], dict):
            known = ", ".join(sorted(node)) if isinstance(node, dict) else ""
            raise ConfigError(f"unknown key (known here: {known})", key=".".join(parts[: i + 1]))
        node = node[p]
    if parts[-1] not in node:
        raise ConfigError(f"unknown key (known here: {', '.join(sorted(node))})", key=key)
    node[parts[-1]] = value


def _config_error(exc: ValidationError, doc: Any, source: str) -> ConfigError:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"] if not str(p).startswith(("function-", "tagged-union"))]
    # pydantic appends union member names to locations; keep only real keys and indices
    clean = [p for p in loc if p not in ("ContextSize", "AllOf", "list[union[ContextSize,AllOf]]", "tuple[union[ContextSize,AllOf],...]")]
    key = ".".join(clean) or source
    msg = err["msg"].removeprefix("Value error, ")
    # a whole-config check names its own key: "order: unknown layer 'x'"
    own = _OWN_KEY.match(msg) if not clean else None
    if own:
        key, msg, clean = own.group(1), own.group(2), own.group(1).split(".")
    value = _lookup(doc, clean)
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif err["type"] == "literal_error":
        msg = f"{msg}"
    shown = f" (got {value!r})" if value is not _MISSING else ""
    return ConfigError(f"{msg}{shown}", key=key)


_MISSING = object()
_OWN_KEY = re.compile(r"([a-z_]+(?:\.\w+)*): (.*)", re.DOTALL)


def _lookup(doc: Any, path: list[str]) -> Any:
    node = doc
    for p in path:
        if isinstance(node, dict) and p in node:
            node = node[p]
        elif isinstance(node, (list, tuple)) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
        else:
            return _MISSING
    return node


# -- DeerFlow --------------------------------------------------------------------------------
_OUR_KEYS = set(EngineConfig.model_fields)


def is_deerflow_config(doc: dict[str, Any]) -> bool:
    """A DeerFlow config.yaml: has keys we do not know next to `summarization` (models, sandbox, ...)."""
    return bool(set(doc) - _OUR_KEYS) and ("summarization" in doc or "config_version" in doc or "models" in doc)


def from_deerflow(doc: dict[str, Any], *, source: str = "config") -> EngineConfig:
    """A DeerFlow config.yaml on the preset of its version (HEAD's files carry `config_version`)."""
    base = preset("deerflow-head" if "config_version" in doc else "deerflow").to_dict()
    summ = doc.get("summarization")
    if isinstance(summ, dict):
        allowed = set(SummarizationConfig.model_fields)
        # DeerFlow v2.0.0 keys that were later removed are ignored, not rejected.
        base["summarization"] = {**base["summarization"], **{k: v for k, v in summ.items() if k in allowed}}
        if summ.get("trim_tokens_to_summarize", 4000) is None:
            # DeerFlow passes trim only when set, so null leaves LangChain's default of 4000
            base["summarization"]["trim_tokens_to_summarize"] = 4000
    mem = doc.get("memory")
    if isinstance(mem, dict):
        backend = mem.get("backend_config")
        cfg: dict[Any, Any] = backend if isinstance(backend, dict) else mem
        enabled = bool(mem.get("enabled", True)) and bool(mem.get("injection_enabled", True))
        base["memory"] = {**base["memory"], "enabled": enabled}
        if "max_injection_tokens" in cfg:
            base["memory"]["max_injection_tokens"] = cfg["max_injection_tokens"]
    return EngineConfig.from_dict(base, source=source)


# -- presets ---------------------------------------------------------------------------------
_ALL_OFF: dict[str, Any] = {
    "filesystem": FilesystemConfig(enabled=False),
    "subagents": SubagentsConfig(enabled=False),
    "summarization": SummarizationConfig(enabled=False),
    "context_editing": ContextEditingConfig(enabled=False),
    "todo": TodoConfig(enabled=False),
    "dangling": DanglingConfig(enabled=False),
    "memory": MemoryConfig(enabled=False),
    "input_context": InputContextConfig(base_prompt=False, tool_prompts=False),
}


def preset(name: str) -> EngineConfig:
    """A config reproducing one reference system's defaults (see docs/config.md)."""
    if name == "as-recorded":
        # What the source agent sent: its recorded compactions and edits, nothing of ours added.
        return EngineConfig(preset="as-recorded", order=("recorded",), **_ALL_OFF)
    if name == "claude-code":
        # Claude Code's time-based microcompact, then its autocompact (engine/layers/context_editing_rules.py,
        # engine/policies/claude_code.py). Microcompact is gated by a GrowthBook flag: the recorded
        # sessions (Claude Code 2.1.39) did not microcompact after a 251-minute gap, so it ships off
        # (`context_editing.enabled=true` turns it on). Recorded compactions are what this policy
        # replaces, so they are not replayed.
        return EngineConfig(preset="claude-code", order=("context_editing", "compaction"),
                            recorded=RecordedConfig(enabled=False),
                            **{**_ALL_OFF, "context_editing": ContextEditingConfig(enabled=False, style="claude-code")})
    if name in AGENT_PRESETS:
        # One agent's (or provider's) compaction policy alone: its recorded compactions are what the
        # policy replaces, so they are not replayed.
        return EngineConfig(preset=name, order=("compaction",), recorded=RecordedConfig(enabled=False),
                            compaction=CompactionConfig.model_validate({"policy": name}), **_ALL_OFF)
    if name == "langchain":
        # LangChain 1.5.2's SummarizationMiddleware alone: default trigger None (never fires), keep 20
        # messages, trim 4000, count_tokens_approximately with usage scaling, no overflow fallback.
        return EngineConfig(
            preset="langchain",
            tokens=TokensConfig(layer_counter="approximate"),
            order=("summarization",),
            filesystem=FilesystemConfig(enabled=False),
            subagents=SubagentsConfig(enabled=False),
            summarization=SummarizationConfig(trigger=None, keep=ContextSize(type="messages", value=20),
                                              trim_tokens_to_summarize=4000, mode="state", overflow_fallback=False),
            todo=TodoConfig(enabled=False),
            dangling=DanglingConfig(enabled=False),
            memory=MemoryConfig(enabled=False),
            input_context=InputContextConfig(base_prompt=False, tool_prompts=False),
        )
    if name in ("deerflow", "deerflow-head"):
        head = name == "deerflow-head"
        # DeerFlow's lead agent (agents/lead_agent/agent.py): DanglingToolCall -> Summarization -> Todo ->
        # Memory -> SubagentLimit, config.example.yaml's summarization section, the files of the pinned
        # revision: v2.0-m0 (tag, summarization is LangChain 1.5's own class here) or HEAD f1f4af99b.
        # No result offload in either; counting is LangChain's count_tokens_approximately.
        return EngineConfig(
            preset=name,
            tokens=TokensConfig(layer_counter="approximate"),
            order=("dangling", "summarization", "todo", "memory", "subagents"),
            filesystem=FilesystemConfig(enabled=False),
            subagents=SubagentsConfig(max_concurrent=3, max_total=6 if head else None),
            summarization=SummarizationConfig(trigger=(ContextSize(type="tokens", value=32000 if head else 15564),),
                                              keep=ContextSize(type="messages", value=10),
                                              trim_tokens_to_summarize=15564, mode="state", overflow_fallback=False,
                                              style="deerflow-head" if head else "langchain"),
            todo=TodoConfig(enabled=True, style="deerflow-head" if head else "deerflow", system_prompt=True),
            dangling=DanglingConfig(style="deerflow-head" if head else "deerflow", drop_orphans=head),
            memory=MemoryConfig(max_injection_tokens=2000),
            input_context=InputContextConfig(base_prompt=False, tool_prompts=False),
        )
    if name == "deepagents":
        # deepagents 0.7.32 `create_deep_agent(model, tools, system_prompt=...)` with a model profile:
        # trigger 0.85 / keep 0.10 of the window, no trimming, count_tokens_approximately; the
        # system prompt is the caller's alone (no base or tool prompts); no memory unless memory=.
        return EngineConfig(
            preset="deepagents",
            tokens=TokensConfig(layer_counter="approximate"),
            order=("filesystem", "subagents", "summarization", "dangling", "memory"),
            subagents=SubagentsConfig(max_concurrent=None),
            summarization=SummarizationConfig(trigger=(ContextSize(type="fraction", value=0.85),),
                                              keep=ContextSize(type="fraction", value=0.10),
                                              trim_tokens_to_summarize=None, mode="view"),
            todo=TodoConfig(enabled=False),
            dangling=DanglingConfig(style="deepagents", drop_orphans=False),
            memory=MemoryConfig(enabled=False),
            input_context=InputContextConfig(base_prompt=False, tool_prompts=False),
        )
    if name == "stress":
        # Force compaction early (the references' evals run at 10-25 % of the window): every layer on,
        # measured with the run's own counter, our prompt parts shown; not any one framework.
        deep = preset("deepagents")
        return deep.model_copy(update={
            "preset": "stress",
            "tokens": TokensConfig(),
            "memory": MemoryConfig(),
            "input_context": InputContextConfig(),
            "order": DEFAULT_ORDER,
            "summarization": deep.summarization.model_copy(update={
                "trigger": (ContextSize(type="fraction", value=0.25),),
                "keep": ContextSize(type="fraction", value=0.05)}),
            "filesystem": deep.filesystem.model_copy(update={
                "truncate_args": deep.filesystem.truncate_args.model_copy(update={
                    "trigger": ContextSize(type="fraction", value=0.25)})}),
            "todo": TodoConfig(enabled=True),
            "subagents": SubagentsConfig(max_concurrent=3),
        })
    raise ConfigError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}", key="preset")


def default_preset_name(thread: Any = None) -> str:
    """The preset a thread opens on: `as-recorded` when its source recorded what it sent (usage per
    call, compactions or context edits), else the default what-if preset."""
    if thread is not None and (getattr(thread, "usage", None) or getattr(thread, "compactions", None)
                               or getattr(thread, "edits", None)):
        return RECORDED_PRESET
    return DEFAULT_PRESET


def load_config(path: str | None = None, *, preset_name: str | None = None, overrides: list[str] | None = None,
                thread: Any = None) -> EngineConfig:
    """The CLI's rule: a YAML file or a preset (default: `default_preset_name(thread)`), then `--set` overrides."""
    if path is not None and preset_name is not None:
        raise ConfigError("give --config or --preset, not both", key="--config")
    if path is not None:
        try:  # a regular file of at most MAX_CONFIG_BYTES (engine.base.files: /dev/zero or a FIFO cannot hang it)
            text = read_regular(path, MAX_CONFIG_BYTES).decode("utf-8")
        except RefusedFile as exc:
            why = (f"config file is above {MAX_CONFIG_BYTES:,} bytes" if exc.limit_bytes is not None
                   else f"config file {exc.reason}")
            raise ConfigError(why, key=path) from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config file is not UTF-8 text (invalid byte at offset {exc.start})", key=path) from None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read config file ({getattr(exc, 'strerror', None) or exc})", key=path) from None
        cfg = EngineConfig.from_yaml(text, source=path)
    else:
        cfg = preset(preset_name or default_preset_name(thread))
    return cfg.with_overrides(overrides or [])
