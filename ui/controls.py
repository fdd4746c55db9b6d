"""Pure config edits behind the sidebar controls (no Streamlit here, so each edit is unit-tested)."""

from __future__ import annotations

from engine.config.schema import EngineConfig, preset
from engine.config.settings import with_layer
from engine.config.sizes import AllOf, ContextSize
from engine.views.timeline import resolve_tokens

SIZE_TYPES: tuple[str, ...] = ("fraction", "tokens", "messages")
# what a new clause of each type starts at when converting from nothing better
DEFAULT_MESSAGES = 50


def convert_size(size: ContextSize, new_type: str, window_tokens: int) -> ContextSize:
    """Keep the same level when switching a threshold's type (fraction <-> tokens); messages start at 50."""
    if new_type == size.type:
        return size
    if new_type == "messages":
        return ContextSize(type="messages", value=DEFAULT_MESSAGES)
    tokens = resolve_tokens(size, window_tokens)
    if tokens is None:  # from messages: start at half the window
        tokens = window_tokens // 2
    if new_type == "tokens":
        return ContextSize(type="tokens", value=max(1, tokens))
    fraction = min(1.0, max(0.01, round(tokens / window_tokens, 2))) if window_tokens else 0.5
    return ContextSize(type="fraction", value=fraction)


def _with_summarization(config: EngineConfig, update: dict[str, object]) -> EngineConfig:
    d = config.to_dict()
    s = d["summarization"]
    for k, v in update.items():
        s[k] = _plain(v)
    return EngineConfig.from_dict(d, source="sidebar")


def _plain(v: object) -> object:
    if isinstance(v, ContextSize | AllOf):
        return v.model_dump(mode="json")
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    return v


def trigger_clauses(config: EngineConfig) -> list[ContextSize | AllOf]:
    return list(config.summarization.trigger or ())


def set_trigger_clause(config: EngineConfig, index: int, clause: ContextSize) -> EngineConfig:
    clauses = trigger_clauses(config)
    clauses[index] = clause
    return _with_summarization(config, {"trigger": clauses})


def remove_trigger_clause(config: EngineConfig, index: int) -> EngineConfig:
    """Removing the last clause leaves no trigger: summarization never fires (LangChain's default)."""
    clauses = trigger_clauses(config)
    del clauses[index]
    return _with_summarization(config, {"trigger": clauses or None})


def add_trigger_clause(config: EngineConfig, window_tokens: int) -> EngineConfig:
    """A new clause: 85 % of the window if none yet, else a message count (a different kind of limit)."""
    clauses = trigger_clauses(config)
    if not clauses:
        new = ContextSize(type="fraction", value=0.85)
    elif not any(isinstance(c, ContextSize) and c.type == "messages" for c in clauses):
        new = ContextSize(type="messages", value=DEFAULT_MESSAGES)
    else:
        new = ContextSize(type="tokens", value=max(1, window_tokens // 2))
    return _with_summarization(config, {"trigger": [*clauses, new]})


def set_keep(config: EngineConfig, keep: ContextSize) -> EngineConfig:
    return _with_summarization(config, {"keep": keep})


def set_mode(config: EngineConfig, mode: str) -> EngineConfig:
    return _with_summarization(config, {"mode": mode})


def set_compaction_trigger(config: EngineConfig, trigger: ContextSize | None) -> EngineConfig:
    """A coding-agent policy's threshold: None = the policy's own (e.g. Claude Code's window − 33k)."""
    d = config.to_dict()
    d["compaction"]["trigger"] = _plain(trigger) if trigger is not None else None
    return EngineConfig.from_dict(d, source="sidebar")


def set_window(config: EngineConfig, window_tokens: int | None) -> EngineConfig:
    d = config.to_dict()
    d["model"]["max_input_tokens"] = window_tokens
    return EngineConfig.from_dict(d, source="sidebar")


def set_counter(config: EngineConfig, counter: str) -> EngineConfig:
    d = config.to_dict()
    d["tokens"]["counter"] = counter
    return EngineConfig.from_dict(d, source="sidebar")


def set_layer(config: EngineConfig, name: str, on: bool) -> EngineConfig:
    return with_layer(config, name, on)


def switch_preset(config: EngineConfig, name: str) -> EngineConfig:
    """A preset's layers, thresholds and counting, keeping the user's window, token counter and own
    middleware (which then runs after the preset's layers).

    Only the counter the user picked (`tokens.counter`) is kept of the `tokens` section: what a framework
    decides with (`layer_counter`) and whether counts are calibrated belong to the preset. Keeping the whole
    section carried as-recorded's `layer_counter: null` into `deepagents`, a run no `?preset=deepagents` link
    gives (issue 31: one preset name, one run and one URL)."""
    base = preset(name)
    d = base.to_dict()
    mine = config.to_dict()
    d["model"] = mine["model"]
    d["tokens"] = {**d["tokens"], "counter": mine["tokens"]["counter"]}
    d["middleware"] = mine["middleware"]
    return EngineConfig.from_dict(d, source="sidebar")
