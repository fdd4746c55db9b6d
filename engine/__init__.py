"""Context Inspector's engine: load agent threads, count tokens, replay them through context layers.

    from engine import load_thread, preset, replay
    run = replay(load_thread("session.jsonl"), preset("stress"))
    print(run.totals())
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.config import ContextSize, EngineConfig, load_config, preset
    from engine.errors import (
        ConfigError,
        ContextInspectorError,
        FileTooLargeError,
        ThreadLoadError,
        UnknownFormatError,
    )
    from engine.events import Event, EventRecorder, emit, recording
    from engine.formats import detect_format, list_threads, load_thread
    from engine.inspect import inspect_thread
    from engine.layers import ContextLayer, LayerContext, build_layers
    from engine.layers.dangling import DanglingToolCallLayer
    from engine.layers.filesystem import FilesystemLayer
    from engine.layers.input_context import InputContextLayer
    from engine.layers.memory import MemoryLayer
    from engine.layers.subagents import SubagentLayer
    from engine.layers.summarization import SummarizationLayer
    from engine.layers.todo import TodoReminderLayer
    from engine.replay import replay
    from engine.run import Run, StepRecord
    from engine.summarizers import LLMSummarizer, OfflineSummarizer, Summarizer
    from engine.thread import RecordedCompaction, RecordedEdit, RecordedUsage, Thread
    from engine.tokens import (
        ApproximateCounter,
        TiktokenCounter,
        TokenCounter,
        counter_for_thread,
        get_counter,
    )
    from engine.vfs import VirtualFilesystem

# Public name -> the module that defines it, imported on first use: `import engine.cli` (so
# `ctxi --help`) must not pay for LangChain's agent factory, numpy and the importers it does not use.
_EXPORTS: dict[str, str] = {
    "ApproximateCounter": "engine.tokens",
    "build_layers": "engine.layers",
    "ConfigError": "engine.errors",
    "ContextInspectorError": "engine.errors",
    "ContextLayer": "engine.layers",
    "ContextSize": "engine.config",
    "counter_for_thread": "engine.tokens",
    "DanglingToolCallLayer": "engine.layers.dangling",
    "detect_format": "engine.formats",
    "emit": "engine.events",
    "EngineConfig": "engine.config",
    "Event": "engine.events",
    "EventRecorder": "engine.events",
    "FilesystemLayer": "engine.layers.filesystem",
    "FileTooLargeError": "engine.errors",
    "get_counter": "engine.tokens",
    "InputContextLayer": "engine.layers.input_context",
    "inspect_thread": "engine.inspect",
    "LayerContext": "engine.layers",
    "list_threads": "engine.formats",
    "LLMSummarizer": "engine.summarizers",
    "load_config": "engine.config",
    "load_thread": "engine.formats",
    "MemoryLayer": "engine.layers.memory",
    "OfflineSummarizer": "engine.summarizers",
    "preset": "engine.config",
    "RecordedCompaction": "engine.thread",
    "RecordedEdit": "engine.thread",
    "RecordedUsage": "engine.thread",
    "recording": "engine.events",
    "replay": "engine.replay",
    "Run": "engine.run",
    "StepRecord": "engine.run",
    "SubagentLayer": "engine.layers.subagents",
    "SummarizationLayer": "engine.layers.summarization",
    "Summarizer": "engine.summarizers",
    "Thread": "engine.thread",
    "ThreadLoadError": "engine.errors",
    "TiktokenCounter": "engine.tokens",
    "TodoReminderLayer": "engine.layers.todo",
    "TokenCounter": "engine.tokens",
    "UnknownFormatError": "engine.errors",
    "VirtualFilesystem": "engine.vfs",
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


class _Engine(types.ModuleType):
    """`engine.replay` stays the function once the submodule of the same name is imported.

    Importing `engine.replay` (the module) binds it on its package; with lazy exports nothing would
    rebind the public function afterwards, so `from engine import replay` would return the module.
    """

    @property
    def replay(self) -> Any:
        return importlib.import_module("engine.replay").replay

    @replay.setter
    def replay(self, value: Any) -> None:
        pass  # the import system binding the submodule: `sys.modules["engine.replay"]` still has it


sys.modules[__name__].__class__ = _Engine
