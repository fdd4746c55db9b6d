"""Importers, one per source format, auto-detected; and exporters.

Every importer module defines `IMPORTER`, an object with `name`, `sniff(source) -> bool`,
`list_threads(source) -> list[ThreadRef]` and `load(source, thread_id) -> Thread`.
Detection tries them in `DETECTION_ORDER`; the first whose sniff accepts the source wins.

May import: base, thread, tokens.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from engine.base.errors import ThreadLoadError, ThreadNotFoundError, UnknownFormatError
from engine.base.gcpause import paused_gc, release_memory
from engine.formats.source import DEFAULT_MAX_BYTES, Importer, Source, ThreadRef
from engine.tokens.windows import model_window

if TYPE_CHECKING:  # a type only: `ctxi inspect --help` lists FORMATS without importing LangChain's messages
    from engine.thread.model import Thread

# Most specific shapes first: a database URL, a Claude Code JSONL line or a SQLite header is
# unambiguous, a bare list of {role, content} dicts is the loosest.
DETECTION_ORDER: tuple[str, ...] = (
    "langgraph_postgres",
    "native",
    "langgraph_sqlite",
    "claude_code",
    "cline",
    "inspect_ai",
    "codex",
    "vcr_cassette",
    "sse_response",
    "request_log",
    "openhands",
    "gemini_cli",
    "otel_genai",
    "langchain_dumpd",
    "langchain_dict",
    "openai_responses",
    "openai_chat",
    "anthropic",
    "swe_agent",
    "tau_bench",
    "openai_messages",
)

# The importers that read a database URL (Source.url) rather than bytes.
URL_FORMATS: tuple[str, ...] = ("langgraph_postgres",)

_MODULES: dict[str, str] = {name: f"engine.formats.{name}" for name in DETECTION_ORDER}


def importers() -> dict[str, Importer]:
    """All importers that are available, by format name, in detection order."""
    found: dict[str, Importer] = {}
    for name, module in _MODULES.items():
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                continue
            raise
        found[name] = mod.IMPORTER
    return found


FORMATS = DETECTION_ORDER


def max_bytes_default() -> int:
    env = os.environ.get("CTXI_MAX_BYTES")
    return int(env) if env and env.isdigit() else DEFAULT_MAX_BYTES


MIB = 1024 * 1024


def upload_limit_mib() -> int:
    """The largest file the dashboard takes, in MiB (Streamlit's `maxUploadSize` "megabytes" are MiB:
    its upload route multiplies by 1024 * 1024): the importers' own limit, rounded up."""
    return max(1, -(-max_bytes_default() // MIB))


def open_source(
    path: str | os.PathLike[str] | None = None,
    *,
    data: bytes | None = None,
    name: str | None = None,
    max_bytes: int | None = None,
) -> Source:
    """Wrap a file path or in-memory bytes (an upload) for the importers; enforces the size limit.

    A folder opens as the file an importer names for it (`folder_entry`: a Cline task folder opens
    as its api_conversation_history.json).
    """
    if data is None and path is not None and Path(path).is_dir():
        for imp in importers().values():
            entry = getattr(imp, "folder_entry", None)
            found = entry(Path(path)) if entry is not None else None
            if found is not None:
                path = found
                break
    return Source.open(path, data=data, name=name, max_bytes=max_bytes if max_bytes is not None else max_bytes_default())


def detect_format(source: Source) -> str:
    """The name of the first importer whose sniff accepts the source."""
    tried: list[str] = []
    problems: list[str] = []
    for name, imp in importers().items():
        tried.append(name)
        try:
            if imp.sniff(source):
                return name
        except ThreadLoadError as exc:
            problems.append(exc.message)
    parse_error = source.parse_error()
    if parse_error is not None:
        raise parse_error
    raise UnknownFormatError(path=source.label, tried=tried, detail="; ".join(problems[:1]))


def _importer(source: Source, format: str | None) -> tuple[str, Importer]:
    all_importers = importers()
    if format is None:
        name = detect_format(source)
        return name, all_importers[name]
    if format not in all_importers:
        raise ThreadLoadError(
            f"unknown format {format!r}; known formats: {', '.join(all_importers)}", path=source.label
        )
    if source.url is not None and format not in URL_FORMATS:
        raise ThreadLoadError(f"a database URL cannot be read as format {format!r}; it is read as "
                              f"{', '.join(URL_FORMATS)}", path=source.label)
    return format, all_importers[format]


def list_threads(
    path: str | os.PathLike[str] | None = None,
    *,
    data: bytes | None = None,
    name: str | None = None,
    format: str | None = None,
    max_bytes: int | None = None,
) -> list[ThreadRef]:
    """The threads a file holds (one for most formats; many for tau-bench or a SQLite database)."""
    source = open_source(path, data=data, name=name, max_bytes=max_bytes)
    label = source.label
    try:
        fmt, imp = _importer(source, format)
        refs = _guarded(lambda: imp.list_threads(source), source, fmt)
    except (ThreadLoadError, MemoryError) as exc:
        error = _failure(exc, label)
        memory = isinstance(exc, MemoryError)
    else:
        # imports the thread model (LangChain): not for `ctxi inspect --help`
        from engine.formats.surrogates import repair_refs

        return repair_refs(refs)
    release = memory or _may_be_large(source)
    source = None  # type: ignore[assignment]  # the error's traceback holds this frame: not the file
    raise _released(error, release)


def load_thread(
    path: str | os.PathLike[str] | None = None,
    *,
    data: bytes | None = None,
    name: str | None = None,
    format: str | None = None,
    thread_id: str | None = None,
    max_bytes: int | None = None,
) -> Thread:
    """Load one thread from a file or bytes, auto-detecting the format unless `format` is given."""
    source = open_source(path, data=data, name=name, max_bytes=max_bytes)
    label = source.label
    try:
        fmt, imp = _importer(source, format)
        with paused_gc():  # building many message objects: see engine.base.gcpause
            thread = _guarded(lambda: imp.load(source, thread_id), source, fmt)
    except (ThreadLoadError, MemoryError) as exc:
        error: ThreadLoadError | None = _failure(exc, label)
        memory = isinstance(exc, MemoryError)
    else:
        error = None
    if error is not None:
        release = memory or _may_be_large(source)
        source = None  # type: ignore[assignment]  # the error's traceback holds this frame: not the file
        raise _released(error, release)
    from engine.formats.surrogates import needs_repair, repair_thread

    if needs_repair(source, fmt, thread):  # unpaired surrogates, replaced and said
        repair_thread(thread)
    if not thread.source_format:
        thread.source_format = fmt
    if fmt != "native":  # our own JSON holds the thread exactly as it was imported
        apply_model_window(thread)
        mark_subagents(thread)
    return thread


def _failure(exc: BaseException, label: str) -> ThreadLoadError:
    if isinstance(exc, ThreadLoadError):
        return exc
    return ThreadLoadError("ran out of memory while reading it: the thread is too large for this machine", path=label)


# A failed load of fewer plain bytes than this cannot have held enough to be worth a full collection
# (which walks every live object: 75 ms in a test process, more in a server holding runs, per bad file).
RELEASE_AFTER_BYTES = 1 << 20


def _released(error: ThreadLoadError, release: bool) -> ThreadLoadError:
    """A load's error without what it kept alive, and the memory the failed load held given back.

    An error raised `from None` still holds the exception it replaced (`__context__`), whose traceback
    holds the frames that parsed the file and their locals (the document, the messages built so far):
    whoever keeps the error (a dashboard notice, a cached source) kept all of that. The heap is
    handed back after a MemoryError, a large input, or one that may expand (a zip archive, a SQLite
    file, a database URL; `_may_be_large`); a small text file that failed left nothing large behind."""
    error.__context__ = error.__cause__ = None
    error.__suppress_context__ = True
    error = error.with_traceback(None)
    if release:
        release_memory()
    return error


def _may_be_large(source: Source) -> bool:
    from engine.formats.inspect_ai_log import is_zip

    return len(source.data) >= RELEASE_AFTER_BYTES or source.url is not None or source.is_sqlite() or is_zip(source)


def mark_subagents(thread: Thread) -> None:
    """Each sub-agent transcript names its parent (`extra["subagent_of"]`: thread id and spawning tool
    call id), so a replay of it opened on its own runs as that framework's sub-agent would (Deep
    Agents gives its general-purpose sub-agent no `task` tool)."""
    for call_id, sub in thread.subagents.items():
        sub.extra.setdefault("subagent_of", {"thread": thread.thread_id, "tool_call_id": call_id})
        mark_subagents(sub)


def apply_model_window(thread: Thread) -> None:
    """A thread that names its model but records no window gets the model's (engine/data/models.yaml).

    `extra["window_source"]` is "model table" when the window came from there; a recorded window
    leaves it unset, and with neither the replay falls back to the config's window.
    """
    for sub in thread.subagents.values():
        apply_model_window(sub)
    if thread.max_input_tokens is not None:
        return
    window = model_window(thread.model)
    if window is not None:
        thread.max_input_tokens = window
        thread.extra["window_source"] = "model table"


def _guarded(fn, source: Source, fmt: str):  # type: ignore[no-untyped-def]
    """Turn anything an importer trips on into a ThreadLoadError naming file and format."""
    try:
        return fn()
    except (ThreadLoadError, ThreadNotFoundError):
        raise
    except RecursionError:
        raise ThreadLoadError("structure is nested too deeply to read", path=source.label, format=fmt) from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # pydantic's several lines (a message type refusing a field) become one (engine.formats.pydantic_text,
        # imported here: `ctxi inspect --help` imports this package and must not load LangChain)
        from pydantic import ValidationError

        from engine.formats.pydantic_text import error_detail

        suffix, detail = error_detail(exc)
        if isinstance(exc, ValidationError):
            detail = f"{exc.title}{suffix}: {detail}"
        raise ThreadLoadError(f"unexpected content ({detail})", path=source.label, format=fmt) from None


__all__ = [
    "DETECTION_ORDER",
    "FORMATS",
    "Source",
    "ThreadRef",
    "detect_format",
    "importers",
    "list_threads",
    "load_thread",
    "open_source",
    "Path",
]
