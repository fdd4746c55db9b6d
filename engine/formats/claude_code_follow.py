"""A Claude Code session followed as it grows: records fed as they are appended, a Thread per update.

The scan is the importer's (`claude_code_session.feed`): the same records give the same messages. A
new Thread is built from the first message that changed since the previous one (new records, a
streamed reply that took another block, a rewind): every message before it is the very same object
as in the previous Thread, and so are its `RecordedUsage` (speed's resume relies on it, docs/sessions.md),
so building costs what the new lines bring, not the length of the session.

Sub-agents are attached again only when something they depend on changed (a sub-agent file grew, a
`Task` result named an agent, progress or sidechain records came); else the previous Threads are kept.
A compaction call's file (`agent-acompact-*`) holds hook messages that belong earlier in the history:
when one appears while following, `needs_rescan` says so and the follower reads the session again once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from engine.formats.claude_code_records import Record
from engine.formats.claude_code_session import (
    FORMAT,
    SYNTHETIC_MODEL,
    Session,
    _compaction,
    _Reply,
    feed,
    new_session,
)
from engine.formats.claude_code_subagents import COMPACTION_PREFIX, attach_subagents, load_compaction_calls
from engine.thread.model import RecordedCompaction, RecordedUsage, Thread
from engine.tokens.windows import model_window


def _recovered(message: BaseMessage) -> bool:
    return bool(message.additional_kwargs.get("claude_code_recovered_from") == "compaction_call")


def _ai_message(reply: _Reply) -> AIMessage:
    """The importer's AIMessage for a reply, on copies of its lists (the reply may still grow)."""
    content: str | list[Any]
    if all(b.get("type") == "text" for b in reply.blocks):
        content = "".join(str(b.get("text", "")) for b in reply.blocks)
    else:
        content = [dict(b) for b in reply.blocks]
    metadata: dict[str, Any] = {"model": reply.model} if reply.model else {}
    return AIMessage(content=content, tool_calls=[dict(tc) for tc in reply.tool_calls], id=reply.message_id,
                     response_metadata=metadata)


