"""Every text of a loaded thread made encodable: unpaired UTF-16 surrogates replaced with U+FFFD, and said.

Issue 38.3: valid JSON holding `"\\ud800"` (in a message, a tool argument, an id) ended in "internal
error: UnicodeEncodeError" in every importer. The repair runs on the Thread an importer made, not inside
one parser, because importers parse JSON again from strings inside the file (OpenAI `arguments`, OTel
attributes, Codex function calls), read YAML, SQLite rows and zip members, and other files beside the
one given (Claude Code sub-agents, Cline's task files). The same replacement everywhere keeps ids equal
to the keys that name them (`usage`, `timestamps`, tool call ids).

A text file none of whose bytes spell a surrogate (engine.base.surrogates.may_hold_surrogates) and an
importer that read nothing else cannot hold one: its thread is not walked.
"""

from __future__ import annotations

from typing import Any

from engine.base.surrogates import Scrubber, may_hold_surrogates
from engine.formats.source import Source, ThreadRef
from engine.thread.model import RecordedCompaction, RecordedEdit, Thread, add_load_warning

# Importers that read more than the bytes they were given (files beside it, a database, zip members;
# OpenHands: the state file beside the events, or the events beside the state file), or that decode
# more than JSON text before parsing it (a stream's partial JSON joined from chunks: one chunk may end in
# `\\` and the next begin with `ud800`; base64 or gzip bodies of cassettes and OTel attributes): their
# threads are always walked.
READS_MORE_THAN_THE_FILE = frozenset({"claude_code", "cline", "inspect_ai", "langgraph_sqlite", "langgraph_postgres",
                                      "openhands", "otel_genai", "request_log", "sse_response", "vcr_cassette"})


def needs_repair(source: Source, format: str, thread: Thread | None = None) -> bool:
    """Whether the thread read from `source` may hold a surrogate (see the module docstring)."""
    if format in READS_MORE_THAN_THE_FILE or source.url is not None or not source.data:
        return True
    if thread is not None and thread.subagents:
        return True
    return may_hold_surrogates(source.data)


def repair_thread(thread: Thread) -> None:
    """Replace unpaired surrogates everywhere in `thread` (and its sub-agents); one warning line when any was."""
    scrub = Scrubber()
    _thread(scrub, thread, "")
    if scrub.replaced:
        s = "" if scrub.replaced == 1 else "s"
        add_load_warning(thread, f"replaced {scrub.replaced:,} unpaired UTF-16 surrogate{s} (\\ud800–\\udfff: not "
                                 f"text, no UTF-8 encoding) with U+FFFD; the first in {scrub.first}")


def repair_refs(refs: list[ThreadRef]) -> list[ThreadRef]:
    """Thread refs whose ids and titles hold no unpaired surrogate."""
    scrub = Scrubber()
    out = []
    for ref in refs:
        tid = scrub.text(ref.thread_id, "thread id") if isinstance(ref.thread_id, str) else ref.thread_id
        title = scrub.text(ref.title, "title") if isinstance(ref.title, str) else ref.title
        out.append(ref if tid is ref.thread_id and title is ref.title else ThreadRef(tid, title, ref.messages))
    return out


def _thread(scrub: Scrubber, thread: Thread, prefix: str) -> None:
    for name in ("thread_id", "model", "system_prompt", "title"):
        value = getattr(thread, name)
        if isinstance(value, str):
            setattr(thread, name, scrub.text(value, f"{prefix}{name.replace('_', ' ')}"))
    for i, message in enumerate(thread.messages):
        _message(scrub, message, f"{prefix}message {i}")
    scrub.value(thread.tools, f"{prefix}the tool definitions")
    scrub.value(thread.todos, f"{prefix}the todo list")
    if any(isinstance(k, str) and not k.isascii() for k in thread.usage):
        thread.usage = {scrub.text(k, f"{prefix}usage"): v for k, v in thread.usage.items()}
    for usage in thread.usage.values():
        for name in ("timestamp", "model"):
            value = getattr(usage, name)
            if isinstance(value, str):
                setattr(usage, name, scrub.text(value, f"{prefix}usage"))
    thread.timestamps = scrub.value(thread.timestamps, f"{prefix}timestamps")
    for c in thread.compactions:
        _compaction(scrub, c, f"{prefix}recorded compaction at message {c.index}")
    for e in thread.edits:
        _edit(scrub, e, f"{prefix}recorded edit at message {e.index}")
    scrub.value(thread.extra, f"{prefix}what the importer recorded beside the messages")
    subagents = {}
    for call_id, sub in thread.subagents.items():
        _thread(scrub, sub, f"sub-agent {scrub.text(call_id, 'sub-agent id')}: ")
        subagents[scrub.text(call_id, "sub-agent id")] = sub
    thread.subagents = subagents


def _message(scrub: Scrubber, message: Any, place: str) -> None:
    fields = message.__dict__
    for name, value in fields.items():
        if value is None or isinstance(value, (int, float, bool)):
            continue
        fixed = scrub.value(value, f"{place} {name.replace('_', ' ')}")
        if fixed is not value:
            fields[name] = fixed  # as read: no validation to run again on a string that only lost surrogates


def _compaction(scrub: Scrubber, c: RecordedCompaction, place: str) -> None:
    for name in ("summary", "message_id", "trigger", "source", "kind"):
        value = getattr(c, name)
        if isinstance(value, str):
            setattr(c, name, scrub.text(value, place))
    for i, message in enumerate(c.replacement or []):
        _message(scrub, message, f"{place}, replacement message {i}")


def _edit(scrub: Scrubber, e: RecordedEdit, place: str) -> None:
    for name in ("kind", "placeholder", "trigger", "message_id", "source"):
        value = getattr(e, name)
        if isinstance(value, str):
            setattr(e, name, scrub.text(value, place))
    e.tool_call_ids = scrub.value(e.tool_call_ids, place)
    e.message_ids = scrub.value(e.message_ids, place)
