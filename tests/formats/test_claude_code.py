"""Claude Code session JSONL: the real sessions in the shared traces, and small hand-made ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.config.schema import preset
from engine.formats import detect_format, list_threads, load_thread, open_source
from engine.recorded.inspect import inspect_thread, step_contexts
from engine.run.replay import replay
from engine.tokens.content import render_function_calls
from engine.tokens.counters import counter_for_thread, get_counter
from tests.conftest import trace_path

BIG_A = "4d5611e5-241a-462a-8d15-5122611a9569"
BIG_B = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
SESSION = "s-1"


def cc(*parts: str) -> Path:
    return trace_path("claude-code", *parts)


# -- hand-made sessions ----------------------------------------------------------------------------
def rec(type_: str, uuid: str, parent: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"type": type_, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION, "isSidechain": False,
            "timestamp": "2026-01-01T00:00:00Z", **fields}


def assistant(uuid: str, msg_id: str, block: dict[str, Any], output_tokens: int, **fields: Any) -> dict[str, Any]:
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000,
             "output_tokens": output_tokens}
    return rec("assistant", uuid, message={"model": "claude-opus-4-6", "id": msg_id, "role": "assistant",
                                           "content": [block], "usage": usage}, **fields)


def user(uuid: str, content: Any, **fields: Any) -> dict[str, Any]:
    return rec("user", uuid, message={"role": "user", "content": content}, **fields)


def result(call_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}


def tool_use(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def write_session(folder: Path, records: list[dict[str, Any]], name: str = f"{SESSION}.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def streamed_session() -> list[dict[str, Any]]:
    """One prompt, a streamed reply with two parallel calls, a compaction, one more reply."""
    png = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    return [
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}, "isSnapshotUpdate": False},
        rec("progress", "p0", data={"type": "hook_progress", "hookEvent": "SessionStart"}),
        user("u1", "Fix the bug in app.py"),
        assistant("a1", "msg_1", {"type": "thinking", "thinking": "Look at the file first.", "signature": "sig"}, 5),
        assistant("a2", "msg_1", {"type": "text", "text": "Reading it."}, 5),
        assistant("a3", "msg_1", tool_use("call_A", "Read", file_path="app.py"), 9),
        user("u2", [result("call_A", [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}])],
             toolUseResult={"type": "text"}),
        assistant("a4", "msg_1", tool_use("call_B", "Bash", command="pytest"), 42),
        user("u3", [result("call_B", "1 failed", is_error=True)]),
        rec("system", "s1", subtype="turn_duration", durationMs=5),
        assistant("a5", "msg_2", tool_use("call_C", "Screenshot"), 7),
        user("u4", [result("call_C", [{"type": "text", "text": "the screen"}, png])]),
        rec("system", "b1", subtype="compact_boundary", content="Conversation compacted",
            compactMetadata={"trigger": "manual", "preTokens": 1234}),
        user("u5", "This session is being continued… SUMMARY: fixing app.py", isCompactSummary=True),
        user("u6", "go on"),
        assistant("a6", "msg_3", {"type": "text", "text": "Done."}, 3),
    ]


def test_streamed_records_merge_into_one_ai_message(tmp_path: Path) -> None:
    thread = load_thread(write_session(tmp_path, streamed_session()))
    assert [type(m).__name__ for m in thread.messages] == [
        "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "AIMessage", "ToolMessage", "HumanMessage",
        "AIMessage",
    ]
    ai = thread.messages[1]
    assert isinstance(ai, AIMessage) and ai.id == "msg_1"
    assert ai.content == [
        {"type": "thinking", "thinking": "Look at the file first.", "signature": "sig"},
        {"type": "text", "text": "Reading it."},
    ]
    assert [(tc["id"], tc["name"], tc["args"]) for tc in ai.tool_calls] == [
        ("call_A", "Read", {"file_path": "app.py"}), ("call_B", "Bash", {"command": "pytest"}),
    ]
    usage = thread.usage["msg_1"]
    assert (usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens,
            usage.output_tokens, usage.context_tokens) == (3, 100, 1000, 42, 1103)
    assert sorted(thread.usage) == ["msg_1", "msg_2", "msg_3"]
    assert thread.model == "claude-opus-4-6" and thread.max_input_tokens == 200_000
    assert thread.title == "Fix the bug in app.py" and thread.thread_id == SESSION


def test_tool_results_become_tool_messages(tmp_path: Path) -> None:
    thread = load_thread(write_session(tmp_path, streamed_session()))
    read, bash, shot = (thread.messages[i] for i in (2, 3, 5))
    assert isinstance(read, ToolMessage) and isinstance(bash, ToolMessage) and isinstance(shot, ToolMessage)
    assert (read.tool_call_id, read.name, read.status, read.content, read.id) == (
        "call_A", "Read", "success", "line 1\nline 2", "u2")
    assert (bash.tool_call_id, bash.status, bash.content) == ("call_B", "error", "1 failed")
    # An image stays a block (the counter charges it) next to its text.
    assert shot.content == [{"type": "text", "text": "the screen"},
                            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                         "data": "iVBORw0KGgo="}}]
    counter = get_counter()
    name_tokens = counter.count_text("Screenshot") + 1
    assert counter.breakdown(shot) == {"tool_results": 3 + 85 + counter.count_text("the screen") + name_tokens}


def test_compaction_is_recorded_not_a_message(tmp_path: Path) -> None:
    thread = load_thread(write_session(tmp_path, streamed_session()))
    [compaction] = thread.compactions
    assert compaction.to_dict() == {"index": 6, "trigger": "manual", "pre_tokens": 1234,
                                    "summary": "This session is being continued… SUMMARY: fixing app.py",
                                    "message_id": "u5", "post_tokens": None, "replacement": None,
                                    "kind": "summary", "source": "claude_code:compact_boundary"}
    assert thread.messages[6].content == "go on"
    assert all("SUMMARY" not in str(m.content) for m in thread.messages)
    assert thread.extra["skipped_records"] == {"file-history-snapshot": 1, "progress": 1, "system:turn_duration": 1}
    counter = get_counter()
    steps = step_contexts(thread, counter)
    summary_tokens = 3 + counter.count_text(compaction.summary)
    assert [s["context_tokens"] for s in steps] == [
        counter(thread.messages[:1]), counter(thread.messages[:4]),
        summary_tokens + counter.count_message(thread.messages[6]),
    ]
    assert [s["recorded_input_tokens"] for s in steps] == [1103, 1103, 1103]


def test_inline_sidechain_is_a_subagent_of_its_task_call(tmp_path: Path) -> None:
    side = {"isSidechain": True}
    records = [
        user("u1", "research X"),
        assistant("a1", "msg_1", tool_use("call_T", "Task", description="look", prompt="Find X in the docs"), 4),
        {**user("s1", "Find X in the docs"), **side},
        {**assistant("s2", "msg_s", {"type": "text", "text": "X is in README"}, 2, parentUuid="s1"), **side},
        user("u2", [result("call_T", [{"type": "text", "text": "X is in README"}])]),
    ]
    thread = load_thread(write_session(tmp_path, records))
    assert [m.type for m in thread.messages] == ["human", "ai", "tool"]
    sub = thread.subagents["call_T"]
    assert [m.type for m in sub.messages] == ["human", "ai"]
    assert sub.messages[1].content == "X is in README" and list(sub.usage) == ["msg_s"]


def test_unfinished_last_line_is_dropped_and_reported(tmp_path: Path) -> None:
    path = write_session(tmp_path, streamed_session()[:4])
    path.write_text(path.read_text() + '{"type": "assistant", "uuid": "a9", "mess', encoding="utf-8")
    thread = load_thread(path)
    assert thread.extra["unfinished_last_line"] == 5
    assert len(thread.messages) == 2


def test_bad_line_names_file_format_and_line(tmp_path: Path) -> None:
    records = streamed_session()[:4]
    text = "".join(json.dumps(r) + "\n" for r in records)
    lines = text.splitlines(keepends=True)
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(lines[:3]) + "{oops\n" + "".join(lines[3:]), encoding="utf-8")
    with pytest.raises(ThreadLoadError) as err:
        load_thread(path, format="claude_code")
    assert (err.value.path, err.value.format, err.value.location) == (str(path), "claude_code", "line 4, column 2")
    path.write_text(text + "[1, 2]\n", encoding="utf-8")
    with pytest.raises(ThreadLoadError, match="expected a JSON object, got list") as err:
        load_thread(path)
    assert err.value.location == "line 5"


def test_wrong_thread_id_is_refused(tmp_path: Path) -> None:
    path = write_session(tmp_path, streamed_session())
    with pytest.raises(ThreadNotFoundError, match="'other' not found"):
        load_thread(path, thread_id="other")
    assert [(r.thread_id, r.title, r.messages) for r in list_threads(path)] == [(SESSION, "Fix the bug in app.py", 8)]


# -- the real sessions -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, messages, by_role, calls, compaction, recovered",
    [
        (BIG_A, 295, {"ai": 139, "human": 6, "tool": 150}, 150,
         (135, "auto", 170251, "e95c1e9a-5084-4e69-bf3d-42c8d45f3985"), 3),
        (BIG_B, 370, {"ai": 157, "human": 16, "tool": 197}, 197,
         (301, "auto", 167117, "7bf19bfa-9a71-402e-9a81-2dad042e663f"), 13),
    ],
)
def test_large_sessions(name: str, messages: int, by_role: dict[str, int], calls: int,
                        compaction: tuple[Any, ...], recovered: int) -> None:
    path = cc(f"{name}.jsonl")
    assert detect_format(open_source(path)) == "claude_code"
    thread = load_thread(path)
    assert thread.thread_id == name and thread.source_format == "claude_code"
    assert (len(thread.messages), thread.by_role(), len(thread.tool_calls())) == (messages, by_role, calls)
    [c] = thread.compactions
    assert (c.index, c.trigger, c.pre_tokens, c.message_id) == compaction
    assert c.summary.startswith("This session is being continued from a previous conversation")
    assert len(thread.usage) == by_role["ai"]
    assert thread.extra["recovered_hook_messages"] == recovered
    # every tool call has its result, and every result answers a call
    assert sorted(tc["id"] for tc in thread.tool_calls()) == sorted(thread.tool_results())
    ids = [m.id for m in thread.messages]
    assert len(set(ids)) == len(ids) and None not in ids


def test_subagents_and_compaction_calls_are_attached() -> None:
    a = load_thread(cc(f"{BIG_A}.jsonl"))
    assert {k: (v.thread_id, len(v.messages), len(v.usage), v.model) for k, v in a.subagents.items()} == {
        "toolu_017pLRuPHYTX5t99EnLyV53m": ("agent-a2898e3", 46, 12, "claude-sonnet-4-5-20250929"),
    }
    [call] = a.extra["compaction_calls"]
    assert (call["agent_id"], call["file"], len(call["thread"]["messages"])) == (
        "acompact-e1f845", "agent-acompact-e1f845.jsonl", 5)
    b = load_thread(cc(f"{BIG_B}.jsonl"))
    assert {k: (v.thread_id, len(v.messages)) for k, v in b.subagents.items()} == {
        "toolu_01Y64XEaRvUYinzv9rW9qZXd": ("agent-a93ccab", 37),
        "toolu_013mmyY3eDBg4Ji6oAszYt6p": ("agent-aa84377", 31),
    }
    assert all(tc["name"] == "Task" for tc in b.tool_calls() if tc["id"] in b.subagents)


def test_recovered_hook_message_follows_its_tool_batch() -> None:
    thread = load_thread(cc(f"{BIG_A}.jsonl"))
    recovered = [i for i, m in enumerate(thread.messages)
                 if m.additional_kwargs.get("claude_code_recovered_from") == "compaction_call"]
    assert [thread.messages[i].id for i in recovered] == [
        "88189592-a04a-49d4-ab3d-1917f06e983d", "2900d394-dc4a-4676-8d94-4f9be6cc4cb6",
        "8c5abfee-e7ea-4834-bef3-23e92c5c40f4",
    ]
    for i in recovered:
        assert isinstance(thread.messages[i], HumanMessage)
        assert isinstance(thread.messages[i - 1], ToolMessage) and not isinstance(thread.messages[i + 1], ToolMessage)


def test_upload_rebuilds_subagents_from_progress_records() -> None:
    path = cc(f"{BIG_B}.jsonl")
    thread = load_thread(data=path.read_bytes(), name=path.name)
    assert {k: (v.thread_id, len(v.messages), v.extra["rebuilt_from"]) for k, v in thread.subagents.items()} == {
        "toolu_01Y64XEaRvUYinzv9rW9qZXd": ("agent-a93ccab", 36, "agent_progress records"),
        "toolu_013mmyY3eDBg4Ji6oAszYt6p": ("agent-aa84377", 30, "agent_progress records"),
    }
    assert "compaction_calls" not in thread.extra and "recovered_hook_messages" not in thread.extra


def test_subagent_file_loads_on_its_own() -> None:
    thread = load_thread(cc(BIG_A, "subagents", "agent-a2898e3.jsonl"))
    assert (thread.thread_id, len(thread.messages), len(thread.usage)) == ("agent-a2898e3", 46, 12)
    assert thread.subagents == {}


def test_a_compaction_call_opens_as_its_sessions_compaction_call() -> None:
    # agent-acompact-* is the summarizer call Claude Code made to compact the session, not a session:
    # the claude-code preset used to compact it at step 0 ("would have compacted at step 0").
    path = cc(BIG_A, "subagents", "agent-acompact-e1f845.jsonl")
    thread = load_thread(path)
    assert thread.extra["compaction_call_of"] == {"session_id": BIG_A, "agent_id": "acompact-e1f845",
                                                  "parent_file": str(cc(f"{BIG_A}.jsonl"))}
    assert thread.title == f"compaction call of session {BIG_A}"
    run = replay(thread, preset("claude-code"))
    assert [(e.step, e.kind) for e in run.events if e.layer == "compaction"] == [(0, "not_applicable")]
    assert inspect_thread(thread)["compaction_call_of"]["session_id"] == BIG_A
    # the session itself still compacts where Claude Code did
    assert load_thread(cc(f"{BIG_A}.jsonl")).extra.get("compaction_call_of") is None


@pytest.mark.parametrize("name, expected", [
    ("short.jsonl", ("55604662-cf2a-4331-851a-ec234028f8ca", "mix phx.server doesnt seem to start", 5)),
    ("subagent.jsonl", ("491e126e-1e71-469c-ade2-fcc8af567c74",
                        "/handgemacht:create-beads websearch to learn how to fastest setup credo…", 32)),
    ("tool_heavy.jsonl", ("d6e0bada-1959-4eec-a9d2-0bfade768d8f", "start phoenix in background", 17)),
])
def test_small_sessions_list(name: str, expected: tuple[str, str, int]) -> None:
    [ref] = list_threads(cc(name))
    assert (ref.thread_id, ref.title, ref.messages) == expected


# -- counted context vs the usage Claude Code recorded ----------------------------------------------
def max_deviation(path: Path) -> float:
    """Largest |context + hidden - recorded| / recorded before the first compaction (the issue's check).

    Counted with the thread's default counter: o200k_base with Anthropic tool-call framing.
    """
    thread = load_thread(path)
    counter = counter_for_thread(thread)
    assert (counter.name, counter.framing) == ("o200k_base", "anthropic")
    steps = step_contexts(thread, counter)
    first_compaction = min((c.index for c in thread.compactions), default=len(thread.messages))
    measured = [s for s in steps if s["recorded_input_tokens"] is not None and s["index"] < first_compaction]
    assert measured, "no step with recorded usage"
    hidden = measured[0]["recorded_input_tokens"] - measured[0]["context_tokens"]
    return max(abs(s["context_tokens"] + hidden - s["recorded_input_tokens"]) / s["recorded_input_tokens"]
               for s in measured)


@pytest.mark.parametrize("name", [
    f"{BIG_A}.jsonl",
    f"{BIG_B}.jsonl",
    "short.jsonl",
    "subagent.jsonl",
    "tool_heavy.jsonl",
    f"{BIG_A}/subagents/agent-a2898e3.jsonl",
    f"{BIG_B}/subagents/agent-a93ccab.jsonl",
    f"{BIG_B}/subagents/agent-aa84377.jsonl",
])
def test_context_tracks_recorded_input(name: str) -> None:
    assert max_deviation(cc(*name.split("/"))) <= 0.15


def final_reply_cost(path: Path) -> dict[str, float]:
    """Recorded output tokens per counted token, for tool-only replies and for replies with text.

    Only replies whose final usage the file kept count (Claude Code writes one record per streamed
    block; the last one of a reply, with `iterations`/`server_tool_use`, has the final output_tokens).
    """
    counter = get_counter("o200k_base", framing="anthropic")
    replies: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") != "assistant":
            continue
        message = record["message"]
        reply = replies.setdefault(message["id"], {"blocks": [], "final": None})
        reply["blocks"] += message["content"]
        usage = message.get("usage") or {}
        if "iterations" in usage or "server_tool_use" in usage:
            reply["final"] = usage["output_tokens"]
    totals = {"tools": [0, 0], "text": [0, 0]}
    for reply in replies.values():
        if reply["final"] is None:
            continue
        calls = [{"name": b["name"], "args": b["input"]} for b in reply["blocks"] if b["type"] == "tool_use"]
        texts = [b.get("text") or b.get("thinking") or "" for b in reply["blocks"] if b["type"] in ("text", "thinking")]
        text_tokens = sum(counter.count_text(t) for t in texts)
        kind = "tools" if calls and text_tokens < 5 else "text"
        totals[kind][0] += reply["final"]
        totals[kind][1] += text_tokens + (counter.count_text(render_function_calls(calls)) if calls else 0)
    return {kind: recorded / counted for kind, (recorded, counted) in totals.items()}


@pytest.mark.parametrize("name", [BIG_A, BIG_B])
def test_rendered_calls_cost_what_claude_recorded(name: str) -> None:
    """The call markup is counted in full: tool-only replies cost, per counted token, what replies
    with text cost (within 5 %). With bare, un-namespaced tags BIG_B's tool-only replies cost 1.49
    recorded tokens per counted one against 1.37 for the others."""
    cost = final_reply_cost(cc(f"{name}.jsonl"))
    assert abs(cost["tools"] - cost["text"]) / cost["text"] < 0.05, cost


def test_binary_and_invalid_utf8_are_named(tmp_path: Path) -> None:
    good = json.dumps(user("u1", "hi")).encode()
    with pytest.raises(ThreadLoadError, match=r"file is binary, not text \(NUL bytes found\)"):
        load_thread(data=good + b"\n\x00\x01", name="s.jsonl", format="claude_code")
    with pytest.raises(ThreadLoadError) as err:
        load_thread(data=good + b"\n" + good[:10] + b"\xff" + good[10:] + b"\n", name="s.jsonl", format="claude_code")
    assert err.value.one_line() == (
        f"s.jsonl, format claude_code, at line 2: not UTF-8 text (invalid byte at offset {len(good) + 1 + 10})")


def test_line_separator_inside_a_string_stays_in_its_record(tmp_path: Path) -> None:
    text = "first\u2028second\x85third"
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(user("u1", text), ensure_ascii=False) + "\n", encoding="utf-8")
    assert load_thread(path).messages[0].content == text
