"""The context layers, one module each; `build_layers` turns a config into middleware instances.

May import: base, thread, tokens, config, recorded, summarizers, workspace, policies.
"""

from __future__ import annotations

import importlib
from typing import Any

from langchain.agents.middleware import AgentMiddleware

from engine.config.schema import EngineConfig
from engine.config.sections import BUILTIN_LAYERS
from engine.layers.approximate import ANTHROPIC_CHARS_PER_TOKEN
from engine.layers.base import ContextLayer, LayerContext
from engine.layers.user import load_middleware, observe
from engine.tokens.counters import TokenCounter, approximate_counter, counter_for_thread, framing_for_thread

# layer name -> (module, class name)
LAYER_CLASSES: dict[str, tuple[str, str]] = {
    "input_context": ("engine.layers.input_context", "InputContextLayer"),
    "recorded": ("engine.layers.recorded", "RecordedLayer"),
    "compaction": ("engine.layers.compaction", "CompactionLayer"),
    "filesystem": ("engine.layers.filesystem", "FilesystemLayer"),
    "subagents": ("engine.layers.subagents", "SubagentLayer"),
    "summarization": ("engine.layers.summarization", "SummarizationLayer"),
    "context_editing": ("engine.layers.context_editing", "ContextEditingLayer"),
    "todo": ("engine.layers.todo", "TodoReminderLayer"),
    "dangling": ("engine.layers.dangling", "DanglingToolCallLayer"),
    "memory": ("engine.layers.memory", "MemoryLayer"),
    "durable_context": ("engine.layers.durable_context", "DurableContextLayer"),
    "coalesce": ("engine.layers.durable_context", "SystemCoalescingLayer"),
}


def layer_class(name: str) -> type[ContextLayer] | None:
    """The class for a layer name, or None while that layer's module is not there."""
    module, cls = LAYER_CLASSES[name]
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None
        raise
    return getattr(mod, cls)


def layer_counter(name: str, thread: Any = None) -> TokenCounter:
    """The counter named by `tokens.layer_counter` for this thread.

    "approximate" follows LangChain's `_get_approximate_token_counter`: 3.3 characters per token
    for Anthropic models (the thread's framing says which), else 4.
    """
    if name == "approximate":
        return approximate_counter(ANTHROPIC_CHARS_PER_TOKEN if framing_for_thread(thread) == "anthropic" else 4.0)
    return counter_for_thread(thread, name)


def build_layers(config: EngineConfig, context: LayerContext) -> list[AgentMiddleware]:
    """Middleware instances in LangChain list order (first = outermost wrap_*).

    Input-context assembly always comes first, so every other layer sees the assembled prompt.
    The user's own middleware (`config.middleware`) is loaded where `order` places it and wrapped
    so its effect is recorded as events (engine.layers.user); a bad one raises ConfigError.
    """
    if context.layer_counter is None and config.tokens.layer_counter is not None:
        context.layer_counter = layer_counter(config.tokens.layer_counter, context.thread)
    layers: list[AgentMiddleware] = []
    for name in ("input_context", *config.layer_sequence()):
        spec = config.middleware_spec(name) if name not in BUILTIN_LAYERS else None
        if spec is not None:
            index = config.middleware.index(spec)
            layers.append(observe(load_middleware(spec, context, key=f"middleware.{index}"), context, name=name))
            continue
        section = getattr(config, name, None)
        if section is not None and getattr(section, "enabled", True) is False:
            continue
        cls = layer_class(name)
        if cls is None:
            continue
        layers.append(cls.from_config(config, context))  # type: ignore[attr-defined]
    return layers


__all__ = ["ContextLayer", "LayerContext", "LAYER_CLASSES", "build_layers", "layer_class", "layer_counter"]
