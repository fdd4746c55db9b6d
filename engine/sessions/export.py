"""Carry a tuned setting back: the current config written as the target agent's own configuration.

Each target writes the keys its agent reads, cites the agent's documentation for each, and says what
the config holds that the agent does not let a user set (it is listed, never silently dropped):

| target | writes | source of the keys |
|---|---|---|
| `claude-code` | `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (shell and `~/.claude/settings.json` `env`), `DISABLE_AUTO_COMPACT` / `autoCompactEnabled` | code.claude.com/docs/en/env-vars, /settings (settings-reference `autoCompactEnabled`, `autoCompactWindow`), /model-config "Set the auto-compact window" |
| `codex` | `~/.codex/config.toml`: `model_auto_compact_token_limit`, `model_context_window`, `tool_output_token_limit` | openai/codex `codex-rs/core/src/config/mod.rs` (`ConfigToml` doc comments), `docs/config.md` |
| `gemini-cli` | `~/.gemini/settings.json` `model.compressionThreshold` | google-gemini/gemini-cli `docs/reference/configuration.md` |
| `openhands` | `config.toml` `[condenser]` (`type = "llm"`, `max_size`, `keep_first`) and the SDK's `LLMSummarizingCondenser(...)` | OpenHands/OpenHands `config.template.toml` "Condenser"; software-agent-sdk `llm_summarizing_condenser.py` |
| `deerflow` | `config.yaml` `summarization:` | bytedance/deer-flow `config/summarization_config.py`, `config.example.yaml` |
| `langchain` | Python: `SummarizationMiddleware(...)` for `create_agent(..., middleware=...)` | langchain 1.5 `langchain/agents/middleware/summarization.py` |
| `deepagents` | Python: Deep Agents' `SummarizationMiddleware(...)` passed to `create_deep_agent(middleware=...)`, which replaces the default one in place (same `name`) | deepagents 0.7.32 `graph.py` (middleware replaced by name), `middleware/summarization.py` |

The threshold carried is the config's active one: the coding-agent compaction layer's when it runs (its
policy's threshold in tokens, `compaction.trigger`), else the first token or fraction clause of
`summarization.trigger`, converted against the window.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from engine.base.errors import ConfigError
from engine.config.schema import EngineConfig
from engine.config.sizes import AllOf, ContextSize
from engine.tokens.windows import max_output_tokens

TARGETS: tuple[str, ...] = ("claude-code", "codex", "gemini-cli", "openhands", "deerflow", "langchain", "deepagents")
DEFAULT_WINDOW = 200_000
# Claude Code (engine/policies/claude_code.py): effective window = window − min(max output, 20,000);
# it compacts at effective − 13,000 unless CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (a percentage of the effective
# window) lowers it.
CLAUDE_SUMMARY_RESERVE = 20_000


@dataclass(frozen=True)
class ExportFile:
    """One thing to write or paste: where it goes, its language, its text."""

    where: str
    language: str  # bash | json | toml | yaml | python
    text: str


@dataclass
class AgentExport:
    target: str
    files: list[ExportFile] = field(default_factory=list)
    carried: list[str] = field(default_factory=list)
    not_carried: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "files": [f.__dict__ for f in self.files], "carried": self.carried,
                "not_carried": self.not_carried, "sources": self.sources}

    def text(self) -> str:
        """Everything as one text: each file under a comment saying where it goes, then the notes."""
        comment = {"python": "#", "bash": "#", "toml": "#", "yaml": "#", "json": "//"}
        out: list[str] = []
        for f in self.files:
            out.append(f"{comment.get(f.language, '#')} {f.where}")
            out.append(f.text.rstrip("\n"))
            out.append("")
        for title, lines in (("carried", self.carried), ("not carried", self.not_carried), ("sources", self.sources)):
            if lines:
                out.append(f"# {title}:")
                out.extend(f"#   {line}" for line in lines)
        return "\n".join(out).rstrip() + "\n"


# -- what the config says ---------------------------------------------------------------------------------
def _window(config: EngineConfig, window_tokens: int | None) -> int:
    return int(config.model.max_input_tokens or window_tokens or DEFAULT_WINDOW)


def _compaction_active(config: EngineConfig) -> bool:
    return "compaction" in config.order and config.compaction.enabled


def _summarization_active(config: EngineConfig) -> bool:
    return "summarization" in config.order and config.summarization.enabled


def _size_tokens(size: ContextSize, window: int) -> int | None:
    if size.type == "tokens":
        return int(size.value)
    if size.type == "fraction":
        return int(window * float(size.value))
    return None


@dataclass(frozen=True)
class Threshold:
    """The config's active compaction threshold, in tokens, and where it came from."""

    tokens: int | None
    origin: str
    size: ContextSize | None = None  # as written in the config


