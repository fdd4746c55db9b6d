"""One pydantic model per config section (model, tokens, layers, cost, your own middleware).

`EngineConfig` (engine/config/schema.py) holds one of each; every key is documented in docs/config.md.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, get_args

from pydantic import Field, ValidationError, ValidatorFunctionWrapHandler, field_validator

from engine.config.sizes import ContextSize, FrozenModel, TriggerClause, parse_trigger

LayerName = Literal["recorded", "filesystem", "subagents", "summarization", "context_editing", "compaction", "todo",
                    "dangling", "memory", "durable_context", "coalesce"]
BUILTIN_LAYERS: frozenset[str] = frozenset(get_args(LayerName))
DEFAULT_ORDER: tuple[str, ...] = ("filesystem", "subagents", "summarization", "todo", "dangling", "memory")
DEFAULT_WINDOW_TOKENS = 200_000

# Deep Agents' TOOLS_EXCLUDED_FROM_EVICTION: they truncate themselves or return tiny confirmations.
TOOLS_EXCLUDED_FROM_EVICTION: tuple[str, ...] = ("ls", "glob", "grep", "read_file", "edit_file", "write_file", "delete")
# Tools that spawn a sub-agent: Deep Agents' and DeerFlow's `task`, Claude Code's `Task` (later `Agent`).
TASK_TOOL_NAMES: tuple[str, ...] = ("task", "Task", "Agent")


# The largest window or output a config may set: 50× the largest window any model has (Llama 4 Scout's
# 10M, Gemini's 2M), and far inside what a browser's number box takes (2^53 - 1: a larger window made the
# sidebar's "Window (tokens)" box raise StreamlitJSNumberBoundsError on every page).
MAX_CONFIG_TOKENS = 500_000_000


class ModelConfig(FrozenModel):
    name: str | None = None
    max_input_tokens: int | None = Field(default=None, gt=0, le=MAX_CONFIG_TOKENS)
    max_output_tokens: int = Field(default=0, ge=0, le=MAX_CONFIG_TOKENS)

    # Which earlier thinking the provider sends the model: "auto" (by model, engine/data/models.yaml),
    # "all" turns, only the current assistant turn's ("last_turn": Claude before Opus 4.5 / Sonnet 4.6,
    # OpenAI's reasoning models), or "none" (Gemini: thoughts are never sent back).
    thinking: Literal["auto", "all", "last_turn", "none"] = "auto"
    # The agent model's LangChain `ls_provider`: reported usage on an AI message counts toward a
    # token trigger only when its `model_provider` is this one (LangChain's rule); None = any.
    provider: str | None = None


class TokensConfig(FrozenModel):
    counter: Literal["o200k_base", "cl100k_base", "approximate"] = "o200k_base"
    # Lay the provider's recorded input onto the messages (engine.recorded.calibration) when the thread has it.
    calibrate: bool = True
    # What the layers measure their thresholds with (None = `counter`); "approximate" is LangChain's
    # count_tokens_approximately as LangChain, Deep Agents and DeerFlow use it (usage-scaled triggers).
    layer_counter: Literal["o200k_base", "cl100k_base", "approximate"] | None = None


class RecordedConfig(FrozenModel):
    """The source agent's own recorded compactions and context edits, replayed as they happened."""

    enabled: bool = True
    compactions: bool = True
    edits: bool = True


class CompactionConfig(FrozenModel):
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
            raise ValueError(f"must be 'offline' or 'provider:model' (e.g. 'openai:gpt-4o-mini'), got {v!r}")
        return v


EditStyle = Literal["langchain", "anthropic", "inspect", "opencode", "claude-code"]


