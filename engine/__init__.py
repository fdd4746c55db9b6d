"""Context Inspector's engine: load agent threads, count tokens, replay them through context layers.

    from engine import load_thread, preset, replay
    run = replay(load_thread("session.jsonl"), preset("stress"))
    print(run.totals())
"""

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
from engine.tokens import ApproximateCounter, TiktokenCounter, TokenCounter, counter_for_thread, get_counter
from engine.vfs import VirtualFilesystem

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