def threshold(config: EngineConfig, window: int, model: str | None = None) -> Threshold:
    if _compaction_active(config):
        from engine.policies import get_policy

        policy = get_policy(config.compaction.policy)
        tokens = policy.threshold_tokens(window, max_output_tokens(config, model), config.compaction)
        return Threshold(tokens, f"compaction.policy {config.compaction.policy}"
                         + (f", compaction.trigger {config.compaction.trigger}" if config.compaction.trigger else ""),
                         config.compaction.trigger)
    if _summarization_active(config) and config.summarization.trigger:
        for clause in config.summarization.trigger:
            if isinstance(clause, ContextSize) and clause.type != "messages":
                return Threshold(_size_tokens(clause, window), f"summarization.trigger {clause}", clause)
        return Threshold(None, "summarization.trigger counts messages only")
    return Threshold(None, "no compaction or summarization trigger is on")


def _none_on(config: EngineConfig) -> bool:
    return not _compaction_active(config) and not (_summarization_active(config) and config.summarization.trigger)


# -- coding agents -------------------------------------------------------------------------------------
def _claude_code(config: EngineConfig, window: int, model: str | None) -> AgentExport:
    out = AgentExport("claude-code", sources=[
        "https://code.claude.com/docs/en/env-vars (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, DISABLE_AUTO_COMPACT)",
        "https://code.claude.com/docs/en/settings (autoCompactEnabled, autoCompactWindow, env)",
        "https://code.claude.com/docs/en/model-config#set-the-auto-compact-window",
        "anthropics/claude-code#31806 (the override can only lower the threshold), #63186 (an env block value "
        "reported not applied to autocompact: export it in the shell)"])
    if _none_on(config):
        out.files += [ExportFile("shell, before starting claude", "bash", "export DISABLE_AUTO_COMPACT=1\n"),
                      ExportFile("~/.claude/settings.json", "json", json.dumps({"autoCompactEnabled": False}, indent=2))]
        out.carried.append("no compaction → DISABLE_AUTO_COMPACT=1 / autoCompactEnabled: false (/compact still works)")
    else:
        t = threshold(config, window, model)
        reserve = min(max_output_tokens(config, model) or CLAUDE_SUMMARY_RESERVE, CLAUDE_SUMMARY_RESERVE)
        effective = window - reserve
        default = effective - 13_000
        if t.tokens is None:
            out.not_carried.append(f"{t.origin}: Claude Code compacts on tokens only")
        elif t.tokens >= default:
            out.not_carried.append(f"{t.origin} = {t.tokens:,} tokens: Claude Code already compacts at {default:,} "
                                   f"({window:,} window − {reserve:,} − 13,000); the override can only lower it")
        else:
            if t.size is not None and t.size.type == "fraction" and t.origin.startswith("compaction.policy claude-code"):
                pct = round(100 * float(t.size.value), 2)  # already a fraction of the effective window
            else:
                pct = math.floor(10_000 * t.tokens / effective) / 100  # never above the tokens asked for
            text = f"{pct:g}"
            out.files += [ExportFile("shell, before starting claude", "bash", f"export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={text}\n"),
                          ExportFile("~/.claude/settings.json", "json",
                                     json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": text}}, indent=2))]
            at = math.floor(effective * pct / 100)
            out.carried.append(f"{t.origin} ({t.tokens:,} tokens) → CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={text}: "
                               f"{text} % of the effective window {effective:,} = {at:,} tokens")
    out.not_carried += [
        "Claude Code does not let a user set how much is kept: it summarizes the whole history into one message",
        "nor the 13,000-token buffer, the files re-attached after compacting (5 files, 5,000 tokens each, 50,000 in "
        "all), or the summary prompt (only by hand: /compact <instructions>)",
    ]
    _keep_note(config, out, "Claude Code")
    _general_not_carried(config, out, exclude=("compaction", "context_editing", "summarization"))
    return out


def _codex(config: EngineConfig, window: int, model: str | None) -> AgentExport:
    out = AgentExport("codex", sources=[
        "openai/codex codex-rs/core/src/config/mod.rs: model_auto_compact_token_limit (\"Token usage threshold "
        "triggering auto-compaction of conversation history\"), model_context_window",
        "openai/codex docs/config.md: tool_output_token_limit",
        "openai/codex codex-rs/protocol/src/openai_models.rs: the limit is min(configured, 90 % of the window)"])
    lines = []
    t = threshold(config, window, model)
    if _none_on(config):
        out.not_carried.append("no compaction: Codex cannot turn auto-compaction off from config.toml")
    elif t.tokens is not None:
        lines.append(f"model_auto_compact_token_limit = {t.tokens}")
        out.carried.append(f"{t.origin} → model_auto_compact_token_limit = {t.tokens:,} (it only lowers Codex's own "
                           "90 % of the window)")
    else:
        out.not_carried.append(f"{t.origin}: Codex compacts on tokens only")
    if config.model.max_input_tokens:
        lines.append(f"model_context_window = {int(config.model.max_input_tokens)}")
        out.carried.append(f"model.max_input_tokens → model_context_window = {int(config.model.max_input_tokens):,}")
    if _compaction_active(config) and config.compaction.policy == "codex" and config.compaction.tool_output_tokens:
        lines.append(f"tool_output_token_limit = {int(config.compaction.tool_output_tokens)}")
        out.carried.append(f"compaction.tool_output_tokens → tool_output_token_limit = {config.compaction.tool_output_tokens:,}")
    if lines:
        out.files.append(ExportFile("~/.codex/config.toml", "toml", "\n".join(lines) + "\n"))
    if _compaction_active(config) and config.compaction.keep is not None:
        out.not_carried.append(f"compaction.keep {config.compaction.keep}: Codex keeps 20,000 tokens of user messages "
                               "(COMPACT_USER_MESSAGE_MAX_TOKENS), not configurable")
    _keep_note(config, out, "Codex")
    _general_not_carried(config, out, exclude=("compaction", "summarization"))
    return out


def _gemini(config: EngineConfig, window: int, model: str | None) -> AgentExport:
    out = AgentExport("gemini-cli", sources=[
        "google-gemini/gemini-cli docs/reference/configuration.md: model.compressionThreshold (\"The fraction of "
        "context usage at which to trigger context compression\", default 0.5)",
        "packages/core/src/context/chatCompressionService.ts: COMPRESSION_PRESERVE_THRESHOLD = 0.3 (not a setting)"])
    t = threshold(config, window, model)
    if _none_on(config):
        out.not_carried.append("no compaction: Gemini CLI cannot turn chat compression off from settings.json")
    elif t.tokens is not None:
        fraction = (float(t.size.value) if t.size is not None and t.size.type == "fraction"
                    else round(t.tokens / window, 4))
        out.files.append(ExportFile("~/.gemini/settings.json", "json",
                                    json.dumps({"model": {"compressionThreshold": fraction}}, indent=2)))
        out.carried.append(f"{t.origin} → model.compressionThreshold = {fraction:g} of the {window:,}-token window")
    else:
        out.not_carried.append(f"{t.origin}: Gemini CLI compresses on a fraction of the window only")
    out.not_carried.append("how much is kept: Gemini CLI keeps the newest 30 % of the history (not a setting)")
    _keep_note(config, out, "Gemini CLI")
    _general_not_carried(config, out, exclude=("compaction", "summarization"))
    return out


def _openhands(config: EngineConfig, window: int, model: str | None) -> AgentExport:
    out = AgentExport("openhands", sources=[
        "OpenHands/OpenHands config.template.toml, [condenser]: type = \"llm\", keep_first, max_size, llm_config",
        "OpenHands/software-agent-sdk openhands-sdk/openhands/sdk/context/condenser/llm_summarizing_condenser.py: "
        "LLMSummarizingCondenser(llm, max_size=120, keep_first=4, max_tokens=None)"])
    c = config.compaction
    max_size = 120
    max_tokens: int | None = None
    keep_first = int(c.keep_first) if c.keep_first is not None else 4
    trigger = c.trigger if _compaction_active(config) else None
    if trigger is None and _summarization_active(config) and config.summarization.trigger:
        trigger = next((x for x in config.summarization.trigger if isinstance(x, ContextSize)), None)
    if trigger is not None and trigger.type == "messages":
        max_size = int(trigger.value)
        out.carried.append(f"trigger {trigger} → max_size = {max_size} events")
    elif trigger is not None:
        max_tokens = _size_tokens(trigger, window)
        out.carried.append(f"trigger {trigger} → max_tokens = {max_tokens:,} (the SDK's condenser; V0's config.toml "
                           "has no token trigger)")
    toml = ["[condenser]", 'type = "llm"', 'llm_config = "condenser"', f"keep_first = {keep_first}", f"max_size = {max_size}"]
    out.files.append(ExportFile("config.toml (OpenHands V0 / CLI)", "toml", "\n".join(toml) + "\n"))
    args = [f"max_size={max_size}", f"keep_first={keep_first}"] + ([f"max_tokens={max_tokens}"] if max_tokens else [])
    out.files.append(ExportFile("Python (OpenHands SDK)", "python",
                                "from openhands.sdk.context.condenser import LLMSummarizingCondenser\n\n"
                                f"condenser = LLMSummarizingCondenser(llm=llm.model_copy(update={{\"usage_id\": "
                                f"\"condenser\"}}), {', '.join(args)})\n"))
    _general_not_carried(config, out, exclude=("compaction", "summarization"))
    return out


# -- frameworks ------------------------------------------------------------------------------------------
def _size_py(size: ContextSize) -> str:
    return f"({size.type!r}, {size.value!r})"


def _trigger_py(trigger: tuple[Any, ...] | None) -> str | None:
    """LangChain's trigger argument: a tuple, a dict (an AND clause) or a list of them (OR)."""
    if not trigger:
        return None
    parts = []
    for clause in trigger:
        if isinstance(clause, AllOf):
            parts.append("{" + ", ".join(f"{c.type!r}: {c.value!r}" for c in clause.all) + "}")
        else:
            parts.append(_size_py(clause))
    return parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"


def _langchain(config: EngineConfig, window: int, model: str | None) -> AgentExport:
    s = config.summarization
    out = AgentExport("langchain", sources=[
        "langchain 1.5 langchain/agents/middleware/summarization.py: SummarizationMiddleware(model, trigger=None, "
        "keep=('messages', 20), trim_tokens_to_summarize=4000, summary_prompt=DEFAULT_SUMMARY_PROMPT)",
        "https://docs.langchain.com/oss/python/langchain/middleware (Summarization)"])
    if not _summarization_active(config):
        out.not_carried.append("summarization is off: no middleware to add")
        return out
    args = ["model"]
    trigger = _trigger_py(s.trigger)
    if trigger is not None:
        args.append(f"trigger={trigger}")
    args.append(f"keep={_size_py(s.keep)}")
    args.append(f"trim_tokens_to_summarize={s.trim_tokens_to_summarize!r}")
    if s.summary_prompt:
        args.append(f"summary_prompt={s.summary_prompt!r}")
    code = ("from langchain.agents import create_agent\n"
            "from langchain.agents.middleware import SummarizationMiddleware\n\n\n"
            "def context_middleware(model):\n"
            "    \"\"\"Summarization as replayed in Context Inspector (LangChain 1.5).\"\"\"\n"
            f"    return [SummarizationMiddleware({', '.join(args)})]\n\n\n"
            "# agent = create_agent(model, tools, middleware=context_middleware(model))\n")
    out.files.append(ExportFile("Python", "python", code))
    out.carried.append(f"summarization.trigger {trigger or 'none'}, keep {s.keep}, "
                       f"trim_tokens_to_summarize {s.trim_tokens_to_summarize}")
    _general_not_carried(config, out, exclude=("summarization",))
    return out


def _deepagents(config: EngineConfig, window: int, model: str | None) -> AgentExport:
    s, t = config.summarization, config.filesystem.truncate_args
    out = AgentExport("deepagents", sources=[
        "deepagents 0.7.32 graph.py: a middleware whose `name` matches a default one replaces it in place",
        "deepagents 0.7.32 middleware/summarization.py: SummarizationMiddleware(model, backend=, trigger=, keep=, "
        "trim_tokens_to_summarize=, truncate_args_settings=); create_summarization_middleware's defaults "
        "(fraction 0.85 / 0.10 with a profile, trim None)"])
    if not _summarization_active(config):
        out.not_carried.append("summarization is off: Deep Agents always summarizes (pass excluded_middleware="
                               "{'SummarizationMiddleware'} to create_deep_agent to drop it)")
        return out
    trigger = _trigger_py(s.trigger)
    truncate = "None"
    if config.filesystem.enabled and t.enabled:
        truncate = ("{" + f"\"trigger\": {_size_py(t.trigger)}, \"keep\": {_size_py(t.keep)}, "
                    f"\"max_length\": {t.max_length!r}, \"truncation_text\": {t.truncation_text!r}" + "}")
    args = ["model", "backend=backend or StateBackend()"]
    if trigger is not None:
        args.append(f"trigger={trigger}")
    args += [f"keep={_size_py(s.keep)}", f"trim_tokens_to_summarize={s.trim_tokens_to_summarize!r}",
             f"truncate_args_settings={truncate}"]
    if s.summary_prompt:
        args.append(f"summary_prompt={s.summary_prompt!r}")
    code = ("from deepagents import create_deep_agent\n"
            "from deepagents.backends import StateBackend\n"
            "from deepagents.middleware.summarization import SummarizationMiddleware\n\n\n"
            "def context_middleware(model, backend=None):\n"
            "    \"\"\"Summarization as replayed in Context Inspector (Deep Agents 0.7.32): it replaces the default\n"
            "    SummarizationMiddleware of create_deep_agent in place (same name).\"\"\"\n"
            f"    return [SummarizationMiddleware({', '.join(args)})]\n\n\n"
            "# agent = create_deep_agent(model=model, tools=tools, middleware=context_middleware(model))\n")
    out.files.append(ExportFile("Python", "python", code))
    out.carried.append(f"summarization.trigger {trigger or 'none'}, keep {s.keep}, trim {s.trim_tokens_to_summarize}, "
                       f"filesystem.truncate_args {truncate}")
    _general_not_carried(config, out, exclude=("summarization", "filesystem"))
    return out


def _deerflow(config: EngineConfig, window: int, model: str | None) -> AgentExport:
    s = config.summarization
    out = AgentExport("deerflow", sources=[
        "bytedance/deer-flow backend/packages/harness/deerflow/config/summarization_config.py (SummarizationConfig)",
        "bytedance/deer-flow config.example.yaml, summarization:",
        "deerflow agents/middlewares/summarization_middleware.py create_summarization_middleware (a list trigger is "
        "OR, trim and prompt passed only when set)"])
    if s.trigger and any(isinstance(c, AllOf) for c in s.trigger):
        raise ConfigError("summarization.trigger: DeerFlow's config takes thresholds (any fires), not AND clauses "
                          f"({', '.join(str(c) for c in s.trigger)})", key="summarization.trigger")
    section: dict[str, Any] = {
        "enabled": _summarization_active(config),
        "model_name": s.model_name,
        "trigger": None if not s.trigger else [{"type": c.type, "value": c.value} for c in s.trigger
                                               if isinstance(c, ContextSize)],
        "keep": {"type": s.keep.type, "value": s.keep.value},
        "trim_tokens_to_summarize": s.trim_tokens_to_summarize,
        "summary_prompt": s.summary_prompt,
    }
    if s.skill_file_read_tool_names is not None:
        section["skill_file_read_tool_names"] = list(s.skill_file_read_tool_names)
    import yaml

    text = yaml.safe_dump({"summarization": section}, sort_keys=False, allow_unicode=True)
    out.files.append(ExportFile("config.yaml (DeerFlow)", "yaml", text))
    out.carried.append("summarization: enabled, model_name, trigger, keep, trim_tokens_to_summarize, summary_prompt "
                       "(DeerFlow's schema, which this project's config takes as is)")
    _general_not_carried(config, out, exclude=("summarization",))
    return out


def _keep_note(config: EngineConfig, out: AgentExport, agent: str) -> None:
    if _summarization_active(config) and not _compaction_active(config):
        out.not_carried.append(f"summarization.keep {config.summarization.keep}: {agent} decides what it keeps itself")


def _general_not_carried(config: EngineConfig, out: AgentExport, *, exclude: tuple[str, ...]) -> None:
    """Layers the config runs that this export does not carry."""
    skipped = [layer for layer in config.order if layer not in exclude and layer not in ("dangling", "memory", "recorded")
               and getattr(getattr(config, layer, None), "enabled", True)]
    if skipped:
        out.not_carried.append("layers this export does not carry (the agent runs its own): " + ", ".join(skipped))


_EXPORTERS = {"claude-code": _claude_code, "codex": _codex, "gemini-cli": _gemini, "openhands": _openhands,
              "deerflow": _deerflow, "langchain": _langchain, "deepagents": _deepagents}


def export_config(config: EngineConfig, target: str, *, window_tokens: int | None = None,
                  model: str | None = None) -> AgentExport:
    """`config` as `target`'s own configuration (see the module docstring for the keys and their sources)."""
    if target not in _EXPORTERS:
        raise ConfigError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}", key="--for")
    return _EXPORTERS[target](config, _window(config, window_tokens), model or config.model.name)


__all__ = ["AgentExport", "ExportFile", "TARGETS", "Threshold", "export_config", "threshold"]