class ContextEditingConfig(FrozenModel):
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

    @field_validator("keep_thinking_turns", mode="wrap")
    @classmethod
    def _turns(cls, v: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        # one rule for a wrong type and a negative count: pydantic's union says "a valid integer" and
        # "'all'" apart, and knows nothing of the bound
        try:
            turns = handler(v)
        except ValidationError:
            turns = -1
        if isinstance(turns, int) and turns < 0:
            raise ValueError(f"must be a whole number of 0 or more, or 'all', got {v!r}")
        return turns


class TruncateArgsConfig(FrozenModel):
    enabled: bool = True
    trigger: ContextSize = ContextSize(type="fraction", value=0.85)
    keep: ContextSize = ContextSize(type="fraction", value=0.10)
    max_length: int = Field(default=2000, gt=0)
    truncation_text: str = "...(argument truncated)"
    tools: tuple[str, ...] = ("write_file", "edit_file")


class FilesystemConfig(FrozenModel):
    enabled: bool = True
    tool_result_token_limit: int | None = Field(default=20_000, gt=0)
    excluded_tools: tuple[str, ...] = TOOLS_EXCLUDED_FROM_EVICTION
    truncate_args: TruncateArgsConfig = TruncateArgsConfig()
    # Deep Agents' human_message_token_limit_before_evict: a newest human message of more than 4x this
    # many characters is saved to /conversation_history/ and previewed (None: never).
    human_message_token_limit: int | None = Field(default=50_000, gt=0)


class SubagentsConfig(FrozenModel):
    enabled: bool = True
    # DeerFlow clamps max_concurrent to [1, 4] (HEAD); None means no per-response limit (Deep Agents).
    max_concurrent: int | None = Field(default=3, ge=1, le=4)
    max_total: int | None = Field(default=None, ge=1, le=50)
    task_tool_names: tuple[str, ...] = TASK_TOOL_NAMES


class SummarizationConfig(FrozenModel):
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
        return parse_trigger(v)

    @field_validator("summarizer")
    @classmethod
    def _summarizer(cls, v: str) -> str:
        if v != "offline" and ":" not in v:
            raise ValueError(f"must be 'offline' or 'provider:model' (e.g. 'openai:gpt-4o-mini'), got {v!r}")
        return v


class TodoConfig(FrozenModel):
    enabled: bool = True
    # DeerFlow's TodoMiddleware: v2.0-m0 ("deerflow") or HEAD ("deerflow-head": hidden reminder, completion reminder)
    style: Literal["deerflow", "deerflow-head"] = "deerflow-head"
    # append DeerFlow's TodoMiddleware system prompt (the text its lead agent builds) on every call
    system_prompt: bool = False
    # send the `write_todos` tool (DeerFlow's description) with every request, unless the thread has one
    tool: bool = False


class DanglingConfig(FrozenModel):
    enabled: bool = True
    style: Literal["deerflow", "deerflow-head", "deepagents"] = "deerflow"
    drop_orphans: bool = True


class MemoryFact(FrozenModel):
    content: str
    category: str = "context"
    confidence: float = Field(default=0.9, ge=0, le=1)


class MemoryConfig(FrozenModel):
    enabled: bool = True
    sources: tuple[str, ...] = ("/memories/AGENTS.md",)
    facts: tuple[MemoryFact, ...] = ()
    max_injection_tokens: int = Field(default=2000, gt=0)
    workspace: str | None = None


class SkillConfig(FrozenModel):
    name: str
    description: str
    path: str | None = None


class InputContextConfig(FrozenModel):
    custom_prompt: str | None = None
    base_prompt: bool = True
    tool_prompts: bool = True
    skills: tuple[SkillConfig, ...] = ()
    # a framework's own tools sent ahead of the thread's (engine/layers/agent_tools.py): "deepagents" =
    # Deep Agents 0.7.32's filesystem tools and `task` (a sub-agent thread: no `task`)
    agent_tools: Literal["none", "deepagents"] = "none"


class PriceOverride(FrozenModel):
    """A `cost.prices` row: US dollars per million tokens for models whose name starts with `prefix`."""

    prefix: str = Field(min_length=1)
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write_5m: float | None = Field(default=None, ge=0)
    cache_write_1h: float | None = Field(default=None, ge=0)
    cache: Literal["anthropic", "openai", "none"] | None = None
    min_cache_tokens: int | None = Field(default=None, ge=0)


class CostConfig(FrozenModel):
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


class MiddlewareSpec(FrozenModel):
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
