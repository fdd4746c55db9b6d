"""Claude Code sub-agent and compaction-call files, attached to the session they belong to.

Sub-agents live in `<dir of the session file>/<sessionId>/subagents/agent-<agentId>.jsonl` (Claude
Code 2.0.x put them beside the session file, `agent-<agentId>.jsonl` with the parent's sessionId). Each is
linked to the `Task` call that spawned it by the tool result's `toolUseResult.agentId` or by the
session's `agent_progress` records (`parentToolUseID`, `data.agentId`). Those progress records also
carry every message of the run, so a sub-agent is rebuilt from them when its file is absent (an
upload has no folder next to it). Older sessions wrote sub-agents inline as `isSidechain` records.

`agent-acompact-*` is the compaction summarizer's own call, not a sub-agent: it is kept in
`Thread.extra["compaction_calls"]`, and the hook messages it recorded (`isMeta` user records the
main file never stored) are handed back to the session scan so the thread holds what the model saw.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.base.errors import ThreadLoadError
from engine.base.files import RefusedFile, open_regular
from engine.formats.claude_code_records import Record, read_records
from engine.formats.claude_code_session import Session, records_to_thread, text_of
from engine.formats.source import Source
from engine.thread.model import Thread

COMPACTION_PREFIX = "acompact"
TASK_TOOLS = ("Task", "Agent")


def find_subagent_files(source: Source, rows: list[tuple[int, Record]]) -> dict[str, Path]:
    """`{agentId: path}` of the session's sub-agent files (none for an upload without a path)."""
    if source.path is None:
        return {}
    session_id = next((r["sessionId"] for _, r in rows if isinstance(r.get("sessionId"), str)), None)
    if not session_id or "/" in session_id or session_id.startswith("."):
        return {}
    files = {p.stem.removeprefix("agent-"): p for p in sorted(source.path.parent.glob("agent-*.jsonl"))
             if p != source.path and _first_session_id(p) == session_id}
    folder = source.path.parent / session_id / "subagents"
    if folder.is_dir():
        files.update((p.stem.removeprefix("agent-"), p) for p in sorted(folder.glob("agent-*.jsonl")))
    return files


def _first_session_id(path: Path) -> str | None:
    """The sessionId on a file's first line (a 2.0.x sub-agent file beside its session names it there)."""
    try:
        with open_regular(path) as f:  # a FIFO named agent-*.jsonl must not block the listing
            record = json.loads(f.readline(1 << 20))
    except (OSError, ValueError, RefusedFile):
        return None
    value = record.get("sessionId") if isinstance(record, dict) else None
    return value if isinstance(value, str) else None


def _read(path: Path) -> list[Record]:
    return [r for _, r in read_records(Source.open(path)).rows]


def load_compaction_calls(files: dict[str, Path]) -> tuple[list[dict[str, Any]], dict[str, list[Record]]]:
    """The compaction calls (native thread dicts) and the hook messages they alone recorded, by parent uuid."""
    from engine.formats.native import thread_to_dict

    calls: list[dict[str, Any]] = []
    recovered: dict[str, list[Record]] = {}
    for agent_id, path in files.items():
        if not agent_id.startswith(COMPACTION_PREFIX):
            continue
        try:
            records = _read(path)
        except ThreadLoadError as exc:
            calls.append({"agent_id": agent_id, "file": path.name, "error": exc.one_line()})
            continue
        for r in records:
            if (r.get("type") == "user" and r.get("isMeta") and isinstance(r.get("parentUuid"), str)
                    and isinstance(r.get("uuid"), str) and isinstance(r.get("message"), dict)):
                recovered.setdefault(r["parentUuid"], []).append(r)
        sub = records_to_thread(records, f"agent-{agent_id}")
        calls.append({"agent_id": agent_id, "file": path.name, "thread": thread_to_dict(sub)})
    return calls, recovered


def _sidechain_runs(records: list[Record]) -> dict[str, list[Record]]:
    """Inline sidechain records grouped per run: by agentId, else by following parentUuid."""
    runs: dict[str, list[Record]] = {}
    owner: dict[str, str] = {}
    for record in records:
        key = record.get("agentId")
        if not isinstance(key, str):
            parent = record.get("parentUuid")
            key = owner.get(parent) if isinstance(parent, str) else None
        if not isinstance(key, str):
            key = f"sidechain-{len(runs) + 1}"
        runs.setdefault(key, []).append(record)
        if isinstance(record.get("uuid"), str):
            owner[record["uuid"]] = key
    return runs


def _first_prompt(records: list[Record]) -> str:
    for r in records:
        if r.get("type") == "user" and isinstance(r.get("message"), dict):
            return text_of(r["message"].get("content")).strip()
    return ""


def attach_subagents(thread: Thread, s: Session, files: dict[str, Path]) -> None:
    """Fill `thread.subagents` keyed by the spawning tool call id (`agent-<id>` when unmatched)."""
    call_by_agent = {agent: call for call, agent in s.agent_by_call.items()}
    by_prompt = {
        str(tc["args"].get("prompt", "")).strip(): tc["id"] for tc in thread.tool_calls() if tc["name"] in TASK_TOOLS
    }
    for agent_id, path in files.items():
        if agent_id.startswith(COMPACTION_PREFIX):
            continue
        try:
            records = _read(path)
        except ThreadLoadError as exc:
            thread.extra.setdefault("subagent_errors", []).append(exc.one_line())
            continue
        call_id = call_by_agent.get(agent_id) or by_prompt.get(_first_prompt(records)) or f"agent-{agent_id}"
        thread.subagents[call_id] = records_to_thread(records, f"agent-{agent_id}")
    for call_id, records in s.progress_records.items():
        if call_id not in thread.subagents:
            agent_id = s.agent_by_call.get(call_id, call_id)
            sub = records_to_thread(records, f"agent-{agent_id}")
            # Progress records omit some text-only turns (often the final answer): say so.
            sub.extra["rebuilt_from"] = "agent_progress records"
            thread.subagents[call_id] = sub
    if s.sidechain:
        for key, records in _sidechain_runs(s.sidechain).items():
            call_id = call_by_agent.get(key) or by_prompt.get(_first_prompt(records)) or f"agent-{key}"
            if call_id not in thread.subagents:
                thread.subagents[call_id] = records_to_thread(records, f"agent-{key.removeprefix('agent-')}")
