"""Context Inspector's engine: load agent threads, count tokens, replay them through context layers."""

from engine.errors import ConfigError, ContextInspectorError, FileTooLargeError, ThreadLoadError, UnknownFormatError
from engine.events import Event, EventRecorder, emit, recording
from engine.formats import detect_format, list_threads, load_thread
from engine.thread import RecordedCompaction, RecordedUsage, Thread
from engine.tokens import ApproximateCounter, TiktokenCounter, TokenCounter, get_counter
from engine.vfs import VirtualFilesystem

__all__ = [
    "ApproximateCounter",
    "ConfigError",
    "ContextInspectorError",
    "Event",
    "EventRecorder",
    "FileTooLargeError",
    "RecordedCompaction",
    "RecordedUsage",
    "Thread",
    "ThreadLoadError",
    "TiktokenCounter",
    "TokenCounter",
    "UnknownFormatError",
    "VirtualFilesystem",
    "detect_format",
    "emit",
    "get_counter",
    "list_threads",
    "load_thread",
    "recording",
]
