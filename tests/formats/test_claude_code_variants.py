"""Claude Code session shapes from other versions (1.0.x to 2.1.x), as real files have them.

Every fixture here is hand-written to the shape of a record seen in public transcripts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.base.errors import ThreadLoadError
from engine.formats import detect_format, load_thread, open_source
from engine.recorded.inspect import inspect_thread
from engine.tokens.counters import counter_for_thread

SESSION = "sess-v"


def rec(type_: str, uuid: str, parent: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"type": type_, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION, "isSidechain": False,
            "version": "2.1.90", **fields}


def user(uuid: str, parent: str | None, content: Any, **fields: Any) -> dict[str, Any]:
    return rec("user", uuid, parent, message={"role": "user", "content": content}, **fields)


def reply(uuid: str, parent: str | None, msg_id: str, content: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return rec("assistant", uuid, parent, message={
        "id": msg_id, "model": "claude-opus-4-6", "role": "assistant", "content": content,
        "usage": {"input_tokens": 4, "cache_read_input_tokens": 100, "output_tokens": 2}}, **fields)


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def attachment(uuid: str, parent: str, payload: dict[str, Any]) -> dict[str, Any]:
    return rec("attachment", uuid, parent, attachment=payload)


def write(path: Path, records: list[dict[str, Any]], end: str = "\n", tail: str = "") -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("".join(json.dumps(r) + end for r in records) + tail)
    return path


def shapes(tmp_path: Path) -> list[tuple[str, Any, dict[str, Any]]]:
    thread = load_thread(tmp_path)
    return [(m.type, m.id, m.content, m.additional_kwargs) for m in thread.messages]


# -- old summary records -------------------------------------------------------------------------
def test_old_summary_lines_without_session_id_are_detected(tmp_path: Path) -> None:
    """Claude Code 1.0.x put `{type: summary, summary, leafUuid}` lines (no sessionId) at the top,
    sometimes dozens of them: more than the sniffed head."""
    summaries = [{"type": "summary", "summary": f"Topic {i}", "leafUuid": f"leaf-{i}"} for i in range(30)]
    path = write(tmp_path / "old.jsonl", [*summaries, user("u1", None, "hi"), reply("a1", "u1", "m1", text("yo"))])
    assert detect_format(open_source(path)) == "claude_code"
    thread = load_thread(path)
    assert (thread.thread_id, thread.title, [m.type for m in thread.messages]) == (SESSION, "Topic 0", ["human", "ai"])


def test_session_of_only_a_summary_line_is_an_empty_titled_thread(tmp_path: Path) -> None:
    path = write(tmp_path / "only.jsonl", [{"type": "summary", "summary": "Fix login bug", "leafUuid": "x"}])
    thread = load_thread(path)
    assert (thread.source_format, thread.thread_id, thread.title, thread.messages) == (
        "claude_code", "only", "Fix login bug", [])


# -- attachments ---------------------------------------------------------------------------------
def attachment_session() -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    call2 = {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "pwd"}}
    return [
        user("u1", None, "list files"),
        attachment("n1", "u1", {"type": "nested_memory", "path": "/p/CLAUDE.md",
                                "content": {"path": "/p/CLAUDE.md", "type": "Project", "content": "Be terse."}}),
        reply("a1", "n1", "m1", [call]),
        user("r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]),
        attachment("h1", "r1", {"type": "hook_additional_context", "content": ["hook: ok"], "hookName": "PostToolUse"}),
        reply("a2", "a1", "m1", [call2]),
        user("r2", "a2", [{"type": "tool_result", "tool_use_id": "t2", "content": "/p"}]),
        attachment("q1", "r2", {"type": "queued_command", "prompt": "also run tests"}),
        attachment("k1", "q1", {"type": "skill_listing", "content": "skills..."}),
        attachment("e1", "k1", {"type": "task_reminder", "content": [], "itemCount": 0}),
        reply("a3", "e1", "m2", text("done")),
    ]


def test_attachments_that_reach_the_model_are_messages_after_the_tool_batch(tmp_path: Path) -> None:
    assert shapes(write(tmp_path / "s.jsonl", attachment_session())) == [
        ("human", "u1", "list files", {}),
        ("human", "n1", "Be terse.", {"claude_code_meta": True, "claude_code_attachment": "nested_memory"}),
        ("ai", "m1", "", {}),
        ("tool", "r1", "a.py", {}),
        ("tool", "r2", "/p", {}),
        ("human", "h1", "hook: ok", {"claude_code_meta": True, "claude_code_attachment": "hook_additional_context"}),
        ("human", "q1", "also run tests", {"claude_code_attachment": "queued_command"}),
        # the skill listing reaches the model as a reminder since Claude Code 2.1.x (issue 31: named, not unrecorded)
        ("human", "k1", "skills...", {"claude_code_meta": True, "claude_code_attachment": "skill_listing"}),
        ("ai", "m2", "done", {}),
    ]
    thread = load_thread(tmp_path / "s.jsonl")
    # an empty task reminder says nothing to the model
    assert thread.extra["skipped_records"] == {"attachment:task_reminder": 1}
    assert sorted(tc["id"] for tc in thread.tool_calls()) == sorted(thread.tool_results()) == ["t1", "t2"]


def test_attached_file_text_is_found_inside_its_payload(tmp_path: Path) -> None:
    file_payload = {"type": "file", "filename": "/p/a.txt",
                    "content": {"type": "text", "file": {"filePath": "/p/a.txt", "content": "MARKER\n", "numLines": 1}}}
    records = [user("u1", None, "read @a.txt"), attachment("f1", "u1", file_payload), reply("a1", "f1", "m1", text("ok"))]
    thread = load_thread(write(tmp_path / "s.jsonl", records))
    assert [(m.id, m.content) for m in thread.messages] == [("u1", "read @a.txt"), ("f1", "MARKER\n"), ("m1", "ok")]


# -- system records, API errors, microcompaction ----------------------------------------------------
def test_api_error_replies_and_system_notes_are_listed_not_messages(tmp_path: Path) -> None:
    records = [
        user("u1", None, "hi"),
        rec("assistant", "x1", "u1", isApiErrorMessage=True, apiErrorStatus=529, error="server_error",
            message={"id": "syn-1", "model": "<synthetic>", "role": "assistant",
                     "content": text("API Error: 529 Overloaded")}),
        rec("system", "s1", "x1", subtype="api_error", level="error", retryAttempt=1),
        rec("system", "s2", "s1", subtype="informational", level="warning", content="Remote disconnected"),
        rec("system", "s3", "s2", subtype="local_command", level="info",
            content="<local-command-stdout>Set model</local-command-stdout>"),
        reply("a1", "s3", "m1", text("hello")),
    ]
    thread = load_thread(write(tmp_path / "s.jsonl", records))
    assert [(m.type, m.id) for m in thread.messages] == [("human", "u1"), ("ai", "m1")]
    assert thread.extra["api_errors"] == [{"index": 1, "id": "x1", "text": "API Error: 529 Overloaded", "status": 529}]
    assert thread.extra["skipped_records"] == {
        "assistant:api_error": 1, "system:api_error": 1, "system:informational": 1, "system:local_command": 1}
    assert thread.model == "claude-opus-4-6" and list(thread.usage) == ["m1"]


def test_microcompact_boundary_is_listed_and_keeps_the_messages(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}
    records = [
        user("u1", None, "go"),
        reply("a1", "u1", "m1", [call]),
        user("r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "x" * 50}]),
        rec("system", "mc", "r1", subtype="microcompact_boundary", content="Microcompact boundary",
            microcompactMetadata={"trigger": "auto", "preTokens": 900, "tokensSaved": 600,
                                  "compactedToolIds": ["t1"], "clearedAttachmentUUIDs": []}),
        reply("a2", "mc", "m2", text("next")),
    ]
    thread = load_thread(write(tmp_path / "s.jsonl", records))
    assert [m.id for m in thread.messages] == ["u1", "m1", "r1", "m2"]
    assert thread.compactions == []
    assert [e.to_dict() for e in thread.edits] == [{
        "index": 3, "kind": "clear_tool_results", "tool_call_ids": ["t1"], "message_ids": [],
        "placeholder": "[Old tool result content cleared]", "clear_inputs": False, "trigger": "auto",
        "pre_tokens": 900, "tokens_saved": 600, "message_id": "mc", "source": "claude_code:microcompact_boundary"}]
    assert "skipped_records" in thread.extra and thread.extra["skipped_records"] == {}


def test_cleared_tool_results_cost_their_placeholder_after_a_microcompaction(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}
    body = "line of a long file\n" * 200
    records = [
        user("u1", None, "go"),
        reply("a1", "u1", "m1", [call]),
        user("r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": body}]),
        reply("a2", "r1", "m2", text("read it")),
        rec("system", "mc", "a2", subtype="microcompact_boundary", content="Microcompact boundary",
            microcompactMetadata={"trigger": "auto", "compactedToolIds": ["t1", "t-unknown"]}),
        user("u2", "mc", "next"),
        reply("a3", "u2", "m3", text("ok")),
    ]
    thread = load_thread(write(tmp_path / "s.jsonl", records))
    counter = counter_for_thread(thread)
    full = counter.count_message(thread.messages[2])
    stub = counter.count_message(ToolMessage("[Old tool result content cleared]", tool_call_id="t1", name="Read"))
    assert full > 1000 > stub
    report = inspect_thread(thread)
    sizes = [counter.count_message(m) for m in thread.messages]
    # m2 (before the boundary) was sent the whole result; m3 (after it) the placeholder
    assert [s["context_tokens"] for s in report["steps"]] == [sizes[0], sum(sizes[:3]), sum(sizes[:5]) - full + stub]
    assert report["recorded_microcompactions"] == [
        {"index": 4, "trigger": "auto", "pre_tokens": None, "tokens_saved": None, "cleared": 2,
         "counted_saving": full - stub}]
    assert report["tokens"]["final_context"] == sum(sizes) - full + stub


# -- user message variants -------------------------------------------------------------------------
def test_slash_command_meta_and_string_tool_result_shapes(tmp_path: Path) -> None:
    png = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "false"}}
    records = [
        user("u1", None, "<command-name>/model</command-name>\n<command-message>model</command-message>\n"
                         "<command-args>opus</command-args>"),
        user("u2", "u1", "Caveat: generated locally.", isMeta=True),
        user("u3", "u2", "<local-command-stdout>Set model to opus</local-command-stdout>"),
        user("u4", "u3", [{"type": "text", "text": "see"}, png]),
        reply("a1", "u4", "m1", [call]),
        user("r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "Error: exit 1", "is_error": True}],
             toolUseResult="Error: exit 1"),
    ]
    thread = load_thread(write(tmp_path / "s.jsonl", records))
    assert thread.title == "/model opus"
    assert [(m.id, m.additional_kwargs) for m in thread.messages[:3]] == [
        ("u1", {}), ("u2", {"claude_code_meta": True}), ("u3", {})]
    assert thread.messages[3].content == [{"type": "text", "text": "see"}, png]
    result = thread.messages[5]
    assert isinstance(result, ToolMessage)
    assert (result.content, result.status, result.name) == ("Error: exit 1", "error", "Bash")


# -- rewinds -----------------------------------------------------------------------------------
def test_rewound_branch_is_dropped_and_listed(tmp_path: Path) -> None:
    records = [
        user("u1", None, "start"), reply("a1", "u1", "m1", text("ready")),
        user("b1", "a1", "first try"), reply("b2", "b1", "m2", text("first answer")),
        user("c1", "a1", "second try"), reply("c2", "c1", "m3", text("second answer")),
        user("c3", "c2", "go on"), reply("c4", "c3", "m4", text("went on")),
    ]
    thread = load_thread(write(tmp_path / "s.jsonl", records))
    assert [m.id for m in thread.messages] == ["u1", "m1", "c1", "m3", "c3", "m4"]
    assert thread.extra["rewound"] == [{"index": 2, "messages": 2, "prompt": "c1"}]
    assert sorted(thread.usage) == ["m1", "m3", "m4"]


def test_prompt_after_unknown_or_skipped_parent_is_not_a_rewind(tmp_path: Path) -> None:
    records = [
        user("u1", None, "start"), reply("a1", "u1", "m1", text("ready")),
        rec("system", "s1", "a1", subtype="turn_duration", durationMs=5),
        user("u2", "a1", "more"),  # its parent is before a skipped record only
        user("u3", "not-in-file", "again"),
    ]
    thread = load_thread(write(tmp_path / "s.jsonl", records))
    assert [m.id for m in thread.messages] == ["u1", "m1", "u2", "u3"] and "rewound" not in thread.extra


# -- sub-agents ----------------------------------------------------------------------------------
def side(record: dict[str, Any], agent: str) -> dict[str, Any]:
    return {**record, "isSidechain": True, "agentId": agent}


def task_session() -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "T1", "name": "Task", "input": {"prompt": "Find X", "description": "find"}}
    return [
        user("u1", None, "research"), reply("a1", "u1", "m1", [call]),
        user("r1", "a1", [{"type": "tool_result", "tool_use_id": "T1", "content": text("X is here")}],
             toolUseResult={"status": "completed", "totalTokens": 9}),
    ]


def agent_records(agent: str) -> list[dict[str, Any]]:
    return [side(user("s1", None, "Find X"), agent), side(reply("s2", "s1", "ms", text("X is here")), agent)]


def test_v20_subagent_file_beside_the_session_is_attached_by_its_prompt(tmp_path: Path) -> None:
    path = write(tmp_path / f"{SESSION}.jsonl", task_session())
    write(tmp_path / "agent-abc123.jsonl", agent_records("abc123"))
    write(tmp_path / "agent-zzz.jsonl", [{**agent_records("zzz")[0], "sessionId": "another-session"}])
    thread = load_thread(path)
    assert {k: (v.thread_id, [m.type for m in v.messages]) for k, v in thread.subagents.items()} == {
        "T1": ("agent-abc123", ["human", "ai"])}
    alone = load_thread(tmp_path / "agent-abc123.jsonl")
    assert (alone.thread_id, alone.title, len(alone.messages), alone.subagents) == ("agent-abc123", "Find X", 2, {})


def test_inline_sidechain_linked_by_top_level_agent_id(tmp_path: Path) -> None:
    records = task_session()
    records[2] = {**records[2], "agentId": "e1c8"}  # 2.0.x: beside toolUseResult, not inside it
    records[1:1] = [side(user("s1", None, "a different wording"), "e1c8"),
                    side(reply("s2", "s1", "ms", text("found")), "e1c8")]
    thread = load_thread(write(tmp_path / "s.jsonl", records))
    assert [m.id for m in thread.messages] == ["u1", "m1", "r1"]
    assert list(thread.subagents) == ["T1"] and thread.subagents["T1"].thread_id == "agent-e1c8"


# -- line endings and unfinished lines ----------------------------------------------------------
def test_windows_line_endings_and_unfinished_last_line(tmp_path: Path) -> None:
    records = attachment_session()
    path = write(tmp_path / "s.jsonl", records, end="\r\n", tail='{"type":"assistant","uui')
    assert detect_format(open_source(path)) == "claude_code"
    thread = load_thread(path)
    assert thread.extra["unfinished_last_line"] == len(records) + 1
    assert [m.id for m in thread.messages] == ["u1", "n1", "m1", "r1", "r2", "h1", "q1", "k1", "m2"]
    assert isinstance(thread.messages[-1], AIMessage) and isinstance(thread.messages[0], HumanMessage)


def test_bad_line_in_a_crlf_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(json.dumps(user("u1", None, "hi")).encode() + b"\r\n{broken\r\n"
                     + json.dumps(user("u2", "u1", "x")).encode() + b"\r\n")
    with pytest.raises(ThreadLoadError) as err:
        load_thread(path)
    assert (err.value.format, err.value.location) == ("claude_code", "line 2, column 2")
