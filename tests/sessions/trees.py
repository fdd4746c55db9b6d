"""Hand-made session trees, one per agent's on-disk layout (docs/sessions.md), for discovery tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.formats import test_cline as cline
from tests.formats import test_codex as codex
from tests.formats import test_gemini_cli as gemini

CC_SESSION = "11111111-2222-4333-8444-555555555555"
CC_OTHER = "99999999-2222-4333-8444-555555555555"
CODEX_ID = "0199aaaa-0000-7000-8000-000000000001"  # tests.formats.test_codex SESSION
GEMINI_ID = "abcd1234-0000-4000-8000-000000000000"


def jsonl(rows: list[Any]) -> bytes:
    """Lines as Claude Code writes them (JSON.stringify: no spaces after separators)."""
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in rows)


def cc_record(kind: str, uuid: str, parent: str | None, message: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    r: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/u/proj",
                         "sessionId": CC_SESSION, "version": "2.1.38", "type": kind, "uuid": uuid,
                         "timestamp": f"2026-06-01T10:00:{len(uuid) % 60:02d}.000Z", **extra}
    if message is not None:
        r["message"] = message
    return r


def cc_usage(inp: int, create: int, read: int, out: int) -> dict[str, int]:
    return {"input_tokens": inp, "cache_creation_input_tokens": create, "cache_read_input_tokens": read,
            "output_tokens": out}


def cc_assistant(uuid: str, parent: str, mid: str, content: list[dict[str, Any]], usage: dict[str, int]) -> dict[str, Any]:
    return cc_record("assistant", uuid, parent, {"model": "claude-sonnet-4-5-20250929", "id": mid, "role": "assistant",
                                                 "type": "message", "content": content, "usage": usage})


def claude_code_session() -> list[dict[str, Any]]:
    """A prompt, a reply streamed as two records (text, then a Task call), the Task's result, a final reply,
    and Claude Code's title records: the last /rename wins over the generated title."""
    return [
        {"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}, "isSnapshotUpdate": False},
        cc_record("user", "u1", None, {"role": "user", "content": "fix the flaky test in tests/test_io.py"}),
        {"type": "ai-title", "aiTitle": "Fixing a flaky IO test", "sessionId": CC_SESSION},
        cc_assistant("a1", "u1", "msg_1", [{"type": "text", "text": "Looking."}], cc_usage(10, 5000, 0, 3)),
        cc_assistant("a2", "a1", "msg_1", [{"type": "tool_use", "id": "toolu_task", "name": "Task",
                                            "input": {"description": "search", "prompt": "find the flaky test"}}],
                     cc_usage(10, 5000, 0, 40)),
        cc_record("user", "u2", "a2", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_task",
                                                                   "content": "it is test_read"}]},
                  toolUseResult={"agentId": "sub1", "status": "completed"}),
        cc_assistant("a3", "u2", "msg_2", [{"type": "text", "text": "Fixed."}], cc_usage(5, 200, 5000, 20)),
        {"type": "custom-title", "customTitle": "Flaky IO test", "sessionId": CC_SESSION},
        {"type": "custom-title", "customTitle": "Flaky IO test, fixed", "sessionId": CC_SESSION},
    ]


def claude_code_subagent() -> list[dict[str, Any]]:
    return [
        {**cc_record("user", "s1", None, {"role": "user", "content": "find the flaky test"}), "isSidechain": True,
         "agentId": "sub1"},
        {**cc_assistant("s2", "s1", "msg_s", [{"type": "text", "text": "test_read"}], cc_usage(3, 100, 0, 5)),
         "isSidechain": True, "agentId": "sub1"},
    ]


def make_claude_code(root: Path) -> Path:
    project = root / ".claude" / "projects" / "-home-u-proj"
    (project / CC_SESSION / "subagents").mkdir(parents=True)
    (project / CC_SESSION / "tool-results").mkdir()
    (project / CC_SESSION / "tool-results" / "toolu_x.txt").write_text("big output")
    (project / f"{CC_SESSION}.jsonl").write_bytes(jsonl(claude_code_session()))
    (project / CC_SESSION / "subagents" / "agent-sub1.jsonl").write_bytes(jsonl(claude_code_subagent()))
    # an old-style summary title and a first prompt: the summary is the title
    other = [{"type": "summary", "summary": "Old summary title", "leafUuid": "x"},
             {**cc_record("user", "o1", None, {"role": "user", "content": "hello"}), "sessionId": CC_OTHER},
             {**cc_assistant("o2", "o1", "msg_o", [{"type": "text", "text": "hi"}], cc_usage(1, 0, 0, 1)), "sessionId": CC_OTHER}]
    (project / f"{CC_OTHER}.jsonl").write_bytes(jsonl(other))
    return project


def make_codex(root: Path) -> Path:
    day = root / ".codex" / "sessions" / "2026" / "05" / "01"
    day.mkdir(parents=True)
    path = day / f"rollout-2026-05-01T10-00-00-{CODEX_ID}.jsonl"
    path.write_bytes(jsonl(codex.new_rollout()))
    archived = root / ".codex" / "archived_sessions"
    archived.mkdir()
    rows = codex.new_rollout()
    rows[0]["payload"]["id"] = "0199aaaa-0000-7000-8000-000000000002"
    import zstandard

    (archived / "rollout-2026-04-01T09-00-00-0199aaaa-0000-7000-8000-000000000002.jsonl.zst").write_bytes(
        zstandard.ZstdCompressor().compress(jsonl(rows)))
    (root / ".codex" / "session_index.jsonl").write_text(
        json.dumps({"id": CODEX_ID, "thread_name": "first name", "updated_at": "2026-05-01T10:00:00Z"}) + "\n"
        + json.dumps({"id": CODEX_ID, "thread_name": "Fix the failing test", "updated_at": "2026-05-01T10:01:00Z"}) + "\n")
    (root / ".codex" / "history.jsonl").write_text(json.dumps({"session_id": CODEX_ID, "ts": 1, "text": "fix"}) + "\n")
    return path


def make_gemini(root: Path) -> Path:
    project = root / ".gemini" / "tmp" / "myproj"
    chats = project / "chats"
    (chats / GEMINI_ID).mkdir(parents=True)
    (project / ".project_root").write_text("/home/u/myproj\n")
    path = chats / f"session-2026-05-01T10-00-{GEMINI_ID[:8]}.jsonl"
    rows = gemini.session()
    rows[0] = {**rows[0], "sessionId": GEMINI_ID}
    path.write_bytes(jsonl(rows))
    sub = [{**gemini.META, "sessionId": "sub-1", "kind": "subagent"}, gemini.msg("u1", "user", [{"text": "look"}]),
           gemini.msg("g1", "gemini", "seen", model="gemini-3-flash-preview", tokens=gemini.toks(100))]
    (chats / GEMINI_ID / "sub-1.jsonl").write_bytes(jsonl(sub))
    (project / "logs.json").write_text("[]")
    return path


def make_cline(root: Path) -> Path:
    storage = root / "globalStorage" / "saoudrizwan.claude-dev"
    storage.mkdir(parents=True)
    return cline.task_folder(storage, cline.XML_API, cline.XML_UI, cline.META) / "api_conversation_history.json"


def make_all(root: Path) -> dict[str, Path]:
    return {"claude-code": make_claude_code(root) / f"{CC_SESSION}.jsonl", "codex": make_codex(root),
            "gemini-cli": make_gemini(root), "cline": make_cline(root)}
