"""The presets: each reference system's defaults as config fields, with the source each value comes from.

`engine.config.schema.preset(name)` builds an `EngineConfig` from `preset_fields(name)`; every preset is
described in docs/config.md.
"""

from __future__ import annotations

from typing import Any

from engine.base.errors import ConfigError
from engine.config.sections import (
    DEFAULT_ORDER,
    CompactionConfig,
    ContextEditingConfig,
    DanglingConfig,
    FilesystemConfig,
    InputContextConfig,
    MemoryConfig,
    RecordedConfig,
    SubagentsConfig,
    SummarizationConfig,
    TodoConfig,
    TokensConfig,
)
from engine.config.sizes import ContextSize

# The coding agents' and providers' own compaction, each a policy in engine/policies/ (docs/config.md).
AGENT_PRESETS: tuple[str, ...] = ("claude-code", "codex", "gemini-cli", "cline", "openhands", "anthropic-compaction",
                                  "openai-compaction")
PRESETS: tuple[str, ...] = ("as-recorded", *AGENT_PRESETS, "deepagents", "langchain", "deerflow", "deerflow-head",
                            "stress")
# What a thread whose source recorded its usage or compactions opens on: what really happened.
RECORDED_PRESET = "as-recorded"
# The preset of each source agent's own compaction policy (engine/policies), by the importer's
# `source_format`: what its recorded sessions are measured against (the gauge, the reserved room on the
# as-recorded chart) and what stress mode lowers on them (OpenHands' condenser also takes a token trigger:
# `max_tokens`, engine/policies/openhands.py `limits`).
AGENT_PRESET_OF_FORMAT: dict[str, str] = {"claude_code": "claude-code", "codex": "codex", "gemini_cli": "gemini-cli",
                                          "cline": "cline", "openhands": "openhands"}
DEFAULT_PRESET = "deepagents"

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


def preset_fields(name: str) -> dict[str, Any]:
    """The `EngineConfig` fields of preset `name`, one reference system's defaults (docs/config.md);
    `engine.config.schema.preset(name)` builds the config from them."""
    if name == "as-recorded":
        # What the source agent sent: its recorded compactions and edits, nothing of ours added.
        return dict(preset="as-recorded", order=("recorded",), **_ALL_OFF)
    if name == "claude-code":
        # Claude Code's time-based microcompact, then its autocompact (engine/layers/context_editing_rules.py,
        # engine/policies/claude_code.py). Microcompact is gated by a GrowthBook flag: the recorded
        # sessions (Claude Code 2.1.39) did not microcompact after a 251-minute gap, so it ships off
        # (`context_editing.enabled=true` turns it on). Recorded compactions are what this policy
        # replaces, so they are not replayed.
        return dict(preset="claude-code", order=("context_editing", "compaction"),
                            recorded=RecordedConfig(enabled=False),
                            **{**_ALL_OFF, "context_editing": ContextEditingConfig(enabled=False, style="claude-code")})
    if name in AGENT_PRESETS:
        # One agent's (or provider's) compaction policy alone: its recorded compactions are what the
        # policy replaces, so they are not replayed.
        return dict(preset=name, order=("compaction",), recorded=RecordedConfig(enabled=False),
                            compaction=CompactionConfig.model_validate({"policy": name}), **_ALL_OFF)
    if name == "langchain":
        # LangChain 1.5.2's SummarizationMiddleware: default trigger None (never fires), keep 20
        # messages, trim 4000, count_tokens_approximately with usage scaling, no overflow fallback.
        # Its ContextEditingMiddleware([ClearToolUsesEdit()]) is configured but not in `order`:
        # create_agent adds none by default; `order: [summarization, context_editing]` adds it, and it
        # then decides with LangChain's own counter (engine/layers/context_editing.py `langchain_counter`).
        return dict(
            preset="langchain",
            tokens=TokensConfig(layer_counter="approximate"),
            order=("summarization",),
            context_editing=ContextEditingConfig(style="langchain"),
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
        # DeerFlow's lead agent (agents/lead_agent/agent.py): DanglingToolCall -> [HEAD: DurableContext] ->
        # Summarization -> Todo -> Memory -> [HEAD: SystemMessageCoalescing] -> SubagentLimit, config.example.yaml's summarization section, the files of the pinned
        # revision: v2.0-m0 (tag, summarization is LangChain 1.5's own class here) or HEAD f1f4af99b.
        # No result offload in either; counting is LangChain's count_tokens_approximately.
        return dict(
            preset=name,
            tokens=TokensConfig(layer_counter="approximate"),
            # HEAD adds DurableContext before summarization and SystemMessageCoalescing after memory
            order=(("dangling", "durable_context", "summarization", "todo", "memory", "coalesce", "subagents") if head
                   else ("dangling", "summarization", "todo", "memory", "subagents")),
            filesystem=FilesystemConfig(enabled=False),
            subagents=SubagentsConfig(max_concurrent=3, max_total=6 if head else None),
            summarization=SummarizationConfig(trigger=(ContextSize(type="tokens", value=32000 if head else 15564),),
                                              keep=ContextSize(type="messages", value=10),
                                              trim_tokens_to_summarize=15564, mode="state", overflow_fallback=False,
                                              style="deerflow-head" if head else "langchain"),
            todo=TodoConfig(enabled=True, style="deerflow-head" if head else "deerflow", system_prompt=True, tool=True),
            dangling=DanglingConfig(style="deerflow-head" if head else "deerflow", drop_orphans=head),
            memory=MemoryConfig(max_injection_tokens=2000),
            input_context=InputContextConfig(base_prompt=False, tool_prompts=False),
        )
    if name == "deepagents":
        # deepagents 0.7.32 `create_deep_agent(model, tools, system_prompt=...)` with a model profile:
        # trigger 0.85 / keep 0.10 of the window, no trimming, count_tokens_approximately; the
        # system prompt is the caller's alone (no base or tool prompts); no memory unless memory=. Its
        # own tools (filesystem + `task`) go with every request, ahead of the caller's, and count in
        # its triggers (engine/layers/agent_tools.py).
        return dict(
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
            input_context=InputContextConfig(base_prompt=False, tool_prompts=False, agent_tools="deepagents"),
        )
    if name == "stress":
        # Force compaction early (the references' evals run at 10-25 % of the window): every layer on,
        # measured with the run's own counter, our prompt parts shown; not any one framework.
        deep = preset_fields("deepagents")
        filesystem = deep.get("filesystem", FilesystemConfig())
        return {
            **deep,
            "preset": "stress",
            "tokens": TokensConfig(),
            "memory": MemoryConfig(),
            "input_context": InputContextConfig(),
            "order": DEFAULT_ORDER,
            "summarization": deep["summarization"].model_copy(update={
                "trigger": (ContextSize(type="fraction", value=0.25),),
                "keep": ContextSize(type="fraction", value=0.05)}),
            "filesystem": filesystem.model_copy(update={
                "truncate_args": filesystem.truncate_args.model_copy(update={
                    "trigger": ContextSize(type="fraction", value=0.25)})}),
            "todo": TodoConfig(enabled=True),
            "subagents": SubagentsConfig(max_concurrent=3),
        }
    raise ConfigError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}", key="preset")


def default_preset_name(thread: Any = None) -> str:
    """The preset a thread opens on: `as-recorded` when its source recorded what it sent (usage per
    call, compactions or context edits), else the default what-if preset."""
    if thread is not None and (getattr(thread, "usage", None) or getattr(thread, "compactions", None)
                               or getattr(thread, "edits", None)):
        return RECORDED_PRESET
    return DEFAULT_PRESET
