"""Claude Code session JSONL (`~/.claude/projects/<project>/<sessionId>.jsonl`) and its sub-agent files.

The importer only: `claude_code_records` reads the lines, `claude_code_session` turns the records
into a Thread (its docstring describes the message representation), `claude_code_subagents` finds
and attaches sub-agent and compaction-call files. Each imports only the ones before it, never this
module, so there is no import cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.claude_code_records import (
    FORMAT,
    Lines,
    Record,
    head_records,
    is_session_record,
    read_records,
)
from engine.formats.claude_code_session import scan, to_thread
from engine.formats.claude_code_subagents import (
    COMPACTION_PREFIX,
    attach_subagents,
    find_subagent_files,
    load_compaction_calls,
)
from engine.formats.source import Source, ThreadRef
from engine.thread.model import Thread

SNIFF_LINES = 20


def _is_subagent_file(rows: list[tuple[int, Record]]) -> bool:
    """A sub-agent's own file: every message record is a sidechain record."""
    seen = False
    for _, r in rows:
        if r.get("type") in ("user", "assistant"):
            if not r.get("isSidechain"):
                return False
            seen = True
    return seen


def compaction_call_of(source: Source, rows: list[tuple[int, Record]], tid: str) -> dict[str, Any]:
    """What an `agent-acompact-*` file is: the summarizer call Claude Code made to compact the session
    `sessionId` (its own model call, a fork of the conversation plus the compact prompt), not a
    session of its own. The parent's file is `<dir>/../../<sessionId>.jsonl` when the file sits in
    the session's `subagents/` folder (2.1.x), `<dir>/<sessionId>.jsonl` beside it (2.0.x)."""
    session_id = next((r["sessionId"] for _, r in rows if isinstance(r.get("sessionId"), str)), None)
    parent: str | None = None
    if source.path is not None and session_id and "/" not in session_id and not session_id.startswith("."):
        for candidate in (source.path.parent.parent.parent / f"{session_id}.jsonl",
                          source.path.parent / f"{session_id}.jsonl"):
            if candidate.is_file():
                parent = str(candidate)
                break
    return {"session_id": session_id, "agent_id": tid.removeprefix("agent-"), "parent_file": parent}


class _ClaudeCodeImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        if source.is_sqlite() or source.data.lstrip()[:1] != b"{":
            return False
        return any(is_session_record(v) for v in head_records(source, SNIFF_LINES))

    def _lines(self, source: Source) -> Lines:
        lines = read_records(source)
        if not any(is_session_record(r) for _, r in lines.rows):
            raise ThreadLoadError("no Claude Code session records (lines with type, sessionId and uuid)",
                                  path=source.label, format=FORMAT)
        return lines

    @staticmethod
    def _thread_id(source: Source, rows: list[tuple[int, Record]], sub: bool) -> str:
        for _, r in rows:
            if sub and isinstance(r.get("agentId"), str):
                return f"agent-{r['agentId']}"
            if not sub and isinstance(r.get("sessionId"), str):
                return r["sessionId"]
        return Path(source.label).stem

    def list_threads(self, source: Source) -> list[ThreadRef]:
        thread = self.load(source, None)
        return [ThreadRef(thread.thread_id, thread.title, len(thread.messages))]

    def load(self, source: Source, thread_id: str | None) -> Thread:
        lines = self._lines(source)
        rows = lines.rows
        subagent_file = _is_subagent_file(rows)
        tid = self._thread_id(source, rows, subagent_file)
        if thread_id is not None and thread_id != tid:
            raise ThreadNotFoundError(f"thread {thread_id!r} not found (this file holds {tid!r})",
                                      path=source.label, format=FORMAT)
        files = {} if subagent_file else find_subagent_files(source, rows)
        calls, recovered = load_compaction_calls(files)
        s = scan(rows, inline_sidechains=not subagent_file, recovered=recovered, ignored_progress=lines.ignored_progress)
        thread = to_thread(s, tid)
        if lines.unfinished is not None:
            thread.extra["unfinished_last_line"] = lines.unfinished
        if calls:
            thread.extra["compaction_calls"] = calls
        attach_subagents(thread, s, files)
        if subagent_file and tid.startswith(f"agent-{COMPACTION_PREFIX}"):
            thread.extra["compaction_call_of"] = compaction_call_of(source, rows, tid)
            thread.title = f"compaction call of session {thread.extra['compaction_call_of']['session_id']}"
        return thread


IMPORTER = _ClaudeCodeImporter()
