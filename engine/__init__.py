"""Context Inspector's engine: load agent threads, count tokens, replay them through context layers.

    from engine import load_thread, preset, replay
    run = replay(load_thread("session.jsonl"), preset("stress"))
    print(run.totals())
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.base.errors import (
        ConfigError,
        ContextInspectorError,
        FileTooLargeError,
        ThreadLoadError,
        UnknownFormatError,
    )
    from engine.config.loading import load_config
    from engine.config.schema import EngineConfig, preset
    from engine.config.sizes import ContextSize
    from engine.formats import detect_format, list_threads, load_thread
    from engine.layers import ContextLayer, LayerContext, build_layers
    from engine.layers.dangling import DanglingToolCallLayer
    from engine.layers.filesystem import FilesystemLayer
    from engine.layers.input_context import InputContextLayer
    from engine.layers.memory import MemoryLayer
    from engine.layers.subagents import SubagentLayer
    from engine.layers.summarization import SummarizationLayer
    from engine.layers.todo import TodoReminderLayer
    from engine.recorded.inspect import inspect_thread
    from engine.run.replay import replay
    from engine.run.run import Run, StepRecord
    from engine.summarizers.llm import LLMSummarizer
    from engine.summarizers.offline import OfflineSummarizer
    from engine.summarizers.protocol import Summarizer
    from engine.thread.events import Event, EventRecorder, emit, recording
    from engine.thread.model import RecordedCompaction, RecordedEdit, RecordedUsage, Thread
    from engine.tokens.counters import (
        ApproximateCounter,
        TiktokenCounter,
        TokenCounter,
        counter_for_thread,
        get_counter,
    )
    from engine.workspace.vfs import VirtualFilesystem

# Public name -> the module that defines it, imported on first use: `import engine.cli` (so
# `ctxi --help`) must not pay for LangChain's agent factory, numpy and the importers it does not use.
_EXPORTS: dict[str, str] = {
    "ApproximateCounter": "engine.tokens.counters",
    "build_layers": "engine.layers",
    "ConfigError": "engine.base.errors",
    "ContextInspectorError": "engine.base.errors",
    "ContextLayer": "engine.layers",
    "ContextSize": "engine.config.sizes",
    "counter_for_thread": "engine.tokens.counters",
    "DanglingToolCallLayer": "engine.layers.dangling",
    "detect_format": "engine.formats",
    "emit": "engine.thread.events",
    "EngineConfig": "engine.config.schema",
    "Event": "engine.thread.events",
    "EventRecorder": "engine.thread.events",
    "FilesystemLayer": "engine.layers.filesystem",
    "FileTooLargeError": "engine.base.errors",
    "get_counter": "engine.tokens.counters",
    "InputContextLayer": "engine.layers.input_context",
    "inspect_thread": "engine.recorded.inspect",
    "LayerContext": "engine.layers",
    "list_threads": "engine.formats",
    "LLMSummarizer": "engine.summarizers.llm",
    "load_config": "engine.config.loading",
    "load_thread": "engine.formats",
    "MemoryLayer": "engine.layers.memory",
    "OfflineSummarizer": "engine.summarizers.offline",
    "preset": "engine.config.schema",
    "RecordedCompaction": "engine.thread.model",
    "RecordedEdit": "engine.thread.model",
    "RecordedUsage": "engine.thread.model",
    "recording": "engine.thread.events",
    "replay": "engine.run.replay",
    "Run": "engine.run.run",
    "StepRecord": "engine.run.run",
    "SubagentLayer": "engine.layers.subagents",
    "SummarizationLayer": "engine.layers.summarization",
    "Summarizer": "engine.summarizers.protocol",
    "Thread": "engine.thread.model",
    "ThreadLoadError": "engine.base.errors",
    "TiktokenCounter": "engine.tokens.counters",
    "TodoReminderLayer": "engine.layers.todo",
    "TokenCounter": "engine.tokens.counters",
    "UnknownFormatError": "engine.base.errors",
    "VirtualFilesystem": "engine.workspace.vfs",
}


__all__ = [
    "ApproximateCounter",
    "ConfigError",
    "ContextInspectorError",
    "ContextLayer",
    "ContextSize",
    "DanglingToolCallLayer",
    "EngineConfig",
    "Event",
    "EventRecorder",
    "FileTooLargeError",
    "FilesystemLayer",
    "InputContextLayer",
    "LLMSummarizer",
    "LayerContext",
    "MemoryLayer",
    "OfflineSummarizer",
    "RecordedCompaction",
    "RecordedEdit",
    "RecordedUsage",
    "Run",
    "StepRecord",
    "SubagentLayer",
    "SummarizationLayer",
    "Summarizer",
    "Thread",
    "ThreadLoadError",
    "TiktokenCounter",
    "TodoReminderLayer",
    "TokenCounter",
    "UnknownFormatError",
    "VirtualFilesystem",
    "build_layers",
    "counter_for_thread",
    "detect_format",
    "emit",
    "get_counter",
    "inspect_thread",
    "list_threads",
    "load_config",
    "load_thread",
    "preset",
    "recording",
    "replay",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
