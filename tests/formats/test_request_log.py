"""Request logs (one logged request a line, LHAR) and streamed responses: hand-made samples shaped like
LiteLLM / context-profiler lines, Context Lens' LHAR (docs/LHAR.md 0.1.0) and the Vercel AI SDK's
`*.chunks.txt` fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.base.errors import ThreadLoadError
from engine.config.schema import preset
from engine.formats import detect_format, list_threads, load_thread, open_source
from engine.run.replay import replay

SYSTEM = {"role": "system", "content": "You are a coding agent."}
TASK = {"role": "user", "content": "Find why the build fails."}


def call(k: int) -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": f"c{k}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"cmd": f"step {k}"})}}]}


def result(k: int) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"c{k}", "content": f"output of step {k} " * 20}


def profiler_log() -> list[dict[str, Any]]:
    """Five requests of one conversation, `{model, messages, metadata}` a line; before the fifth the agent
    dropped its oldest exchange (the logged request no longer extends the previous one)."""
    history = [SYSTEM, TASK]
    lines = []
    for k in range(5):
        if k == 4:
            history = [SYSTEM, TASK, {"role": "user", "content": "(earlier steps dropped)"}, *history[4:]]
        lines.append({"model": "gpt-4.1", "messages": [dict(m) for m in history],
                      "metadata": {"request_id": f"req-{k}", "timestamp": f"2026-03-01T10:0{k}:00Z"},
                      **({"usage": {"prompt_tokens": 500 + 100 * k, "completion_tokens": 20}} if k != 2 else {})})
        history = [*history, call(k), result(k)]
    return lines


def write(tmp_path: Path, name: str, rows: list[Any]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def as_text(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    return [(m.type, m.text if not isinstance(m, AIMessage) or not m.tool_calls else json.dumps(
        [tc["args"] for tc in m.tool_calls])) for m in messages]


def logged_text(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    role = {"system": "system", "user": "human", "assistant": "ai", "tool": "tool"}
    return [(role[m["role"]], m["content"] if m.get("content") is not None else json.dumps(
        [json.loads(tc["function"]["arguments"]) for tc in m["tool_calls"]])) for m in messages]


def test_a_request_log_is_one_thread_whose_views_are_the_logged_requests(tmp_path: Path) -> None:
    # before: read as openai_chat, line 1 only (2 messages, 0 model calls)
    lines = profiler_log()
    path = write(tmp_path, "profile.jsonl", lines)
    assert detect_format(open_source(path)) == "request_log"
    thread = load_thread(path)
    assert (thread.thread_id, len(thread.ai_indices()), thread.extra["logged_requests"]) == ("profile", 5, 5)
    assert thread.extra["unanswered_calls"] == 1  # the last call's answer is in no line
    assert [u.context_tokens for u in thread.usage.values()] == [500, 600, 800, 900]
    # from the fourth answer's result on, the agent sent its cut history
    assert [(c.index, c.kind) for c in thread.compactions] == [(thread.ai_indices()[3] + 1, "trim")]
    run = replay(thread, preset("as-recorded"))
    for step, line in zip(run.steps, lines, strict=True):
        sent = ([("system", str(step.system.content))] if step.system is not None else []) + as_text(list(step.view))
        assert sent == logged_text(line["messages"]), step.index
    # the kept messages keep their ids across the compaction; the tool calls pair with their results
    assert {m.tool_call_id for m in thread.messages if isinstance(m, ToolMessage)} == {"c0", "c1", "c2", "c3"}


def test_conversations_are_told_apart_by_their_session_or_their_task(tmp_path: Path) -> None:
    lines = profiler_log()
    other = [{**line, "messages": [SYSTEM, {"role": "user", "content": "Write the changelog."}, *line["messages"][2:]]}
             for line in lines[:2]]
    path = write(tmp_path, "mixed.jsonl", [lines[0], lines[1], other[0], lines[2], other[1]])
    refs = list_threads(path)
    assert [(r.thread_id, r.messages) for r in refs] == [("mixed-1", 7), ("mixed-2", 5)]
    tagged = [{**line, "metadata": {"session_id": "s-a"}} for line in lines[:2]]
    assert [r.thread_id for r in list_threads(write(tmp_path, "tagged.jsonl", tagged))] == ["s-a"]


def sse_body(text: str, tokens_in: int, tokens_out: int) -> str:
    events = [
        ("message_start", {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                                "model": "claude-sonnet-4-5", "content": [],
                                                                "usage": {"input_tokens": tokens_in, "output_tokens": 1,
                                                                          "cache_read_input_tokens": 100}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_start", {"type": "content_block_start", "index": 1,
                                 "content_block": {"type": "tool_use", "id": "tu1", "name": "bash", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "input_json_delta", "partial_json": '{"cmd": "ma'}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "input_json_delta", "partial_json": 'ke"}'}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                           "usage": {"output_tokens": tokens_out}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def lhar_entry(seq: int, messages: list[dict[str, Any]], privacy_full: bool = True) -> dict[str, Any]:
    return {"type": "entry", "id": f"e{seq}", "trace_id": "t1", "span_id": f"s{seq}", "timestamp": f"2026-02-10T12:00:0{seq}Z",
            "sequence": seq, "source": {"tool": "claude", "agent_role": "main"},
            "gen_ai": {"system": "anthropic", "request": {"model": "claude-sonnet-4-5"},
                       "usage": {"input_tokens": 40 + seq, "output_tokens": 30, "total_tokens": 70 + seq}},
            "usage_ext": {"cache_read_tokens": 1000 * seq, "cache_write_tokens": 10},
            "raw": {"request_body": {"model": "claude-sonnet-4-5", "system": "You are Claude Code.", "max_tokens": 8192,
                                     "messages": messages},
                    "response_body": sse_body(f"answer {seq}", 40 + seq, 30)} if privacy_full else {}}


def lhar_rows(privacy_full: bool = True) -> list[dict[str, Any]]:
    first = [{"role": "user", "content": "fix it"}]
    answer = {"role": "assistant", "content": [{"type": "text", "text": "answer 1"},
                                               {"type": "tool_use", "id": "tu1", "name": "bash", "input": {"cmd": "make"}}]}
    second = [*first, answer, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "ok"}]}]
    return [{"type": "session", "trace_id": "t1", "started_at": "2026-02-10T12:00:00Z", "tool": "claude",
             "model": "claude-sonnet-4-5"},
            lhar_entry(1, first, privacy_full), lhar_entry(2, second, privacy_full)]


def test_lhar_entries_are_the_sessions_requests(tmp_path: Path) -> None:
    path = write(tmp_path, "claude-t1.lhar", lhar_rows())
    assert detect_format(open_source(path)) == "request_log"
    thread = load_thread(path)
    assert (thread.thread_id, thread.system_prompt, len(thread.ai_indices())) == ("t1", "You are Claude Code.", 2)
    # the streamed response bodies are the answers: text and the tool call assembled from partial JSON
    first = thread.messages[thread.ai_indices()[0]]
    assert [tc["args"] for tc in first.tool_calls] == [{"cmd": "make"}]
    assert [(u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens) for u in thread.usage.values()] == [
        (41, 1000, 10), (42, 2000, 10)]
    wrapped = tmp_path / "claude-t1.lhar.json"
    wrapped.write_text(json.dumps({"lhar": {"version": "0.1.0", "sessions": [lhar_rows()[0]], "entries": lhar_rows()[1:]}}))
    assert len(load_thread(wrapped).messages) == len(thread.messages)


def test_lhar_without_request_bodies_says_so(tmp_path: Path) -> None:
    with pytest.raises(ThreadLoadError) as info:
        load_thread(write(tmp_path, "standard.lhar", lhar_rows(privacy_full=False)))
    assert "CONTEXT_LENS_PRIVACY=full" in str(info.value) and str(info.value).count("\n") == 0


def test_a_streamed_response_fixture_is_one_model_call(tmp_path: Path) -> None:
    # an SSE body as sent, and the Vercel AI SDK's chunk-per-line fixture of an OpenAI stream
    sse_file = tmp_path / "anthropic-tool.sse.txt"
    sse_file.write_text(sse_body("Let me build it.", 12, 30))
    thread = load_thread(sse_file)
    assert (detect_format(open_source(sse_file)), thread.extra["streamed"]) == ("sse_response", {"provider": "anthropic", "chunks": 9})
    [ai] = thread.messages
    assert ai.text == "Let me build it." and [tc["args"] for tc in ai.tool_calls] == [{"cmd": "make"}]
    [usage] = thread.usage.values()
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (12, 100, 30)
    chunks = [{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o", "choices": [
                  {"index": 0, "delta": {"role": "assistant", "content": "Hel"}, "finish_reason": None}]},
              {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o", "choices": [
                  {"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]},
              {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o", "choices": [],
               "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}}]
    path = write(tmp_path, "openai-text.chunks.txt", chunks)
    thread = load_thread(path)
    assert detect_format(open_source(path)) == "sse_response"
    assert [m.text for m in thread.messages] == ["Hello"] and [u.context_tokens for u in thread.usage.values()] == [9]


# -- robustness: every mutation loads or is one error line naming the file --------------------------
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.formats.mutations import FUZZ, jsonl, mutated_lines  # noqa: E402


def one_line_or_thread(data: bytes, name: str, format: str | None) -> None:
    try:
        load_thread(data=data, name=name, format=format)
    except ThreadLoadError as exc:
        assert name in str(exc) and "\n" not in str(exc), str(exc)


def anthropic_chunks() -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in sse_body("hi", 3, 4).splitlines() if line.startswith("data: ")]


@FUZZ
@given(data=st.data(), which=st.sampled_from(["log", "lhar", "chunks"]))
def test_mutated_request_logs_and_streams_are_one_error_line(data: st.DataObject, which: str) -> None:
    rows = {"log": profiler_log(), "lhar": lhar_rows(), "chunks": anthropic_chunks()}[which]
    name = {"log": "log.jsonl", "lhar": "s.lhar", "chunks": "r.chunks.txt"}[which]
    blob = mutated_lines(data, rows)
    for format in (None, "sse_response" if which == "chunks" else "request_log"):
        one_line_or_thread(blob, name, format)


@FUZZ
@given(cut=st.integers(min_value=0, max_value=4000), which=st.sampled_from(["sse", "log"]))
def test_truncated_streams_and_logs_are_one_error_line(cut: int, which: str) -> None:
    blob = sse_body("hello there", 5, 6).encode() if which == "sse" else jsonl(profiler_log())
    for format in (None, "sse_response" if which == "sse" else "request_log"):
        one_line_or_thread(blob[:cut], "cut.txt", format)