@dataclass
class ClaudeCodeFollow:
    """The scan of one followed session and the last Thread built from it."""

    thread_id: str
    subagent_files: dict[str, Path] = field(default_factory=dict)
    session: Session | None = None
    # what the last build produced, for the next one
    items_built: int = 0
    messages: list[BaseMessage] = field(default_factory=list)
    usage: dict[str, RecordedUsage] = field(default_factory=dict)
    timestamps: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    largest_context: int = 0
    subagents: dict[str, Thread] = field(default_factory=dict)
    subagent_key: tuple[Any, ...] = ()
    compaction_calls: list[dict[str, Any]] = field(default_factory=list)
    needs_rescan: bool = False
    recovered: int = 0  # hook messages put back from the compaction call among `messages`

    def start(self, files: dict[str, Path]) -> None:
        """A fresh scan, with the compaction calls' hook messages the session file never stored."""
        self.subagent_files = dict(files)
        calls, recovered = load_compaction_calls(files)
        self.compaction_calls = calls
        self.session = new_session(inline_sidechains=True, recovered=recovered)
        self.items_built, self.messages, self.usage, self.timestamps = 0, [], {}, {}
        self.model, self.largest_context, self.subagents, self.subagent_key = None, 0, {}, ()
        self.needs_rescan, self.recovered = False, 0

    def feed(self, rows: list[tuple[int, Record]], ignored_progress: int = 0) -> None:
        """More records; `ignored_progress`: progress lines the reader set aside unparsed (as the importer does)."""
        assert self.session is not None
        if ignored_progress:
            self.session.skipped["progress"] += ignored_progress
        feed(self.session, rows)

    def set_subagent_files(self, files: dict[str, Path]) -> None:
        """The sub-agent files now beside the session; a new compaction call asks for a rescan."""
        new_calls = {a for a in files if a.startswith(COMPACTION_PREFIX)} - {
            a for a in self.subagent_files if a.startswith(COMPACTION_PREFIX)}
        if new_calls:
            self.needs_rescan = True
        self.subagent_files = dict(files)

    def first_change(self) -> int:
        """The first item (position in the message list) that differs from the last Thread built."""
        s = self.session
        assert s is not None
        first = self.items_built
        if s.cut_to is not None:
            first = min(first, s.cut_to)
        for mid in s.touched:
            reply = s.replies.get(mid)
            if reply is not None:
                first = min(first, reply.index)
        return first

    def thread(self) -> tuple[Thread, int]:
        """A Thread of everything fed so far, and the index of its first message that is new or changed."""
        s = self.session
        assert s is not None
        first = self.first_change()
        self.recovered -= sum(1 for m in self.messages[first:] if _recovered(m))
        messages = self.messages[:first]
        # One usage and one timestamps dict serve every Thread of the session, extended in place: a copy per
        # poll would make each new line cost the session's length. An earlier Thread may thus see entries of
        # messages it does not hold (never a different entry for a message it holds, unless that reply took
        # more streamed records since: then its usage is the reply's latest, as the file now says).
        usage, timestamps = self.usage, self.timestamps
        for m in self.messages[first:]:
            if m.id is not None:
                usage.pop(m.id, None)
                timestamps.pop(m.id, None)
        for item in s.items[first:]:
            message: BaseMessage
            if isinstance(item, _Reply):
                message = _ai_message(item)
                if item.usage is not None:
                    recorded = replace(item.usage, timestamp=s.timestamps.get(item.message_id), model=item.model)
                    usage[item.message_id] = recorded
                    self.largest_context = max(self.largest_context, recorded.context_tokens or 0)
                if self.model is None and item.model and item.model != SYNTHETIC_MODEL:
                    self.model = item.model
            else:
                message = item
            messages.append(message)
            self.recovered += _recovered(message)
            if message.id is not None and message.id in s.timestamps:
                timestamps[message.id] = s.timestamps[message.id]
        self.items_built = len(s.items)
        self.messages = messages
        s.touched.clear()
        s.cut_to = None
        # what the end of the file would flush (importer's `finish`), without changing the scan
        view = messages + list(s.pending) if s.pending else messages
        compactions: list[RecordedCompaction] = list(s.compactions)
        if s.pending_boundary is not None:
            boundary = s.pending_boundary
            cut = _compaction(s, boundary, "", str(boundary.get("uuid") or "") or None)
            cut.index = len(s.items) + len(s.pending)
            compactions.append(cut)
        extra: dict[str, Any] = {"skipped_records": dict(sorted(s.skipped.items())), "followed": True}
        recovered = self.recovered + sum(1 for m in s.pending if _recovered(m))
        if recovered:
            extra["recovered_hook_messages"] = recovered
        for key, value in (("api_errors", s.api_errors), ("rewound", s.rewound)):
            if value:
                extra[key] = list(value)
        if self.compaction_calls:
            extra["compaction_calls"] = self.compaction_calls
        thread = Thread(
            thread_id=self.thread_id, messages=view, source_format=FORMAT, model=self.model,
            max_input_tokens=self._window(extra), todos=list(s.todos), usage=usage, compactions=compactions,
            edits=list(s.microcompactions), timestamps=timestamps,
            title=s.custom_title or s.ai_title or s.summary_title or s.title, extra=extra)
        thread.subagents = self._subagents(thread)
        return thread, first

    def _window(self, extra: dict[str, Any]) -> int | None:
        """The importer's `_window` rule, on the running largest recorded request."""
        window = model_window(self.model, agent="claude_code")
        api = model_window(self.model)
        if window is not None and api is not None and self.largest_context > window and api > window:
            extra["window_source"] = f"recorded input ({self.largest_context:,}) above Claude Code's default {window:,}"
            return api
        return window

    def _subagents(self, thread: Thread) -> dict[str, Thread]:
        s = self.session
        assert s is not None
        stats = []
        for agent_id, path in sorted(self.subagent_files.items()):
            try:
                st = os.stat(path)
                stats.append((agent_id, st.st_size, st.st_mtime_ns))
            except OSError:
                stats.append((agent_id, -1, 0))
        key = (tuple(stats), len(s.agent_by_call), sum(len(v) for v in s.progress_records.values()), len(s.sidechain))
        if key != self.subagent_key:
            probe = Thread(thread_id=thread.thread_id, messages=thread.messages)
            attach_subagents(probe, s, self.subagent_files)
            self.subagents = probe.subagents
            self.subagent_key = key
            if probe.extra.get("subagent_errors"):
                thread.extra["subagent_errors"] = probe.extra["subagent_errors"]
        return dict(self.subagents)


__all__ = ["ClaudeCodeFollow"]
